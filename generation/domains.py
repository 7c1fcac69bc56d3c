"""Readers of the paper's two alternate source domains (its Table 15), each with its frozen selection.

``loquacious[:DATASET[:CONFIG][:SPLIT]]``
    LoquaciousSet (``speechbrain/LoquaciousSet``, config ``clean``, split ``test``: the shared official
    test partition; "clean" is the config name, not an acoustic label). ``DATASET`` may be a local copy
    (a ``save_to_disk`` folder or files ``load_dataset`` reads). The 100 frozen rows are taken by their
    recorded row index and checked against the recorded id (column ``ID``); a changed upstream dataset
    is an error naming the rows, never a silent substitute.
``cv-spontaneous:PATH``
    Common Voice Spontaneous Speech 4.0: ``PATH`` holds the extracted per-locale folders
    ``sps-corpus-4.0-2026-06-12-<locale>/audios/<clip_id>.mp3`` (locales cdo, cgg, kbd, qxp, shi) with
    their ``ss-corpus-<locale>.tsv``. Audio is decoded to 16 kHz mono 16-bit, as the authors did.

Both use the recorded speech bounds (no re-detection; the render still reports disagreements in
``span_check.csv``). Item ids are the authors' (``loquaciousset_test_0001``, ``cvss_test_0001``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .audio import read_audio, resample
from .sources import (HFAudio, SourceItem, SourceOptions, SourceSpecError, _audio_column, _open_hf,
                      normalise_gender, parse_hf_spec, register_source, safe_id)

__all__ = ["CV_LOCALES", "CV_RELEASE", "CVAudio", "LOQUACIOUS_DATASET", "cv_spontaneous_items", "loquacious_items"]

#: Hub id, config and split of the LoquaciousSet partition the paper used.
LOQUACIOUS_DATASET = ("speechbrain/LoquaciousSet", "clean", "test")
#: Folder prefix of the Common Voice Spontaneous Speech release the paper used, and its locales.
CV_RELEASE = "sps-corpus-4.0-2026-06-12"
CV_LOCALES = ("cdo", "cgg", "kbd", "qxp", "shi")
#: Sample rate the Common Voice clips are decoded to (the authors' 16-kHz mono PCM16 WAV).
CV_SAMPLE_RATE = 16000


def _frozen_extra(row, domain: str) -> dict:
    return {"corpus_id": row.corpus_id, "reference_clip_id": row.corpus_id, "selection": "frozen",
            "domain": domain, "recorded_onset_sec": row.onset_sec, "recorded_offset_sec": row.offset_sec}


def _only_frozen(options: SourceOptions, where: str) -> None:
    if options.selection not in (None, "frozen"):
        raise SourceSpecError(f"{where}: only the frozen selection exists for this domain "
                              "(for a new selection read the corpus with hf: or folder:)")
    if options.split != "test":
        raise SourceSpecError(f"{where}: the alternate domains have a test selection only, not {options.split!r}")
    given = options.sampler_options()
    if given:
        raise SourceSpecError(f"{where}: {', '.join(given)} do not apply to a frozen selection; drop them")


# --------------------------------------------------------------------------------------------
# LoquaciousSet through the hf: machinery
# --------------------------------------------------------------------------------------------
def _text(value) -> str:
    return str(value or "").strip()


def loquacious_items(arg: str, options: SourceOptions) -> list[SourceItem]:
    """The 100 frozen LoquaciousSet test sources, by recorded row index with an id check."""
    from .frozen import frozen_rows

    where = f"loquacious:{arg}" if arg else "loquacious"
    _only_frozen(options, where)
    if arg:
        dataset, config, split = parse_hf_spec(arg)
    else:
        dataset, config, split = LOQUACIOUS_DATASET
    if config is None and not Path(dataset).exists():
        config = LOQUACIOUS_DATASET[1]
    ds, split = _open_hf(dataset, config, split or LOQUACIOUS_DATASET[2])
    if "ID" not in ds.column_names:
        raise SourceSpecError(f"{where}: no 'ID' column to check the recorded rows against "
                              f"(columns: {', '.join(ds.column_names)}); is this LoquaciousSet?")
    audio_col = _audio_column(ds, where)
    rows = frozen_rows("loquacious", "test")
    index = [int(r.extra["source_row_index"]) for r in rows]
    too_far = [r.item_id for r, i in zip(rows, index) if i >= len(ds)]
    if too_far:
        raise SourceSpecError(f"{where}: {len(ds)} rows, but the frozen selection records row indices up to "
                              f"{max(index)} ({len(too_far)} items beyond the end); use the clean test partition")
    meta = ds.select_columns([c for c in ds.column_names if c != audio_col]).select(index).to_list()
    wrong = [f"{r.item_id} (row {i}: expected {r.corpus_id!r}, found {m['ID']!r})"
             for r, i, m in zip(rows, index, meta) if str(m["ID"]) != r.corpus_id]
    if wrong:
        raise SourceSpecError(
            f"{where}: {len(wrong)} recorded rows hold another clip than the frozen selection, so the upstream "
            f"dataset changed; resolve the frozen clip ids rather than substituting: " + "; ".join(wrong[:5]))
    text_col = next((c for c in ("text", "wrd", "transcription", "sentence") if c in ds.column_names), None)
    spk_col = next((c for c in ("speaker_id", "spk_id", "speaker", "client_id") if c in ds.column_names), None)
    items = []
    for r, i, m in zip(rows, index, meta):
        spk = _text(m.get(spk_col)) if spk_col else ""
        items.append(SourceItem(
            r.item_id, HFAudio(dataset, config, split or None, audio_col, i),
            speaker_id=safe_id(spk) if spk else "", sentence_id=safe_id(r.corpus_id),
            text=_text(m.get(text_col)) if text_col else "", gender=normalise_gender(r.extra.get("gender")),
            extra={**_frozen_extra(r, "loquacious"), "hf_row": i}))
    return items


@register_source("loquacious")
def _loquacious(arg: str, options: SourceOptions) -> list[SourceItem]:
    """LoquaciousSet's clean test partition with the paper's frozen 100 rows."""
    return loquacious_items(arg, options)


# --------------------------------------------------------------------------------------------
# Common Voice Spontaneous Speech 4.0 (extracted per-locale folders)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CVAudio:
    """A Common Voice clip decoded as the authors did: mono, resampled to 16 kHz (soxr HQ), 16-bit.

    The 16-bit step goes through libsndfile (as writing a PCM_16 WAV does), so the samples equal
    those of the authors' materialised 16-kHz WAV files when the mp3 decoder agrees.
    """

    path: str
    sr: int = CV_SAMPLE_RATE

    def read(self) -> tuple[np.ndarray, int]:
        import soundfile as sf

        y, sr = read_audio(self.path)
        # 16-bit through libsndfile's own float -> PCM16 conversion, as the authors' sf.write(..., "PCM_16")
        buf = io.BytesIO()
        sf.write(buf, resample(y, sr, self.sr), self.sr, format="WAV", subtype="PCM_16")
        buf.seek(0)
        pcm, _ = sf.read(buf, dtype="float32")
        return pcm, self.sr


def _locale_dir(root: Path, locale: str) -> Path | None:
    for cand in (root / f"{CV_RELEASE}-{locale}", root / locale):
        if cand.is_dir():
            return cand
    return None


def _tsv_rows(folder: Path, locale: str) -> dict[str, dict]:
    """Metadata rows of a locale's ``ss-corpus-<locale>.tsv`` by audio file stem (empty when absent)."""
    path = folder / f"ss-corpus-{locale}.tsv"
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return {Path(r.get("audio_file") or "").stem: r for r in rows if r.get("audio_file")}


