"""Metrics (harness_tasks/metrics.py) on small inputs with hand-computed results: what mutation testing found
unchecked (docs/testing.md): the refusals of bad records, record codes with a fifth field, per-stratum tables
in sorted key order, the empty macro summary, the bootstrap draws computed again by a plain loop (clips,
sources, categories), the percentile interval's nan handling and the bias on clips without a gold label."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness_tasks import metrics as M
from harness_tasks.source_bias import source_bias


def _r(pred, gold, status="parsed", exact=True, **extra):
    return {"direction": gold, "pred": pred, "status": status, "exact": exact, **extra}


def test_score_answer_fields_and_refusal():
    r = M.score_answer("It goes up: increase.", "increase", clip="c1")
    assert r == {"clip": "c1", "direction": "increase", "pred": "increase", "status": "parsed", "exact": False,
                 "correct": True}
    assert M.score_answer("Decrease", "increase")["exact"] is True
    with pytest.raises(ValueError, match="gold direction must be one of .*got 'up'"):
        M.score_answer("increase", "up")


def test_record_codes_fields():
    assert M.record_code(_r(None, "decrease", "ambiguous", False)) == "decrease:none:ambiguous:other"
    assert M.record_code(_r("increase", "increase", retried=True)) == "increase:increase:parsed:exact:retried"
    assert M.record_code(_r("increase", "increase", retried=False)) == "increase:increase:parsed:exact"
    assert M.parse_record_code("increase:none:error:other") == {
        "direction": "increase", "pred": None, "status": "error", "exact": False, "retried": False}
    assert M.parse_record_code("decrease:increase:parsed:exact:other")["retried"] is False
    assert M.parse_record_code("decrease:increase:parsed:exact:retried")["retried"] is True
    for bad in ("a:b:c", "a:b:c:d:e:f", "increase:increase:parsed:yes"):
        with pytest.raises(ValueError, match="not a VocalGrad record code"):
            M.parse_record_code(bad)


def test_cells_of_every_kind_and_bad_records():
    recs = [_r("increase", "increase"), _r("increase", "increase", exact=False), _r("decrease", "increase"),
            _r("decrease", "decrease", exact=False), _r(None, "decrease", "unparsed", False),
            _r(None, "increase", "ambiguous", False), _r(None, "decrease", "error", False),
            _r(None, "increase", "blocked", False)]
    want = np.array([[1, 1, 1, 0, 0, 1, 0, 1], [0, 0, 0, 1, 1, 0, 1, 0]])
    assert (M.tabulate(recs) == want).all()
    assert (M.tabulate([{"direction": "decrease", "raw": "Increase"}]) == [[0] * 8, [1, 0, 0, 0, 0, 0, 0, 0]]).all()
    assert (M.tabulate([{"direction": "decrease", "raw": "it increases"}]) == [[0] * 8, [0, 1, 0, 0, 0, 0, 0, 0]]).all()
    with pytest.raises(ValueError, match="parsed record has pred='up'"):
        M.tabulate([_r("up", "increase")])
    with pytest.raises(ValueError, match="unknown answer status 'lost'"):
        M.tabulate([_r(None, "increase", "lost")])
    with pytest.raises(ValueError, match="record needs 'direction' in .*got None"):
        M.tabulate([{"status": "parsed", "pred": "increase"}])
    with pytest.raises(ValueError, match="direction must be one of"):
        M.direction_accuracy(recs, "up")


def test_every_metric_of_one_table():
    recs = [_r("increase", "increase")] * 3 + [_r("decrease", "increase", exact=False)] + \
        [_r(None, "increase", "error", False)] + [_r("increase", "decrease")] * 2 + \
        [_r(None, "decrease", "ambiguous", False)] + [_r(None, "decrease", "unparsed", False)] * 2 + \
        [_r(None, "decrease", "blocked", False)] * 2
    s = M.summarize(recs)
    assert s == pytest.approx({
        "acc": 3 / 12, "acc_parsed": 3 / 6, "balanced_acc": (3 / 5 + 0 / 7) / 2, "acc_increase": 3 / 5,
        "acc_decrease": 0.0, "increase_ratio": 5 / 6, "increase_ratio_all": 5 / 12, "unparsed_rate": 6 / 12,
        "ambiguous_rate": 1 / 12, "error_rate": 1 / 12, "blocked_rate": 2 / 12, "exact_match_rate": 5 / 12,
        "n": 12, "n_parsed": 6, "n_unparsed": 2, "n_ambiguous": 1, "n_error": 1, "n_blocked": 2, "n_exact": 5})
    # balanced accuracy with one direction absent: that direction's accuracy alone
    only_dec = [_r("decrease", "decrease"), _r("increase", "decrease")] + [_r("decrease", "decrease")]
    assert M.balanced_accuracy(only_dec) == pytest.approx(2 / 3)
    assert math.isnan(M.balanced_accuracy([]))
    got = M.div_or_nan(np.array([1.0, 2.0, 0.0]), np.array([4.0, 0.0, 0.0]))
    assert got[0] == 0.25 and math.isnan(got[1]) and math.isnan(got[2])
    assert M.metric_from_table("acc", np.stack([M.tabulate(recs)] * 2)) == pytest.approx([0.25, 0.25])
    # error and ambiguous answers in different numbers: each rate counts its own column
    odd = [_r(None, "increase", "error", False)] * 2 + [_r(None, "decrease", "ambiguous", False)] + \
        [_r("increase", "increase")]
    assert M.error_rate(odd) == 0.5 and M.summarize(odd)["ambiguous_rate"] == 0.25 and M.unparsed_rate(odd) == 0.75


def test_strata_tables_sorted_keys_and_refusals():
    recs = [_r("increase", "increase", category="b", source_id=2), _r("decrease", "increase", category="a",
                                                                        source_id=10),
            _r("increase", "increase", category="b", source_id=10), {"direction": "decrease", "raw": "decrease",
                                                                      "category": "a", "source_id": 2}]
    t = M.strata_tables(recs, "category")
    assert t.shape == (2, 2, 8)
    assert t[0].tolist() == [[0, 0, 1, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0, 0, 0]]   # a
    assert t[1].tolist() == [[2, 0, 0, 0, 0, 0, 0, 0], [0] * 8]                    # b
    tk = M.strata_tables(recs, "category", "source_id")
    assert tk.shape == (2, 2, 2, 8)
    # clusters in the order of str(key): "10" before "2"
    assert tk[0, 0, 0, 2] == 1 and tk[0, 1, 0, 0] == 1 and tk[1, 1, 0, 0] == 1 and tk[1, 0, 1, 2] == 1
    assert tk.sum() == 4
    assert M.strata_tables([], "category").shape == (0, 2, 8)
    with pytest.raises(ValueError, match="macro figures need records with a 'category' key"):
        M.strata_tables(["increase:increase:parsed:exact"], "category")
    with pytest.raises(KeyError, match="record has no key 'category'"):
        M.strata_tables([_r("increase", "increase")], "category")
    # records sharing the four fields share a cell, and a differing one gets its own
    same = [_r("increase", "increase", category="a"), _r("increase", "increase", category="a", exact=False),
            _r("increase", "decrease", category="a")]
    assert M.strata_tables(same, "category")[0].tolist() == [[1, 1, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]]


def test_macro_summary_of_nothing_and_of_categories():
    m = M.macro_summary([])
    assert all(math.isnan(m[name]) for name in M.METRICS) and m["n"] == 0 and m["n_groups"] == 0
    recs = [_r("increase", "increase", category="a")] + [_r("decrease", "increase", category="b")] * 3
    m = M.macro_summary(recs)
    assert m["acc"] == 0.5 and m["increase_ratio"] == 0.5 and m["n_groups"] == 2 and m["n"] == 4


def test_bootstrap_ci_refusals_and_edges():
    recs = [_r("increase", "increase", source_id=f"s{i % 3}") for i in range(6)]
    for level in (0.0, 1.0, 1.2):
        with pytest.raises(ValueError, match="level must be in"):
            M.bootstrap_ci(recs, level=level)
    assert M.bootstrap_ci(recs, cluster="source_id", min_clusters=3, draws=20) == (1.0, 1.0)
    assert all(math.isnan(v) for v in M.bootstrap_ci(recs, cluster="source_id", min_clusters=4))
    with pytest.raises(ValueError, match="unknown metric"):
        M.bootstrap_ci(recs, "f1", cluster="source_id", min_clusters=3, draws=5)
    with pytest.raises(KeyError, match="record has no cluster key 'source_id'"):
        M.bootstrap_ci(recs + [_r("increase", "increase")], cluster="source_id", min_clusters=1)
    assert M.percentile_interval(np.array([math.nan, 1.0, 2.0, 3.0, math.nan]), 0.5) == (1.5, 2.5)
    assert all(math.isnan(v) for v in M.percentile_interval(np.array([math.nan]), 0.95))


def _records_mixed():
    rng = np.random.default_rng(7)
    out = []
    for i in range(40):
        gold = "increase" if i % 2 else "decrease"
        u = rng.random()
        if u < 0.6:
            out.append(_r(gold, gold, exact=bool(i % 3), source_id=f"s{i % 5}", category="ab"[i % 4 // 2]))
        elif u < 0.85:
            other = "decrease" if gold == "increase" else "increase"
            out.append(_r(other, gold, source_id=f"s{i % 5}", category="ab"[i % 4 // 2]))
        else:
            out.append(_r(None, gold, "unparsed", False, source_id=f"s{i % 5}", category="ab"[i % 4 // 2]))
    return out


def test_bootstrap_ci_clip_draws_against_a_plain_loop():
    recs = _records_mixed()
    t = M.tabulate(recs)
    rng = np.random.default_rng(3)
    sims = rng.multinomial(40, (t / 40).ravel(), size=300)
    vals = [M.metric_from_table("balanced_acc", s.reshape(2, 8)) for s in sims]
    vals = np.array([v for v in vals if not math.isnan(v)])
    want = tuple(np.quantile(vals, [0.1, 0.9]))
    assert M.bootstrap_ci(recs, "balanced_acc", draws=300, seed=3, level=0.8) == pytest.approx(want, abs=1e-12)


def test_bootstrap_ci_source_draws_against_a_plain_loop():
    recs = _records_mixed()
    order = []                                            # sources in order of first appearance
    for r in recs:
        if r["source_id"] not in order:
            order.append(r["source_id"])
    tables = [M.tabulate([r for r in recs if r["source_id"] == s]) for s in order]
    rng = np.random.default_rng(5)
    mult = rng.multinomial(5, [0.2] * 5, size=200)
    vals = np.array([M.metric_from_table("acc", sum(m * tb for m, tb in zip(row, tables))) for row in mult])
    want = tuple(np.quantile(vals, [0.025, 0.975]))
    assert M.bootstrap_ci(recs, "acc", draws=200, seed=5, cluster="source_id", min_clusters=5) == \
        pytest.approx(want, abs=1e-12)


def test_bootstrap_ci_macro_draws_against_a_plain_loop():
    recs = _records_mixed()
    cats = sorted({r["category"] for r in recs})
    rng = np.random.default_rng(6)
    per_cat = []
    for c in cats:
        t = M.tabulate([r for r in recs if r["category"] == c])
        n = int(t.sum())
        per_cat.append(rng.multinomial(n, (t / n).ravel(), size=100).reshape(100, 2, 8))
    vals = np.array([np.mean([M.metric_from_table("acc", per_cat[g][d]) for g in range(len(cats))])
                     for d in range(100)])
    want = tuple(np.quantile(vals, [0.025, 0.975]))
    assert M.bootstrap_ci(recs, "acc", draws=100, seed=6, macro_by="category") == pytest.approx(want, abs=1e-12)
    # sources resampled with all their categories (sources in sorted order)
    srcs = sorted({r["source_id"] for r in recs})
    tabs = [[M.tabulate([r for r in recs if r["source_id"] == s and r["category"] == c]) for c in cats]
            for s in srcs]
    rng = np.random.default_rng(6)
    mult = rng.multinomial(5, [0.2] * 5, size=100)
    vals = []
    for row in mult:
        tot = [sum(m * tabs[k][g] for k, m in enumerate(row)) for g in range(len(cats))]
        vals.append(np.mean([M.metric_from_table("acc", tb) for tb in tot]))
    want = tuple(np.quantile(vals, [0.025, 0.975]))
    assert M.bootstrap_ci(recs, "acc", draws=100, seed=6, macro_by="category", cluster="source_id",
                          min_clusters=5) == pytest.approx(want, abs=1e-12)


def test_source_bias_hand_computed():
    recs = ["increase:increase:parsed:exact", "decrease:decrease:parsed:other", "increase:none:unparsed:other",
            {"pred": "increase", "status": "parsed"}, {"pred": None, "status": "error"}]
    assert source_bias(recs) == {"increase_ratio": 2 / 3, "unparsed_rate": 2 / 5, "n": 5, "n_parsed": 3,
                                   "n_increase": 2}
    empty = source_bias([])
    assert math.isnan(empty["increase_ratio"]) and math.isnan(empty["unparsed_rate"]) and empty["n"] == 0
    none_parsed = source_bias(["increase:none:unparsed:other"])
    assert math.isnan(none_parsed["increase_ratio"]) and none_parsed["unparsed_rate"] == 1.0


def test_breakdown_by_two_keys_keeps_first_appearance_order():
    recs = [_r("increase", "increase", tier="low", trajectory="x"), _r("decrease", "increase", tier="high",
                                                                       trajectory="x"),
            _r("decrease", "decrease", tier="low", trajectory="x")]
    b = M.breakdown(recs, ("tier", "trajectory"))
    assert list(b) == [("low", "x"), ("high", "x")] and b[("low", "x")]["n"] == 2 and b[("low", "x")]["acc"] == 1.0
    assert list(M.breakdown(recs, ["tier"])) == ["low", "high"]    # one key: its values, not 1-tuples
