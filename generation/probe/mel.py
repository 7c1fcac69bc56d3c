"""Log-mel features of the probe's ``mel`` stage (SPEC §10; librosa, no torch)."""

from __future__ import annotations

import numpy as np

from .pooling import N_SEGMENTS, pool_segments

__all__ = ["MEL_SETTINGS", "log_mel", "mel_feature"]

#: SPEC §10: 16 kHz, 128 mels, n_fft 1024, hop 256, fmax 8000, dB re max.
MEL_SETTINGS = {"sr": 16000, "n_mels": 128, "n_fft": 1024, "hop_length": 256, "fmax": 8000.0}


def log_mel(y: np.ndarray, sr: int) -> np.ndarray:
    """Log-mel spectrogram in dB relative to its maximum, shape (frames, 128).

    ``y`` is resampled to 16 kHz (soxr, high quality) first when ``sr`` differs.
    """
    import librosa

    y = np.asarray(y, dtype=np.float32)
    target = MEL_SETTINGS["sr"]
    if int(sr) != target:
        import soxr

        y = soxr.resample(y, int(sr), target, quality="HQ").astype(np.float32)
    s = librosa.feature.melspectrogram(y=y, sr=target, n_fft=MEL_SETTINGS["n_fft"],
                                       hop_length=MEL_SETTINGS["hop_length"],
                                       n_mels=MEL_SETTINGS["n_mels"], fmax=MEL_SETTINGS["fmax"])
    return librosa.power_to_db(s, ref=np.max).T.astype(np.float32)


def mel_feature(y: np.ndarray, sr: int, *, n_segments: int = N_SEGMENTS) -> np.ndarray:
    """Pooled, flattened log-mel feature of one clip, shape (n_segments * 128,)."""
    return pool_segments(log_mel(y, sr), n_segments)
