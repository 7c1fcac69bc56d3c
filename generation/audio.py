"""Audio and file primitives shared by the whole toolkit: decode to mono, resample, atomic write
(of a file, or of a whole folder through :func:`staged_folder`).

Reading yields mono float in [-1, 1] (float32 unless a caller asks for float64); writing always
goes to a temporary name in the destination folder followed by an atomic rename, so that an
interrupted run never leaves a truncated file under a final name.

Where the primitives live
-------------------------
The toolkit's shared primitives are leaf modules of :mod:`generation` that import only numpy,
soundfile/soxr/scipy/librosa and :mod:`vocalgrad`: this module, :mod:`generation.span` (the speech
span) and :mod:`generation.measures` (per-category measurements). The torch-free harness
(:mod:`harness_tasks`) and the analyses (:mod:`analysis`) import them; they import nothing back,
so no import cycle can form through them (``tests/test_structure.py`` walks every import).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import soundfile as sf

from vocalgrad import VocalGradError

from .identity import sha256_bytes  # noqa: F401  (re-exported: the digests' owner is generation.identity)

#: Processing rate of the reference corpus (benchmark.md §4).
PROCESSING_SR = 48000
#: Host name as used in temp-file names (dots replaced so names split cleanly).
HOST_TAG = socket.gethostname().replace(".", "-") or "host"

__all__ = [
    "AudioReadError",
    "PROCESSING_SR",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "clip_int16_range",
    "decode_mono",
    "encode_flac",
    "quantize_int16",
    "read_audio",
    "resample",
    "sha256_bytes",
    "staged_folder",
    "symlink_loop",
    "to_int16",
    "to_mono_float",
    "write_if_changed",
]


class AudioReadError(VocalGradError, ValueError):
    """An audio file could not be read; the message names the file and the cause."""


def to_mono_float(data: np.ndarray, *, dtype=np.float32, mean_dtype=np.float64) -> np.ndarray:
    """Average the channels of ``data`` into one contiguous mono array.

    Parameters
    ----------
    data : np.ndarray [shape=(n,) or (n, channels)]
    dtype : numpy dtype
        Output dtype (float32 for the renderer and the harness, float64 for measurements).
    mean_dtype : numpy dtype
        Accumulator of the channel average. The harness averages in float32 (its answers were
        measured so); everything else in float64. A single channel is never averaged.
    """
    data = np.asarray(data)
    if data.ndim == 2:
        data = data.mean(axis=1, dtype=mean_dtype) if data.shape[1] > 1 else data[:, 0]
    elif data.ndim != 1:
        raise ValueError(f"audio must be 1-D or 2-D (samples, channels), got shape {data.shape}")
    return np.ascontiguousarray(data, dtype=dtype)


def decode_mono(source, *, dtype=np.float32, mean_dtype=np.float64) -> tuple[np.ndarray, int]:
    """Decode encoded audio bytes or a file into mono (:func:`to_mono_float`) and its rate.

    ``source`` is bytes-like or a path; soundfile's own exception propagates (callers name the
    clip or file in their error type).
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(bytes(source))
    elif isinstance(source, (str, os.PathLike)):
        source = os.fspath(source)
    else:
        raise TypeError(f"unsupported audio value of type {type(source).__name__}")
    data, sr = sf.read(source, dtype=np.dtype(dtype).name, always_2d=True)
    return to_mono_float(data, dtype=dtype, mean_dtype=mean_dtype), int(sr)


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
    if path.is_symlink() and not path.exists():
        if symlink_loop(path):
            raise AudioReadError(f"{path}: symbolic link loop (to {os.readlink(path)}, which leads back to itself); "
                                 "point the link at an audio file or remove it")
        raise AudioReadError(f"{path}: broken symbolic link (to {os.readlink(path)}, which does not exist)")
    if not path.is_file():
        raise AudioReadError(f"{path}: no such audio file")
    try:
        return decode_mono(str(path))
    except Exception as exc:  # soundfile raises several types; the cause is kept in the message
        raise AudioReadError(f"{path}: cannot decode audio ({type(exc).__name__}: {exc})") from exc


def symlink_loop(path) -> bool:
    """Whether ``path`` is a symbolic link that leads back to itself (a self-link, a cycle of links)."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


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


def clip_int16_range(y: np.ndarray) -> np.ndarray:
    """``y`` (float32) with every sample beyond the 16-bit range held at its limit, as :func:`to_int16` stores
    it (before its truncation to the grid): the clip as heard, clipping included."""
    return np.clip(np.asarray(y, dtype=np.float32), np.float32(-1.0), np.float32(32767.0 / 32768.0))


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


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary file name beside ``path``, renamed onto ``path`` when the block succeeds.

    For writers that want a path of their own (parquet, csv, matplotlib); the temporary name
    (``.NAME.HOST.PID.tmp``) is unique per host and process, so concurrent writers on a shared
    file system never clobber each other's half-written file. On an error the temporary file is
    removed and ``path`` is left as it was; an :class:`OSError` without a file name (a failed
    ``write``: no space left...) gets ``path`` as its ``filename``. The parent folder is created.

    Examples
    --------
    >>> with atomic_path(out / "table.csv") as tmp:  # doctest: +SKIP
    ...     frame.to_csv(tmp)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{HOST_TAG}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):  # e.g. a read-only folder, where nothing was created
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno is not None and (
                exc.filename is None or (exc.errno == errno.ENAMETOOLONG and str(exc.filename) == str(tmp))):
            exc.filename = str(path)  # a failed write (no space left, a name too long) names the file it was for
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename (:func:`atomic_path`)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def write_if_changed(path: str | os.PathLike, data: bytes) -> bool:
    """:func:`atomic_write_bytes` unless ``path`` already holds exactly ``data``; whether it wrote.

    For files a command rebuilds on every run (a render's manifest, selection, checks): a rerun
    that changes nothing writes nothing, so it also works on a read-only copy.
    """
    path = Path(path)
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except OSError:
        pass  # missing or unreadable: write it
    atomic_write_bytes(path, data)
    return True


def atomic_write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> None:
    """:func:`atomic_write_bytes` of ``text`` encoded with ``encoding`` (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding))


@contextlib.contextmanager
def staged_folder(out: str | os.PathLike) -> Iterator[Path]:
    """An empty folder beside ``out`` that replaces ``out`` (removed first) when the block succeeds.

    For commands that write a whole folder again on every run: the stage
    (``.NAME.PID.partial``, emptied if a previous run left it) is renamed onto ``out`` only at
    the end, so an interrupted run leaves ``out`` as it was and no half-written folder; on an
    error the stage is removed. The parent folder is created.

    Examples
    --------
    >>> with staged_folder(hub_out) as stage:  # doctest: +SKIP
    ...     (stage / "README.md").write_text(card)
    """
    out = Path(out)
    stage = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:  # made inside the try: an interrupt right after the mkdir still removes it
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir(parents=True)
        yield stage
        if out.exists():
            shutil.rmtree(out)
        os.replace(stage, out)
    finally:
        if stage.exists():
            shutil.rmtree(stage)