def cv_spontaneous_items(arg: str, options: SourceOptions) -> list[SourceItem]:
    """The 100 frozen Common Voice Spontaneous Speech test sources under ``arg``."""
    from .frozen import frozen_rows

    where = f"cv-spontaneous:{arg}"
    _only_frozen(options, where)
    root = Path(arg).expanduser()
    if not arg or not root.is_dir():
        raise SourceSpecError(f"cv-spontaneous source: {root} is not a folder; give the folder holding the "
                              f"extracted {CV_RELEASE}-<locale> folders ({', '.join(CV_LOCALES)})")
    rows = frozen_rows("cv-spontaneous", "test")
    folders = {loc: _locale_dir(root, loc) for loc in CV_LOCALES}
    absent = [loc for loc, f in folders.items() if f is None]
    if absent:
        raise SourceSpecError(f"{where}: no {CV_RELEASE}-<locale> folder for {', '.join(absent)} "
                              f"(found: {', '.join(sorted(p.name for p in root.iterdir())[:10]) or 'nothing'}); "
                              "download the five archives from Mozilla Data Collective and extract them here")
    meta = {loc: _tsv_rows(f, loc) for loc, f in folders.items()}
    items, missing = [], []
    for r in rows:
        loc = r.extra["locale"]
        found = [p for p in sorted((folders[loc] / "audios").glob(f"{r.corpus_id}.*"))
                 if p.suffix.lower() in (".mp3", ".wav", ".flac", ".ogg")]
        if not found:
            missing.append(f"{loc}/audios/{r.corpus_id}.mp3")
            continue
        m = meta[loc].get(r.corpus_id, {})
        spk = m.get("client_id", "")
        items.append(SourceItem(
            r.item_id, CVAudio(str(found[0])), speaker_id=safe_id(f"{loc}-{spk[:16]}") if spk else "",
            sentence_id=r.corpus_id, text=_text(m.get("transcription")),
            gender=normalise_gender(m.get("gender")), accent="",
            extra={**_frozen_extra(r, "cv-spontaneous"), "locale": loc}))
    if missing:
        shown = ", ".join(missing[:10]) + (f" ... (+{len(missing) - 10})" if len(missing) > 10 else "")
        raise SourceSpecError(f"{where}: {len(missing)} of the 100 frozen clips are missing: {shown}; they are in "
                              f"Common Voice Spontaneous Speech 4.0 ({CV_RELEASE}-<locale>/audios/)")
    return items


@register_source("cv-spontaneous")
def _cv_spontaneous(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Common Voice Spontaneous Speech 4.0 (five locales) with the paper's frozen 100 clips."""
    return cv_spontaneous_items(arg, options)
