"""Alternate source domains (Table 15): LoquaciousSet through hf: with an id check, Common Voice folders."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import soundfile as sf

from generation.frozen import frozen_rows
from generation.sources import SourceOptions, SourceSpecError, read_sources
from tests._frozen_helpers import speech_like

datasets = pytest.importorskip("datasets")


def _flac(y, sr):
    buf = io.BytesIO()
    sf.write(buf, y, sr, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


@pytest.fixture(scope="module")
def loquacious_dir(tmp_path_factory):
    """A saved dataset shaped like LoquaciousSet's clean test split, the frozen ids at their recorded rows."""
    rows = frozen_rows("loquacious")
    n = max(int(r.extra["source_row_index"]) for r in rows) + 1
    quiet = _flac(np.full(1600, 0.01, np.float32), 16000)
    ids, audio, text, spk = [f"other_{i}" for i in range(n)], [quiet] * n, ["x"] * n, ["0"] * n
    for k, r in enumerate(rows):
        i = int(r.extra["source_row_index"])
        ids[i], text[i], spk[i] = r.corpus_id, f"TRANSCRIPT {k}", f"spk{k % 7}"
        if k < 2:  # the first two are rendered: real length, speech between the recorded bounds
            audio[i] = _flac(speech_like(r.offset_sec + 0.2, r.onset_sec, r.offset_sec, sr=16000), 16000)
    ds = datasets.Dataset.from_dict(
        {"ID": ids, "wav": [{"bytes": b, "path": None} for b in audio], "text": text, "spk_id": spk},
        features=datasets.Features({"ID": datasets.Value("string"), "wav": datasets.Audio(decode=False),
                                    "text": datasets.Value("string"), "spk_id": datasets.Value("string")}))
    out = tmp_path_factory.mktemp("loq") / "loquacious_clean_test"
    ds.save_to_disk(str(out))
    return out


def test_loquacious_rows_by_recorded_index(loquacious_dir):
    items = read_sources(f"loquacious:{loquacious_dir}")
    rows = frozen_rows("loquacious")
    assert [it.source_id for it in items] == [r.item_id for r in rows]
    first = items[0]
    assert first.sentence_id == "20180315-0900-PLENARY-16-en_20180315-15_20_37_8"  # safe form of the id
    assert first.extra["reference_clip_id"] == "20180315-0900-PLENARY-16-en_20180315-15:20:37_8"
    assert first.extra["hf_row"] == 1571 and first.text == "TRANSCRIPT 0" and first.gender == "M"
    assert (first.extra["recorded_onset_sec"], first.extra["recorded_offset_sec"]) == (0.5, 3.42)
    assert sum(it.gender == "F" for it in items) == 50
    y, sr = first.audio.read()
    assert sr == 16000 and len(y) == int(round(3.62 * 16000))


def test_loquacious_changed_upstream_is_an_error(loquacious_dir, tmp_path):
    ds = datasets.load_from_disk(str(loquacious_dir))
    ids = list(ds["ID"])
    ids[1571], ids[6257] = ids[6257], ids[1571]  # two rows swapped upstream
    ds.remove_columns("ID").add_column("ID", ids).save_to_disk(str(tmp_path / "changed"))
    with pytest.raises(SourceSpecError) as err:
        read_sources(f"loquacious:{tmp_path / 'changed'}")
    msg = str(err.value)
    assert "2 recorded rows hold another clip" in msg and "loquaciousset_test_0001 (row 1571" in msg
    with pytest.raises(SourceSpecError, match="only the frozen selection"):
        read_sources(f"loquacious:{loquacious_dir}", SourceOptions(selection="sample"))


def test_loquacious_renders_with_recorded_bounds(loquacious_dir, tmp_path):
    from vocalgrad_commands.cli import main
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    assert main(["render", "--source", f"loquacious:{loquacious_dir}", "--out", str(out), "--sources", "2",
                 "--categories", "volume", "--jobs", "1", "--quiet"]) == 0
    rows = pq.read_table(out / "manifest.parquet").to_pylist()
    spans = {r["source_id"]: (r["source_onset_sec"], r["source_offset_sec"]) for r in rows}
    assert spans == {"loquaciousset_test_0001": (0.5, 3.42), "loquaciousset_test_0002": (0.11, 3.76)}
    meta = json.loads((out / "render.json").read_text())
    assert meta["selection"] == "frozen" and meta["domain"] == "loquacious"


