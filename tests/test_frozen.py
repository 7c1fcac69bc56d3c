"""The paper's frozen selections: package data, VCTK readers (both layouts), render with recorded bounds."""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter

import pytest

import vocalgrad as vg
from generation import render as render_mod
from generation import render_unit
from generation.frozen import annotation_subset, frozen_rows, recorded_span, selection_report, vctk_test_speakers
from generation.sources.selection import SelectionError
from generation.sources import SourceOptions, SourceSpecError, read_sources
from tests._frozen_helpers import make_frozen_vctk

#: Two utterances rendered in full: the first two test items in render order (p226_01, p230_01).
FULL = {"p226_106": (4.570667, 0.3, 4.270667), "p230_191": (4.442292, 1.28, 4.18),
        "p225_063": (3.159667, 1.35, 3.04)}  # the first train item (p225_01)


@pytest.fixture(scope="module", params=["0.80", "0.92"])
def corpus(request, tmp_path_factory):
    layout = request.param
    return layout, make_frozen_vctk(tmp_path_factory.mktemp(f"frozen{layout}"), layout, full=FULL)


def test_manifests_hold_the_papers_counts():
    test, train = frozen_rows("vctk", "test"), frozen_rows("vctk", "train")
    assert len(test) == 100 and len({r.corpus_id for r in test}) == 100
    assert len(train) == 500 and len({r.corpus_id for r in train}) == 500
    spk = vctk_test_speakers()
    assert Counter(r.item_id.split("_")[0] for r in test) == {s: 2 for s in spk}
    report = selection_report()
    assert Counter(m["gender"] for m in spk.values()) == report["gender_counts"] == {"F": 25, "M": 25}
    assert Counter(m["accent_group"] for m in spk.values()) == report["accent_counts"]
    assert len({r.corpus_id.split("_")[0] for r in train}) == 57
    assert not {r.corpus_id.split("_")[0] for r in train} & set(spk)  # train speakers disjoint from test
    assert all(0 <= r.onset_sec < r.offset_sec for r in test + train)
    durations = [float(r.extra["audio_duration_sec"]) for r in test]
    assert min(durations) == report["min_audio_duration_sec_in_test_source"] and min(durations) >= 3.0
    p = next(r for r in test if r.item_id == "p226_01")
    assert (p.corpus_id, p.onset_sec, p.offset_sec) == ("p226_106", 1.66, 4.29)
    assert p.text == "It was some time before she found out he was safe."


def test_recorded_span_follows_the_authors_rounding():
    assert recorded_span(1.66, 4.29, 219392, 48000) == (79680, 205920)
    assert recorded_span(0.5, 9.0, 48000, 48000) == (24000, 48000)  # clamped to the clip
    assert recorded_span(2.0, 1.0, 1000, 48000) == (0, 1000)  # inverted: the whole clip


def test_frozen_ids_come_out_exactly_in_both_layouts(corpus):
    layout, root = corpus
    items = read_sources(f"vctk:{root}")
    expected = {r.item_id: r for r in frozen_rows("vctk", "test")}
    assert {it.source_id for it in items} == set(expected) and len(items) == 100
    assert [it.source_id for it in items[:3]] == ["p226_01", "p230_01", "p236_01"]  # NN then speaker
    for it in items:
        row = expected[it.source_id]
        assert it.sentence_id == row.corpus_id == it.extra["reference_clip_id"] == it.extra["corpus_id"]
        assert it.text == row.text  # the paper's transcript, not the corpus file's
        assert it.speaker_id == it.source_id.split("_")[0] and it.extra["vctk_layout"] == layout
        if layout == "0.80":
            assert it.extra["selection"] == "frozen"
            assert (it.extra["recorded_onset_sec"], it.extra["recorded_offset_sec"]) == (row.onset_sec, row.offset_sec)
            assert it.audio.endswith(f"wav48/{it.speaker_id}/{row.corpus_id}.wav")
        else:
            assert it.extra["selection"] == "frozen-redetected" and "recorded_onset_sec" not in it.extra
            assert it.audio.endswith(f"{row.corpus_id}_mic1.flac")
    assert Counter(it.gender for it in items) == {"F": 50, "M": 50}
    train = read_sources(f"vctk:{root}", SourceOptions(split="train"))
    assert {it.source_id for it in train} == {r.item_id for r in frozen_rows("vctk", "train")}
    assert {it.sentence_id for it in train} == {r.corpus_id for r in frozen_rows("vctk", "train")}
    assert train[0].text == f"Corpus transcript of {train[0].sentence_id}."  # train text from the corpus


