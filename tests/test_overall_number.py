"""One overall number: lm-eval's group row, the report and the `evaluate` metric agree.

The same answers (parse rates that differ between categories, so that pooling clips and
averaging categories give different numbers) go through all three; every overall figure must be
the unweighted mean over categories (harness_tasks.metrics.OVERALL_RULE).
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest

import vocalgrad
from _harness_helpers import make_hub_folder, offline_lm_eval, run_lm_eval

from harness_tasks import metrics, utils
from harness_tasks.models.base import VocalGradLM

evaluate = pytest.importorskip("evaluate")

KEYS = ("acc", "acc_parsed", "balanced_acc", "acc_increase", "acc_decrease", "increase_ratio",
        "increase_ratio_all", "unparsed_rate", "exact_match_rate")


class MixedLM(VocalGradLM):
    """Answers that parse in some categories more often than in others (a function of the clip id)."""

    WORDS = ("increase", "Decrease.", "not sure", "it increases", "hmm", "decrease")

    def answer(self, queries):
        out = []
        for q in queries:
            cat = vocalgrad.parse_clip_id(q.clip_id)["category"]
            h = int(hashlib.sha256(q.clip_id.encode()).hexdigest(), 16)
            k = vocalgrad.CATEGORY_NAMES.index(cat) % 3    # 0, 1 or 2 unparsable words in play
            out.append(self.WORDS[h % (len(self.WORDS) - 2 + k)] if k else ("increase" if h % 2 else "decrease"))
        return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from lm_eval.loggers import EvaluationTracker

    root = tmp_path_factory.mktemp("one")
    hub = make_hub_folder(root / "hub", sources=3, tiers=("low", "high"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(utils.DATASET_ENV, str(hub))
        offline_lm_eval(mp)
        res = run_lm_eval(MixedLM(), ["vocalgrad"], log_samples=True)
    tracker = EvaluationTracker(output_path=str(root / "out"))
    tracker.general_config_tracker.model_name = "mixed"
    samples = res.pop("samples")
    res["config"] = {"model": "mixed", "model_args": ""}
    tracker.save_results_aggregated(results=res, samples=samples)
    for task, rows in samples.items():
        tracker.save_results_samples(task_name=task, samples=rows)
    return root, res, samples


def _same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == pytest.approx(b, abs=1e-12)


def test_group_row_report_and_evaluate_print_the_same_numbers(run, tmp_path):
    from analysis.report import build_report
    from harness_tasks.vocalgrad_accuracy import PATH

    root, res, samples = run
    group = {k.split(",")[0]: v for k, v in res["results"]["vocalgrad"].items() if "," in k}
    rep = build_report([root / "out"], tmp_path / "rep", plots=False, draws=200)
    (model,) = rep["models"]
    ov = model["overall"]

    docs = [(s["doc"], s["filtered_resps"][0]) for t in samples.values() for s in t]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_EVALUATE_OFFLINE", "1")
        metric = evaluate.load(PATH)
    ev = metric.compute(predictions=[raw for _, raw in docs], references=[d["direction"] for d, _ in docs],
                        groups=[d["category"] for d, _ in docs], bootstrap=False)

    recs = [metrics.score_answer(raw, d["direction"], category=d["category"]) for d, raw in docs]
    pooled = metrics.summarize(recs)
    per_cat = {c: metrics.summarize([r for r in recs if r["category"] == c]) for c in vocalgrad.CATEGORY_NAMES}
    # the fixture makes pooling and averaging differ, so agreement is not a coincidence
    assert len({round(g["unparsed_rate"], 6) for g in per_cat.values()}) >= 3
    assert abs(pooled["acc_parsed"] - ov["acc_parsed"]) > 1e-3
    for key in KEYS:
        want = sum(per_cat[c][key] for c in vocalgrad.CATEGORY_NAMES) / len(per_cat)
        assert _same(group[key], want), key
        assert _same(ov[key], want), key
        assert _same(ev[key], want), key
    assert ov["n"] == ev["n"] == len(docs) and ov["n_parsed"] == ev["n_parsed"] == pooled["n_parsed"]
    assert ev["overall_rule"] == metrics.OVERALL_RULE == rep["settings"]["overall_rule"]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "unweighted mean over categories" in md
    # the category table's avg column is that same overall number
    assert model["overall"]["category_mean_acc"] == ov["acc"]
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["models"][0]["overall"]["acc"] == \
        pytest.approx(ov["acc"])


def test_macro_summary_and_interval_definitions():
    recs = [metrics.score_answer("increase", "increase", category="a", source_id="s1"),
            metrics.score_answer("hmm", "decrease", category="a", source_id="s2"),
            metrics.score_answer("decrease", "decrease", category="b", source_id="s1"),
            metrics.score_answer("decrease", "increase", category="b", source_id="s2"),
            metrics.score_answer("increase", "increase", category="b", source_id="s3"),
            metrics.score_answer("increase", "decrease", category="b", source_id="s4")]
    m = metrics.macro_summary(recs)
    assert m["acc"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert m["acc_parsed"] == pytest.approx((1 + 2 / 4) / 2)       # pooled would be 3/5
    assert m["increase_ratio"] == pytest.approx((1 + 2 / 4) / 2)
    assert m["n"] == 6 and m["n_parsed"] == 5 and m["n_groups"] == 2
    one = [r for r in recs if r["category"] == "b"]
    assert metrics.macro_summary(one)["acc_parsed"] == metrics.summarize(one)["acc_parsed"]
    lo, hi = metrics.bootstrap_ci(recs, "acc", draws=500, macro_by="category")
    assert lo <= m["acc"] <= hi
    clo, chi = metrics.bootstrap_ci(recs, "acc", draws=500, macro_by="category", cluster="source_id",
                                    min_clusters=4)
    assert 0 <= clo <= chi <= 1
    assert all(math.isnan(v) for v in metrics.bootstrap_ci(recs, "acc", macro_by="category", cluster="source_id"))
    with pytest.raises(KeyError, match="category"):
        metrics.macro_summary([metrics.score_answer("increase", "increase")])