def _write_cv(root, *, skip=()):
    rows = frozen_rows("cv-spontaneous")
    quiet = np.full(4000, 0.02, np.float32)
    by_loc: dict[str, list] = {}
    for k, r in enumerate(rows):
        loc = r.extra["locale"]
        folder = root / f"sps-corpus-4.0-2026-06-12-{loc}"
        (folder / "audios").mkdir(parents=True, exist_ok=True)
        by_loc.setdefault(loc, []).append(r)
        if r.corpus_id in skip:
            continue
        y, sr = (speech_like(r.offset_sec + 0.3, r.onset_sec, r.offset_sec, sr=44100), 44100) if k == 0 \
            else (quiet, 32000)
        sf.write(folder / "audios" / f"{r.corpus_id}.mp3", y, sr, format="MP3")
    for loc, rs in by_loc.items():
        with open(root / f"sps-corpus-4.0-2026-06-12-{loc}" / f"ss-corpus-{loc}.tsv", "w", newline="") as fh:
            w = csv.writer(fh, delimiter="\t")
            w.writerow(["client_id", "audio_id", "audio_file", "transcription", "gender"])
            for r in rs:
                w.writerow([f"client{r.item_id[-2:]}", r.corpus_id.rsplit("-", 1)[1], f"{r.corpus_id}.mp3",
                            f"words of {r.item_id}", "female_feminine"])
    return root


def test_cv_spontaneous_folders(tmp_path):
    root = _write_cv(tmp_path / "cv")
    items = read_sources(f"cv-spontaneous:{root}")
    assert [it.source_id for it in items] == [f"cvss_test_{i:04d}" for i in range(1, 101)]
    first = items[0]
    assert first.extra["locale"] == "qxp" and first.sentence_id == "spontaneous-speech-qxp-90067"
    assert first.text == "words of cvss_test_0001" and first.gender == "female_feminine"
    assert (first.extra["recorded_onset_sec"], first.extra["recorded_offset_sec"]) == (0.27, 8.73)
    y, sr = first.audio.read()  # mp3 at 44.1 kHz decoded to 16 kHz 16-bit
    assert sr == 16000 and abs(len(y) / sr - 9.03) < 0.06
    assert np.array_equal(np.round(y * 32768), y * 32768)  # 16-bit values


def test_cv_spontaneous_missing_clips_and_locales(tmp_path):
    root = _write_cv(tmp_path / "cv", skip=("spontaneous-speech-cdo-923",))
    with pytest.raises(SourceSpecError, match=r"1 of the 100 frozen clips are missing: cdo/audios/spontaneous-speech"
                                              r"-cdo-923\.mp3"):
        read_sources(f"cv-spontaneous:{root}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceSpecError, match="no sps-corpus-4.0-2026-06-12-<locale> folder for cdo, cgg"):
        read_sources(f"cv-spontaneous:{tmp_path / 'empty'}")
    with pytest.raises(SourceSpecError, match="test selection only"):
        read_sources(f"cv-spontaneous:{root}", SourceOptions(split="train"))


def test_cv_spontaneous_renders(tmp_path):
    from vocalgrad_commands.cli import main
    import pyarrow.parquet as pq

    root = _write_cv(tmp_path / "cv")
    out = tmp_path / "out"
    assert main(["render", "--source", f"cv-spontaneous:{root}", "--out", str(out), "--sources", "1",
                 "--categories", "noise", "--jobs", "1", "--quiet"]) == 0
    rows = pq.read_table(out / "manifest.parquet").to_pylist()
    assert len(rows) == 24 and {r["source_onset_sec"] for r in rows} == {0.27}
    assert json.loads((out / "render.json").read_text())["domain"] == "cv-spontaneous"
