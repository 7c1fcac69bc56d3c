"""Brightness (extension attribute): the spectral tilt of the voice, in dB per octave.

Definition: the clip's spectrum is tilted about 1 kHz by a slope that follows the trajectory over
the speech span (:func:`generation.transforms.tilt.spectral_tilt`); each frame keeps its energy,
so only the balance of low and high frequencies changes. ``increase`` = brighter (more energy at
high frequencies), ``decrease`` = darker.

Tiers (dB/octave at the start and end of an increase clip): low -2 -> +2, medium -4 -> +4,
high -6 -> +6.

Measures: the reference-free one (the oracle's) is the slope of a regression of third-octave band
levels (200 Hz-8 kHz) on log2 frequency in a window; the paired one (label validity, ``show``) is
the same slope fitted to the clip's band levels minus the source's, which is the applied tilt
itself. Source requirement: energy above 4 kHz (a telephone-band source has nothing to tilt).
"""

from __future__ import annotations

import numpy as np

from ..transforms.tilt import spectral_tilt
from ..label_validity import ends_difference
from .base import Attribute, window_values
from .sweep import Sweep

__all__ = ["ATTRIBUTE", "band_levels", "tilt_slope", "paired_tilt", "tilt_curve"]

#: Third-octave band centres, 200 Hz - 8 kHz.
BANDS = 200.0 * 2.0 ** (np.arange(0, 16) / 3.0)


def band_levels(seg: np.ndarray, sr: int, n: int = 2048) -> np.ndarray:
    """Mean power (dB) in each third-octave band of :data:`BANDS` (Welch: Hann frames of ``n``, hop n/2)."""
    seg = np.asarray(seg, dtype=np.float64)
    if seg.size < n:
        seg = np.pad(seg, (0, n - seg.size))
    frames = np.lib.stride_tricks.sliding_window_view(seg, n)[::n // 2]
    P = np.mean(np.abs(np.fft.rfft(frames * np.hanning(n), axis=1)) ** 2, axis=0)
    f = np.fft.rfftfreq(n, 1.0 / sr)
    lo, hi = BANDS * 2 ** (-1 / 6), BANDS * 2 ** (1 / 6)
    out = np.array([P[(f >= a) & (f < b)].mean() if np.any((f >= a) & (f < b)) else 0.0 for a, b in zip(lo, hi)])
    return 10.0 * np.log10(out + 1e-20)


def _slope(levels: np.ndarray, ok: np.ndarray | None = None) -> float:
    x = np.log2(BANDS)
    if ok is not None:
        x, levels = x[ok], levels[ok]
    if x.size < 3:
        return float("nan")
    return float(np.polyfit(x, levels, 1)[0])


def tilt_slope(y: np.ndarray, sr: int) -> float:
    """Reference-free: spectral slope of a window (dB/octave, 200 Hz-8 kHz); larger = brighter."""
    return _slope(band_levels(y, sr))


def _ratio_slope(ys, xs, sr) -> float:
    ly, lx = band_levels(ys, sr), band_levels(xs, sr)
    ok = lx > lx.max() - 60.0  # bands where the source has something to tilt
    return _slope(ly - lx, ok)


def paired_tilt(x, span, y, onset, offset, sr, schedule, fade=240) -> float:
    """Applied tilt at the end of the span minus at its start (dB/octave), clip against source.

    The tilt keeps time alignment, so the first and the last eighth of the source span are compared
    with the same samples of the clip.
    """
    return ends_difference(lambda ys, xs: _ratio_slope(ys, xs, sr), x, span, y)


def tilt_curve(y, sr, source=None):
    """For ``vocalgrad show``: tilt re the source (dB/octave, 100-ms frames, 50-ms hop), or the
    window slope when no source is given."""
    if source is None:
        t, vals = window_values(y, sr, lambda seg, _: tilt_slope(seg, sr), win_sec=0.1)
        return t, vals, "spectral slope (dB/octave)", False
    t, vals = window_values(y, sr, lambda seg, ref: _ratio_slope(seg, ref, sr), source=source, win_sec=0.1)
    return t, vals, "tilt re source (dB/octave)", True


ATTRIBUTE = Attribute(
    name="brightness",
    phrase="voice brightness",
    increase_means="brighter (more high frequencies)",
    decrease_means="darker (fewer high frequencies)",
    unit="dB/octave",
    tiers={"low": (-2.0, 2.0), "medium": (-4.0, 4.0), "high": (-6.0, 6.0)},
    transform=spectral_tilt,
    params={"n_fft": 1024, "pivot_hz": 1000.0, "floor_hz": 100.0, "ceiling_hz": 16000.0},
    layout="samples",
    measure=tilt_slope,
    paired=paired_tilt,
    effect_unit="dB/octave (tilt re source)",
    min_change=0.5,
    origin="environment",
    min_bandwidth_hz=4000.0,
    curve=tilt_curve,
    sweep=Sweep(tuple(2.0 * k for k in range(9)), "dB/octave", lambda m: (-m / 2.0, m / 2.0),
                note="tilt -m/2 -> +m/2 dB/octave; tiers 4, 8, 12 on a 2 dB/octave grid"),
    description=("spectral tilt about 1 kHz in dB/octave, energy kept per frame; measured as the slope of "
                 "third-octave band levels (200 Hz-8 kHz) on log frequency, re the source for the paired measure"),
)
