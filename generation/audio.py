"""Audio input/output helpers shared by the render pipeline.

Reading always yields mono float32 in [-1, 1]; writing always goes to a temporary name in the
destination folder followed by an atomic rename, so that an interrupted render never leaves a
truncated file under a final name.
"""

from __future__ import annotations

import hashlib
import io
import os
import socket
from pathlib import Path

import numpy as np
import soundfile as sf

from vocalgrad import VocalGradError

#: Processing rate of the reference corpus (benchmark.md §4).
PROCESSING_SR = 48000
#: Host name as used in temp-file names (dots replaced so names split cleanly).
HOST_TAG = socket.gethostname().replace(".", "-") or "host"

__all__ = [
    "AudioReadError",
    "PROCESSING_SR",
    "atomic_write_bytes",
    "encode_flac",
    "quantize_int16",
    "read_audio",
    "resample",
    "sha256_bytes",
    "to_int16",
    "to_mono_float",
]


class AudioReadError(VocalGradError, ValueError):
    """An audio file could not be read; the message names the file and the cause."""


def to_mono_float(data: np.ndarray) -> np.ndarray:
    """Average channels of ``data`` (shape ``(n,)`` or ``(n, channels)``) into mono float32."""
    data = np.asarray(data)
    if data.ndim == 2:
        data = data.mean(axis=1, dtype=np.float64) if data.shape[1] > 1 else data[:, 0]
    elif data.ndim != 1:
        raise ValueError(f"audio must be 1-D or 2-D (samples, channels), got shape {data.shape}")
    return np.ascontiguousarray(data, dtype=np.float32)


def read_audio(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """Read an audio file as mono float32.

    Parameters
    ----------
    path : path-like
        Any format libsndfile reads (wav, flac, ogg, mp3 with libsndfile >= 1.1).

    Returns
    -------
    y : np.ndarray, shape (n,), float32
        Samples in [-1, 1]; integer PCM is scaled by 1/32768 (16-bit) as soundfile does.
    sr : int
        Sample rate of the file in Hz.

    Raises
    ------
    AudioReadError
        If the file is missing or not decodable; the message names ``path``.
    """
    path = Path(path)
    if not path.is_file():
        raise AudioReadError(f"{path}: no such audio file")
    try:
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several types; the cause is kept in the message
        raise AudioReadError(f"{path}: cannot decode audio ({type(exc).__name__}: {exc})") from exc
    return to_mono_float(data), int(sr)


def resample(y: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Resample mono float32 audio with soxr's high-quality setting (identity when rates match)."""
    if orig_sr == target_sr:
        return np.asarray(y, dtype=np.float32)
    import soxr

    return np.asarray(soxr.resample(y, orig_sr, target_sr, quality="HQ"), dtype=np.float32)


def to_int16(y: np.ndarray) -> tuple[np.ndarray, float]:
    """Convert float audio to 16-bit PCM as the reference does (benchmark.md §4a).

    Scales by 32768, clips to the int16 range and truncates toward zero (no rounding).

    Returns
    -------
    pcm : np.ndarray, int16
    clipped_ratio : float
        Share of samples that reached the int16 limits after scaling.
    """
    scaled = np.asarray(y, dtype=np.float32) * np.float32(32768.0)
    clipped = np.count_nonzero((scaled >= 32767.0) | (scaled <= -32768.0))
    pcm = np.clip(scaled, -32768.0, 32767.0).astype(np.int16)
    return pcm, (clipped / scaled.size if scaled.size else 0.0)


def quantize_int16(y: np.ndarray) -> np.ndarray:
    """``y`` as float32 on the 16-bit grid it is stored with (:func:`to_int16` / 32768).

    A signal already on the grid (a 16-bit file read as float) comes back unchanged.
    """
    return to_int16(y)[0].astype(np.float32) / np.float32(32768.0)


def encode_flac(pcm: np.ndarray, sr: int) -> bytes:
    """Encode int16 mono samples as FLAC bytes (lossless, deterministic for a given libsndfile)."""
    buf = io.BytesIO()
    sf.write(buf, pcm, sr, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{HOST_TAG}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
