"""The ``hf:`` reader on local ``datasets`` audio datasets (offline)."""

from __future__ import annotations

import io
import os
import pickle
from collections import Counter

import numpy as np
import pytest
import soundfile as sf

os.environ.setdefault("HF_HUB_OFFLINE", "1")
datasets = pytest.importorskip("datasets")

from generation.audio import AudioReadError  # noqa: E402
from generation.sources import (  # noqa: E402
    HFAudio,
    SourceOptions,
    SourceSpecError,
    load_source_audio,
    parse_hf_spec,
    read_sources,
)
from generation.sources.hf import _HF_OPEN  # noqa: E402
from tests._sources_helpers import DURATIONS, SPEAKERS, SR, make_folder, tone, transcript  # noqa: E402

SMALL = dict(test_speakers=4, test_per_speaker=2, train_utterances=6)


def _wav_bytes(y):
    buf = io.BytesIO()
    sf.write(buf, y, SR, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def _rows():
    rows = {"audio": [], "spk": [], "sentence_text": [], "gender": [], "accent": []}
    for i, (spk, gender, accent) in enumerate(SPEAKERS):
        for k, dur in DURATIONS.items():
            rows["audio"].append({"bytes": _wav_bytes(tone(dur, f0=300 + i)), "path": f"{spk}_{k:03d}.wav"})
            rows["spk"].append(spk)
            rows["sentence_text"].append(transcript(spk, k))
            rows["gender"].append("female" if gender == "F" else "male")
            rows["accent"].append(accent)
    return rows


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A DatasetDict saved with save_to_disk; custom column names; audio embedded as bytes."""
    path = tmp_path_factory.mktemp("hf") / "corpus"
    ds = datasets.Dataset.from_dict(_rows()).cast_column("audio", datasets.Audio())
    datasets.DatasetDict({"train": ds, "validation": ds.select(range(4))}).save_to_disk(str(path))
    return path


def _opts(**kw):
    return SourceOptions(**SMALL, text_column="sentence_text", speaker_column="spk", **kw)


def test_saved_dataset_selection(saved):
    items = read_sources(f"hf:{saved}::train", _opts())
    assert len(items) == 8
    assert Counter(i.gender for i in items) == {"F": 4, "M": 4}
    for it in items:
        assert it.source_id.startswith(it.speaker_id + "_")
        assert it.sentence_id.startswith(it.speaker_id + "_0")  # audio file stems are unique -> used as ids
        assert it.text in {transcript(it.speaker_id, k) for k in DURATIONS}
        assert isinstance(it.audio, HFAudio)
    y, sr = load_source_audio(items[0])
    assert sr == SR and len(y) / SR >= 3.0 and np.abs(y).max() > 0.1


def test_audio_reference_is_small_picklable_and_lazy(saved):
    it = read_sources(f"hf:{saved}::train", _opts())[0]
    blob = pickle.dumps(it)
    assert len(blob) < 1000  # a reference, not the samples
    expected = load_source_audio(it)[0]
    _HF_OPEN.clear()  # as in a fresh worker process
    y, _ = load_source_audio(pickle.loads(blob))
    np.testing.assert_array_equal(y, expected)


def test_train_split(saved):
    items = read_sources(f"hf:{saved}::train", _opts(split="train"))
    assert len(items) == 6
    test_spk = {i.speaker_id for i in read_sources(f"hf:{saved}::train", _opts())}
    assert not {i.speaker_id for i in items} & test_spk


def test_split_must_be_named_when_several(saved):
    with pytest.raises(SourceSpecError, match=r"has splits \['train', 'validation'\]; name one"):
        read_sources(f"hf:{saved}", _opts())
    with pytest.raises(SourceSpecError, match="has no split 'test'"):
        read_sources(f"hf:{saved}::test", _opts())


def test_missing_columns_are_named(saved):
    with pytest.raises(SourceSpecError, match=r"no text column 'transcription' \(columns: audio, spk"):
        read_sources(f"hf:{saved}::train", SourceOptions(**SMALL, text_column="transcription"))


def test_without_speaker_column_is_utterance_mode(saved):
    # "spk" is not a default speaker column name: every row counts as its own speaker
    items = read_sources(f"hf:{saved}::train", SourceOptions(test_speakers=3, test_per_speaker=2))
    assert len(items) == 6 and all(i.speaker_id == "" for i in items)


def test_class_label_gender_and_shuffled_view(tmp_path):
    rows = _rows()
    ds = datasets.Dataset.from_dict(rows).cast_column("audio", datasets.Audio())
    ds = ds.cast_column("gender", datasets.ClassLabel(names=["female", "male"]))
    path = tmp_path / "shuffled"
    ds.shuffle(seed=3).save_to_disk(str(path))
    items = read_sources(f"hf:{path}", _opts())
    assert Counter(i.gender for i in items) == {"F": 4, "M": 4}
    for it in items:  # metadata and audio come from the same row
        y, _ = load_source_audio(it)
        assert it.extra["corpus_id"].startswith(it.speaker_id)
        i = [s for s, _, _ in SPEAKERS].index(it.speaker_id)
        spectrum = np.abs(np.fft.rfft(y))
        assert abs(np.argmax(spectrum) * SR / len(y) - (300 + i)) < 2


def test_no_audio_column(tmp_path):
    path = tmp_path / "plain"
    datasets.Dataset.from_dict({"text": ["a", "b"]}).save_to_disk(str(path))
    with pytest.raises(SourceSpecError, match=r"no audio column \(columns: text\)"):
        read_sources(f"hf:{path}")


def test_unreadable_audio_names_the_row(tmp_path):
    rows = _rows()
    rows["audio"][0] = {"bytes": b"garbage", "path": "broken.wav"}
    path = tmp_path / "broken"
    datasets.Dataset.from_dict(rows).cast_column("audio", datasets.Audio()).save_to_disk(str(path))
    ref = HFAudio(str(path), None, None, "audio", 0)
    with pytest.raises(AudioReadError, match=r"row 0 \(broken\.wav\): cannot decode audio"):
        ref.read()


def test_missing_dataset_is_a_clear_error(tmp_path):
    with pytest.raises(SourceSpecError, match="cannot load dataset"):
        read_sources(f"hf:{tmp_path / 'does-not-exist'}")


def test_parse_spec(tmp_path):
    weird = tmp_path / "a:b"
    weird.mkdir()
    assert parse_hf_spec(f"{weird}:cfg:test") == (str(weird), "cfg", "test")
    assert parse_hf_spec("user/name::validation") == ("user/name", None, "validation")
    assert parse_hf_spec("user/name") == ("user/name", None, None)
    with pytest.raises(SourceSpecError, match="too many"):
        parse_hf_spec("user/name:a:b:c")


@pytest.mark.slow
def test_local_audiofolder(tmp_path):
    """A plain folder with metadata.csv, loaded through datasets' audiofolder builder."""
    make_folder(tmp_path / "af")
    items = read_sources(f"hf:{tmp_path / 'af'}", SourceOptions(**SMALL))
    assert len(items) == 8
    assert Counter(i.gender for i in items) == {"F": 4, "M": 4}
    y, sr = load_source_audio(items[0])
    assert sr == SR and len(y) >= 3 * SR
