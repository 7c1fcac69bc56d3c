"""Volume: a per-step gain in dB (benchmark.md §4 volume)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Params, Result, ValueRange, per_sample, register

__all__ = ["GainParams", "gain"]


@dataclass(frozen=True, kw_only=True)
class GainParams(Params):
    """The gain takes no parameters: the step values (dB) come from the schedule.

    Step values lie in [-40, 40] dB: +40 dB drives any speech far into clipping and -40 dB
    leaves it barely above the 16-bit floor; faithful-v1 uses up to +-18 dB.
    """

    value_name = "gain (dB)"

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(-40.0, 40.0)


@register("gain", GainParams, np.float64)
def gain(x, sr, schedule, params: GainParams, *, cache=None) -> Result:
    """Volume: per-step gain in dB, no cross-fade, no RMS matching.

    Computed in float64 (the output dtype), so that the 16-bit output equals applying the gain to
    the 16-bit source samples. See also :func:`generation.transforms.noise.white_noise`,
    :func:`generation.transforms.vibration.tremolo`.
    """
    g = np.power(10.0, per_sample(schedule, len(x)) / 20.0)
    return Result(x.astype(np.float64) * g, schedule.span.onset, schedule.span.offset)
