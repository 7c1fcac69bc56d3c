"""Echo: a Schroeder reverb whose wet mix follows the schedule (benchmark.md §4 echo)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .base import ParamError, Params, Result, ValueRange, match_rms, per_sample, register

__all__ = ["ReverbParams", "schroeder_ir", "reverb"]


@dataclass(frozen=True, kw_only=True)
class ReverbParams(Params):
    """Schroeder reverb settings.

    Attributes
    ----------
    ir_sec : float
        Impulse-response length (s), (0, 10].
    comb_ms, comb_feedback : tuple of float
        Delay (ms, > 0) and feedback ([0, 1)) of each parallel comb; same length.
    allpass_ms : tuple of float
        Delay (ms, > 0) of each series all-pass.
    allpass_gain : float
        All-pass gain before the room factor, [0, 1).
    room : float
        Room factor scaling comb feedbacks and all-pass gain, (0, 1] (a per-tier table in faithful-v1).

    Step values are wet mixes in [0, 1].
    """

    value_name = "wet mix"

    ir_sec: float
    comb_ms: tuple[float, ...]
    comb_feedback: tuple[float, ...]
    allpass_ms: tuple[float, ...]
    allpass_gain: float
    room: float

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(0.0, 1.0)

    def check(self) -> None:
        if not 0 < self.ir_sec <= 10:
            raise ParamError("ir_sec", f"must lie in (0, 10] s, got {self.ir_sec}")
        if not self.comb_ms or len(self.comb_ms) != len(self.comb_feedback):
            raise ParamError("comb_feedback", f"needs one value per comb_ms entry ({len(self.comb_ms)}), "
                                              f"got {len(self.comb_feedback)}")
        for name in ("comb_ms", "allpass_ms"):
            if any(not v > 0 for v in getattr(self, name)):
                raise ParamError(name, f"delays must be > 0 ms, got {list(getattr(self, name))}")
        for name, values in (("comb_feedback", self.comb_feedback), ("allpass_gain", (self.allpass_gain,))):
            if any(not 0 <= v < 1 for v in values):
                raise ParamError(name, f"must lie in [0, 1), got {list(values)}")
        if not 0 < self.room <= 1:
            raise ParamError("room", f"must lie in (0, 1], got {self.room}")


def schroeder_ir(sr: int, *, seconds: float, comb_ms, comb_feedback, allpass_ms, allpass_gain: float,
                 room: float) -> np.ndarray:
    """Impulse response of a Schroeder reverb (memoised: it depends on the settings only).

    Four parallel feedback combs ``y[n] = x[n] + g*y[n-D]`` (feedback x ``room``) are averaged,
    then two all-passes ``y[n] = -g*x[n] + x[n-D] + g*y[n-D]`` (``g = allpass_gain x room``) run in
    series. Delays are ``round(ms * sr / 1000)`` samples.

    Returns
    -------
    np.ndarray, shape (round(seconds * sr),), float64, read-only
    """
    ir = _schroeder_ir(sr, float(seconds), tuple(comb_ms), tuple(comb_feedback), tuple(allpass_ms),
                       float(allpass_gain), float(room))
    return ir


@lru_cache(maxsize=16)
def _schroeder_ir(sr, seconds, comb_ms, comb_feedback, allpass_ms, allpass_gain, room):
    from scipy.signal import lfilter  # here, not at import: scipy.signal costs ~1 s (`vocalgrad --help`)

    n = int(round(seconds * sr))
    acc = np.zeros(n)
    for ms, fb in zip(comb_ms, comb_feedback):
        # The comb's impulse response is sparse: (fb*room)^k at k*D. Repeated multiplication gives
        # exactly what the recursion (scipy.signal.lfilter) computes, without its O(n*D) cost.
        d = int(round(ms * sr / 1000.0))
        taps = np.arange(0, n, d)
        comb = np.zeros(n)
        comb[taps] = np.cumprod(np.concatenate(([1.0], np.full(len(taps) - 1, fb * room))))
        acc += comb
    ir = acc / len(comb_ms)
    g = allpass_gain * room
    for ms in allpass_ms:
        d = int(round(ms * sr / 1000.0))
        b, a = np.zeros(d + 1), np.zeros(d + 1)
        b[0], b[d] = -g, 1.0
        a[0], a[d] = 1.0, -g
        ir = lfilter(b, a, ir)
    ir.flags.writeable = False
    return ir


@register("reverb", ReverbParams, np.float64)
def reverb(x, sr, schedule, params: ReverbParams, *, cache=None) -> Result:
    """Echo: ``(1 - w) * x + w * wet`` (float64 out), wet = x convolved with the tier's IR, RMS-matched to x.

    The wet signal is the same for every condition of a source and tier, so it is memoised in
    ``cache``. See also :func:`generation.transforms.vibration.tremolo`.
    """
    from scipy.signal import fftconvolve

    key = ("reverb_wet", params.room)
    wet = None if cache is None else cache.get(key)
    if wet is None:
        ir = schroeder_ir(sr, seconds=params.ir_sec, comb_ms=params.comb_ms, comb_feedback=params.comb_feedback,
                          allpass_ms=params.allpass_ms, allpass_gain=params.allpass_gain, room=params.room)
        wet = match_rms(fftconvolve(x, ir)[: len(x)].astype(np.float32), x)
        if cache is not None:
            cache[key] = wet
    w = per_sample(schedule, len(x))
    return Result((1.0 - w) * x + w * wet, schedule.span.onset, schedule.span.offset)
