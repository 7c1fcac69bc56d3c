"""Clips on their way into a model: mono, float32, at the processor's rate (:func:`prepare_audio`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from generation.audio import resample

log = logging.getLogger("vocalgrad")

__all__ = ["AudioInfo", "prepare_audio"]


@dataclass(frozen=True)
class AudioInfo:
    """What happened to one clip on its way in (logged at DEBUG, kept on ``LoadedModel.last_audio``)."""

    source_rate: int
    rate: int
    channels: int
    seconds: float


def prepare_audio(y: Any, sr: int, target_sr: int) -> tuple[np.ndarray, AudioInfo]:
    """Mono float32 at ``target_sr`` (soxr, high quality).

    Parameters
    ----------
    y : array-like [shape=(n,) or (channels, n) or (n, channels)]
    sr, target_sr : int
        Source and processor sample rates (Hz).

    Returns
    -------
    (np.ndarray [shape=(m,)], AudioInfo)
    """
    a = np.asarray(y, dtype=np.float32)
    channels = 1
    if a.ndim == 2:
        axis = 0 if a.shape[0] <= a.shape[1] else 1
        channels = a.shape[axis]
        a = a.mean(axis=axis)
    elif a.ndim != 1:
        raise ValueError(f"audio must be 1-D or 2-D (channels x samples), got shape {a.shape}")
    if int(sr) <= 0:
        raise ValueError(f"audio sample rate must be positive, got {sr}")
    if int(sr) != int(target_sr):
        a = resample(a, int(sr), int(target_sr))
    info = AudioInfo(int(sr), int(target_sr), channels, a.size / float(target_sr))
    log.debug("audio: %d Hz x %d ch -> %d Hz mono, %.3f s", info.source_rate, channels, info.rate, info.seconds)
    return np.ascontiguousarray(a), info
