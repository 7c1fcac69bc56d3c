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


@pytest.mark.parametrize("n_sources, computed", [(19, False), (20, True)])
def test_clustered_interval_needs_twenty_sources(n_sources, computed):
    """MIN_CLUSTERS is 20: 19 sources give no clustered interval (and the report says n/a), 20 give one."""
    from analysis.report.markdown import ci_clustered
    from harness_tasks.metrics import bootstrap_ci

    per = 24
    sources = [f"s{i // per}" for i in range(n_sources * per)]
    recs = _records([(i // per) % 3 != 0 for i in range(n_sources * per)], sources)
    pair = bootstrap_ci(recs, "acc", cluster="source_id", draws=200)
    assert all(math.isnan(v) for v in pair) is not computed
    cell = ci_clustered(pair, n_sources)
    assert cell == (f"[{100 * pair[0]:.1f}, {100 * pair[1]:.1f}]" if computed else f"n/a ({n_sources} sources)")


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
    # the difference concentrated in a few sources (6 of 20) widens the clustered interval
    clusters = [f"s{i // 10}" for i in range(200)]
    clo, chi = paired_bootstrap_diff(a, b, clusters=clusters)
    assert chi - clo > 1.5 * (hi - lo)
    # from fewer than MIN_CLUSTERS sources there is no clustered interval
    few = [f"s{i // 20}" for i in range(200)]
    assert all(math.isnan(v) for v in paired_bootstrap_diff(a, b, clusters=few))
    assert paired_bootstrap_diff(a, b, clusters=few, min_clusters=10)[1] > hi
    with pytest.raises(ValueError, match="aligned"):
        paired_bootstrap_diff([True], [True, False])
    assert all(math.isnan(v) for v in paired_bootstrap_diff([], []))


# ----------------------------------------------------------------------------- multiple comparisons
def _coin_records(seed: int, *, sources: int = 100, biased: str | None = None):
    import vocalgrad
    from harness_tasks.metrics import score_answer

    rng = np.random.default_rng(seed)
    recs = []
    for s in range(sources):
        sid = f"p{s:03d}"
        for cat in vocalgrad.CATEGORY_NAMES:
            for tier in vocalgrad.TIERS:
                for traj in vocalgrad.TRAJECTORIES:
                    for d in vocalgrad.DIRECTIONS:
                        p_right = 0.56 if cat == biased else 0.5
                        other = "decrease" if d == "increase" else "increase"
                        raw = d if rng.random() < p_right else other
                        rec = score_answer(raw, d, id=vocalgrad.clip_id(sid, cat, traj, tier, d), category=cat,
                                           tier=tier, trajectory=traj, source_id=sid)
                        rec["raw"] = raw
                        recs.append(rec)
    return recs


def test_holm_adjustment():
    from analysis.report.stats import chance_flags, holm

    assert holm([0.01, 0.04, 0.03, math.nan]) == pytest.approx([0.03, 0.06, 0.06, math.nan], nan_ok=True)
    assert holm([0.5]) == [0.5] and holm([0.2, 0.9]) == pytest.approx([0.4, 0.9])
    # 61.5 % on 96 clips is p = 0.03 alone, but not after adjusting over nine categories
    (_, q, v), *rest = chance_flags([(59, 96)] + [(48, 96)] * 8)
    assert v == "not different from chance" and q > 0.05
    assert chance_flags([(59, 96)])[0][2] == "above chance"
    assert chance_flags([(20, 100), (50, 100)])[0][2] == "below chance"


def test_a_coin_over_a_full_size_set_is_never_flagged():
    import vocalgrad

    recs = _coin_records(1234)
    assert len(recs) == 21600
    ev = Evaluation("coin", "vocalgrad-chance", "seed=1234", "default", records=recs)
    res = analyse_evaluation(ev, draws=300)
    for key in ("category", "tier", "trajectory", "direction"):
        for name, g in res[f"by_{key}"].items():
            assert g["verdict"] == "not different from chance", (key, name, g["acc"], g["p_holm"])
            assert g["p_holm"] >= g["p_chance"]
    assert res["overall"]["verdict"] == "not different from chance"
    assert set(res["by_category"]) == set(vocalgrad.CATEGORY_NAMES)
    # a category that is really better than chance is still found after the adjustment
    res = analyse_evaluation(Evaluation("b", "m", "", "default", records=_coin_records(1234, biased="echo")),
                             draws=300)
    assert res["by_category"]["echo"]["verdict"] == "above chance"
    assert all(g["verdict"] == "not different from chance" for c, g in res["by_category"].items() if c != "echo")


def test_macro_f1_interval():
    from harness_tasks.label_metrics import bootstrap_ci_labels, macro_f1

    rng = np.random.default_rng(0)
    labels = ("increase", "decrease", "constant")
    recs = []
    for cat in ("a", "b"):
        for i in range(300):
            gold = labels[i % 3]
            pred = gold if rng.random() < (0.8 if cat == "a" else 0.4) else labels[(i + 1) % 3]
            recs.append({"direction": gold, "pred": pred, "status": "parsed", "category": cat})
    point = macro_f1(recs, labels)
    lo, hi = bootstrap_ci_labels(recs, labels, draws=500)
    assert lo < point < hi and hi - lo < 0.15
    mean = np.mean([macro_f1([r for r in recs if r["category"] == c], labels) for c in "ab"])
    mlo, mhi = bootstrap_ci_labels(recs, labels, draws=500, macro_by="category")
    assert mlo < mean < mhi
    assert bootstrap_ci_labels(recs, labels, draws=500) == bootstrap_ci_labels(recs, labels, draws=500)


# ----------------------------------------------------------------------------- few sources
def _demo_coin(tmp_path, n_sources: int):
    """The demo set's first ``n_sources`` (what `vocalgrad demo --sources N` renders) answered by
    ``vocalgrad-chance`` with its defaults, written as lm-eval output (the coin's answer is a function of
    its seed, the clip id and the prompt, so these are the demo run's answers: checked on a 2-source demo)."""
    import vocalgrad
    from _report_helpers import write_results
    from generation.sources import SourceOptions, read_sources
    from harness_tasks import prompts
    from harness_tasks.models.baselines import ChanceLM
    from harness_tasks.models.base import Query

    coin = ChanceLM(answer_log="none")

    class Clip:
        def __init__(self, cid):
            self.clip_id = cid

    def answer(doc):
        return coin.answer([Query(prompt=prompts.build_prompt(doc["category"]), audios=[Clip(doc["id"])])])[0]

    sources = [it.source_id for it in read_sources("demo", SourceOptions(split="test"))[:n_sources]]
    docs = [{"id": vocalgrad.clip_id(sid, cat, traj, tier, d), "category": cat, "direction": d, "label": d,
             "tier": tier, "trajectory": traj, "source_id": sid}
            for sid in sources for cat in vocalgrad.CATEGORY_NAMES for tier in vocalgrad.TIERS
            for traj in vocalgrad.TRAJECTORIES for d in vocalgrad.DIRECTIONS]
    write_results(tmp_path / "res", "vocalgrad-chance", answer, docs=docs, model_args="seed=1234")
    return docs


@pytest.mark.parametrize("n_sources", [2, 4])
def test_a_coin_on_the_demo_set_is_not_different_from_chance_anywhere(tmp_path, n_sources):
    from analysis.report import build_report
    from analysis.report.stats import NOT_DIFFERENT

    docs = _demo_coin(tmp_path, n_sources)
    assert len(docs) == 216 * n_sources
    rep = build_report([tmp_path / "res"], tmp_path / "rep", plots=False)
    (m,) = rep["models"]
    ov = m["overall"]
    assert ov["n_sources"] == n_sources
    assert ov["verdict"] == NOT_DIFFERENT and ov["verdict_clustered"] == f"n/a ({n_sources} sources)"
    assert all(math.isnan(v) for v in ov["ci"]["acc"]["clustered"])
    for key in ("category", "tier", "trajectory", "direction"):
        for name, g in m[f"by_{key}"].items():
            assert g["verdict"] == NOT_DIFFERENT, (key, name, g["acc"])
            assert g["verdict_clustered"] == f"n/a ({n_sources} sources)", (key, name)  # withheld, as overall
            assert all(math.isnan(v) for v in g["ci"]["acc"]["clustered"]), (key, name)
    md = (tmp_path / "rep" / "report.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| vocalgrad-chance (seed=1234) |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == f"**{NOT_DIFFERENT}** on these voices" and cells[7] == NOT_DIFFERENT  # no claim over voices
    assert "above chance" not in md and "below chance" not in md.replace("*above/below chance*", "")
    assert "clustered: " not in md


def _t_interval(values):
    from scipy import stats as sps

    v = np.asarray(values, dtype=float)
    half = sps.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)
    return v.mean() - half, v.mean() + half


def test_clustered_interval_is_the_t_interval_over_equal_sources():
    """With equal sources the jackknife over sources is exactly the Student t interval of the per-source
    accuracies (sources - 1 degrees of freedom), also for the mean over categories."""
    from harness_tasks.cluster_ci import cluster_interval

    rng = np.random.default_rng(4)
    recs, per_source = [], []
    for s in range(20):
        p = rng.uniform(0.4, 0.95)
        accs = []
        for cat in ("pitch", "volume"):
            ok = rng.random(24) < p
            accs.append(ok.mean())
            recs += [dict(r, category=cat) for r in _records(list(ok), [f"s{s}"] * 24)]
        per_source.append(np.mean(accs))
    want = _t_interval(per_source)
    assert cluster_interval(recs, "acc", macro_by="category") == pytest.approx(want, abs=1e-12)
    assert intervals(recs, macro_by="category")["clustered"] == pytest.approx(want, abs=1e-12)
    assert cluster_interval(recs, "acc") == pytest.approx(want, abs=1e-12)  # pooled: equal sources, same mean
    assert all(math.isnan(v) for v in cluster_interval(recs[: 19 * 48], "acc"))  # 19 sources: withheld


def test_paired_clustered_difference_is_the_t_interval_of_source_differences():
    from analysis.report.stats import paired_clustered_diff

    rng = np.random.default_rng(8)
    a, b, keys, diffs = [], [], [], []
    for s in range(25):
        x, y = rng.random(24) < 0.8, rng.random(24) < 0.6
        a += list(x)
        b += list(y)
        keys += [f"s{s}"] * 24
        diffs.append(x.mean() - y.mean())
    assert paired_clustered_diff(a, b, keys) == pytest.approx(_t_interval(diffs), abs=1e-12)
    order = rng.permutation(len(a))
    assert paired_clustered_diff([a[i] for i in order], [b[i] for i in order],
                                 [keys[i] for i in order]) == pytest.approx(_t_interval(diffs), abs=1e-12)
    assert all(math.isnan(v) for v in paired_clustered_diff(a[:240], b[:240], keys[:240]))  # 10 sources


def test_clustered_chance_flags():
    """Max-T sign flips over sources: withheld below 20 sources, a model right on 70 % of every source's
    clips is found, a row at chance is not, and the flags do not depend on the order of the sources."""
    from analysis.report.stats import NOT_DIFFERENT, binomial_p, chance_flags_clustered

    rng = np.random.default_rng(2)
    good = {f"s{i}": (int(rng.binomial(24, 0.7)), 24) for i in range(20)}
    coin = {f"s{i}": (12 + (1 if i % 2 else -1), 24) for i in range(20)}  # half one up, half one down
    flags = chance_flags_clustered([good, coin])
    assert [v for _, _, v in flags] == ["above chance", NOT_DIFFERENT]
    assert flags[0][0] < 1e-4 and flags[1][0] == 1.0 and flags[1][1] == 1.0
    assert chance_flags_clustered([dict(reversed(good.items())), coin]) == flags
    assert chance_flags_clustered([dict(list(good.items())[:19])]) is None
    from scipy import stats as sps

    for k, n in ((3, 10), (12, 24), (0, 7), (40, 48), (30, 48)):
        assert binomial_p(k, n) == pytest.approx(sps.binomtest(k, n, 0.5).pvalue, rel=1e-12)
    assert binomial_p(3, 10, chance=0.3) == pytest.approx(sps.binomtest(3, 10, 0.3).pvalue)