def test_noise_seeds_of_frozen_items(corpus, monkeypatch):
    """The render seeds noise clips from the test item id and the VCTK utterance id (benchmark.md §4a)."""
    _, root = corpus
    item = next(it for it in read_sources(f"vctk:{root}") if it.source_id == "p374_02")
    seen = {}

    def fake_transform(x, sr, schedule, params, cache=None):
        seen["seed"] = params.seed
        raise StopIteration

    monkeypatch.setattr(render_unit, "get_transform", lambda name: fake_transform)  # what render_clip calls
    rec = render_mod.load_recipe("faithful-v1")
    import numpy as np

    from generation.span import Span

    with pytest.raises(StopIteration):
        render_mod.render_clip(np.zeros(48000, np.float32), item, rec, Span(0, 48000), category="noise",
                               tier="medium", trajectory="quad_last_flat", direction="decrease")
    key = "42:p374_02__p374_100__quad_last_flat__mid__down"  # typed from the reference's seed string
    assert seen["seed"] == int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def _render(root, out, *extra):
    from vocalgrad_commands.cli import main

    return main(["render", "--source", f"vctk:{root}", "--out", str(out), "--sources", "2",
                 "--categories", "volume", "--jobs", "1", "--quiet", *extra])


def test_render_uses_recorded_bounds_and_reports_disagreement(corpus, tmp_path, capsys):
    layout, root = corpus
    out = tmp_path / "out"
    assert _render(root, out) == 0
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "manifest.parquet").to_pylist()
    assert len(rows) == 48 and {r["source_id"] for r in rows} == {"p226_01", "p230_01"}
    spans = {r["source_id"]: (r["source_onset_sec"], r["source_offset_sec"]) for r in rows}
    meta = json.loads((out / "render.json").read_text())
    if layout == "0.80":
        assert spans == {"p226_01": (1.66, 4.29), "p230_01": (1.28, 4.18)}  # recorded, not detected
        assert meta["selection"] == "frozen" and "instance the paper evaluated" in meta["selection_note"]
        with open(out / "span_check.csv", newline="") as fh:
            checks = list(csv.DictReader(fh))
        # p226_106's fake speech starts at 0.3 s: listed; p230_191's matches the recorded bounds: not listed
        assert [c["source_id"] for c in checks] == ["p226_01"]
        assert float(checks[0]["detected_onset_sec"]) == pytest.approx(0.3, abs=0.011)
        assert float(checks[0]["onset_diff_ms"]) == pytest.approx(-1360, abs=11)
        assert "1 frozen sources" in capsys.readouterr().out
    else:
        assert spans["p226_01"][0] == pytest.approx(0.3, abs=0.011)  # re-detected on the trimmed file
        assert meta["selection"] == "frozen-redetected" and "different dataset instance" in meta["selection_note"]
        assert not (out / "span_check.csv").exists()


