"""``vocalgrad verify``, pinned on small builds made here: the exact verdict and summary lines of a tiny render
(one source, 10 ms clips), which check fails on which tampered file and what it names, the problems of
hand-made clip rows (ids, vocabulary, completeness, balance, frozen ids, sha256), the listing cut at 8 with
"... and N more", the repair command only for what a render repairs, and the record written beside the
render. What mutation testing of generation/verify.py found unchecked (docs/testing.md)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

import vocalgrad as vg
import generation.verify as v
from generation.frozen import frozen_rows
from generation.render_dir import RenderDir
from tests._hub_helpers import make_render_dir, read_manifest, write_manifest

NINE = ", ".join(f"{c} 24" for c in vg.CATEGORY_NAMES)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A complete render of one tone source (216 clips of 10 ms), never changed: copy it to break it."""
    return make_render_dir(tmp_path_factory.mktemp("v") / "render", n_sources=1, seconds=0.01)


@pytest.fixture
def copy(tiny, tmp_path):
    d = tmp_path / "render"
    shutil.copytree(tiny, d)
    return d


def _meta(d, **update):
    meta = json.loads((d / "render.json").read_text())
    meta.update(update)
    (d / "render.json").write_text(json.dumps(meta))
    return meta


# ---- whole renders ---------------------------------------------------------------------------------
def test_a_complete_render_passes_with_its_counts_and_record(copy):
    res = v.verify(copy)
    assert res.ok and res.problems == {} and res.partial == [] and res.repair is None
    assert (res.kind, res.n_clips, res.n_sources) == ("render", 216, 1)
    lines = res.summary().splitlines()
    assert lines[0] == f"vocalgrad verify {copy} (render): PASS -- 216 clips, 1 sources, {res.seconds:.1f} s"
    assert lines[1:] == [f"  clips per category: {NINE}", "  per tier: high 72, low 72, medium 72",
                         "  per trajectory: jump 54, linear 54, quad_first_flat 54, quad_last_flat 54",
                         "  per direction: decrease 108, increase 108"]
    rec = json.loads((copy / "verify.json").read_text())
    assert rec["ok"] is True and rec["against"] is None and rec["problems"] == {} and rec["kind"] == "render"
    assert rec["counts"]["category"] == {c: 24 for c in vg.CATEGORY_NAMES}
    assert list(rec["counts"]["category"]) == list(vg.CATEGORY_NAMES)     # in the benchmark's order
    assert rec["manifest_sha256"] == hashlib.sha256((copy / "manifest.parquet").read_bytes()).hexdigest()
    assert rec["checked_at"].endswith("Z") and rec["n_clips"] == 216 and rec["path"] == str(copy)
    text = (copy / "verify.json").read_text()
    assert text == json.dumps(rec, indent=2) + "\n"                     # indented by two, one line break at the end


def test_no_record_unless_asked(copy):
    assert v.verify(copy, write_record=False).ok and not (copy / "verify.json").exists()


def test_missing_clips_listed_eight_then_a_count_and_the_repair_command(copy):
    rows = read_manifest(copy)
    for r in rows[:10]:
        (copy / r["path"]).unlink()
    res = v.verify(copy)
    assert not res.ok and list(res.problems) == [v.CLIP_MISSING]
    assert res.problems[v.CLIP_MISSING] == [str(copy / r["path"]) for r in rows[:10]]
    assert res.repair == RenderDir(copy).render_command() == f"vocalgrad render --source tones --out {copy}"
    lines = res.summary().splitlines()
    assert lines[0].startswith(f"vocalgrad verify {copy} (render): FAIL -- 216 clips, 1 sources, ")
    at = lines.index("  FAIL clip file missing: 10")
    assert lines[at + 1:at + 9] == [f"    {copy / r['path']}" for r in rows[:8]]
    assert lines[at + 9] == "    ... and 2 more"
    assert lines[at + 10] == f"  to render the missing or damaged clips again (bit-identical): {res.repair}"
    assert len(lines) == at + 11
    assert json.loads((copy / "verify.json").read_text())["ok"] is False      # the record, whatever the outcome


