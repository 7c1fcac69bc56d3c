"""Source-clustered intervals: delete-one-cluster jackknife with a Student t quantile.

The 24 conditions of a source utterance share its voice, so a model's answers on them are not independent;
the sources are the independent units. The percentile bootstrap over sources under-covers with few of them
(it estimates the spread of a mean of ``k`` units with divisor ``k`` and uses a normal quantile: 91-92 %
instead of 95 % at 20 sources, measured by ``benchmarks/calibration.py``). This interval uses the
delete-one-source jackknife variance (exactly ``s^2 / k`` for a mean of equal sources) and the t quantile on
``k - 1`` degrees of freedom: deterministic (no draws, no seed) and at its nominal level from 20 sources
(docs/statistics.md).

Examples
--------
>>> y = np.array([0.6, 0.7, 0.8, 0.7])          # four equal sources' accuracies
>>> lo, hi = jackknife_t(y.mean(), (y.sum() - y) / 3)  # the mean without each source
>>> round(lo, 3), round(hi, 3)
(0.57, 0.83)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .stat_settings import STATS

__all__ = ["cluster_interval", "jackknife_t"]


def jackknife_t(estimate: float, leave_one_out: np.ndarray, *, level: float = STATS.level,
                bounds: tuple[float, float] = (0.0, 1.0)) -> tuple[float, float]:
    """``estimate -+ t_{k-1} * jackknife SE``, cut to ``bounds``.

    Parameters
    ----------
    estimate : float
        The figure on all clusters.
    leave_one_out : array of shape (k,)
        The figure with each cluster left out (``nan`` ones are dropped).
    level : float
        Coverage.
    bounds : (low, high)
        Range of the figure (a rate: 0..1; a difference of rates: -1..1).

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` when the estimate is undefined or fewer than two leave-one-out values are.
    """
    loo = np.asarray(leave_one_out, dtype=np.float64)
    loo = loo[~np.isnan(loo)]
    k = loo.size
    if k < 2 or estimate is None or math.isnan(estimate):
        return math.nan, math.nan
    from scipy import stats as _sps  # lazy: scipy.stats costs ~0.4 s of every `vocalgrad` start-up

    se = math.sqrt((k - 1) / k * float(np.sum((loo - loo.mean()) ** 2)))
    half = float(_sps.t.ppf(0.5 + level / 2, k - 1)) * se
    return float(max(bounds[0], estimate - half)), float(min(bounds[1], estimate + half))


def cluster_interval(records: Sequence[Mapping[str, Any]], metric: str = "acc", *, cluster: str = "source_id",
                     macro_by: str | None = None, level: float = STATS.level,
                     min_clusters: int = STATS.min_clusters) -> tuple[float, float]:
    """Source-clustered interval of a metric of :mod:`harness_tasks.metrics` (the report's *clustered*).

    Parameters
    ----------
    records : sequence of mappings
        Scored records with the ``cluster`` key (and ``macro_by``'s).
    metric : str
        Key of :data:`harness_tasks.metrics.METRICS`.
    cluster : str
        Record key of the independent unit (the source utterance).
    macro_by : str, optional
        Interval of the unweighted mean over this key's values (:data:`harness_tasks.metrics.OVERALL_RULE`).
    level, min_clusters
        Coverage; fewer distinct clusters than ``min_clusters`` give ``(nan, nan)``.
    """
    from .metrics import METRICS, strata_tables, cluster_keys

    records = list(records)
    if any(isinstance(rec, str) for rec in records):  # checked first: a code has no cluster key to count
        raise ValueError("a clustered interval needs records with a cluster key, not record codes")
    if not records or len(cluster_keys(records, cluster)) < min_clusters:
        return math.nan, math.nan
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    fn = METRICS[metric]
    if macro_by is None:  # one stratum: the same tables without a macro key
        tables = strata_tables(({**r, "_all": 0} for r in records), "_all", cluster)  # (K, 1, 2, 8)
    else:
        tables = strata_tables(records, macro_by, cluster)  # (K, G, 2, 8)
    total = tables.sum(axis=0)
    estimate = float(np.mean(fn(total)))
    loo = np.mean(fn(total[None] - tables), axis=-1)
    return jackknife_t(estimate, loo, level=level)
