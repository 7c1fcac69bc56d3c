"""``cv-spontaneous:PATH``: Common Voice Spontaneous Speech 4.0, an alternate source domain of the paper
(its Table 15).

``PATH`` holds the extracted per-locale folders ``sps-corpus-4.0-2026-06-12-<locale>/audios/<clip_id>.mp3``
(locales cdo, cgg, kbd, qxp, shi) with their ``ss-corpus-<locale>.tsv``. Audio is decoded to 16 kHz mono
16-bit, as the authors did. The recorded speech bounds are used (no re-detection); item ids are the
authors' (``cvss_test_0001``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..audio import read_audio, resample
from .base import (SourceItem, SourceOptions, SourceSpecError, frozen_extra, normalise_gender, register_source,
                   require_frozen_test, safe_id)

__all__ = ["CV_LOCALES", "CV_RELEASE", "CV_SAMPLE_RATE", "CVAudio", "cv_spontaneous_items"]


#: Folder prefix of the Common Voice Spontaneous Speech release the paper used, and its locales.
CV_RELEASE = "sps-corpus-4.0-2026-06-12"
CV_LOCALES = ("cdo", "cgg", "kbd", "qxp", "shi")
#: Sample rate the Common Voice clips are decoded to (the authors' 16-kHz mono PCM16 WAV).
CV_SAMPLE_RATE = 16000



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
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    except UnicodeDecodeError as exc:
        raise SourceSpecError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); the release's "
                              "files are UTF-8: extract the archive again") from None
    return {Path(r.get("audio_file") or "").stem: r for r in rows if r.get("audio_file")}


def cv_spontaneous_items(arg: str, options: SourceOptions) -> list[SourceItem]:
    """The 100 frozen Common Voice Spontaneous Speech test sources under ``arg``."""
    from ..frozen import frozen_rows

    where = f"cv-spontaneous:{arg}"
    require_frozen_test(options, where)
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
            sentence_id=r.corpus_id, text=str(m.get("transcription") or "").strip(),
            gender=normalise_gender(m.get("gender")), accent="",
            extra={**frozen_extra(r, "cv-spontaneous"), "locale": loc}))
    if missing:
        shown = ", ".join(missing[:10]) + (f" ... (+{len(missing) - 10})" if len(missing) > 10 else "")
        raise SourceSpecError(f"{where}: {len(missing)} of the 100 frozen clips are missing: {shown}; they are in "
                              f"Common Voice Spontaneous Speech 4.0 ({CV_RELEASE}-<locale>/audios/)")
    return items


@register_source("cv-spontaneous")
def _cv_spontaneous(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Common Voice Spontaneous Speech 4.0 (five locales) with the paper's frozen 100 clips."""
    return cv_spontaneous_items(arg, options)
