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

__all__ = ["cluster_interval", "jackknife_t", "strata_df"]


def jackknife_t(estimate: float, leave_one_out: np.ndarray, *, level: float = STATS.level,
                bounds: tuple[float, float] = (0.0, 1.0), df: float | None = None) -> tuple[float, float]:
    """``estimate -+ t_{df} * jackknife SE``, cut to ``bounds`` (``df``: ``k - 1`` unless given fewer).

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
    df : float, optional
        Degrees of freedom of the t quantile when fewer than ``k - 1`` (:func:`strata_df`); never more.

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
    dof = max(1.0, df) if df is not None and df < k - 1 - 1e-9 else k - 1  # nan or k - 1 and more: k - 1
    half = float(_sps.t.ppf(0.5 + level / 2, dof)) * se
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

    With ``macro_by``, a value answered in one cluster only (a category on one source) gives ``(nan, nan)``:
    one cluster tells nothing of that stratum's spread, and leaving it out would drop its part of the variance
    (coverage 58-76 % with a category on 1 of 40 voices, docs/statistics.md).
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
    present = tables.sum(axis=(2, 3)) > 0  # (K, G): cluster k answered in stratum g
    if macro_by is not None and (present.sum(axis=0) < 2).any():
        return math.nan, math.nan
    total = tables.sum(axis=0)
    whole = fn(total)
    estimate = float(np.mean(whole))
    with np.errstate(invalid="ignore", divide="ignore"):
        per = fn(total[None] - tables)  # (K, G): each stratum's figure without each cluster
    loo = np.mean(per, axis=-1)
    df = strata_df(per, whole, present) if macro_by is not None else None
    return jackknife_t(estimate, loo, level=level, df=df)


def strata_df(per: np.ndarray, whole: np.ndarray, present: np.ndarray) -> float:
    """Degrees of freedom of a mean over strata whose clusters are few in some stratum (Satterthwaite).

    Each stratum's part ``V_g`` of the jackknife variance of the mean over ``G`` strata is the sum of the
    squared changes of its figure (over ``G``) when each of its clusters is left out (the parts add up to the
    variance when no cluster spans two strata; here they only set the degrees of freedom). A stratum of
    ``n_g`` clusters estimates its part on ``n_g - 1`` degrees of freedom, so

        df = (sum_g V_g)^2 / sum_g (V_g^2 / (n_g - 1)).

    When every stratum has every cluster (the benchmark's design) this is at least ``k - 1`` and
    :func:`jackknife_t` keeps ``k - 1``; a stratum of 4 clusters among strata of 20-40 that carries much of
    the variance brings it towards 3 (docs/statistics.md, measured by
    ``benchmarks/uneven_categories_coverage.py``, where that stratum's clusters differ most: coverage
    91.5-92.3 % with ``k - 1``, 93.0-95.0 % with this). Strata of one cluster carry no estimate of their part and are left out.

    Parameters
    ----------
    per : array (K, G)
        Each stratum's figure with each cluster left out (``nan`` where it empties the stratum).
    whole : array (G,)
        Each stratum's figure on all clusters.
    present : bool array (K, G)
        Whether cluster ``k`` has records in stratum ``g``.
    """
    n = present.sum(axis=0)
    delta = np.where(present, per - whole[None], 0.0) / per.shape[1]
    v = np.nansum(delta ** 2, axis=0)
    keep = (n >= 2) & np.isfinite(whole)
    denom = float(np.sum(v[keep] ** 2 / (n[keep] - 1)))
    return float(v[keep].sum() ** 2 / denom) if denom > 0 else math.nan
