"""Source readers: VCTK (both layouts), folder + metadata.csv, demo, bad input."""

from __future__ import annotations

import csv
import os
import pickle
from collections import Counter
from pathlib import Path

import pytest
import soundfile as sf

from generation.audio import AudioReadError
from generation.sources.selection import SelectionError, normalise_text
from generation.sources import (
    DEMO_DIR,
    SourceOptions,
    SourceSpecError,
    load_source_audio,
    read_sources,
    vctk_candidates,
)
from tests._sources_helpers import SPEAKERS, make_folder, make_vctk, transcript

SMALL = dict(test_speakers=4, test_per_speaker=2, train_utterances=6, selection="sample")
GENDER = {spk: g for spk, g, _ in SPEAKERS}


# ------------------------------------------------------------------------------------------ VCTK
@pytest.fixture(scope="module")
def vctk080(tmp_path_factory):
    return make_vctk(tmp_path_factory.mktemp("v080"), "0.80")


@pytest.fixture(scope="module")
def vctk092(tmp_path_factory):
    return make_vctk(tmp_path_factory.mktemp("v092"), "0.92")


def test_vctk_080_candidates(vctk080):
    items = vctk_candidates(vctk080)
    assert len(items) == 8 * 4
    it = next(i for i in items if i.source_id == "p227_003")
    assert it.audio.endswith("wav48/p227/p227_003.wav")
    assert (it.speaker_id, it.gender, it.accent) == ("p227", "M", "Scottish")
    assert it.text == "Sentence 3 read by speaker p227."
    assert it.extra["vctk_layout"] == "0.80" and it.extra["vctk_mic"] == ""


@pytest.mark.parametrize("mic", [1, 2])
def test_vctk_092_mic_choice(vctk092, mic):
    items = vctk_candidates(vctk092, mic=mic)
    assert len(items) == 8 * 4
    assert all(it.audio.endswith(f"_mic{mic}.flac") for it in items)
    assert {it.extra["vctk_layout"] for it in items} == {"0.92"}
    assert {it.extra["vctk_mic"] for it in items} == {mic}
    assert {it.source_id for it in items} == {it.sentence_id for it in items}
    assert "p225_001" in {it.source_id for it in items}  # mic suffix stripped from the utterance id


def test_vctk_test_selection_follows_spec_naming(vctk092):
    items = read_sources(f"vctk:{vctk092}", SourceOptions(**SMALL))
    assert len(items) == 8
    for it in items:
        assert it.source_id == f"{it.speaker_id}_{it.source_id[-2:]}" and it.source_id[-2:] in ("01", "02")
        assert it.sentence_id.startswith(it.speaker_id + "_") and len(it.sentence_id) == len("p226_106")
        assert it.extra["vctk_layout"] == "0.92" and it.extra["vctk_mic"] == 1
        assert it.extra["reference_clip_id"] == it.sentence_id  # noise seed of benchmark.md §4a
        assert sf.info(it.audio).duration >= 3.0  # utterance 4 (1.5 s) is never chosen
    assert Counter(GENDER[it.speaker_id] for it in items) == {"F": 4, "M": 4}
    again = read_sources(f"vctk:{vctk092}", SourceOptions(**SMALL))
    assert [(i.source_id, i.sentence_id) for i in again] == [(i.source_id, i.sentence_id) for i in items]


def test_vctk_same_selection_in_both_layouts(vctk080, vctk092):
    a = read_sources(f"vctk:{vctk080}", SourceOptions(**SMALL))
    b = read_sources(f"vctk:{vctk092}", SourceOptions(**SMALL, vctk_mic=2))
    assert [(i.source_id, i.sentence_id) for i in a] == [(i.source_id, i.sentence_id) for i in b]


def test_vctk_train_split(vctk080):
    test = read_sources(f"vctk:{vctk080}", SourceOptions(**SMALL))
    train = read_sources(f"vctk:{vctk080}", SourceOptions(**SMALL, split="train"))
    assert len(train) == 6
    assert not {i.speaker_id for i in train} & {i.speaker_id for i in test}
    texts = [normalise_text(i.text) for i in train]
    assert len(set(texts)) == 6 and not set(texts) & {normalise_text(i.text) for i in test}


def test_vctk_nested_root(tmp_path):
    make_vctk(tmp_path, "0.80", nested=True)
    items = vctk_candidates(tmp_path)
    assert "/VCTK-Corpus/wav48/" in items[0].audio


def test_vctk_wrong_layout_names_path_and_content(tmp_path):
    (tmp_path / "wav16").mkdir()
    (tmp_path / "readme.txt").write_text("x")
    with pytest.raises(SourceSpecError) as err:
        read_sources(f"vctk:{tmp_path}")
    msg = str(err.value)
    assert str(tmp_path) in msg and "wav48_silence_trimmed" in msg and "wav16" in msg


