"""Sample-wise envelope transforms: volume (gain), background noise, voice vibration (tremolo).

None of them changes the clip length or cross-fades; see :mod:`.chunked` for the chunk-processed
family and :mod:`.reverb` for echo.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .base import Result, register, rms

__all__ = ["per_sample", "gain", "white_noise", "tremolo", "noise_seed"]


def per_sample(schedule, n: int, values=None, start=None, end=None) -> np.ndarray:
    """Expand a schedule to one value per sample of an ``n``-sample clip (float64).

    Step values are repeated over their step's core; ``start``/``end`` fill the samples before the
    onset and after the offset. ``values``/``start``/``end`` default to the schedule's own and may
    be given for a co-varying quantity.
    """
    values = schedule.values if values is None else values
    start = schedule.start if start is None else start
    end = schedule.end if end is None else end
    on, off = schedule.span.onset, schedule.span.offset
    if schedule.layout is not None:
        body = np.repeat(values, schedule.layout.ends - schedule.layout.starts)
    else:
        body = np.asarray(values, dtype=np.float64)
    return np.concatenate([np.full(on, start), body, np.full(n - off, end)])


@register("gain")
def gain(x, sr, schedule, params, *, cache=None) -> Result:
    """Volume: per-step gain in dB (benchmark.md §4 volume), no cross-fade, no RMS matching.

    Computed in float64, so that the 16-bit output equals applying the gain to the 16-bit source
    samples. See also :func:`white_noise`, :func:`tremolo`.
    """
    g = np.power(10.0, per_sample(schedule, len(x)) / 20.0)
    return Result(x.astype(np.float64) * g, schedule.span.onset, schedule.span.offset)


def noise_seed(params: dict, *, item_id: str, clip_ref: str, trajectory: str, tier: str, direction: str) -> int:
    """Seed of a noise clip: first 8 bytes (big-endian) of sha256 of the reference seed string.

    The string is ``"{prefix}:{item}__{clip}__{trajectory}__{tier}__{direction}"`` with the
    reference's tier (``low|mid|high``) and direction (``up|down``) spellings (benchmark.md §4a).
    """
    key = "__".join((item_id, clip_ref, trajectory, params["seed_tier"], params["seed_directions"][direction]))
    digest = hashlib.sha256(f"{params['seed_prefix']}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@register("white_noise")
def white_noise(x, sr, schedule, params, *, cache=None) -> Result:
    """Background noise: unit-RMS white Gaussian noise x speech-span RMS x ratio envelope.

    ``params["seed"]`` seeds a standard-normal stream of the clip length (stored as float32).
    See also :func:`gain`.
    """
    noise = np.random.default_rng(int(params["seed"])).standard_normal(len(x)).astype(np.float32)
    noise_rms = rms(noise)
    if noise_rms > 0:
        noise = noise / np.float32(noise_rms)
    span_rms = rms(x[schedule.span.onset:schedule.span.offset])
    y = x + noise * (span_rms * per_sample(schedule, len(x)))
    return Result(y, schedule.span.onset, schedule.span.offset)


@register("tremolo")
def tremolo(x, sr, schedule, params, *, cache=None) -> Result:
    """Voice vibration: amplitude LFO whose depth and rate grow together (benchmark.md §4 vibration).

    ``gain = 1 - depth * (1 + sin(phi)) / 2`` with ``phi[0] = 0`` and
    ``phi[n] = sum(2 * pi * rate[m] / sr for m < n)`` (benchmark.md §4a: the running sum starts
    after the first sample); the gain is computed in float64 and applied in float32, as the
    reference does. No RMS matching. The rate follows ``schedule.covary["rate_hz"]``.
    See also :func:`gain`.
    """
    depth = per_sample(schedule, len(x))
    rate_vals, rate_start, rate_end = schedule.covary["rate_hz"]
    rate = per_sample(schedule, len(x), rate_vals, rate_start, rate_end)
    step = (2.0 * np.pi * rate) / sr
    phi = np.cumsum(np.concatenate([[0.0], step[:-1]]))
    g = 1.0 - depth * (0.5 * (1.0 + np.sin(phi)))
    return Result(np.asarray(x, np.float32) * g.astype(np.float32), schedule.span.onset, schedule.span.offset)