def test_exactly_eight_problems_are_listed_without_a_count(copy):
    rows = read_manifest(copy)
    for r in rows[:8]:
        (copy / r["path"]).unlink()
    lines = v.verify(copy, write_record=False).summary().splitlines()
    at = lines.index("  FAIL clip file missing: 8")
    assert not any("more" in line for line in lines) and len(lines) == at + 10     # 8 items, the repair line
    nine = v.Verification(copy, "hub")
    nine.add("x", [str(i) for i in range(9)])
    assert nine.summary().splitlines()[-2:] == ["    7", "    ... and 1 more"]


def test_a_changed_clip_is_named_by_its_path(copy):
    rows = read_manifest(copy)
    victim = rows[3]
    (copy / victim["path"]).write_bytes(b"not the clip")
    res = v.verify(copy, write_record=False)
    assert res.problems == {v.CLIP_CHANGED: [str(copy / victim["path"])]}
    assert res.repair is not None


def test_a_problem_no_render_repairs_gets_no_repair_command(copy):
    rows = read_manifest(copy)
    victim = next(r for r in rows if r["category"] == "echo" and r["direction"] == "increase")
    victim["direction"] = "decrease"
    write_manifest(copy, rows)
    res = v.verify(copy, write_record=False)
    assert not res.ok and res.repair is None
    assert res.problems["clip id does not match its columns (category/trajectory/tier/direction)"] == [victim["clip_id"]]
    assert res.problems["label balance (increase != decrease)"] == ["echo: increase 11, decrease 13"]


def test_a_recorded_build_digest_that_differs_is_an_identity_problem(copy):
    rows = read_manifest(copy)
    _meta(copy, build_digest=RenderDir(copy).build_digest())
    assert v.verify(copy, write_record=False).ok
    rows[0]["sha256"] = hashlib.sha256(b"x").hexdigest()
    (copy / rows[0]["path"]).write_bytes(b"x")            # the clip and its manifest sha256 agree, the digest not
    write_manifest(copy, rows)
    res = v.verify(copy, write_record=False)
    assert list(res.problems) == [v.IDENTITY] and len(res.problems[v.IDENTITY]) == 1
    assert "its clips give build digest" in res.problems[v.IDENTITY][0]
    assert res.repair == RenderDir(copy).render_command()


def test_a_changed_source_is_named_without_the_folders_summary_line(copy):
    (copy / "sources").mkdir()
    (copy / "sources" / "tone00.flac").write_bytes(b"source")
    _meta(copy, sources={"tone00": {"flac_sha256": hashlib.sha256(b"source").hexdigest()}})
    assert v.verify(copy, write_record=False).ok
    (copy / "sources" / "tone00.flac").write_bytes(b"replaced")
    res = v.verify(copy, write_record=False)
    probs = res.problems[v.IDENTITY]
    assert len(probs) == 1 and probs[0].startswith(f"source clip differs from render.json: {copy / 'sources'}")
    assert list(res.problems) == [v.IDENTITY]


def test_a_render_of_some_categories_is_partial_not_failed(tmp_path):
    d = make_render_dir(tmp_path / "r", n_sources=1, seconds=0.01, categories=("volume", "pitch"))
    res = v.verify(d, write_record=False)
    assert res.problems == {"category not in the build": ["speed", "distortion", "roughness", "noise", "echo",
                                                          "clarity", "vibration"]}
    _meta(d, categories=["pitch", "volume"])
    res = v.verify(d, write_record=False)
    assert res.ok and res.partial == ["2 of 9 categories, as asked (rendered with --categories pitch,volume); "
                                      "not rendered: speed, distortion, roughness, noise, echo, clarity, vibration"]
    assert res.summary().splitlines()[0].endswith(f"PASS (partial) -- 48 clips, 1 sources, {res.seconds:.1f} s")
    assert res.summary().splitlines()[1].startswith("  partial: 2 of 9 categories")
    assert list(res.counts["category"]) == ["pitch", "volume"]
    # a category asked for and not rendered fails
    _meta(d, categories=["pitch", "volume", "echo"])
    res = v.verify(d, write_record=False)
    assert res.problems == {"category not in the build": ["echo"]}
    assert res.partial[0].startswith("3 of 9 categories")


def test_a_beep_render_needs_the_four_beep_categories(tmp_path):
    d = make_render_dir(tmp_path / "r", n_sources=1, seconds=0.01, split="beep", categories=("pitch", "volume"))
    res = v.verify(d, write_record=False)
    want = [c for c in vg.BEEP_CATEGORIES if c not in ("pitch", "volume")]
    assert res.problems == {"category not in the build": want}


