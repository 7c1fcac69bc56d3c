"""Voice vibration: an amplitude LFO whose depth and rate grow together (benchmark.md §4 vibration)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Params, Result, ValueRange, per_sample, register

__all__ = ["TremoloParams", "tremolo"]


@dataclass(frozen=True, kw_only=True)
class TremoloParams(Params):
    """No parameters of its own; the LFO rate is the category's ``covary.rate_hz`` (Hz, [start, end]).

    Step values are depths in [0, 1] (a depth above 1 would turn the gain negative); the rate lies
    in [0, Nyquist] Hz.
    """

    needs_covary = ("rate_hz",)
    value_name = "depth"

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(0.0, 1.0)

    @classmethod
    def covary_range(cls, name: str, sample_rate: int) -> ValueRange:
        return ValueRange(0.0, sample_rate / 2)


@register("tremolo", TremoloParams, np.float32)
def tremolo(x, sr, schedule, params: TremoloParams, *, cache=None) -> Result:
    """Voice vibration: ``gain = 1 - depth * (1 + sin(phi)) / 2``, float32 out.

    ``phi[0] = 0`` and ``phi[n] = sum(2 * pi * rate[m] / sr for m < n)`` (benchmark.md §4a: the
    running sum starts after the first sample); the gain is computed in float64 and applied in
    float32, as the reference does. No RMS matching. The rate follows
    ``schedule.covary["rate_hz"]``. See also :func:`generation.transforms.volume.gain`.
    """
    depth = per_sample(schedule, len(x))
    rate_vals, rate_start, rate_end = schedule.covary["rate_hz"]
    rate = per_sample(schedule, len(x), rate_vals, rate_start, rate_end)
    step = (2.0 * np.pi * rate) / sr
    phi = np.cumsum(np.concatenate([[0.0], step[:-1]]))
    g = 1.0 - depth * (0.5 * (1.0 + np.sin(phi)))
    return Result(np.asarray(x, np.float32) * g.astype(np.float32), schedule.span.onset, schedule.span.offset)