def test_missing_utterances_are_listed_with_where_to_find_them(tmp_path):
    root = make_frozen_vctk(tmp_path / "a", "0.80", skip=("p226_106", "p376_161"))
    with pytest.raises(SelectionError) as err:
        read_sources(f"vctk:{root}")
    msg = str(err.value)
    assert "2 are missing" in msg and "p226_106" in msg and "p376_161" in msg and "VCTK 0.80" in msg
    assert "--selection sample" in msg
    root = make_frozen_vctk(tmp_path / "b", "0.92")
    (root / "wav48_silence_trimmed" / "p226" / "p226_106_mic1.flac").unlink()
    with pytest.raises(SelectionError, match=r"1 of them exist as _mic2\.flac: use --vctk-mic 2"):
        read_sources(f"vctk:{root}")
    assert len(read_sources(f"vctk:{root}", SourceOptions(vctk_mic=2))) == 100


def test_sampler_options_need_selection_sample(corpus):
    _, root = corpus
    with pytest.raises(SourceSpecError, match=r"--allow-small, --test-speakers .*--selection sample"):
        read_sources(f"vctk:{root}", SourceOptions(allow_small=True, test_speakers=4))
    with pytest.raises(SourceSpecError, match="unknown selection 'paper'"):
        read_sources(f"vctk:{root}", SourceOptions(selection="paper"))


def test_sample_selection_is_recorded_as_a_new_instance(tmp_path):
    from tests._sources_helpers import make_vctk

    root = make_vctk(tmp_path / "v", "0.80")
    out = tmp_path / "out"
    assert _render(root, out, "--selection", "sample", "--allow-small", "--seed", "7") == 0
    meta = json.loads((out / "render.json").read_text())
    assert meta["selection"] == "sample" and "new dataset instance" in meta["selection_note"]
    assert "seed 7" in meta["selection_note"]


def test_annotation_subsets_are_the_papers_50_first_utterances():
    firsts = {r.item_id for r in frozen_rows("vctk", "test") if r.item_id.endswith("_01")}
    for cat in vg.CATEGORY_NAMES:
        sub = annotation_subset(cat)
        assert len(sub) == 50 and {s[0] for s in sub} == firsts, cat
        assert all(t in vg.TRAJECTORIES and tier in vg.TIERS and d in vg.DIRECTIONS for _, t, tier, d in sub)
    assert annotation_subset("volume")[0] == ("p374_01", "linear", "low", "increase")


def test_bare_path_suggests_the_prefix(tmp_path, corpus):
    _, root = corpus
    with pytest.raises(SourceSpecError, match=rf"bare path; name its kind: --source vctk:{root}"):
        read_sources(str(root))
    (tmp_path / "clips").mkdir()
    with pytest.raises(SourceSpecError, match=rf"--source folder:{tmp_path / 'clips'}"):
        read_sources(str(tmp_path / "clips"))


def test_failed_render_leaves_no_empty_folder(tmp_path, capsys):
    from vocalgrad_commands.cli import main

    out = tmp_path / "never"
    assert main(["render", "--source", f"vctk:{tmp_path / 'nothing'}", "--out", str(out), "--quiet"]) == 2
    assert not out.exists()
    assert main(["render", "--source", str(tmp_path), "--out", str(out), "--quiet"]) == 2
    assert "folder:" in capsys.readouterr().err and not out.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    assert main(["render", "--source", "vctk:", "--out", str(kept), "--quiet"]) == 2
    assert kept.is_dir()  # a folder that existed before is left alone


def test_train_render_uses_frozen_ids_and_bounds(corpus, tmp_path):
    layout, root = corpus
    out = tmp_path / "train"
    assert _render(root, out, "--split", "train") == 0
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "manifest.parquet").to_pylist()
    first = [r for r in rows if r["source_id"] == "p225_01"]
    assert len(first) == 24 and {r["sentence_id"] for r in first} == {"p225_063"}
    if layout == "0.80":
        assert {(r["source_onset_sec"], r["source_offset_sec"]) for r in first} == {(1.35, 3.04)}
    else:
        assert all(r["source_onset_sec"] == pytest.approx(1.35, abs=0.011) for r in first)  # re-detected
    assert json.loads((out / "render.json").read_text())["split"] == "train"
