"""Statistics the report adds on top of :mod:`harness_tasks.metrics` (benchmark.md §8).

The point metrics and the (binomial or source-clustered) bootstrap interval of one model are
:func:`harness_tasks.metrics.bootstrap_ci`; this module only adds what compares a model with
chance or with another model on the same clips.

Examples
--------
>>> chance_verdict((0.45, 0.58))
'not above chance'
>>> round(mcnemar_exact(10, 2), 4)
0.0386
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness_tasks.metrics import bootstrap_ci

__all__ = [
    "DRAWS",
    "SEED",
    "chance_verdict",
    "intervals",
    "mcnemar_exact",
    "paired_bootstrap_diff",
]

#: Bootstrap settings of the paper (benchmark.md §8).
DRAWS = 10_000
SEED = 1234
CHANCE = 0.5


def intervals(records: Sequence[dict[str, Any]], metric: str = "acc", *, draws: int = DRAWS,
              seed: int = SEED, cluster: str = "source_id") -> dict[str, list[float]]:
    """Both 95 % intervals of a metric: ``{"binomial": [lo, hi], "clustered": [lo, hi]}``.

    ``binomial`` resamples clips independently (the paper's bootstrap); ``clustered`` resamples
    whole source utterances (``cluster`` key), which accounts for the 24 conditions of a source
    being correlated.
    """
    return {
        "binomial": list(bootstrap_ci(records, metric, draws=draws, seed=seed)),
        "clustered": list(bootstrap_ci(records, metric, draws=draws, seed=seed, cluster=cluster)),
    }


def chance_verdict(interval: Sequence[float], *, chance: float = CHANCE) -> str:
    """``"above chance"``, ``"not above chance"`` (interval contains ``chance``) or ``"below chance"``.

    An undefined interval (``nan``) gives ``"n/a"``.
    """
    lo, hi = interval
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "n/a"
    if lo > chance:
        return "above chance"
    if hi < chance:
        return "below chance"
    return "not above chance"


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test on the discordant pairs.

    Parameters
    ----------
    b, c : int
        Clips only model A answered correctly, clips only model B answered correctly.

    Returns
    -------
    float
        p-value of ``b ~ Binomial(b + c, 1/2)``; 1.0 when there are no discordant pairs.
    """
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    from scipy import stats as _sps  # lazy: scipy.stats costs ~0.4 s of every `vocalgrad` start-up

    return float(_sps.binomtest(b, b + c, 0.5).pvalue)


def paired_bootstrap_diff(correct_a: Sequence[bool], correct_b: Sequence[bool], *,
                          clusters: Sequence[Any] | None = None, draws: int = DRAWS,
                          seed: int = SEED, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of ``acc(A) - acc(B)`` on the same clips.

    Parameters
    ----------
    correct_a, correct_b : sequence of bool
        Per-clip correctness of the two models, aligned (same clip at the same index).
    clusters : sequence, optional
        Per-clip cluster key (source utterance); whole clusters are resampled when given.
    draws, seed, level
        As in :func:`harness_tasks.metrics.bootstrap_ci`.

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` for no clips.
    """
    a = np.asarray(correct_a, dtype=np.int64)
    b = np.asarray(correct_b, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"correct_a and correct_b must be aligned 1-d sequences, got {a.shape} and {b.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = a.size
    if n == 0:
        return math.nan, math.nan
    d = a - b  # -1, 0, +1
    rng = np.random.default_rng(seed)
    if clusters is None:
        # a clip-level resample only needs the counts of -1, 0, +1
        cnt = np.array([(d == v).sum() for v in (-1, 0, 1)], dtype=np.float64)
        sims = rng.multinomial(n, cnt / n, size=draws)
        vals = (sims[:, 2] - sims[:, 0]) / n
    else:
        if len(clusters) != n:
            raise ValueError(f"clusters has {len(clusters)} keys for {n} clips")
        keys: dict[Any, int] = {}
        idx = np.array([keys.setdefault(k, len(keys)) for k in clusters])
        k = len(keys)
        dsum = np.bincount(idx, weights=d, minlength=k)
        nsum = np.bincount(idx, minlength=k).astype(np.float64)
        mult = rng.multinomial(k, np.full(k, 1.0 / k), size=draws)
        vals = (mult @ dsum) / (mult @ nsum)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(vals, [alpha, 1 - alpha])
    return float(lo), float(hi)
