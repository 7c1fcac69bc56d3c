"""Frame-by-frame spectral filtering shared by the extension transforms (brightness, formants).

:func:`framewise` runs a weighted overlap-add STFT (Hann analysis and synthesis windows, hop a
quarter of the frame) over a whole clip, gives each frame the schedule's value at the frame's
centre, multiplies the frame's spectrum by a real gain that a transform computes from that value,
rescales it so that the energy is kept (per frame, or per clip for a fixed filter: ``keep``) and
adds the frames back. Plain numpy, float64: bit-identical output for the same input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .base import ParamError, Params

__all__ = ["FrameParams", "framewise", "cepstral_envelope"]


@dataclass(frozen=True, kw_only=True)
class FrameParams(Params):
    """Frame length of :func:`framewise`: ``n_fft``, a power of two >= 64 (hop ``n_fft // 4``)."""

    n_fft: int = 1024

    def check(self) -> None:
        super().check()
        if self.n_fft < 64 or self.n_fft & (self.n_fft - 1):
            raise ParamError("n_fft", f"must be a power of two >= 64, got {self.n_fft}")


def framewise(x: np.ndarray, values: np.ndarray, n_fft: int,
              gain: Callable[[np.ndarray, np.ndarray, float], np.ndarray], sr: int, *,
              keep: str = "frame") -> np.ndarray:
    """Filter ``x`` frame by frame.

    Parameters
    ----------
    x : np.ndarray
        Mono signal, shape ``(n,)``.
    values : np.ndarray
        The varied quantity per sample of ``x`` (:func:`generation.transforms.base.per_sample`).
    n_fft : int
        Frame length (hop ``n_fft // 4``).
    gain : callable
        ``gain(spectra, freqs, frame_values) -> gains``: real gains ``(frames, bins)`` for the
        complex spectra of the windowed frames ``(frames, bins)``, the bin frequencies (Hz) and
        each frame's value ``(frames,)``.
    sr : int
    keep : {"frame", "clip"}
        What keeps its energy. ``frame``: every frame is rescaled to its own energy (the gain then
        changes only the shape of each frame's spectrum). ``clip``: each frame's gain is scaled so
        that it leaves the energy of the clip's long-term average spectrum unchanged; the scale
        depends only on the value, so a gain that is the same for every frame (a fixed filter)
        keeps its shape across frames: loud low-frequency vowels and weak high-frequency
        consonants are not evened out.

    Returns
    -------
    np.ndarray, float64, shape ``(n,)``
    """
    if keep not in ("frame", "clip"):
        raise ValueError(f"keep must be 'frame' or 'clip', got {keep!r}")
    x = np.asarray(x, dtype=np.float64)
    n, hop = x.size, n_fft // 4
    pad = n_fft // 2
    count = 1 + -(-(n + 2 * pad - n_fft) // hop) if n + 2 * pad > n_fft else 1
    xp = np.concatenate([np.zeros(pad), x, np.zeros((count - 1) * hop + n_fft - pad - n)])
    win = np.hanning(n_fft + 1)[:-1]  # periodic Hann: constant overlap-add at hop n_fft/4
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sr)
    frames = np.lib.stride_tricks.sliding_window_view(xp, n_fft)[::hop][:count] * win
    specs = np.fft.rfft(frames, axis=1)
    power = np.abs(specs) ** 2
    ltas = power.mean(axis=0)
    centre = np.clip(np.arange(count) * hop, 0, max(n - 1, 0))
    g = np.asarray(gain(specs, freqs, np.asarray(values, dtype=np.float64)[centre]), dtype=np.float64)
    if keep == "frame":
        before, after = power.sum(axis=1), np.sum(power * g * g, axis=1)
    else:
        before, after = np.full(count, float(ltas.sum())), (g * g) @ ltas
    scale = np.sqrt(np.divide(before, after, out=np.ones(count), where=(after > 0.0) & (before > 0.0)))
    out_specs = specs * (g * scale[:, None])
    back = np.fft.irfft(out_specs, n_fft, axis=1) * win
    out = np.zeros(xp.size)
    norm = np.zeros(xp.size)
    w2 = win * win
    for i in range(count):
        s = i * hop
        out[s:s + n_fft] += back[i]
        norm[s:s + n_fft] += w2
    out = np.divide(out, norm, out=np.zeros_like(out), where=norm > 1e-8)
    return out[pad:pad + n]


def cepstral_envelope(log_mag: np.ndarray, n_fft: int, sr: int, cutoff_sec: float) -> np.ndarray:
    """Smooth log-magnitude spectra (last axis, ``n_fft // 2 + 1`` bins) by keeping the cepstrum
    below ``cutoff_sec`` quefrency: the spectral envelope without the harmonics of the voice."""
    cep = np.fft.irfft(log_mag, n_fft, axis=-1)
    keep = max(1, int(round(cutoff_sec * sr)))
    cep[..., keep:n_fft - keep + 1] = 0.0
    return np.fft.rfft(cep, n_fft, axis=-1).real