def test_vctk_missing_speaker_info_and_txt(tmp_path):
    make_vctk(tmp_path, "0.92", mics=(1,))
    (tmp_path / "speaker-info.txt").unlink()
    with pytest.raises(SourceSpecError, match=r"speaker-info\.txt is missing"):
        read_sources(f"vctk:{tmp_path}")
    make_vctk(tmp_path, "0.92", mics=(1,))
    for f in (tmp_path / "txt").rglob("*.txt"):
        f.unlink()
    for d in sorted((tmp_path / "txt").iterdir()):
        d.rmdir()
    (tmp_path / "txt").rmdir()
    with pytest.raises(SourceSpecError, match=rf"{tmp_path / 'txt'} is missing"):
        read_sources(f"vctk:{tmp_path}")


def test_vctk_missing_mic_files(tmp_path):
    make_vctk(tmp_path, "0.92", mics=(1,))
    with pytest.raises(SourceSpecError, match=r"no audio files named pNNN/pNNN_MMM_mic2\.flac"):
        read_sources(f"vctk:{tmp_path}", SourceOptions(vctk_mic=2))
    with pytest.raises(SourceSpecError, match="must be 1 or 2"):
        read_sources(f"vctk:{tmp_path}", SourceOptions(vctk_mic=3))


def test_vctk_unreadable_audio_names_the_file(tmp_path):
    make_vctk(tmp_path, "0.80")
    bad = tmp_path / "wav48" / "p225" / "p225_002.wav"
    bad.write_bytes(b"not a wav file at all")
    with pytest.raises(AudioReadError, match=str(bad)):
        read_sources(f"vctk:{tmp_path}", SourceOptions(**SMALL))


def test_vctk_too_few_speakers(vctk080):
    with pytest.raises(SelectionError) as err:
        read_sources(f"vctk:{vctk080}", SourceOptions(selection="sample"))  # paper default: 50 speakers
    msg = str(err.value)
    assert str(vctk080) in msg and "found 8 eligible speakers" in msg and "F: 4, M: 4" in msg
    small = read_sources(f"vctk:{vctk080}", SourceOptions(allow_small=True, selection="sample"))
    assert len(small) == 16 and len({i.speaker_id for i in small}) == 8


def test_vctk_item_audio_is_readable_and_picklable(vctk092):
    it = read_sources(f"vctk:{vctk092}", SourceOptions(**SMALL))[0]
    y, sr = load_source_audio(pickle.loads(pickle.dumps(it)))
    assert sr == 8000 and abs(len(y) / sr - sf.info(it.audio).duration) < 1e-6 and y.max() > 0.1


# ---------------------------------------------------------------------------------------- folder
def test_folder_with_metadata_is_used_as_listed(tmp_path):
    make_folder(tmp_path)
    items = read_sources(f"folder:{tmp_path}")  # no selection: the folder is the selection
    with open(tmp_path / "metadata.csv", newline="") as fh:
        listed = list(csv.DictReader(fh))
    assert [it.extra["file_name"] for it in items] == [r["file_name"] for r in listed]
    assert Counter(i.gender for i in items) == {"F": 12, "M": 12}  # "female"/"male" normalised
    for it, row in zip(items, listed):
        assert it.text == row["text"] and it.accent == row["accent"] and it.speaker_id == row["speaker_id"]
        assert it.source_id == row["file_name"].rsplit(".", 1)[0].replace("/", "-")
        assert it.audio == str(tmp_path / row["file_name"])
    assert read_sources(f"folder:{tmp_path}", SourceOptions(split="train")) == items


def test_folder_without_metadata_uses_subfolders_as_speakers(tmp_path):
    make_folder(tmp_path, with_metadata=False)
    (tmp_path / "top.wav").write_bytes((tmp_path / "p225" / "utt2.wav").read_bytes())
    (tmp_path / "notes.txt").write_text("not audio")
    items = read_sources(f"folder:{tmp_path}")
    assert len(items) == 25 and all(i.gender == "" and i.text == "" for i in items)
    assert [i.source_id for i in items] == sorted(i.source_id for i in items)
    top = next(i for i in items if i.source_id == "top")
    assert top.speaker_id == ""
    assert all(i.sentence_id == i.source_id for i in items)
    assert {i.source_id.split("-")[0] for i in items if i.speaker_id} == {i.speaker_id for i in items if i.speaker_id}


