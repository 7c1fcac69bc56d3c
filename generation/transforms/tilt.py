"""Brightness (extension attribute): a spectral tilt about a pivot frequency, frame by frame.

Each frame's spectrum is multiplied by ``10 ** (tilt * log2(f / pivot_hz) / 20)``: ``tilt`` dB per
octave (positive = brighter, more energy at high frequencies), frequencies clamped to
``[floor_hz, ceiling_hz]`` so the gain stays finite at 0 Hz and flat above the ceiling. The gain of
each tilt is scaled so that it keeps the energy of the clip's long-term average spectrum
(:func:`._framewise.framewise`, ``keep="clip"``), so the level does not follow the tilt while every
frame gets the same filter (the tilt is not evened out between vowels and consonants). The schedule's value (dB/octave) is taken at each frame's centre.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._framewise import FrameParams, framewise
from .base import ParamError, Result, ValueRange, per_sample, register

__all__ = ["TiltParams", "spectral_tilt", "tilt_gain"]


@dataclass(frozen=True, kw_only=True)
class TiltParams(FrameParams):
    """Pivot and clamp frequencies of the tilt (Hz).

    Attributes
    ----------
    pivot_hz : float
        Frequency the tilt leaves unchanged (before the energy match), > 0.
    floor_hz, ceiling_hz : float
        Below ``floor_hz`` and above ``ceiling_hz`` the gain is flat; ``0 < floor_hz < pivot_hz < ceiling_hz``.
    """

    pivot_hz: float = 1000.0
    floor_hz: float = 100.0
    ceiling_hz: float = 16000.0

    value_name = "tilt (dB/octave)"

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(-24.0, 24.0)

    def check(self) -> None:
        super().check()
        if not self.floor_hz > 0:
            raise ParamError("floor_hz", f"must be > 0 Hz, got {self.floor_hz}")
        if not self.floor_hz < self.pivot_hz:
            raise ParamError("pivot_hz", f"must be above floor_hz ({self.floor_hz} Hz), got {self.pivot_hz}")
        if not self.pivot_hz < self.ceiling_hz:
            raise ParamError("ceiling_hz", f"must be above pivot_hz ({self.pivot_hz} Hz), got {self.ceiling_hz}")


def tilt_gain(freqs: np.ndarray, tilt_db_per_octave, params: TiltParams) -> np.ndarray:
    """Amplitude gain of a tilt of ``tilt_db_per_octave`` at ``freqs`` (before the energy match);
    an array of tilts gives one row per tilt."""
    octaves = np.log2(np.clip(freqs, params.floor_hz, params.ceiling_hz) / params.pivot_hz)
    return 10.0 ** (np.multiply.outer(tilt_db_per_octave, octaves) / 20.0)


@register("spectral_tilt", TiltParams, np.float64)
def spectral_tilt(x, sr, schedule, params: TiltParams, *, cache=None) -> Result:
    """Brightness: frame-wise spectral tilt in dB/octave, the clip's energy kept, float64 out."""
    values = per_sample(schedule, len(x))
    y = framewise(x, values, params.n_fft, lambda specs, freqs, v: tilt_gain(freqs, v, params), sr, keep="clip")
    return Result(y, schedule.span.onset, schedule.span.offset)
