"""Report statistics against hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.report.analysis import analyse_evaluation
from analysis.report.loading import Evaluation
from analysis.report.stats import chance_verdict, intervals, mcnemar_exact, paired_bootstrap_diff
from harness_tasks.metrics import score_answer


def _records(correct: list[bool], sources: list[str]) -> list[dict]:
    out = []
    for i, (ok, sid) in enumerate(zip(correct, sources)):
        gold = "increase" if i % 2 == 0 else "decrease"
        other = "decrease" if gold == "increase" else "increase"
        out.append(score_answer(gold if ok else other, gold, source_id=sid))
    return out


@pytest.mark.parametrize("p,n", [(0.5, 1000), (0.8, 400)])
def test_binomial_interval_matches_normal_approximation(p, n):
    k = int(round(p * n))
    recs = _records([i < k for i in range(n)], [f"s{i}" for i in range(n)])
    lo, hi = intervals(recs)["binomial"]
    half = 1.96 * math.sqrt(p * (1 - p) / n)
    # percentile bootstrap of a proportion ~ Wald interval at these n (a grid of 1/n)
    assert lo == pytest.approx(p - half, abs=0.006)
    assert hi == pytest.approx(p + half, abs=0.006)
    assert intervals(recs)["binomial"] == [lo, hi]  # seed 1234: reproducible


def test_clustered_interval_wider_when_clusters_are_correlated():
    n_src, per = 20, 24
    sources = [f"s{i // per}" for i in range(n_src * per)]
    # correlated: a source is either all right or all wrong (half of the sources each)
    corr = [(i // per) % 2 == 0 for i in range(n_src * per)]
    ci = intervals(_records(corr, sources))
    w_bin = ci["binomial"][1] - ci["binomial"][0]
    w_clu = ci["clustered"][1] - ci["clustered"][0]
    assert w_clu > 3 * w_bin
    # independent within sources: same accuracy, the two intervals agree roughly
    rng = np.random.default_rng(0)
    indep = list(rng.permutation(corr))
    ci2 = intervals(_records(indep, sources))
    w2 = ci2["clustered"][1] - ci2["clustered"][0]
    assert w2 < 1.5 * (ci2["binomial"][1] - ci2["binomial"][0])
    assert w2 < w_clu / 2


def test_constant_model_has_full_increase_bias():
    recs = []
    for cat in ("pitch", "volume"):
        for i in range(24):
            gold = "increase" if i % 2 else "decrease"
            rec = score_answer("Increase", gold, id=f"s{i % 3}__{cat}__linear__low__{gold}{i}",
                               category=cat, tier="low", trajectory="linear", source_id=f"s{i % 3}")
            rec["raw"] = "Increase"
            recs.append(rec)
    ev = Evaluation("const", "vocalgrad-constant", "direction=increase", "default", records=recs)
    res = analyse_evaluation(ev, draws=2000)
    for cat in ("pitch", "volume", "all"):
        assert res["bias"][cat]["increase_ratio"] == 1.0
        assert res["bias"][cat]["increase_ratio_all"] == 1.0
        assert res["bias"][cat]["acc_increase"] == 1.0
        assert res["bias"][cat]["acc_decrease"] == 0.0
    ov = res["overall"]
    assert ov["acc"] == 0.5 and ov["balanced_acc"] == 0.5
    assert ov["verdict"] == "not different from chance"
    assert res["top_outputs"] == [{"output": "Increase", "count": 48, "share": 1.0}]


def test_chance_verdict():
    assert chance_verdict((0.51, 0.6)) == "above chance"
    assert chance_verdict((0.45, 0.55)) == "not different from chance"
    assert chance_verdict((0.5, 0.5)) == "not different from chance"
    assert chance_verdict((0.3, 0.49)) == "below chance"
    assert chance_verdict((math.nan, math.nan)) == "n/a"


def test_mcnemar_exact_hand_computed():
    # 2 * P(X <= 2), X ~ Bin(12, 1/2) = 2 * (1 + 12 + 66) / 4096
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert mcnemar_exact(2, 10) == pytest.approx(158 / 4096)
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match="discordant"):
        mcnemar_exact(-1, 2)


def test_paired_bootstrap_difference():
    a = [True] * 100
    assert paired_bootstrap_diff(a, a) == (0.0, 0.0)
    assert paired_bootstrap_diff(a, [False] * 100) == (1.0, 1.0)
    # A right on 60 more clips out of 200 than B (60 discordant, all for A): diff 0.3
    a = [True] * 120 + [False] * 80
    b = [True] * 60 + [False] * 140
    lo, hi = paired_bootstrap_diff(a, b)
    half = 1.96 * math.sqrt(0.3 * 0.7 / 200)
    assert lo == pytest.approx(0.3 - half, abs=0.01) and hi == pytest.approx(0.3 + half, abs=0.01)
    # the difference concentrated in a few sources widens the clustered interval
    clusters = [f"s{i // 20}" for i in range(200)]
    clo, chi = paired_bootstrap_diff(a, b, clusters=clusters)
    assert chi - clo > 1.5 * (hi - lo)
    with pytest.raises(ValueError, match="aligned"):
        paired_bootstrap_diff([True], [True, False])
    assert all(math.isnan(v) for v in paired_bootstrap_diff([], []))
