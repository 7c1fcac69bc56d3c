"""The psychometric fit on simulated observers: known thresholds recovered, a coin has none (docs/sweep.md).

The simulated observers answer 8 clips per source and magnitude (a sweep render: 4 trajectories x
2 directions) on a pitch-like sweep of 1..8 units; docs/sweep.md gives 20-30 sources as the number
for an interval of about +-10 % of a mid-sweep threshold.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.report.psychometric import bootstrap, fit_weibull, threshold_of, weibull
from analysis.report.psychometric_sim import alpha_for, simulate

MAGS = np.arange(1.0, 9.0)
SOURCES = 30  # the documented number (docs/sweep.md)


def test_the_threshold_is_where_the_function_crosses_75_percent():
    a = alpha_for(3.0, 2.5, 0.03)
    assert threshold_of(a, 2.5, 0.03) == pytest.approx(3.0)
    assert weibull(3.0, a, 2.5, 0.03) == pytest.approx(0.75)
    assert weibull(0.0, a, 2.5, 0.03) == 0.5  # the guess rate at no change


def test_simulated_observers_thresholds_are_recovered_within_their_intervals():
    truths = (1.8, 2.6, 3.5, 4.5, 5.5, 6.5)
    covered = []
    for i, t in enumerate(truths):
        k, n = simulate(MAGS, threshold=t, beta=3.0, lapse=0.02, n_sources=SOURCES, seed=10 + i)
        fit = fit_weibull(MAGS, k.sum(0), n.sum(0))
        assert fit.converged and abs(fit.threshold - t) / t < 0.25, (t, fit)
        lo, hi = bootstrap(MAGS, k, n, draws=40, seed=i, fit=fit)["threshold_ci"]
        assert hi - lo < 0.5 * t, (t, lo, hi)  # an informative interval at the documented number of sources
        covered.append(lo <= t <= hi)
    assert sum(covered) >= len(truths) - 1, covered  # 95 % intervals: at most one miss in six


def test_a_coin_has_no_threshold():
    k, n = simulate(MAGS, threshold=None, n_sources=SOURCES, seed=3)
    fit = fit_weibull(MAGS, k.sum(0), n.sum(0))
    assert fit.threshold == math.inf
    boot = bootstrap(MAGS, k, n, draws=40, seed=0, fit=fit)
    assert boot["threshold_ci"][1] == math.inf and boot["p_reached"] < 0.5


def test_an_observer_beyond_the_sweep_is_reported_as_not_reached():
    k, n = simulate(MAGS, threshold=20.0, n_sources=SOURCES, seed=4)
    assert fit_weibull(MAGS, k.sum(0), n.sum(0)).threshold == math.inf


def test_markdown_says_beyond_and_below_the_sweep_plainly():
    from analysis.report.psychometric import threshold_text

    assert threshold_text(math.inf, 8.0, 1.0) == "> 8"
    assert threshold_text(None, 8.0, 1.0) == "> 8"
    assert threshold_text(0.3, 8.0, 1.0) == "< 1"
    assert threshold_text(3.14159, 8.0, 1.0) == "3.14"
