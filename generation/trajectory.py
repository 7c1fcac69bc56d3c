"""Trajectories g(t) and value schedules (benchmark.md §3).

``g`` maps normalised time t in [0, 1] over the speech span to progress in [0, 1]. A value
schedule applies ``g`` to a quantity that moves from ``lo`` to ``hi`` (its values at the start and
end of an *increase* clip):

* increase: ``a(t) = lo + (hi - lo) * g(t)``
* decrease: ``a(t) = hi - (hi - lo) * g(t)``

exactly as benchmark.md §3 writes them (the two formulas are kept separate so that values are bit-equal to
the reference's).
"""

from __future__ import annotations

import numpy as np

from vocalgrad import DIRECTIONS, TRAJECTORIES

__all__ = ["g", "step_times", "sample_times", "values"]


def g(trajectory: str, t: np.ndarray) -> np.ndarray:
    """Progress g(t) of a trajectory.

    Parameters
    ----------
    trajectory : {"linear", "quad_first_flat", "quad_last_flat", "jump"}
    t : np.ndarray
        Normalised times in [0, 1].

    Returns
    -------
    np.ndarray, float64, same shape as ``t``
    """
    t = np.asarray(t, dtype=np.float64)
    if trajectory == "linear":
        return t.copy()
    if trajectory == "quad_first_flat":
        return t**2
    if trajectory == "quad_last_flat":
        return 1.0 - (1.0 - t) ** 2
    if trajectory == "jump":
        return np.where(t < 0.5, 0.0, 1.0)
    raise ValueError(f"unknown trajectory {trajectory!r}; choose from {', '.join(TRAJECTORIES)}")


def step_times(n_steps: int) -> np.ndarray:
    """Normalised time of each step: ``t_i = i / (n - 1)``, or ``[1.0]`` for one step."""
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    if n_steps == 1:
        return np.ones(1)
    return np.arange(n_steps) / (n_steps - 1)


def sample_times(n_samples: int) -> np.ndarray:
    """Normalised time of each sample of a span (``np.linspace(0, 1, n)``; ``[1.0]`` for one)."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    if n_samples == 1:
        return np.ones(1)
    return np.linspace(0.0, 1.0, n_samples)


def values(trajectory: str, direction: str, t: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Values of a quantity along a trajectory.

    Parameters
    ----------
    trajectory : str
        One of :data:`vocalgrad.TRAJECTORIES`.
    direction : {"increase", "decrease"}
    t : np.ndarray
        Normalised times.
    lo, hi : float
        Value at the start and at the end of an *increase* clip (``lo`` may exceed ``hi``, e.g.
        the effective sample rate of the distortion category falls as distortion increases).
    """
    gt = g(trajectory, t)
    if direction == "increase":
        return lo + (hi - lo) * gt
    if direction == "decrease":
        return hi - (hi - lo) * gt
    raise ValueError(f"unknown direction {direction!r}; choose from {', '.join(DIRECTIONS)}")