def test_cli_exit_status_json_and_a_record_that_cannot_be_written(copy, tmp_path, capsys):
    from vocalgrad_commands.cli import main

    (copy / "verify.json").mkdir()                        # the record cannot be written there
    out_json = tmp_path / "out.json"
    assert main(["verify", str(copy), "--json", str(out_json)]) == 0
    cap = capsys.readouterr()
    assert cap.out.splitlines()[0].startswith(f"vocalgrad verify {copy} (render): PASS")
    assert cap.err.startswith("vocalgrad verify: note: could not write ")
    assert cap.err.rstrip().endswith("; the result above stands, only its record is missing")
    got = json.loads(out_json.read_text())
    assert got["ok"] is True and got["n_clips"] == 216 and "checked_at" not in got
    (copy / read_manifest(copy)[0]["path"]).unlink()
    assert main(["verify", str(copy)]) == 1
    assert "FAIL clip file missing: 1" in capsys.readouterr().out
    assert main(["verify", str(tmp_path / "nothing")]) == 2


def test_cli_a_read_error_is_exit_2_with_one_line(monkeypatch, capsys):
    from vocalgrad_commands.cli import main

    def unreadable(path):
        raise PermissionError(13, "Permission denied", f"{path}/manifest.parquet")

    monkeypatch.setattr(v, "load_side", unreadable)
    assert main(["verify", "/shared/render"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.startswith("vocalgrad verify: error: ") and "/shared/render/manifest.parquet" in cap.err


def test_against_a_copy_compares_every_clip(copy, tiny):
    res = v.verify(copy, against=tiny, write_record=False)
    assert res.ok and res.against_path == tiny
    assert set(res.against) == set(vg.CATEGORY_NAMES) and all(s["exact"] == 24 for s in res.against.values())
    text = res.summary()
    assert f"  against {tiny}:" in text and "    pitch              24     24            0" in text
    assert res.to_json()["against"] == {"path": str(tiny), "categories": res.against}


def test_the_default_sdr_limit_is_60_db(copy, tiny):
    import numpy as np
    import soundfile as sf

    rows = read_manifest(copy)
    a, b = rows[0], rows[1]
    for row, target in ((a, 60.5), (b, 59.5)):           # one clip just above 60 dB against the original, one below
        path = copy / row["path"]
        y, sr = sf.read(path, dtype="int16")
        power = float(np.sum(y.astype(np.float64) ** 2))
        n = round(power / 10 ** (target / 10) / 36)       # n samples raised by 6: an error power of 36 n
        y[:n] += 6
        sf.write(path, y, sr, format="FLAC", subtype="PCM_16")
        row["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    write_manifest(copy, rows)
    res = v.verify(copy, against=tiny, write_record=False)
    (low,) = res.problems[f"SDR below 60 dB against {tiny}"]
    assert low.startswith(f"{b['clip_id']}: 59.") and low.endswith(" dB")
    assert list(res.problems) == [f"SDR below 60 dB against {tiny}"]      # a's 60.5 dB passes


# ---- the checks on hand-made clip rows ---------------------------------------------------------------
def _rows(sources=("s1",), cats=("volume",), split="test"):
    return [{"id": vg.clip_id(s, c, t, tier, d), "category": c, "tier": tier, "trajectory": t, "direction": d,
             "label": d, "source_id": s, "sha256": None, "split": split}
            for s in sources for c in cats for tier in vg.TIERS for t in vg.TRAJECTORIES for d in vg.DIRECTIONS]


def _side(tmp_path, rows, meta=None, **kw):
    return v.Side(tmp_path, "hub", {"categories": ["volume"], **(meta or {})}, rows, lambda ids=None: iter(()), **kw)


def _structure(side):
    res = v.Verification(side.path, side.kind)
    v._check_structure(side, res)
    return res


def test_rows_of_a_complete_build_have_no_problem(tmp_path):
    res = _structure(_side(tmp_path, _rows(("s1", "s2"))))
    assert res.problems == {} and res.n_sources == 2
    assert res.counts == {"category": {"volume": 48}, "tier": {"low": 16, "medium": 16, "high": 16},
                          "trajectory": {t: 12 for t in vg.TRAJECTORIES}, "direction": {"increase": 24, "decrease": 24}}


def test_a_duplicate_row(tmp_path):
    rows = _rows()
    rows.append(dict(rows[0]))
    res = _structure(_side(tmp_path, rows))
    t0, tier0 = rows[0]["trajectory"], rows[0]["tier"]
    assert res.problems == {
        "duplicate clip id": [rows[0]["id"]],
        "unequal clips per tier": [f"volume: { {t: 8 for t in vg.TIERS} | {tier0: 9} }"],
        "unequal clips per trajectory": [f"volume: {dict({t: 6 for t in vg.TRAJECTORIES}, **{t0: 7})}"],
        "label balance (increase != decrease)": ["volume: increase 13, decrease 12"]}


def test_label_balance_of_a_category_with_one_label_or_none(tmp_path):
    rows = _rows(cats=("volume", "pitch"))
    one = [r for r in rows if r["category"] == "volume" and r["direction"] == "decrease"][:1]
    neither = [{**r, "label": "?"} for r in rows if r["category"] == "pitch"][:1]
    res = _structure(_side(tmp_path, one + neither, {"categories": ["volume", "pitch"]}))
    assert res.problems["label balance (increase != decrease)"] == ["volume: increase 0, decrease 1"]


def test_a_missing_row_is_a_missing_condition(tmp_path):
    rows = _rows(("s1", "s2"))
    gone = rows.pop(30)
    res = _structure(_side(tmp_path, rows))
    assert res.problems[v.CONDITION_MISSING] == [gone["id"]]
    assert set(res.problems) == {v.CONDITION_MISSING, "unequal clips per tier", "unequal clips per trajectory",
                                 "label balance (increase != decrease)"}


def test_a_wrong_label_and_unknown_values(tmp_path):
    rows = _rows()
    rows[0]["label"] = "decrease" if rows[0]["direction"] == "increase" else "increase"
    rows[1]["tier"] = "extreme"
    rows[2]["direction"] = "up"
    res = _structure(_side(tmp_path, rows))
    assert res.problems["label differs from direction"] == [rows[0]["id"], rows[2]["id"]]
    assert res.problems["unknown vocabulary value"] == [f"{rows[1]['id']} (tier='extreme')",
                                                        f"{rows[2]['id']} (direction='up')"]
    assert res.problems["clip id does not match its columns (category/trajectory/tier/direction)"] == [
        rows[1]["id"], rows[2]["id"]]


def test_a_selected_source_the_render_skipped(tmp_path):
    side = _side(tmp_path, _rows(("s1",)), selected_sources=["s1", "s2", "s3"], skipped={"s2": "no speech found"})
    res = _structure(side)
    assert res.n_sources == 3
    assert res.problems["selected source skipped by the render"] == ["s2: no speech found"]
    assert res.problems[v.CONDITION_MISSING] == [vg.clip_id("s3", "volume", t, tier, d) for t in vg.TRAJECTORIES
                                                 for tier in vg.TIERS for d in vg.DIRECTIONS]   # s2's not listed


def test_the_expected_categories_follow_the_split(tmp_path):
    rows = _rows(cats=("pitch",), split="beep")
    assert v._expected_categories(v.Side(tmp_path, "hub", {}, rows, None)) == list(vg.BEEP_CATEGORIES)
    assert v._expected_categories(v.Side(tmp_path, "hub", {"split": "test"}, rows, None)) == list(vg.CATEGORY_NAMES)
    assert v._expected_categories(v.Side(tmp_path, "hub", {}, [], None)) == list(vg.CATEGORY_NAMES)
    res = _structure(v.Side(tmp_path, "hub", {}, rows, None))
    assert res.problems == {"category not in the build": [c for c in vg.BEEP_CATEGORIES if c != "pitch"]}


def test_sha256_missing_and_changed_bytes(tmp_path):
    rows = [{"id": "a", "path": "clips/a.flac", "sha256": hashlib.sha256(b"a").hexdigest()},
            {"id": "b", "path": "clips/b.flac", "sha256": hashlib.sha256(b"b").hexdigest()},
            {"id": "c", "sha256": hashlib.sha256(b"c").hexdigest()},
            {"id": "d", "path": "clips/d.flac", "sha256": None},
            {"id": "e", "sha256": None}]
    data = {"a": b"a", "b": b"B", "c": b"C", "d": b"anything", "e": None, "f": None}
    side = v.Side(tmp_path, "hub", {}, rows, lambda ids=None: iter(data.items()))
    res = v.Verification(tmp_path, "hub")
    v._check_bytes(side, res)
    assert res.problems == {v.CLIP_MISSING: ["e", "f"], v.CLIP_CHANGED: [str(tmp_path / "clips/b.flac"), "c"]}


# ---- frozen ids ------------------------------------------------------------------------------------------
def _frozen(tmp_path, ids, meta, selected=None):
    rows = [{"source_id": i} for i in ids]
    side = v.Side(tmp_path, "render", {"selection": "frozen", **meta}, rows, None, selected_sources=selected)
    res = v.Verification(tmp_path, "render")
    v._check_frozen(side, res)
    return res


def test_frozen_ids_absent_foreign_and_asked_for(tmp_path):
    items = [r.item_id for r in frozen_rows("vctk", "test")]
    res = _frozen(tmp_path, items[1:] + ["intruder"], {"source": "vctk:/data/VCTK"})
    assert res.problems == {"frozen vctk test item absent (a partial build, e.g. --sources N)": [items[0]],
                            "source id not in the frozen selection": ["intruder"]}
    assert res.partial == []
    res = _frozen(tmp_path, items[:2], {"domain": "vctk", "split": "test"}, selected=items[:3])
    assert res.partial == [f"3 of the {len(items)} frozen vctk test items, as asked (selection.csv; --sources N)"]
    assert res.problems == {"frozen vctk test item absent (a partial build, e.g. --sources N)": [items[2]]}
    assert _frozen(tmp_path, items, {"domain": "vctk"}).problems == {}
    assert _frozen(tmp_path, items, {"domain": "vctk", "selection": "sample"}).problems == {}   # not frozen: no check
    unknown = _frozen(tmp_path, items, {"domain": "nowhere"})
    assert list(unknown.problems) == ["frozen selection unknown"] and len(unknown.problems["frozen selection unknown"]) == 1


# ---- sweeps ----------------------------------------------------------------------------------------------
def _levels(medians: dict, cat="clarity", unit="octaves", null=()):
    return [{"category": cat, "magnitude": m, "magnitude_realised": val, "realised_unit": unit,
             "level_null": m in null} for m, val in medians.items()]


def test_a_fall_is_named_against_the_highest_level_before_it():
    rows = _levels({0.0: 10.0, 1.0: 14.0, 2.0: 12.0, 3.0: 11.0, 4.0: 16.0, 5.0: 15.0}) + _levels({1.0: 1.0, 2.0: 0.0}, cat="echo", unit="")
    assert v.realised_out_of_order(rows, slack=0.25) == [
        "clarity: level 2 realised 12 octaves, below level 1's 14 (medians over the clips not level_null)",
        "clarity: level 3 realised 11 octaves, below level 1's 14 (medians over the clips not level_null)",
        "echo: level 2 realised 0 , below level 1's 1 (medians over the clips not level_null)"]
    # a fall of exactly the slack (0.25 of the range 6) is not one
    assert v.realised_out_of_order(_levels({0.0: 10.0, 1.0: 16.0, 2.0: 14.5}), slack=0.25) == []
    assert v.realised_out_of_order(_levels({0.0: 10.0, 1.0: 16.0, 2.0: 14.4}), slack=0.25) != []


def test_levels_without_a_realised_value_or_null_are_left_out():
    assert v.realised_out_of_order(_levels({1.0: 5.0})) == []                                  # one level
    assert v.realised_out_of_order(_levels({1.0: 5.0, 2.0: 1.0}, null=(2.0,))) == []
    assert v.realised_out_of_order(_levels({1.0: 5.0, 2.0: None, 3.0: 6.0})) == []
    assert v.realised_out_of_order(_levels({1.0: 5.0, 2.0: 4.0, 3.0: 6.0}, null=(1.0,))) == []
    # a category of one level does not end the check of the categories after it
    assert v.realised_out_of_order(_levels({1.0: 5.0}, cat="brightness") + _levels({1.0: 5.0, 2.0: 1.0})) == [
        "clarity: level 2 realised 1 octaves, below level 1's 5 (medians over the clips not level_null)"]


def test_sweep_rows_without_a_magnitude_are_not_checked(tmp_path):
    rows = _levels({0.0: 0.0, 1.0: 1.0, 2.0: 0.2}) + [{"category": "clarity", "magnitude": None}]
    res = v.Verification(tmp_path, "render")
    v._check_sweep(v.Side(tmp_path, "render", {"sweep": {"levels": {}}}, rows, None), res)
    assert res.problems == {v.NOT_RISING: ["clarity: level 2 realised 0.2 octaves, below level 1's 1 (medians over "
                                           "the clips not level_null)"]}
    none = v.Verification(tmp_path, "render")
    v._check_sweep(v.Side(tmp_path, "render", {"sweep": {"levels": {}}}, rows[-1:], None), none)
    assert none.problems == {}


def test_verification_add_and_format():
    assert v.Verification("p", "hub").summary() == "vocalgrad verify p (hub): PASS -- 0 clips, 0 sources, 0.0 s"
    res = v.Verification("p", "hub")
    res.add("x", [])
    assert res.problems == {} and res.ok
    res.add("x", iter(["a"]))
    res.add("x", ["b"])
    assert res.problems == {"x": ["a", "b"]} and not res.ok
    assert v._fmt_db(None) == "-" and v._fmt_db(float("inf")) == "exact" and v._fmt_db(61.26) == "61.3 dB"
    # a kind with no items (problems set by hand) is passed over, not the end of the list
    res = v.Verification("p", "hub", problems={"a": [], "b": ["x"]})
    assert res.summary().splitlines()[1:] == ["  FAIL b: 1", "    x"]


# ---- Hub folders -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hub(tiny, tmp_path_factory):
    from generation.hub import build_hub

    out = tmp_path_factory.mktemp("h") / "hub"
    build_hub([tiny], out, sources=False)
    return out


def test_a_hub_folder_passes_and_gets_no_record(hub, tmp_path):
    d = tmp_path / "hub"
    shutil.copytree(hub, d)
    res = v.verify(d)
    assert res.ok and res.kind == "hub" and res.n_clips == 216 and res.repair is None
    assert not (d / "verify.json").exists()


def test_a_hub_config_whose_digest_differs_from_build_json(hub, tmp_path):
    d = tmp_path / "hub"
    shutil.copytree(hub, d)
    rec = json.loads((d / "build.json").read_text())
    rec["configs"]["pitch"]["build_digest"] = "0" * 64
    (d / "build.json").write_text(json.dumps(rec))
    res = v.verify(d)
    assert list(res.problems) == ["build digest differs from build.json"]
    (line,) = res.problems["build digest differs from build.json"]
    assert line.startswith("pitch: its shards give ")
    assert res.repair is None and not (d / "verify.json").exists()       # a render command repairs no Hub folder


def test_the_sweep_configs_of_a_hub_folder_are_checked(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _levels({0.0: 0.0, 1.0: 1.0, 2.0: 0.2})
    (tmp_path / "sweep_clarity").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "sweep_clarity" / "test-0.parquet")
    (tmp_path / "sweep_echo").mkdir()
    (tmp_path / "sweep_echo" / "test-0.parquet").write_bytes(b"PAR1 damaged")
    (tmp_path / "pitch").mkdir()                         # not a sweep config: not read
    pq.write_table(pa.Table.from_pylist(_levels({0.0: 1.0, 1.0: 0.0}, cat="pitch")), tmp_path / "pitch" / "t.parquet")
    (tmp_path / "sweep_noise").mkdir()                   # a shard without the sweep columns: not read
    pq.write_table(pa.Table.from_pylist([{"category": "noise", "magnitude": 1.0}]), tmp_path / "sweep_noise" / "t.parquet")
    res = v.Verification(tmp_path, "hub")
    v._check_sweep(v.Side(tmp_path, "hub", {}, [], None), res)
    assert res.problems[v.NOT_RISING] == ["clarity: level 2 realised 0.2 octaves, below level 1's 1 (medians over "
                                          "the clips not level_null)"]
    (bad,) = res.problems[v.UNREADABLE]
    assert bad.startswith(f"{tmp_path / 'sweep_echo' / 'test-0.parquet'}: ")
    assert ": ArrowInvalid: " in bad
    assert list(res.problems) == [v.UNREADABLE, v.NOT_RISING]
