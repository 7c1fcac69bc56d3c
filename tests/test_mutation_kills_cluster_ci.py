"""Source-clustered intervals (harness_tasks/cluster_ci.py) on small inputs against the jackknife written out
by hand: the t quantile's degrees of freedom and level, the bounds, the dropped nan values, the refusals and
the macro mean over categories (docs/testing.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from harness_tasks import metrics
from harness_tasks.cluster_ci import cluster_interval, jackknife_t


def _t(estimate, loo, level=0.95):
    loo = np.asarray(loo, float)
    k = loo.size
    se = math.sqrt((k - 1) / k * sum((v - loo.mean()) ** 2 for v in loo))
    half = sps.t.ppf(1 - (1 - level) / 2, k - 1) * se
    return estimate - half, estimate + half


def test_jackknife_t_hand_computed():
    y = np.array([0.6, 0.7, 0.8, 0.7])
    loo = (y.sum() - y) / 3
    lo, hi = jackknife_t(0.7, loo)
    half = sps.t.ppf(0.975, 3) * math.sqrt(0.02 / 3) / 2      # s / sqrt(k), s^2 = 0.02 / 3
    assert (lo, hi) == pytest.approx((0.7 - half, 0.7 + half), abs=1e-12)
    assert jackknife_t(0.7, loo, level=0.8) == pytest.approx(_t(0.7, loo, 0.8), abs=1e-12)
    assert jackknife_t(0.7, [0.69, 0.71]) == pytest.approx(_t(0.7, [0.69, 0.71]), abs=1e-12)  # k = 2: 1 df


def test_jackknife_t_bounds_nan_and_too_few():
    assert jackknife_t(0.95, [0.9, 1.0, 0.8, 1.0]) == pytest.approx((_t(0.95, [0.9, 1.0, 0.8, 1.0])[0], 1.0))
    assert jackknife_t(0.05, [0.1, 0.0, 0.2, 0.0])[0] == 0.0
    assert jackknife_t(0.0, [0.5, -0.5, 0.4], bounds=(-0.3, 0.2)) == (-0.3, 0.2)
    # nan leave-one-out values are dropped (k counts the others)
    assert jackknife_t(0.7, [0.69, math.nan, 0.71, 0.7]) == pytest.approx(_t(0.7, [0.69, 0.71, 0.7]), abs=1e-12)
    for bad in ([0.5], [0.5, math.nan], []):
        assert all(math.isnan(v) for v in jackknife_t(0.5, bad))
    assert all(math.isnan(v) for v in jackknife_t(math.nan, [0.4, 0.6]))
    assert all(math.isnan(v) for v in jackknife_t(None, [0.4, 0.6]))


def _rec(ok, sid, cat="a"):
    gold = "increase"
    return metrics.score_answer(gold if ok else "decrease", gold, source_id=sid, category=cat)


def test_cluster_interval_pooled_and_macro_by_hand():
    # 4 sources of unequal size: per source (right, n)
    per = {"s0": (2, 3), "s1": (1, 1), "s2": (0, 2), "s3": (3, 4)}
    recs = [_rec(i < k, s) for s, (k, n) in per.items() for i in range(n)]
    right, n = sum(k for k, _ in per.values()), sum(n for _, n in per.values())
    loo = [(right - k) / (n - m) for k, m in per.values()]
    want = _t(right / n, loo)
    assert cluster_interval(recs, min_clusters=4) == pytest.approx((max(0.0, want[0]), min(1.0, want[1])), abs=1e-12)
    assert all(math.isnan(v) for v in cluster_interval(recs, min_clusters=5))
    assert all(math.isnan(v) for v in cluster_interval([], min_clusters=0))
    # the macro mean over two categories: each leave-one-out value is the mean of the categories' values
    recs2 = recs + [_rec(i % 2 == 0, s, "b") for s in per for i in range(2)]   # b: 1 of 2 right per source
    acc_a = lambda drop: ((right - per[drop][0]) / (n - per[drop][1])) if drop else right / n  # noqa: E731
    loo2 = [(acc_a(s) + 0.5) / 2 for s in per]
    want2 = _t((acc_a(None) + 0.5) / 2, loo2)
    assert cluster_interval(recs2, macro_by="category", min_clusters=4) == pytest.approx(want2, abs=1e-12)
    assert cluster_interval(recs2, macro_by="category", min_clusters=4, level=0.5) == \
        pytest.approx(_t((acc_a(None) + 0.5) / 2, loo2, 0.5), abs=1e-12)
    # another metric, and the cluster key chosen by name
    for r in recs:
        r["speaker"] = r["source_id"]
    assert cluster_interval(recs, "increase_ratio_all", cluster="speaker", min_clusters=4) == \
        pytest.approx((max(0.0, want[0]), min(1.0, want[1])), abs=1e-12)   # every answer parsed: same shares


def test_cluster_interval_refusals():
    recs = [_rec(True, f"s{i}") for i in range(3)]
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        cluster_interval(recs, "f1", min_clusters=3)
    with pytest.raises(KeyError, match="speaker"):
        cluster_interval(recs, cluster="speaker", min_clusters=3)
    assert all(math.isnan(v) for v in cluster_interval(recs, "f1", min_clusters=4))  # too few first
    # record codes carry no cluster key: one clear line (it was a TypeError from indexing a string)
    for macro_by in (None, "category"):
        with pytest.raises(ValueError, match="needs records with a cluster key, not record codes"):
            cluster_interval(["increase:increase:parsed:exact"] * 3, macro_by=macro_by, min_clusters=1)


def test_jackknife_t_arguments():
    assert jackknife_t(estimate=0.7, leave_one_out=[0.69, 0.71, 0.7]) == jackknife_t(0.7, [0.69, 0.71, 0.7])
    with pytest.raises(TypeError):
        jackknife_t(0.7, [0.69, 0.71, 0.7], 0.9)              # the level only by name


def test_the_cluster_interval_settings_are_keyword_only():
    """A stray positional argument must not become the cluster key (found by the full mutation run)."""
    with pytest.raises(TypeError):
        cluster_interval([], "acc", "source_id")
