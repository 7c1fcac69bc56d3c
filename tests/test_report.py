"""`vocalgrad report` on synthetic lm-eval outputs of two models."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import vocalgrad
from generation import cli
from generation.report import build_report
from generation.report.loading import ResultsError, load_evaluations, parse_task
from generation.report.paper import PAPER_CATEGORY_ACC
from harness_tasks.parsing import error_answer
from tests._report_helpers import clips, write_results

CATS = ("pitch", "volume", "echo")


def good_answer(doc):
    """Right except echo (always 'decrease'), one ambiguous and one adapter error on pitch."""
    if doc["category"] == "echo":
        return "Decrease."
    if doc["id"].startswith("spk00") and doc["category"] == "pitch":
        if doc["tier"] == "low" and doc["trajectory"] == "linear":
            return "increase or decrease" if doc["direction"] == "increase" else error_answer("timeout")
    return doc["direction"].capitalize() if doc["tier"] == "high" else f"It will {doc['direction']}."


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    docs = clips(sources=3, categories=CATS)
    write_results(root, "vocalgrad-oracle", good_answer, docs=docs)
    write_results(root, "vocalgrad-constant", lambda d: "increase", docs=docs, model_args="direction=increase")
    out = tmp_path_factory.mktemp("report")
    rep = build_report([root], out, draws=2000)
    return root, out, rep


def test_loader_reads_tasks_and_records(two_models):
    root, _, _ = two_models
    evs = load_evaluations([root])
    assert sorted(e.label for e in evs) == ["vocalgrad-constant (direction=increase)", "vocalgrad-oracle"]
    ev = next(e for e in evs if e.model == "vocalgrad-oracle")
    assert ev.categories == list(CATS)
    assert len(ev.records) == 3 * 3 * 24 and not ev.warnings
    statuses = {r["status"] for r in ev.records}
    assert statuses == {"parsed", "ambiguous", "error"}
    assert parse_task("vocalgrad_swap_echo") == ("swap", "echo")
    assert parse_task("vocalgrad_beep") is None and parse_task("mmlu_x") is None


def test_report_numbers(two_models):
    _, out, rep = two_models
    data = json.loads((out / "report.json").read_text())
    models = {m["model"]: m for m in data["models"]}
    good, const = models["vocalgrad-oracle"], models["vocalgrad-constant"]
    n = 216
    # good: pitch 24*3 clips minus 2 unparsed, volume all right, echo only decrease clips
    assert good["overall"]["n"] == n
    assert good["overall"]["acc"] == pytest.approx((70 + 72 + 36) / n)
    assert good["overall"]["n_ambiguous"] == 1 and good["overall"]["n_error"] == 1
    assert good["overall"]["n_unparsed"] == 0
    assert good["overall"]["acc_parsed"] == pytest.approx(178 / 214)
    assert good["by_category"]["echo"]["acc"] == 0.5
    assert good["bias"]["echo"]["increase_ratio"] == 0.0
    assert good["by_category"]["volume"]["verdict"] == "above chance"
    assert good["by_category"]["echo"]["verdict"] == "not above chance"
    # exact match = the 'high' tier answers ("Decrease." counts as exact too on echo)
    assert good["overall"]["exact_match_rate"] == pytest.approx((24 + 24 + 72) / n)
    assert good["overall"]["parse_rate"] == pytest.approx(214 / n)
    assert set(good["by_tier"]) == set(vocalgrad.TIERS)
    assert list(good["by_trajectory"]) == list(vocalgrad.TRAJECTORIES)
    assert good["by_direction"]["increase"]["n"] == n // 2
    lo, hi = good["overall"]["ci"]["acc"]["binomial"]
    assert lo < good["overall"]["acc"] < hi
    assert good["overall"]["ci"]["acc"]["clustered"][0] <= good["overall"]["acc"]
    top = good["top_outputs"]
    assert len(top) <= 20 and top[0]["output"] == "Decrease." and top[0]["count"] == 36 + 24 + 24 - 12
    # constant model: the bias table says 100 % increase, accuracy is at chance
    for cat in CATS:
        assert const["bias"][cat]["increase_ratio"] == 1.0
        assert const["bias"][cat]["increase_ratio_all"] == 1.0
    assert const["overall"]["acc"] == 0.5 and const["overall"]["verdict"] == "not above chance"
    # paper rows carried as data, paired comparison computed on the 216 shared clips
    assert data["paper"]["category_acc"]["Human"]["avg"] == 94.4
    (cmp,) = data["comparisons"]
    assert cmp["overall"]["n"] == n
    sign = 1 if cmp["a"] == good["label"] else -1
    assert {cmp["a"], cmp["b"]} == {good["label"], const["label"]}
    assert cmp["overall"]["diff"] == pytest.approx(sign * (good["overall"]["acc"] - 0.5))
    assert cmp["overall"]["only_a"] - cmp["overall"]["only_b"] == round(n * cmp["overall"]["diff"])
    assert 0 <= cmp["overall"]["mcnemar_p"] < 1e-4


def test_report_markdown(two_models):
    _, out, _ = two_models
    md = (out / "report.md").read_text()
    for text in ("## Summary", "vocalgrad-oracle", "vocalgrad-constant (direction=increase)",
                 "**not above chance**", "Human (paper)", "Audio Flamingo 3 (paper)",
                 "## Paired comparisons", "McNemar p", "Response bias", "most frequent raw outputs",
                 "`Decrease.`", "![comparison](plots/comparison.png)", "quad_first_flat"):
        assert text in md, text
    row = next(line for line in md.splitlines() if line.startswith("| Human (paper) |"))
    assert row.split("|")[2].strip() == f"{PAPER_CATEGORY_ACC['Human']['speed']:.1f}"


def test_plots_are_real_images(two_models):
    import matplotlib.image as mpimg

    _, out, rep = two_models
    pngs = sorted((out / "plots").glob("*.png"))
    assert {p.name for p in pngs} == {"vocalgrad-oracle.png", "vocalgrad-constant-direction-increase.png",
                                      "comparison.png"}
    for p in pngs:
        assert p.stat().st_size > 20_000, p
        img = mpimg.imread(p)
        assert img.shape[0] > 300 and img.shape[1] > 600
        rgb = img[..., :3].reshape(-1, 3)
        assert rgb.std() > 0.05  # not blank
        q = (rgb * 255).astype(np.int64)
        assert np.unique(q[:, 0] * 65536 + q[:, 1] * 256 + q[:, 2]).size > 50


def test_cli_labels_and_errors(tmp_path, capsys):
    docs = clips(sources=2, categories=("pitch",))
    a = write_results(tmp_path / "r", "m1", lambda d: d["direction"], docs=docs)
    rc = cli.main(["report", f"mine={a.parent}", "--out", str(tmp_path / "rep"), "--draws", "200",
                   "--no-plots"])
    assert rc == 0
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert [m["label"] for m in data["models"]] == ["mine"]
    assert data["models"][0]["overall"]["acc"] == 1.0
    assert not (tmp_path / "rep" / "plots").exists()
    assert "mine: acc 100.0 %" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["report", str(empty), "--out", str(tmp_path / "x")]) == 2
    assert "no lm-eval results_*.json" in capsys.readouterr().err


def test_without_sample_logs_and_reruns(tmp_path):
    docs = clips(sources=2, categories=("pitch", "volume"))
    write_results(tmp_path, "m", lambda d: "decrease", docs=docs, samples=False)
    rep = build_report([tmp_path], tmp_path / "rep", draws=200)
    (m,) = rep["models"]
    assert not m["has_samples"] and m["by_category"]["pitch"]["acc"] == 0.5
    assert any("--log_samples" in w for w in m["warnings"])
    assert "No per-sample log" in (tmp_path / "rep" / "report.md").read_text()
    # a later run of one category with samples replaces that category
    write_results(tmp_path, "m", lambda d: d["direction"], docs=[d for d in docs if d["category"] == "pitch"],
                  stamp="2026-02-01T00-00-00.000000")
    (ev,) = load_evaluations([tmp_path])
    assert ev.task_metrics["pitch"]["acc"] == 1.0 and ev.task_metrics["volume"]["acc"] == 0.5
    assert {r["category"] for r in ev.records} == {"pitch"}
    assert any("replace" in w for w in ev.warnings)


def test_bad_files_name_the_file(tmp_path):
    bad = tmp_path / "m" / "results_2026.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    with pytest.raises(ResultsError, match="results_2026.json"):
        load_evaluations([tmp_path])
    bad.write_text(json.dumps({"results": {"mmlu": {"acc,none": 0.3}}}))
    with pytest.raises(ResultsError, match="no VocalGrad tasks"):
        load_evaluations([tmp_path])
    docs = clips(sources=1, categories=("echo",))
    path = write_results(tmp_path / "x", "m", lambda d: "increase", docs=docs)
    sfile = next(path.parent.glob("samples_*.jsonl"))
    sfile.write_text(sfile.read_text() + "{truncated\n")
    with pytest.raises(ResultsError, match=r"samples_vocalgrad_echo.*:25: not JSON"):
        load_evaluations([path])


def test_nan_is_null_in_json(tmp_path):
    docs = clips(sources=1, categories=("noise",))
    write_results(tmp_path, "m", lambda d: "no idea", docs=docs)
    build_report([tmp_path], tmp_path / "rep", draws=100, plots=False)
    text = (tmp_path / "rep" / "report.json").read_text()
    assert "NaN" not in text
    m = json.loads(text)["models"][0]
    assert m["overall"]["acc_parsed"] is None and m["overall"]["acc"] == 0.0
    assert m["overall"]["verdict"] == "below chance" and not math.isnan(m["overall"]["parse_rate"])


def test_demo_summary_uses_the_paper_module(tmp_path):
    from generation.demo import write_summary

    text = write_summary(tmp_path, {"oracle": {c: 80.0 for c in vocalgrad.CATEGORY_NAMES}}, 216).read_text()
    human = PAPER_CATEGORY_ACC["Human"]
    assert f"| Human (paper) | {human['speed']:.1f} |" in text and text.rstrip().endswith("50.2 |")
    assert "| oracle | 80.0 |" in text


def test_label_for_a_folder_with_several_models(tmp_path):
    docs = clips(sources=1, categories=("speed",))
    write_results(tmp_path, "a", lambda d: "increase", docs=docs)
    write_results(tmp_path, "vocalgrad-hf", lambda d: "decrease", docs=docs, model_args="pretrained=org/ckpt",
                  variant="swap")
    labels = sorted(e.label for e in load_evaluations([f"run1={tmp_path}"]))
    assert labels == ["run1 / a", "run1 / org/ckpt [swap]"]


@pytest.mark.parametrize("log_format", ["code", "dict", "none"])
def test_sample_log_formats_agree(tmp_path, log_format):
    docs = clips(sources=1, categories=("clarity",))

    def ans(d):
        return error_answer("503") if d["tier"] == "low" else d["direction"]

    write_results(tmp_path, "m", ans, docs=docs, log_format=log_format)
    (ev,) = load_evaluations([tmp_path])
    statuses = [r["status"] for r in ev.records]
    assert statuses.count("error") == 8 and statuses.count("parsed") == 16
    assert not ev.warnings
