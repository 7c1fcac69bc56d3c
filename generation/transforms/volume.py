"""Volume: a per-step gain in dB (benchmark.md §4 volume)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Params, Result, per_sample, register

__all__ = ["GainParams", "gain"]


@dataclass(frozen=True, kw_only=True)
class GainParams(Params):
    """The gain takes no parameters: the step values (dB) come from the schedule."""


@register("gain", GainParams, np.float64)
def gain(x, sr, schedule, params: GainParams, *, cache=None) -> Result:
    """Volume: per-step gain in dB, no cross-fade, no RMS matching.

    Computed in float64 (the output dtype), so that the 16-bit output equals applying the gain to
    the 16-bit source samples. See also :func:`generation.transforms.noise.white_noise`,
    :func:`generation.transforms.vibration.tremolo`.
    """
    g = np.power(10.0, per_sample(schedule, len(x)) / 20.0)
    return Result(x.astype(np.float64) * g, schedule.span.onset, schedule.span.offset)
