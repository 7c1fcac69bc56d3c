"""Shared machinery of the transforms: results, RMS matching, cross-fade stitching, chunk loops.

Every transform is a function ``(x, sr, schedule, params, *, cache=None) -> Result``:

* ``x`` — mono float32 source at the processing rate, shape ``(n,)``;
* ``schedule`` — :class:`generation.schedule.Schedule` of the clip;
* ``params`` — the category's recipe parameters with per-tier tables already resolved, plus the
  recipe's ``crossfade`` length (and, for noise, the clip's ``seed``);
* ``cache`` — optional dict shared by all clips of one source; transforms may memoise work that
  depends only on the source in it (STFTs of context segments, IRs). Results never depend on it.

The step-wise chunked family (speed, pitch, distortion, roughness, clarity) goes through
:func:`render_chunked`, the one implementation of benchmark.md §4a's chunk/context/cross-fade mechanics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Result", "rms", "match_rms", "rms_scale", "stitch", "render_chunked", "register", "TRANSFORMS"]

#: Registry: transform name (as used in recipe files) -> function.
TRANSFORMS: dict[str, Callable] = {}


def register(name: str):
    """Decorator adding a transform function to :data:`TRANSFORMS` under ``name``."""

    def deco(fn):
        TRANSFORMS[name] = fn
        return fn

    return deco


@dataclass(frozen=True)
class Result:
    """A transformed clip: float samples and the speech span's position in it."""

    y: np.ndarray
    onset: int
    offset: int


def rms(x: np.ndarray) -> float:
    """Root mean square of ``x`` (0 for an empty array)."""
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0


def match_rms(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Scale ``y`` to the RMS of ``ref`` (unchanged when ``y`` is silent)."""
    ry = rms(y)
    if ry == 0.0:
        return y
    return (y * np.float32(rms(ref) / ry)).astype(np.float32, copy=False)


def rms_scale(processed: np.ndarray, ref: np.ndarray) -> np.float32:
    """Gain that gives ``processed`` the RMS of ``ref``, as the reference computes it.

    Both RMS values are ``sqrt(mean(v**2))`` with the squares taken in float32 and summed in
    float64; the gain is 1 when either is 0. Chunked categories compute it over the **whole**
    processed segment (chunk with its context, or the whole pre/post part) and apply it to the
    part they keep (benchmark.md §4a).
    """
    def _rms32(v):
        v = np.asarray(v, dtype=np.float32)
        return float(np.sqrt(np.mean(np.square(v), dtype=np.float64))) if v.size else 0.0

    r_ref, r_out = _rms32(ref), _rms32(processed)
    if r_ref <= 0.0 or r_out <= 0.0:
        return np.float32(1.0)
    return np.float32(r_ref / r_out)


def stitch(pieces: list[np.ndarray], fade: int) -> tuple[np.ndarray, list[int]]:
    """Join pieces with uncompensated linear cross-fades (benchmark.md §4a).

    Each piece after the first overlap-adds its first ``f`` samples with the last ``f`` samples of
    the output built so far, ``f = min(fade, len(output), len(piece))``, with ramps
    ``linspace(0, 1, f)`` (new piece) and ``1 - ramp`` (output). Every join therefore shortens the
    result by ``f`` samples.

    Returns
    -------
    y : np.ndarray, float32
    positions : list of int
        Start of each piece in ``y``.
    """
    pieces = [np.asarray(p, dtype=np.float32) for p in pieces]
    total = sum(len(p) for p in pieces)
    out = np.empty(total, dtype=np.float32)
    pos, positions, ramps = 0, [], {}
    for p in pieces:
        f = min(fade, pos, len(p))
        start = pos - f
        if f:
            ramp = ramps.get(f)
            if ramp is None:
                ramp = ramps[f] = np.linspace(0.0, 1.0, f, dtype=np.float32)
            out[start:pos] = out[start:pos] * (np.float32(1.0) - ramp) + p[:f] * ramp
        out[pos:pos + len(p) - f] = p[f:]
        positions.append(start)
        pos = start + len(p)
    return out[:pos], positions


def render_chunked(
    x: np.ndarray,
    schedule,
    params: dict,
    pieces: list[np.ndarray],
    *,
    outside: str,
    pre: np.ndarray | None = None,
    post: np.ndarray | None = None,
) -> Result:
    """Assemble a chunked clip: audio before the span, cross-faded chunk pieces, audio after it.

    Parameters
    ----------
    x : np.ndarray
        Source signal.
    schedule : Schedule
    params : dict
        Needs ``crossfade`` (samples).
    pieces : list of np.ndarray
        Processed core of every step, in order.
    outside : {"keep", "processed"}
        ``keep``: the source's samples outside the span are used untouched (speed, pitch);
        ``processed``: ``pre`` and ``post`` (processed at the start/end values) are used.

    Notes
    -----
    Pieces outside the span are concatenated, not cross-faded: the audio outside the span of
    speed and pitch clips stays bit-identical to the source.
    """
    on, off = schedule.span.onset, schedule.span.offset
    if outside == "keep":
        pre, post = x[:on], x[off:]
    body, _ = stitch(pieces, int(params["crossfade"]))
    y = np.concatenate([np.asarray(pre, np.float32), body, np.asarray(post, np.float32)])
    return Result(y, len(pre), len(pre) + len(body))


def chunk_segments(x: np.ndarray, layout) -> list[tuple[np.ndarray, int, int]]:
    """(context segment, core offset in it, core length) for every step of ``layout``."""
    return [
        (x[cs:ce], s - cs, e - s)
        for s, e, cs, ce in zip(layout.starts, layout.ends, layout.ctx_starts, layout.ctx_ends)
    ]