def test_folder_metadata_errors(tmp_path):
    make_folder(tmp_path)
    meta = tmp_path / "metadata.csv"
    rows = list(csv.DictReader(open(meta)))
    rows[3]["file_name"] = "p226/missing.wav"
    with open(meta, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(SourceSpecError, match=r"metadata\.csv, line 5: audio file 'p226/missing\.wav' not found"):
        read_sources(f"folder:{tmp_path}")
    meta.write_text("path,speaker\nx.wav,a\n")
    with pytest.raises(SourceSpecError, match=r"needs a 'file_name' column \(found: path, speaker\)"):
        read_sources(f"folder:{tmp_path}")


def test_folder_bad_paths(tmp_path):
    with pytest.raises(SourceSpecError, match="is not a folder"):
        read_sources(f"folder:{tmp_path / 'nope'}")
    with pytest.raises(SourceSpecError, match="no audio files"):
        read_sources(f"folder:{tmp_path}")


# ------------------------------------------------------------------------------------------ demo
def _demo_rows():
    with open(DEMO_DIR / "metadata.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_demo_test_split_shape():
    items = read_sources("demo")
    assert len(items) == 100 and len({i.source_id for i in items}) == 100
    voices = Counter(i.speaker_id for i in items)
    assert len(voices) >= 8
    genders = {i.speaker_id: i.gender for i in items}
    assert set(genders.values()) == {"F", "M"}
    assert len({i.text for i in items}) == 100
    # the first 10 items are 10 different voices
    assert len({i.speaker_id for i in items[:10]}) == 10


def test_demo_files_match_metadata():
    total = 0
    for row in _demo_rows():
        path = DEMO_DIR / row["file_name"]
        info = sf.info(path)
        assert info.format == "FLAC" and info.subtype == "PCM_16" and info.channels == 1
        assert abs(info.duration - float(row["duration"])) < 1e-3
        assert 3.0 <= info.duration <= 6.0, row["source_id"]
        total += path.stat().st_size
    assert total < 12e6
    assert {r["file_name"] for r in _demo_rows()} == {
        str(p.relative_to(DEMO_DIR)) for p in DEMO_DIR.rglob("*.flac")}


def test_demo_train_pool_is_disjoint():
    test = read_sources("demo")
    train = read_sources("demo", SourceOptions(split="train"))
    assert len(train) == 50
    assert not {i.speaker_id for i in train} & {i.speaker_id for i in test}
    assert not {normalise_text(i.text) for i in train} & {normalise_text(i.text) for i in test}
    assert {i.gender for i in train} == {"F", "M"}


def test_demo_audio_loads():
    it = read_sources("demo")[0]
    y, sr = load_source_audio(it)
    assert sr == 22050 and 0.05 < abs(y).max() < 0.75
    assert abs(y[: int(0.2 * sr)]).max() == 0.0  # digital silence before the speech


def test_demo_refuses_beep_and_arguments():
    with pytest.raises(SourceSpecError, match="tones"):
        read_sources("demo", SourceOptions(split="beep"))
    with pytest.raises(SourceSpecError, match="takes no argument"):
        read_sources("demo:x")


# ----------------------------------------------------------------------------------------- other
def test_tones_still_work():
    items = read_sources("tones")
    assert len(items) == 10 and items[0].source_id.startswith("tone00")
    assert any(i.source_id.split("_")[1] == "harm" for i in items)
    beep = read_sources("tones", SourceOptions(split="beep"))
    assert all("_pure_" in i.source_id for i in beep)


def test_unknown_prefix_lists_known_ones():
    with pytest.raises(SourceSpecError) as err:
        read_sources("librispeech:/x")
    for prefix in ("demo", "folder", "hf", "tones", "vctk"):
        assert prefix in str(err.value)


def test_unknown_count_override(vctk080):
    with pytest.raises(SourceSpecError, match="unknown selection count"):
        read_sources(f"vctk:{vctk080}", SourceOptions(counts={"speakers": 3}, selection="sample"))


def test_counts_override_by_name(vctk080):
    items = read_sources(f"vctk:{vctk080}", SourceOptions(counts={"test_speakers": 3, "test_per_speaker": 1},
                                                          selection="sample"))
    assert len(items) == 3 and len({i.speaker_id for i in items}) == 3



def test_demo_metadata_matches_the_generation_script(monkeypatch):
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "scripts" / "make_demo_voices.py"
    spec = importlib.util.spec_from_file_location("make_demo_voices", path)
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)
    spec.loader.exec_module(script)  # imports no TTS engine at module level
    rows = _demo_rows()
    assert [r["text"] for r in rows if r["split"] == "test"] == list(script.TEST_SENTENCES)
    assert [r["text"] for r in rows if r["split"] == "train"] == list(script.TRAIN_SENTENCES)
    voices = {v.speaker_id: v for v in script.VOICES}
    for r in rows:
        v = voices[r["speaker_id"]]
        assert (r["engine"], r["voice"], r["gender"], r["accent"], r["split"]) == (
            v.engine, v.name, v.gender, v.accent, v.split)


def test_reader_output_is_validated(monkeypatch):
    from generation import sources
    from generation.sources import base

    monkeypatch.setitem(base._READERS, "bad", lambda arg, opts: [sources.SourceItem(arg, "x.wav")])
    with pytest.raises(SourceSpecError, match=r"only letters, digits.*'a b'"):
        read_sources("bad:a b")
    monkeypatch.setitem(base._READERS, "dup", lambda arg, opts: [sources.SourceItem("a", "x")] * 2)
    with pytest.raises(SourceSpecError, match=r"duplicate source ids \['a'\]"):
        read_sources("dup")
