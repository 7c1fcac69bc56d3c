"""Value schedules and chunk layouts: where each step of a clip lies and which value it gets.

A :class:`Schedule` is everything a transform needs to know about one clip's condition: the speech
span, the step (or per-sample) values of the varied quantity, the values held before and after the
span, and any co-varying quantities (vibration's LFO rate). A :class:`Layout` cuts a span into the
steps of benchmark.md §4a: fixed blocks from the onset (last one partial) or ``ceil(L / size)`` chunks of
near-equal length (speed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import trajectory as traj
from .recipe import CategoryRecipe, Recipe
from .span import Span

__all__ = ["Layout", "Schedule", "make_layout", "make_schedule"]


@dataclass(frozen=True)
class Layout:
    """Steps of a span: core ``[starts[i], ends[i])`` and context ``[ctx_starts[i], ctx_ends[i])``.

    All indices are absolute sample positions in the source; context is clipped to the span.
    """

    kind: str
    starts: np.ndarray
    ends: np.ndarray
    ctx_starts: np.ndarray
    ctx_ends: np.ndarray

    @property
    def n(self) -> int:
        return len(self.starts)


def make_layout(kind: str, span: Span, *, size: int, context: int) -> Layout:
    """Cut ``span`` into steps.

    Parameters
    ----------
    kind : {"blocks", "even_chunks"}
        ``blocks``: fixed ``size``-sample blocks from the onset, the last one partial.
        ``even_chunks``: ``n = ceil(L / size)`` chunks with bounds ``round(i * L / n)``.
    span : Span
    size, context : int
        Step length and context on each side, in samples.
    """
    on, off = span.onset, span.offset
    length = off - on
    if length < 1:
        raise ValueError(f"empty speech span {span}")
    n = -(-length // size)
    if kind == "blocks":
        starts = on + size * np.arange(n, dtype=np.int64)
        ends = np.minimum(starts + size, off)
    elif kind == "even_chunks":
        bounds = np.array([on + round(i * length / n) for i in range(n + 1)], dtype=np.int64)
        starts, ends = bounds[:-1], bounds[1:]
    else:
        raise ValueError(f"unknown layout {kind!r}; use 'blocks' or 'even_chunks'")
    return Layout(kind, starts, ends, np.maximum(on, starts - context), np.minimum(off, ends + context))


@dataclass(frozen=True)
class Schedule:
    """The varied quantity of one clip.

    Attributes
    ----------
    span : Span
        Speech span of the source (samples at the processing rate).
    values : np.ndarray
        One value per step (layouts ``blocks``/``even_chunks``) or per span sample (``samples``).
    start, end : float
        Values held before the onset and after the offset.
    layout : Layout or None
        Step layout (None for per-sample schedules).
    covary : dict
        Other quantities moving along the same trajectory: name -> (values, start, end).
    """

    span: Span
    values: np.ndarray
    start: float
    end: float
    layout: Layout | None = None
    covary: dict = field(default_factory=dict)


def make_schedule(recipe: Recipe, cat: CategoryRecipe, span: Span, *, tier: str, trajectory: str,
                  direction: str) -> Schedule:
    """Schedule of one condition (benchmark.md §3): step or sample times over the span, g(t), values."""
    if cat.layout == "samples":
        t, layout = traj.sample_times(span.length), None
    else:
        layout = make_layout(cat.layout, span, size=recipe.block, context=recipe.context)
        t = traj.step_times(layout.n)
    ends_t = np.array([0.0, 1.0])

    def along(lo: float, hi: float):
        vals = traj.values(trajectory, direction, t, lo, hi)
        start, end = traj.values(trajectory, direction, ends_t, lo, hi)
        return vals, float(start), float(end)

    values, start, end = along(*cat.tiers[tier])
    covary = {name: along(float(lo), float(hi)) for name, (lo, hi) in cat.params.get("covary", {}).items()}
    return Schedule(span, values, start, end, layout, covary)
