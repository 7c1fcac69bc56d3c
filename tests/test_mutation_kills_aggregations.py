"""lm-eval aggregations (harness_tasks/aggregations.py) on small record codes with hand-computed results:
what mutation testing checks (docs/testing.md): every aggregation the YAMLs name returns its own metric of
its own records (record, logit, source and labelled-format tables), the logit aggregations drop the answers
without a logit tag and give nan when none has one, and each aggregation's name, doc and repr."""

from __future__ import annotations

import math

import pytest

from harness_tasks import aggregations as A

# gold:pred:status:exact; 10 answers, 6 parsed, 3 right (two of 5 increase, one of 5 decrease)
RECORDS = ["increase:increase:parsed:exact", "increase:increase:parsed:exact", "increase:decrease:parsed:other",
           "decrease:decrease:parsed:exact", "decrease:increase:parsed:exact", "decrease:increase:parsed:other",
           "decrease:none:unparsed:other", "increase:none:error:other", "increase:none:ambiguous:other",
           "decrease:none:blocked:other"]


def test_every_record_aggregation_hand_computed():
    want = {"acc_parsed": 3 / 6, "balanced_acc": (2 / 5 + 1 / 5) / 2, "acc_increase": 2 / 5, "acc_decrease": 1 / 5,
            "increase_ratio": 4 / 6, "increase_ratio_all": 4 / 10, "unparsed_rate": 4 / 10, "error_rate": 1 / 10,
            "blocked_rate": 1 / 10, "exact_match_rate": 4 / 10}
    assert A.RECORD_METRICS == tuple(want)
    for m, value in want.items():
        assert A.AGGREGATIONS[f"agg_{m}"](RECORDS) == pytest.approx(value, abs=1e-12), m
    assert A.agg_balanced_acc(RECORDS) == pytest.approx(3 / 10, abs=1e-12)


def test_logit_aggregations_skip_answers_without_a_logit_tag():
    items = ["", "increase:increase:parsed:exact", "", "decrease:increase:parsed:other",
             "decrease:decrease:parsed:exact"]
    assert A.LOGIT_METRICS == ("acc_logit", "increase_ratio_logit")
    # the three tagged answers alone: 2 of 3 right, 2 of 3 say increase (an empty code counted would give 2/5)
    assert A.agg_acc_logit(items) == pytest.approx(2 / 3, abs=1e-12)
    assert A.agg_increase_ratio_logit(["", "increase:increase:parsed:exact", "decrease:decrease:parsed:exact",
                                       "decrease:decrease:parsed:exact"]) == pytest.approx(1 / 3, abs=1e-12)
    for none in ([], ["", ""]):
        assert math.isnan(A.agg_acc_logit(none)) and math.isnan(A.agg_increase_ratio_logit(none))


def test_source_aggregations_are_the_bias_on_the_sources():
    items = ["increase:increase:parsed:exact", "decrease:decrease:parsed:other", "decrease:increase:parsed:other",
             "increase:none:unparsed:other"]
    assert A.SOURCE_METRICS == ("increase_ratio", "unparsed_rate")
    assert A.agg_increase_ratio_sources(items) == pytest.approx(2 / 3, abs=1e-12)
    assert A.agg_unparsed_rate_sources(items) == pytest.approx(1 / 4, abs=1e-12)


def test_yesno_aggregations_hand_computed():
    # gold yes: 3 yes, 1 no; gold no: 1 no, 2 unparsed. F1 yes = 2*3/(4+3), F1 no = 2*1/(3+2)
    items = ["yes:yes:parsed:exact"] * 3 + ["yes:no:parsed:other", "no:no:parsed:exact"] + \
        ["no:none:unparsed:other"] * 2
    assert A.label_metric_names("yesno") == ("macro_f1", "unparsed_rate", "pred_yes", "pred_no", "pred_unparsed")
    assert A.agg_macro_f1_yesno(items) == pytest.approx((6 / 7 + 2 / 5) / 2, abs=1e-12)
    assert A.agg_unparsed_rate_yesno(items) == pytest.approx(2 / 7, abs=1e-12)
    assert A.agg_pred_yes_yesno(items) == pytest.approx(3 / 7, abs=1e-12)
    assert A.agg_pred_no_yesno(items) == pytest.approx(2 / 7, abs=1e-12)
    assert A.agg_pred_unparsed_yesno(items) == pytest.approx(2 / 7, abs=1e-12)


def test_ternary_aggregations_hand_computed():
    # gold increase: 1 increase, 1 constant; decrease: 2 decrease; constant: 2 constant, 1 unparsed
    items = ["increase:increase:parsed:exact", "increase:constant:parsed:other"] + \
        ["decrease:decrease:parsed:exact"] * 2 + ["constant:constant:parsed:exact"] * 2 + \
        ["constant:none:unparsed:other"]
    assert A.label_metric_names("ternary") == ("macro_f1", "unparsed_rate", "pred_increase", "pred_decrease",
                                               "pred_constant", "pred_unparsed")
    assert A.agg_macro_f1_ternary(items) == pytest.approx((2 / 3 + 1 + 4 / 6) / 3, abs=1e-12)
    assert A.agg_unparsed_rate_ternary(items) == pytest.approx(1 / 7, abs=1e-12)
    assert A.agg_pred_increase_ternary(items) == pytest.approx(1 / 7, abs=1e-12)
    assert A.agg_pred_decrease_ternary(items) == pytest.approx(2 / 7, abs=1e-12)
    assert A.agg_pred_constant_ternary(items) == pytest.approx(3 / 7, abs=1e-12)
    assert A.agg_pred_unparsed_ternary(items) == pytest.approx(1 / 7, abs=1e-12)


def test_names_docs_and_repr():
    assert len(A.AGGREGATIONS) == 10 + 2 + 2 + 5 + 6
    for name, agg in A.AGGREGATIONS.items():
        assert agg.__name__ == agg.__qualname__ == name and repr(agg) == f"vocalgrad_utils.{name}"
    assert A.agg_acc_logit.__doc__ == \
        "lm-eval aggregation: ``acc`` of the logit-scored answers (nan when there are none)."
    assert A.agg_error_rate.__doc__ == \
        "lm-eval aggregation: ``error_rate`` over per-doc records (see harness_tasks.metrics)."
    assert A.agg_unparsed_rate_sources.__doc__ == \
        "lm-eval aggregation: ``unparsed_rate`` of the answers on the source clips."
    assert A.agg_pred_no_yesno.__doc__ == "lm-eval aggregation: ``pred_no`` of the yesno format over per-doc records."
    agg = A.Aggregation("agg_x", lambda items: len(items) / 2, "a test")
    assert agg(["a", "b", "c"]) == 1.5 and agg.__doc__ == "lm-eval aggregation: a test."
