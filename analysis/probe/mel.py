"""Log-mel features of the probe's ``mel`` stage (benchmark.md §10; librosa, no torch)."""

from __future__ import annotations

import numpy as np

from functools import lru_cache

from .pooling import N_SEGMENTS, pool_segments

__all__ = ["MEL_SETTINGS", "log_mel", "mel_feature"]

#: benchmark.md §10: 16 kHz, 128 mels, n_fft 1024, hop 256, fmax 8000, dB re max.
MEL_SETTINGS = {"sr": 16000, "n_mels": 128, "n_fft": 1024, "hop_length": 256, "fmax": 8000.0}


def log_mel(y: np.ndarray, sr: int) -> np.ndarray:
    """Log-mel spectrogram in dB relative to its maximum, shape (frames, 128).

    ``y`` is resampled to 16 kHz (soxr, high quality) first when ``sr`` differs.
    """
    import librosa

    y = np.asarray(y, dtype=np.float32)
    target = MEL_SETTINGS["sr"]
    if int(sr) != target:
        from generation.audio import resample

        y = resample(y, int(sr), target)
    # = librosa.feature.melspectrogram(y=y, sr=16000, n_fft=1024, hop_length=256, n_mels=128,
    # fmax=8000) with the filter bank built once per process.
    spec = np.abs(librosa.stft(y, n_fft=MEL_SETTINGS["n_fft"], hop_length=MEL_SETTINGS["hop_length"])) ** 2
    s = _mel_basis() @ spec
    return librosa.power_to_db(s, ref=np.max).T.astype(np.float32)


@lru_cache(maxsize=1)
def _mel_basis() -> np.ndarray:
    import librosa

    return librosa.filters.mel(sr=MEL_SETTINGS["sr"], n_fft=MEL_SETTINGS["n_fft"], n_mels=MEL_SETTINGS["n_mels"],
                               fmax=MEL_SETTINGS["fmax"])


def mel_feature(y: np.ndarray, sr: int, *, n_segments: int = N_SEGMENTS) -> np.ndarray:
    """Pooled, flattened log-mel feature of one clip, shape (n_segments * 128,)."""
    return pool_segments(log_mel(y, sr), n_segments)
