"""Metrics: pure functions on lists of records (benchmark.md §8)."""

import math

import numpy as np
import pytest

from harness_tasks import metrics as M
from harness_tasks.parsing import blocked_answer, error_answer


def recs(pairs, **extra):
    return [M.score_answer(raw, gold, **extra) for raw, gold in pairs]


def test_hand_computed_example():
    r = recs([
        ("increase", "increase"),          # correct, exact
        ("It increases.", "increase"),     # correct, not exact
        ("decrease", "increase"),          # wrong, exact
        ("increase or decrease", "increase"),  # ambiguous -> wrong
        ("decrease", "decrease"),          # correct, exact
        ("no idea", "decrease"),           # unparsed -> wrong
        (error_answer("timeout"), "decrease"),  # error -> wrong
        ("Increase.", "decrease"),         # wrong, exact
        (blocked_answer("gemini: finishReason SAFETY"), "increase"),  # blocked -> wrong, never parsed
    ])
    assert M.accuracy(r) == pytest.approx(3 / 9)
    assert M.accuracy_parsed(r) == pytest.approx(3 / 5)
    assert M.direction_accuracy(r, "increase") == pytest.approx(2 / 5)
    assert M.direction_accuracy(r, "decrease") == pytest.approx(1 / 4)
    assert M.balanced_accuracy(r) == pytest.approx((0.4 + 0.25) / 2)
    assert M.increase_ratio(r) == pytest.approx(3 / 5)
    assert M.increase_ratio(r, over="all") == pytest.approx(3 / 9)
    assert M.unparsed_rate(r) == pytest.approx(4 / 9)
    assert M.error_rate(r) == pytest.approx(1 / 9)
    assert M.blocked_rate(r) == pytest.approx(1 / 9)
    assert M.exact_match_rate(r) == pytest.approx(4 / 9)  # rows 1, 3, 5, 8
    c = M.counts(r)
    assert c == {"n": 9, "n_parsed": 5, "n_unparsed": 1, "n_ambiguous": 1, "n_error": 1, "n_blocked": 1,
                 "n_exact": 4}
    s = M.summarize(r)
    assert s["acc"] == pytest.approx(3 / 9) and s["ambiguous_rate"] == pytest.approx(1 / 9)


def test_a_blocked_reply_that_carries_a_direction_word_is_never_parsed():
    r = M.score_answer(blocked_answer("openai: finish_reason content_filter; text: increase"), "increase")
    assert (r["status"], r["pred"], r["correct"], r["exact"]) == ("blocked", None, False, False)
    assert M.blocked_rate([r]) == 1.0 and M.error_rate([r]) == 0.0 and M.unparsed_rate([r]) == 1.0


def test_raw_records_and_prescored_records_agree():
    pairs = [("increase", "increase"), ("decreases", "increase"), ("", "decrease"), ("Decrease.", "decrease")]
    raw = [{"raw": a, "direction": g} for a, g in pairs]
    assert M.summarize(raw) == M.summarize(recs(pairs))


def test_empty_and_undefined_are_nan():
    assert math.isnan(M.accuracy([]))
    only_unparsed = recs([("?", "increase")])
    assert M.accuracy(only_unparsed) == 0.0
    assert math.isnan(M.accuracy_parsed(only_unparsed))
    assert math.isnan(M.increase_ratio(only_unparsed))
    # balanced accuracy over the directions present
    assert M.balanced_accuracy(recs([("increase", "increase")])) == 1.0


def test_constant_answerer_has_balanced_accuracy_one_half():
    r = recs([("increase", "increase"), ("increase", "decrease")] * 5)
    assert M.balanced_accuracy(r) == 0.5 and M.increase_ratio(r) == 1.0


def test_bad_records_raise_clear_errors():
    with pytest.raises(ValueError, match="direction"):
        M.tabulate([{"raw": "increase", "direction": "up"}])
    with pytest.raises(ValueError, match="'raw' or 'status'"):
        M.tabulate([{"direction": "increase"}])
    with pytest.raises(ValueError, match="unknown metric"):
        M.metric_from_table("f1", np.zeros((2, 8)))
    with pytest.raises(ValueError, match="over"):
        M.increase_ratio([], over="some")


def test_breakdown_by_key_and_missing_key():
    r = recs([("increase", "increase")], tier="low") + recs([("increase", "decrease")], tier="high")
    b = M.breakdown(r, "tier")
    assert list(b) == ["low", "high"] and b["low"]["acc"] == 1.0 and b["high"]["acc"] == 0.0
    b2 = M.breakdown(r, ("tier", "direction"))
    assert b2[("high", "decrease")]["n"] == 1
    with pytest.raises(KeyError, match="trajectory"):
        M.breakdown(r, "trajectory")


def test_bootstrap_matches_binomial_spread_and_is_seeded():
    rng = np.random.default_rng(0)
    pairs = [("increase" if rng.random() < 0.7 else "decrease", "increase") for _ in range(400)]
    r = recs(pairs)
    p = M.accuracy(r)
    lo, hi = M.bootstrap_ci(r, "acc")
    half = 1.96 * math.sqrt(p * (1 - p) / len(r))
    assert lo < p < hi
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.1)
    assert M.bootstrap_ci(r, "acc") == (lo, hi)           # seed 1234 by default
    assert M.bootstrap_ci(r, "acc", seed=7) != (lo, hi)


def test_cluster_bootstrap_is_wider_when_sources_are_correlated():
    # 20 sources x 24 conditions; each source is answered all right or all wrong.
    r = []
    for s in range(20):
        ans = "increase" if s % 2 else "decrease"
        r += recs([(ans, "increase")] * 24, source_id=f"s{s}")
    plain = M.bootstrap_ci(r, "acc", draws=2000)
    clustered = M.bootstrap_ci(r, "acc", draws=2000, cluster="source_id")
    assert (clustered[1] - clustered[0]) > 3 * (plain[1] - plain[0])
    with pytest.raises(KeyError, match="speaker"):
        M.bootstrap_ci(r, cluster="speaker")
    assert all(math.isnan(x) for x in M.bootstrap_ci([], "acc"))


def test_record_codes_round_trip_and_tabulate():
    r = recs([("Increase.", "decrease"), ("up?", "increase"), (error_answer("x"), "decrease")])
    codes = [M.record_code(x) for x in r]
    assert codes == ["decrease:increase:parsed:exact", "increase:none:unparsed:other", "decrease:none:error:other"]
    assert (M.tabulate(codes) == M.tabulate(r)).all()
    assert M.parse_record_code(M.record_code({**r[0], "retried": True}))["retried"] is True
    with pytest.raises(ValueError, match="record code"):
        M.tabulate(["increase:parsed"])
