"""The `evaluate` metric module gives the report's numbers, offline."""

from __future__ import annotations

import json
import math

import pytest

from analysis.report import build_report
from harness_tasks.parsing import error_answer
from tests._report_helpers import clips, write_results

evaluate = pytest.importorskip("evaluate")


def answer(doc):
    if doc["category"] == "noise":
        return "increase"
    if doc["tier"] == "low":
        return "I think it decreases" if doc["trajectory"] != "jump" else "both increase and decrease"
    if doc["id"].startswith("spk01") and doc["tier"] == "medium" and doc["direction"] == "increase":
        return error_answer("HTTP 500")
    return doc["direction"]


@pytest.fixture(scope="module")
def metric():
    from harness_tasks.vocalgrad_accuracy import PATH

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_EVALUATE_OFFLINE", "1")
        return evaluate.load(PATH)


def _same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == pytest.approx(b, abs=1e-12)


def test_evaluate_module_equals_report(tmp_path, metric):
    docs = clips(sources=20, categories=("pitch", "noise"))  # MIN_CLUSTERS sources: a clustered interval
    write_results(tmp_path / "res", "m", answer, docs=docs)
    rep = build_report([tmp_path / "res"], tmp_path / "rep", plots=False)
    model = json.loads((tmp_path / "rep" / "report.json").read_text())["models"][0]

    res = metric.compute(predictions=[answer(d) for d in docs], references=[d["direction"] for d in docs],
                         groups=[d["category"] for d in docs], clusters=[d["source_id"] for d in docs])
    ov = model["overall"]
    for key in ("acc", "acc_parsed", "balanced_acc", "acc_increase", "acc_decrease", "increase_ratio",
                "increase_ratio_all", "unparsed_rate", "error_rate", "exact_match_rate", "n", "n_parsed",
                "n_unparsed", "n_ambiguous", "n_error", "n_exact"):
        assert _same(res[key], ov[key]), key
    assert res["n_error"] == 4 and res["n_ambiguous"] == 40  # pitch only (noise always says increase)
    assert res["acc_ci"] == pytest.approx(ov["ci"]["acc"]["binomial"])
    assert res["acc_ci_clustered"] == pytest.approx(ov["ci"]["acc"]["clustered"])
    assert not math.isnan(res["acc_ci_clustered"][0])
    few = docs[: len(docs) // 2]  # 10 sources: no clustered interval
    res10 = metric.compute(predictions=[answer(d) for d in few], references=[d["direction"] for d in few],
                           clusters=[d["source_id"] for d in few], draws=200)
    assert all(math.isnan(v) for v in res10["acc_ci_clustered"]) and not math.isnan(res10["acc_ci"][0])
    for cat in ("pitch", "noise"):
        got, want = res["groups"][cat], model["by_category"][cat]
        for key in ("acc", "acc_parsed", "balanced_acc", "increase_ratio", "exact_match_rate"):
            assert _same(got[key], want[key]), (cat, key)
        assert got["acc_ci"] == pytest.approx(want["ci"]["acc"]["binomial"])
        assert got["acc_ci_clustered"] == pytest.approx(want["ci"]["acc"]["clustered"])
    assert res["groups"]["noise"]["increase_ratio"] == 1.0 == model["bias"]["noise"]["increase_ratio"]
    assert rep["models"][0]["overall"]["acc"] == res["acc"]


def test_evaluate_module_plain_and_errors(metric):
    res = metric.compute(predictions=["Increase.", "decrease", "no idea", None],
                         references=["increase", "increase", "decrease", "decrease"], bootstrap=False)
    assert res["acc"] == 0.25 and res["acc_parsed"] == 0.5 and res["n_unparsed"] == 2
    assert "acc_ci" not in res and "groups" not in res
    with pytest.raises(ValueError, match="groups has 1 entries for 2 predictions"):
        metric.compute(predictions=["increase", "decrease"], references=["increase", "decrease"],
                       groups=["pitch"])
    with pytest.raises(ValueError, match="gold direction"):
        metric.compute(predictions=["increase"], references=["up"])
