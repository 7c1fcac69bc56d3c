"""Formants (extension attribute): the frequency scale of the spectral envelope, pitch kept.

Definition: every formant of the voice is moved by the same ratio (the spectral envelope is
scaled in frequency) while the harmonics, i.e. the pitch, stay where they are
(:func:`generation.transforms.formant.formant_shift`): what a shorter (``increase``: formants up,
a smaller-sounding speaker) or longer (``decrease``) vocal tract does. The ratio follows the
trajectory over the speech span.

Tiers (envelope scale at the start and end of an increase clip): low 0.94 -> 1.06, medium
0.88 -> 1.12, high 0.82 -> 1.18.

Measures: the reference-free one (the oracle's) is the power-weighted mean log frequency of the
cepstrally smoothed envelope between 250 Hz and 5 kHz in a window; the paired one (label validity,
``show``) is the shift in semitones that best aligns the clip's mean log envelope with the
source's on a log-frequency axis (cross-correlation in 0.05-semitone steps).
"""

from __future__ import annotations

import numpy as np

from ..transforms._framewise import cepstral_envelope
from ..transforms.formant import formant_shift
from ..label_validity import ends_difference
from .base import Attribute, window_values
from .sweep import Sweep

__all__ = ["ATTRIBUTE", "mean_envelope", "envelope_centroid", "envelope_shift", "paired_shift", "shift_curve"]

N_FFT = 2048
LIFTER_SEC = 0.0015
#: Log-frequency grid of the envelope comparisons: 150 Hz - 6 kHz in 0.05-semitone steps.
GRID = 150.0 * 2.0 ** (np.arange(int(240 * np.log2(6000 / 150))) / 240.0)


def mean_envelope(seg: np.ndarray, sr: int) -> np.ndarray:
    """Mean cepstrally smoothed log-magnitude envelope of the loud frames of ``seg``, on :data:`GRID`."""
    seg = np.asarray(seg, dtype=np.float64)
    if seg.size < N_FFT:
        seg = np.pad(seg, (0, N_FFT - seg.size))
    frames = np.lib.stride_tricks.sliding_window_view(seg, N_FFT)[::N_FFT // 4]
    spec = np.abs(np.fft.rfft(frames * np.hanning(N_FFT), axis=1))
    energy = np.sum(spec ** 2, axis=1)
    loud = energy > energy.max() * 1e-3 if energy.max() > 0 else np.ones(energy.size, bool)
    env = cepstral_envelope(np.log(spec[loud] + 1e-9), N_FFT, sr, LIFTER_SEC).mean(axis=0)
    return np.interp(GRID, np.fft.rfftfreq(N_FFT, 1.0 / sr), env)


def envelope_centroid(y: np.ndarray, sr: int) -> float:
    """Reference-free: power-weighted mean log2 frequency of the envelope, 250 Hz-5 kHz; larger = formants up."""
    env = mean_envelope(y, sr)
    band = (GRID >= 250) & (GRID <= 5000)
    w = np.exp(2.0 * (env[band] - env[band].max()))
    return float(np.sum(np.log2(GRID[band]) * w) / np.sum(w))


def envelope_shift(ys, xs, sr, max_semis: float = 5.0) -> float:
    """Semitones by which the envelope of ``ys`` lies above that of ``xs`` (cross-correlation)."""
    a, b = mean_envelope(ys, sr), mean_envelope(xs, sr)
    lim = int(round(max_semis * 20))
    core = a[lim:a.size - lim]
    wins = np.lib.stride_tricks.sliding_window_view(b, core.size)
    core = core - core.mean()
    wins = wins - wins.mean(axis=1, keepdims=True)
    corr = wins @ core / (np.linalg.norm(wins, axis=1) * np.linalg.norm(core) + 1e-12)
    return (lim - int(np.argmax(corr))) / 20.0


def paired_shift(x, span, y, onset, offset, sr, schedule, fade=240) -> float:
    """Envelope shift (semitones) at the end of the span minus at its start, clip against source."""
    return ends_difference(lambda ys, xs: envelope_shift(ys, xs, sr), x, span, y)


def shift_curve(y, sr, source=None):
    """For ``vocalgrad show``: envelope shift re the source (semitones; 200-ms frames, 50-ms hop),
    or the envelope centroid (log2 Hz) when no source is given."""
    if source is None:
        t, vals = window_values(y, sr, lambda seg, _: envelope_centroid(seg, sr), win_sec=0.2)
        return t, vals, "envelope centroid (log2 Hz)", False
    t, vals = window_values(y, sr, lambda seg, ref: envelope_shift(seg, ref, sr), source=source, win_sec=0.2)
    return t, vals, "envelope shift re source (semitones)", False


ATTRIBUTE = Attribute(
    name="formants",
    phrase="formant frequency",
    increase_means="formants higher (shorter vocal tract)",
    decrease_means="formants lower (longer vocal tract)",
    unit="envelope scale",
    tiers={"low": (0.94, 1.06), "medium": (0.88, 1.12), "high": (0.82, 1.18)},
    transform=formant_shift,
    params={"n_fft": 2048, "lifter_ms": 1.5, "max_hz": 8000.0},
    layout="samples",
    measure=envelope_centroid,
    paired=paired_shift,
    effect_unit="semitones (envelope shift re source)",
    min_change=0.25,
    origin="speaker",
    curve=shift_curve,
    sweep=Sweep(tuple(round(0.06 * k, 2) for k in range(9)), "scale difference", lambda m: (1.0 - m / 2.0, 1.0 + m / 2.0),
                note="envelope scale 1 - m/2 -> 1 + m/2; tiers 0.12, 0.24, 0.36 on a 0.06 grid"),
    description=("spectral envelope scaled in frequency at constant pitch (cepstral envelope, 1.5-ms lifter); "
                 "measured as the envelope centroid 250 Hz-5 kHz, and as the log-frequency shift of the "
                 "envelope re the source for the paired measure"),
)
