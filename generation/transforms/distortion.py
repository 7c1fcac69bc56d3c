"""Distortion: sample-and-hold at an effective sample rate, chunk-processed and RMS-matched."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ChunkedParams, Result, ValueRange, chunked, register

__all__ = ["SampleHoldParams", "hold_samples", "sample_hold_segment", "sample_hold"]


@dataclass(frozen=True, kw_only=True)
class SampleHoldParams(ChunkedParams):
    """Only the recipe's cross-fade; the step values (effective rate, Hz) come from the schedule.

    Step values lie in [1000, sample rate] Hz, the range :func:`hold_samples` clamps to (a value
    outside it would be silently clamped); an increase clip (more distortion) lowers the rate, and
    the two ends of a tier must give different hold lengths.
    """

    value_name = "effective rate (Hz)"
    increase_sign = -1

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(1000.0, float(sample_rate))

    @classmethod
    def value_level(cls, value: float, sample_rate: int) -> float:
        return hold_samples(sample_rate, value)


def hold_samples(sr: int, rate_hz: float) -> int:
    """Hold length of a sample-and-hold at effective rate ``rate_hz``.

    As the reference: the rate is first rounded to an integer and clamped to ``[1000, sr]``, then
    ``hold = round(sr / rate)`` (>= 1); a rate equal to ``sr`` leaves the signal untouched (hold 1).
    """
    rate = max(1000, min(int(sr), int(round(rate_hz))))
    if rate == int(sr):
        return 1
    return max(1, int(round(sr / rate)))


def sample_hold_segment(seg: np.ndarray, hold: int) -> np.ndarray:
    """Repeat every ``hold``-th sample of ``seg`` (counted from its first sample)."""
    idx = (np.arange(len(seg)) // hold) * hold
    return seg[idx]


@register("sample_hold", SampleHoldParams, np.float32)
def sample_hold(x, sr, schedule, params: SampleHoldParams, *, cache=None) -> Result:
    """Distortion: sample-and-hold at an effective rate (see :func:`hold_samples`), RMS-matched, float32 out.

    See also :func:`generation.transforms.roughness.quantize`, :func:`generation.transforms.clarity.lowpass`.
    """
    return chunked(x, schedule, params, lambda s, v: sample_hold_segment(s, hold_samples(sr, v)),
                   rms_matched=True, outside="processed")
