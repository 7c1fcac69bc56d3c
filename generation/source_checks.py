"""Anomalies of a source recording found before it is rendered: each is a skip with its reason
(``skipped.csv``) or a note, never 24 meaningless clips rendered without a word.

=====================  ==========================================================================
truncated file         a WAV whose header announces more audio than the file holds (an interrupted
                       copy or download): skipped, naming both durations
near-silent            peak below :data:`NEAR_SILENT_DBFS` (e.g. -90 dBFS noise): skipped
cancelling channels    a multi-channel file whose channels cancel when averaged to mono (one channel
                       phase-inverted): skipped with that reason instead of "all-silent"
DC offset              mean above :data:`DC_OFFSET_LIMIT`: the speech span is detected without it
                       (:func:`without_dc`) and the render notes it; the clips keep the source as it is
=====================  ==========================================================================

Normal sources pass every check unchanged: nothing here alters the audio that is rendered.
:func:`names_fit` refuses, before anything is written, a source id (or ``--out``) whose file names
would be too long for the file system.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

import vocalgrad as vg

from .option_types import name_fits

__all__ = ["DC_OFFSET_LIMIT", "NEAR_SILENT_DBFS", "dc_offset_note", "level_problem", "names_fit",
           "truncation_problem", "without_dc"]

#: A source whose mean exceeds this (a DC offset of -40 dBFS or more) has its speech span detected without it
#: (:func:`without_dc`): a constant offset passes pre-emphasis as 3 % of itself plus a step at the first sample
#: and moves or hides the span. Recordings sit far below it (the demo voices: |mean| < 0.003) and are detected
#: exactly as benchmark.md §5 says; the paper's sources use their recorded bounds anyway.
DC_OFFSET_LIMIT = 0.01

#: A source whose loudest sample stays below this level (dBFS) holds nothing to render (16-bit speech peaks
#: near -10 to -1 dBFS; -60 dBFS is about 30 steps of the 16-bit grid).
NEAR_SILENT_DBFS = -60.0


def _dbfs(v: float) -> float:
    return 20.0 * float(np.log10(max(v, 1e-12)))


def truncation_problem(path) -> str | None:
    """Why a WAV file is truncated (its ``data`` chunk announces more bytes than follow), None otherwise.

    Only RIFF/WAVE files are read (their header states the length; libsndfile silently reads what is
    there); other formats and unreadable headers give None (decoding reports those).
    """
    if not isinstance(path, (str, os.PathLike)) or Path(path).suffix.lower() != ".wav":
        return None
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                return None
            block_align = rate = None
            while True:
                chunk = fh.read(8)
                if len(chunk) < 8:
                    return None
                cid, n = chunk[:4], struct.unpack("<I", chunk[4:])[0]
                if cid == b"fmt ":
                    fmt = fh.read(min(n, 16))
                    if len(fmt) >= 14:
                        rate, block_align = struct.unpack("<I", fmt[4:8])[0], struct.unpack("<H", fmt[12:14])[0]
                    fh.seek(n - len(fmt) + (n & 1), os.SEEK_CUR)
                elif cid == b"data":
                    have = size - fh.tell()
                    if n == 0xFFFFFFFF or n <= have or not rate or not block_align:  # streamed WAV: unknown size
                        return None
                    per_sec = rate * block_align
                    return (f"truncated file: its header announces {n / per_sec:.2f} s of audio, the file holds "
                            f"{have / per_sec:.2f} s (an interrupted copy or download?); copy it again")
                else:
                    fh.seek(n + (n & 1), os.SEEK_CUR)
    except (OSError, struct.error):
        return None


def _cancelling_channels(path) -> str | None:
    """The reason when a file's channels are each audible but cancel in the mono average, else None."""
    import soundfile as sf

    if not isinstance(path, (str, os.PathLike)):
        return None
    try:
        data, _ = sf.read(os.fspath(path), dtype="float64", always_2d=True)
    except Exception:  # noqa: BLE001 - it decoded a moment ago; nothing more to say
        return None
    if data.shape[1] < 2:
        return None
    peaks = np.max(np.abs(data), axis=0)
    mono = float(np.max(np.abs(data.mean(axis=1))))
    if min(peaks) <= 10 ** (NEAR_SILENT_DBFS / 20):
        return None
    inverted = data.shape[1] == 2 and np.allclose(data[:, 0], -data[:, 1], atol=2.0 / 32768)
    what = "channel 2 is channel 1 phase-inverted" if inverted else "they are out of phase"
    return (f"its {data.shape[1]} channels (peaks {', '.join(f'{_dbfs(p):.1f}' for p in peaks)} dBFS) cancel when "
            f"averaged to mono ({'to silence' if mono == 0 else f'peak {_dbfs(mono):.1f} dBFS'}): {what}; keep one "
            "channel or invert one back")


def level_problem(y: np.ndarray, audio) -> str | None:
    """Why a source (mono ``y`` read from ``audio``) is silent or near-silent, None when it is audible."""
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    if peak > 10 ** (NEAR_SILENT_DBFS / 20):
        return None
    reason = _cancelling_channels(audio)
    if reason is not None:
        return reason
    if peak == 0.0:
        return "all-silent audio"
    return f"near-silent audio (peak {_dbfs(peak):.1f} dBFS, below {NEAR_SILENT_DBFS:g} dBFS): nothing to render"


def without_dc(x: np.ndarray) -> np.ndarray:
    """``x`` minus its mean when that exceeds :data:`DC_OFFSET_LIMIT` (for speech detection), else ``x`` itself."""
    mean = float(np.mean(x, dtype=np.float64)) if x.size else 0.0
    return x - np.float32(mean) if abs(mean) > DC_OFFSET_LIMIT else x


def dc_offset_note(x: np.ndarray) -> str | None:
    """A note when ``x`` has a DC offset above :data:`DC_OFFSET_LIMIT` (kept in the clips), None otherwise."""
    mean = float(np.mean(x, dtype=np.float64)) if x.size else 0.0
    if abs(mean) <= DC_OFFSET_LIMIT:
        return None
    return (f"DC offset {mean:+.3f} ({_dbfs(abs(mean)):.0f} dBFS): the speech span was detected without it; the "
            "clips keep it (remove it from the source, e.g. a high-pass filter, for clean clips)")


def names_fit(out, items, categories) -> None:
    """Refuse, before anything is written, an ``--out`` or a source id whose file names the file system
    cannot hold (with the room of the temporary names); the message names the folder or the source file.

    Parameters
    ----------
    out : path-like
        The render folder (``--out``).
    items : list of SourceItem
        The selected sources; the longest id is checked with the longest clip-name suffix of ``categories``.
    categories : list of str

    Raises
    ------
    generation.option_types.NameTooLongError
    """
    name_fits(out, what=f"--out {out}")
    suffix = max((len(vg.clip_id("", c, t, tier, d)) for c in categories for t in vg.TRAJECTORIES
                  for tier in vg.TIERS for d in vg.DIRECTIONS), default=0)
    longest = max(items, key=lambda it: len(it.source_id), default=None)
    if longest is not None:
        name_fits(out, what=f"source {longest.audio} (id {longest.source_id[:40]}..., "
                            f"{len(longest.source_id)} characters; rename the file or give a shorter source_id)",
                  names=[f"{longest.source_id}{'x' * suffix}.flac"])
