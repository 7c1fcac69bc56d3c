"""Simulated observers for the psychometric fit (:mod:`.psychometric`): recovery checks and the sources needed.

A simulated observer answers every clip of a sweep independently, correct with the probability
its Weibull function (:func:`analysis.report.psychometric.weibull`) gives at the clip's
magnitude. Each source contributes ``per_source`` clips per magnitude (a sweep render: 4
trajectories x 2 directions = 8). The tests check that known thresholds are recovered within the
bootstrap intervals and that a coin reaches no threshold; :func:`interval_widths` measures how the
interval narrows with the number of sources (docs/sweep.md's table:
``python -m analysis.report.psychometric_sim``).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .psychometric import TARGET, GUESS, bootstrap, fit_weibull, weibull

__all__ = ["alpha_for", "interval_widths", "simulate"]


def alpha_for(threshold: float, beta: float, lapse: float) -> float:
    """The Weibull scale whose 75 % point is ``threshold``."""
    f = (TARGET - GUESS) / (1.0 - GUESS - lapse)
    return threshold / (-math.log1p(-f)) ** (1.0 / beta)


def simulate(magnitudes, *, threshold: float | None, beta: float = 3.0, lapse: float = 0.02, n_sources: int,
             per_source: int = 8, seed: int = 0):
    """Correct counts of a simulated observer.

    Parameters
    ----------
    magnitudes : array-like
        Non-zero magnitudes of the sweep.
    threshold : float or None
        The observer's 75 % threshold; None: a coin (50 % at every magnitude).

    Returns
    -------
    (k, n) : arrays of shape (n_sources, levels)
    """
    x = np.asarray(magnitudes, float)
    p = np.full(x.shape, 0.5) if threshold is None else weibull(x, alpha_for(threshold, beta, lapse), beta, lapse)
    rng = np.random.default_rng(seed)
    n = np.full((n_sources, x.size), per_source, dtype=float)
    return rng.binomial(per_source, np.broadcast_to(p, n.shape)).astype(float), n


def interval_widths(magnitudes, *, threshold: float, sources=(5, 10, 20, 30, 40, 80), observers: int = 20,
                    draws: int = 100, beta: float = 3.0, lapse: float = 0.02, seed: int = 0) -> list[dict]:
    """Median 95 % interval width of the threshold (in magnitude units and relative to the threshold),
    coverage and share of intervals open above, per number of sources, over ``observers`` simulated observers."""
    x = np.asarray(magnitudes, float)
    out = []
    for s in sources:
        widths, covered, open_ = [], 0, 0
        for i in range(observers):
            k, n = simulate(x, threshold=threshold, beta=beta, lapse=lapse, n_sources=s, seed=seed + 1000 * s + i)
            b = bootstrap(x, k, n, draws=draws, seed=i, fit=fit_weibull(x, k.sum(0), n.sum(0)))
            lo, hi = b["threshold_ci"]
            covered += lo <= threshold <= hi
            open_ += not math.isfinite(hi)
            widths.append(hi - lo)
        w = float(np.median(widths))
        out.append({"sources": s, "median_width": w, "relative_width": w / threshold,
                    "coverage": covered / observers, "open_above": open_ / observers})
    return out


if __name__ == "__main__":  # the table of docs/sweep.md (a pitch-like sweep, threshold 3 semitones)
    mags = [1, 2, 3, 4, 5, 6, 7, 8]
    print("| sources | median 95 % width | relative to threshold | coverage | open above |")
    print("|---|---|---|---|---|")
    for r in interval_widths(mags, threshold=3.0, observers=int(sys.argv[1]) if len(sys.argv) > 1 else 12, draws=60):
        print(f"| {r['sources']} | {r['median_width']:.2f} | {100 * r['relative_width']:.0f} % | "
              f"{100 * r['coverage']:.0f} % | {100 * r['open_above']:.0f} % |")
