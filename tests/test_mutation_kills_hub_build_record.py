"""build.json's digests per config, pinned to digests computed here with hashlib on a few rows: which render
split each config comes from (test, beep, train, sweep_<attribute>, sources) and which rows it holds. What
mutation testing of generation/hub_build_record.py found unchecked (docs/testing.md)."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace as NS

from generation.hub_build_record import BUILD_RECORD, FORMAT, build_record, write_build_record


def _digest(pairs) -> str:
    return hashlib.sha256("".join(f"{i}\t{s}\n" for i, s in sorted(pairs)).encode()).hexdigest()


def _row(clip_id, category, source_id="s1"):
    return {"clip_id": clip_id, "category": category, "sha256": hashlib.sha256(clip_id.encode()).hexdigest(),
            "source_id": source_id}


def _splits(tmp_path):
    test_dir = tmp_path / "test"
    (test_dir / "sources").mkdir(parents=True)
    (test_dir / "sources" / "s1.flac").write_bytes(b"one")
    (test_dir / "sources" / "s2.flac").write_bytes(b"two")
    test = NS(path=test_dir, rows=[_row("t1", "pitch"), _row("t2", "volume", "s2"), _row("t3", "pitch", "s2")],
              meta={"recipe": "faithful-v1", "recipe_digest": "r" * 64, "source": "vctk:/data/VCTK",
                    "domain": "vctk", "selection": "frozen"})
    beep = NS(path=tmp_path / "beep", rows=[_row("b1", "pitch"), _row("b2", "beep_only")],
              meta={"source": "tones", "recipe": "beep-v1"})
    sweep = NS(path=tmp_path / "sweep", rows=[_row("w1", "pitch"), _row("w2", "volume"), _row("w3", "pitch")], meta={})
    return {"test": test, "beep": beep, "sweep": sweep}


def _pairs(check, cats):
    return [(r["clip_id"], r["sha256"]) for r in check.rows if r["category"] in cats]


def test_each_config_takes_its_own_splits_rows_and_categories(tmp_path):
    by = _splits(tmp_path)
    configs = [NS(name="pitch", split="test", categories=["pitch"]),
               NS(name="all", split="test", categories=["pitch", "volume"]),
               NS(name="test", split="test", categories=["volume"]),   # named like a split, still the test render
               NS(name="beep", split="test", categories=["pitch", "beep_only"]),
               NS(name="sweep_pitch", split="test", categories=["pitch"]),
               NS(name="sources", split="test", categories=[])]
    rec = build_record(by, configs)
    assert rec["format"] == FORMAT == 1
    c = rec["configs"]
    assert c["pitch"] == {"split": "test", "render": "test", "n_clips": 2, "build_digest": _digest(_pairs(by["test"], {"pitch"}))}
    assert c["all"]["n_clips"] == 3 and c["all"]["build_digest"] == _digest(_pairs(by["test"], {"pitch", "volume"}))
    assert c["test"]["render"] == "test" and c["test"]["n_clips"] == 1
    assert c["beep"] == {"split": "test", "render": "beep", "n_clips": 2,
                         "build_digest": _digest(_pairs(by["beep"], {"pitch", "beep_only"}))}
    assert c["sweep_pitch"]["render"] == "sweep" and c["sweep_pitch"]["n_clips"] == 2
    assert c["sweep_pitch"]["build_digest"] == _digest(_pairs(by["sweep"], {"pitch"}))
    # sources: one pair per source id, the sha256 of its file
    assert c["sources"] == {"split": "test", "render": "test", "n_clips": 2, "build_digest": _digest(
        [("s1__source", hashlib.sha256(b"one").hexdigest()), ("s2__source", hashlib.sha256(b"two").hexdigest())])}


def test_a_sweep_config_without_a_sweep_render_comes_from_the_test_render(tmp_path):
    by = _splits(tmp_path)
    del by["sweep"]
    rec = build_record(by, [NS(name="sweep_pitch", split="test", categories=["pitch"])])
    assert rec["configs"]["sweep_pitch"]["render"] == "test"
    assert rec["configs"]["sweep_pitch"]["build_digest"] == _digest(_pairs(by["test"], {"pitch"}))


def test_the_renders_record_every_clip_and_the_recipe(tmp_path):
    by = _splits(tmp_path)
    rec = build_record(by, [])
    assert list(rec["renders"]) == ["beep", "sweep", "test"]
    test = rec["renders"]["test"]
    assert test == {"build_digest": _digest([(r["clip_id"], r["sha256"]) for r in by["test"].rows]), "n_clips": 3,
                    "recipe": "faithful-v1", "recipe_digest": "r" * 64, "source": "vctk:/data/VCTK",
                    "source_kind": "vctk", "domain": "vctk", "selection": "frozen"}
    assert rec["renders"]["beep"]["source_kind"] == "tones" and rec["renders"]["beep"]["domain"] is None
    assert rec["renders"]["sweep"]["source"] == "" and rec["renders"]["sweep"]["source_kind"] == ""


def test_the_record_is_written_as_sorted_indented_json(tmp_path):
    by = _splits(tmp_path)
    stage = tmp_path / "stage"
    stage.mkdir()
    configs = [NS(name="pitch", split="test", categories=["pitch"])]
    assert write_build_record(stage, by, configs) == BUILD_RECORD == "build.json"
    text = (stage / "build.json").read_text(encoding="utf-8")
    assert text == json.dumps(build_record(by, configs), indent=2, sort_keys=True) + "\n"
