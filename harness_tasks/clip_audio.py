"""Lazy, decode-on-demand audio handed to model adapters (torch-free).

lm-eval builds every request before it runs a model, so audio decoded eagerly in
``doc_to_audio`` would hold the whole test set in memory (21,600 clips x ~4 s x 48 kHz float32
~ 16 GB). :class:`ClipAudio` is a read-only mapping with the keys ``"array"`` (float32 mono)
and ``"sampling_rate"`` (int) that decodes the clip's FLAC bytes with soundfile each time
``"array"`` is read; it holds only a reference to the (memory-mapped) dataset row. It is a
``dict`` whose stored items are just the clip id and the sha256 of its encoded audio, so
lm-eval's request hashing (``--use_cache``) and sample logs see a small JSON-safe object.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import soundfile as sf

from generation.audio import decode_mono, to_mono_float
from vocalgrad import VocalGradError

__all__ = ["AUDIO_MARKER", "AudioDecodeError", "ClipAudio", "audio_sha256", "decode_audio", "encode_wav"]

#: Placeholder a prompt holds once per clip when several clips are interleaved with the text
#: (few-shot tasks); the model adapters put the clips there (``models.base.layout``).
AUDIO_MARKER = "<|vocalgrad_audio|>"


class AudioDecodeError(VocalGradError, ValueError):
    """A clip's audio could not be decoded; the message names the clip."""


def _to_mono(data: np.ndarray) -> np.ndarray:
    # the harness averages channels in float32 (its recorded answers were computed so)
    return to_mono_float(data, mean_dtype=np.float32)


def decode_audio(value: Any, *, name: str = "clip") -> tuple[np.ndarray, int]:
    """Decode a Hub audio value into mono float32 and its sample rate.

    Parameters
    ----------
    value : mapping or bytes or path
        ``{"bytes": ..., "path": ...}`` (``datasets.Audio(decode=False)``), ``{"array": ...,
        "sampling_rate": ...}`` (already decoded), raw encoded bytes, or a file path.
    name : str
        Used in error messages.
    """
    if isinstance(value, Mapping):
        if value.get("array") is not None:
            if value.get("sampling_rate") is None:
                raise AudioDecodeError(f"{name}: decoded audio has no 'sampling_rate'")
            return _to_mono(value["array"]), int(value["sampling_rate"])
        data, path = value.get("bytes"), value.get("path")
        if data is None and path is None:
            raise AudioDecodeError(f"{name}: audio value has neither 'bytes' nor 'path'")
        value = data if data is not None else path
    if not isinstance(value, (bytes, bytearray, memoryview, str, os.PathLike)):
        raise AudioDecodeError(f"{name}: unsupported audio value of type {type(value).__name__}")
    try:
        return decode_mono(value, mean_dtype=np.float32)
    except Exception as exc:  # soundfile raises several types
        raise AudioDecodeError(f"{name}: cannot decode audio ({type(exc).__name__}: {exc})") from exc


def encode_wav(y: np.ndarray, sr: int) -> bytes:
    """16-bit PCM WAV bytes of mono float audio (for APIs that take WAV)."""
    buf = io.BytesIO()
    sf.write(buf, np.clip(np.asarray(y, dtype=np.float32), -1.0, 1.0), int(sr), format="WAV",
             subtype="PCM_16")
    return buf.getvalue()


def audio_sha256(value: Any) -> str | None:
    """sha256 of a Hub audio value's encoded bytes (of the samples and rate for decoded audio).

    Returns None when the value holds nothing readable (the decode error then surfaces when a
    model reads the clip, as a per-clip error answer).
    """
    h = hashlib.sha256()
    try:
        if isinstance(value, Mapping):
            if value.get("array") is not None:
                h.update(np.ascontiguousarray(value["array"], dtype=np.float32).tobytes())
                h.update(str(value.get("sampling_rate")).encode())
                return h.hexdigest()
            data, path = value.get("bytes"), value.get("path")
            value = data if data is not None else path
        if isinstance(value, (bytes, bytearray, memoryview)):
            h.update(bytes(value))
        elif isinstance(value, (str, os.PathLike)):
            with open(value, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        else:
            return None
    except (OSError, TypeError, ValueError):
        return None
    return h.hexdigest()


class ClipAudio(dict):
    """One clip's audio, decoded when ``clip["array"]`` is read.

    A ``dict`` whose *stored* items are the clip's identity, ``{"clip_id": ..., "sha256": ...}``
    (sha256 of the encoded audio bytes): that is what lm-eval's request hashing
    (``--use_cache``) and its sample logs serialise, so they stay JSON-safe, small and
    content-sensitive. ``clip["array"]`` (float32 mono) and ``clip["sampling_rate"]`` (int) are
    computed on access and not stored.

    Parameters
    ----------
    clip_id : str
        Clip identifier (for messages and logs).
    source : object
        A row-addressable store (``store[row]["audio"]`` gives the Hub audio value, e.g. a
        ``datasets.Dataset`` with ``Audio(decode=False)``) when ``row`` is given; otherwise
        the audio value itself (see :func:`decode_audio`).
    row : int, optional
        Row of the clip in ``source``.
    """

    __slots__ = ("_source", "_row", "_sr")
    _KEYS = ("array", "sampling_rate")

    def __init__(self, clip_id: str, source: Any, row: int | None = None) -> None:
        super().__init__(clip_id=str(clip_id))
        self._source = source
        self._row = row
        self._sr: int | None = None
        dict.__setitem__(self, "sha256", audio_sha256(self.value()))

    @property
    def clip_id(self) -> str:
        return dict.__getitem__(self, "clip_id")

    @property
    def sha256(self) -> str | None:
        """sha256 of the clip's encoded audio (None if it cannot be read)."""
        return dict.__getitem__(self, "sha256")

    def value(self) -> Any:
        """The undecoded Hub audio value (``{"bytes", "path"}`` or similar)."""
        if self._row is None:
            return self._source
        return self._source[self._row]["audio"]

    def load(self) -> tuple[np.ndarray, int]:
        """Decode and return ``(y, sr)``: mono float32 samples and the sample rate."""
        y, sr = decode_audio(self.value(), name=self.clip_id)
        self._sr = sr
        return y, sr

    def __missing__(self, key: str) -> Any:
        if key == "array":
            return self.load()[0]
        if key == "sampling_rate":
            if self._sr is None:
                self.load()
            return self._sr
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._KEYS:
            return self[key]
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._KEYS or dict.__contains__(self, key)

    def __setitem__(self, key, value):
        raise TypeError("ClipAudio is read-only")

    def __repr__(self) -> str:
        return f"<audio {self.clip_id}>"

    __str__ = __repr__

    def __reduce__(self):
        # Pickles (lm-eval's request cache) carry the encoded bytes, not a dataset handle.
        value = self.value()
        if isinstance(value, Mapping) and value.get("bytes") is not None:
            value = {"bytes": bytes(value["bytes"]), "path": value.get("path")}
        return (ClipAudio, (self.clip_id, value))
