"""Label metrics of the yes/no and ternary formats: what mutation testing of harness_tasks/label_metrics.py
found unchecked (docs/testing.md): the refusal of an unknown format, the default level of the interval, and
macro F1 computed per bootstrap draw (a stack of confusion tables)."""

import numpy as np
import pytest

from harness_tasks import label_metrics, metrics


def _recs(pairs):
    return [metrics.record_code({"direction": g, "pred": p, "status": "parsed"}) for g, p in pairs]


def test_an_unknown_format_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match=r"unknown format 'poetic'; choose from .*yesno.*ternary|"
                                         r"unknown format 'poetic'; choose from .*ternary.*yesno"):
        label_metrics.macro_f1(_recs([("yes", "yes")]), "poetic")


def test_macro_f1_per_draw_of_a_stack_of_tables():
    """Each draw's macro F1 is that of its own table (the mean over the labels, not over the draws)."""
    a = label_metrics.confusion(_recs([("yes", "yes"), ("no", "yes"), ("no", "no")]), "yesno")
    b = label_metrics.confusion(_recs([("yes", "no"), ("no", "no"), ("no", "no"), ("yes", "yes")]), "yesno")
    got = label_metrics._macro_f1(np.stack([a, b]))
    assert got.shape == (2,)
    assert got[0] == pytest.approx((2 / 3 + 2 / 3) / 2)   # yes: P 1/2 R 1 -> 2/3; no: P 1 R 1/2 -> 2/3
    assert got[1] == pytest.approx((2 / 3 + 0.8) / 2)     # yes: P 1 R 1/2 -> 2/3; no: P 2/3 R 1 -> 0.8


def test_the_interval_is_95_percent_by_default():
    recs = _recs([("yes", "yes")] * 12 + [("yes", "no")] * 4 + [("no", "no")] * 10 + [("no", "yes")] * 6)
    default = label_metrics.bootstrap_ci_labels(recs, "yesno", draws=400, seed=3)
    assert default == label_metrics.bootstrap_ci_labels(recs, "yesno", draws=400, seed=3, level=0.95)
    narrow = label_metrics.bootstrap_ci_labels(recs, "yesno", draws=400, seed=3, level=0.5)
    point = label_metrics.macro_f1(recs, "yesno")
    assert default[0] < narrow[0] < point < narrow[1] < default[1]


def test_the_interval_defaults_to_10000_draws_seeded_1234(monkeypatch):
    seen = {}
    real = np.random.default_rng

    class Spy:
        def __init__(self, seed):
            seen["seed"], self.rng = seed, real(seed)

        def multinomial(self, n, p, size):
            seen["size"] = size
            return self.rng.multinomial(n, p, size=size)

    monkeypatch.setattr(label_metrics.np.random, "default_rng", Spy)
    recs = _recs([("yes", "yes")] * 9 + [("yes", "no")] * 3 + [("no", "no")] * 7 + [("no", "yes")] * 5)
    label_metrics.bootstrap_ci_labels(recs, "yesno", metric="acc")
    assert seen == {"seed": 1234, "size": 10_000}


def test_the_accuracy_interval_by_category_against_a_plain_loop():
    """Each category resampled on its own (multinomial on its table), each draw the mean of the categories'
    shares of gold = predicted (unparsed answers wrong), then the 2.5 and 97.5 percentiles."""
    recs = ([{"category": "pitch", "direction": g, "pred": p, "status": "parsed"}
             for g, p in [("yes", "yes")] * 8 + [("yes", "no")] * 2 + [("no", "no")] * 5 + [("no", "yes")] * 3]
            + [{"category": "echo", "direction": "yes", "pred": None, "status": "unparsed"}] * 2
            + [{"category": "echo", "direction": g, "pred": p, "status": "parsed"}
               for g, p in [("yes", "yes")] * 3 + [("no", "no")] * 6 + [("no", "yes")] * 4])
    draws, seed = 300, 7
    got = label_metrics.bootstrap_ci_labels(recs, "yesno", metric="acc", draws=draws, seed=seed, macro_by="category")
    rng = np.random.default_rng(seed)
    per_draw = np.zeros(draws)
    for cat in ("echo", "pitch"):  # the categories in sorted order, as the draws are made
        t = label_metrics.confusion([r for r in recs if r["category"] == cat], "yesno")
        n = int(t.sum())
        sims = rng.multinomial(n, (t / n).ravel(), size=draws).reshape(draws, *t.shape)
        for d in range(draws):
            per_draw[d] += sum(sims[d, i, i] for i in range(2)) / n / 2
    want = (float(np.percentile(per_draw, 2.5)), float(np.percentile(per_draw, 97.5)))
    assert got == pytest.approx(want)


def test_an_unknown_metric_name_is_refused_naming_the_choices():
    recs = _recs([("yes", "yes"), ("no", "no")])
    assert label_metrics.label_metric("acc", "yesno", recs) == 1.0
    with pytest.raises(ValueError, match=r"^unknown metric 'accuracy'; choose from acc, macro_f1, unparsed_rate, "):
        label_metrics.label_metric("accuracy", "yesno", recs)


def test_the_interval_settings_are_keyword_only():
    recs = _recs([("yes", "yes"), ("no", "no")])
    with pytest.raises(TypeError):
        label_metrics.bootstrap_ci_labels(recs, "yesno", "acc", 100)


def test_a_prediction_logged_with_another_status_counts_as_unparsed():
    """The near miss of "parsed": an ambiguous or error record may carry a `pred` (the first label it
    named); only status "parsed" puts it in a label's column."""
    recs = [{"direction": "increase", "pred": "increase", "status": s} for s in ("parsed", "ambiguous", "error", None)]
    table = label_metrics.confusion(recs, ("increase", "decrease"))
    assert table.tolist() == [[1, 0, 3], [0, 0, 0]]
