"""`vocalgrad report` on synthetic lm-eval outputs of two models."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import vocalgrad
from vocalgrad_commands import cli
from analysis.report import build_report
from analysis.report.loading import ResultsError, load_all, load_evaluations, parse_format_task, parse_task
from generation.paper_results import PAPER_CATEGORY_ACC
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
    assert good["overall"]["acc_parsed"] == pytest.approx((70 / 70 + 72 / 72 + 36 / 72) / 3)  # macro over categories (pooled: 178/214)
    assert good["by_category"]["echo"]["acc"] == 0.5
    assert good["bias"]["echo"]["increase_ratio"] == 0.0
    assert good["by_category"]["volume"]["verdict"] == "above chance"
    assert good["by_category"]["echo"]["verdict"] == "not different from chance"
    # exact match = the 'high' tier answers ("Decrease." counts as exact too on echo)
    assert good["overall"]["exact_match_rate"] == pytest.approx((24 + 24 + 72) / n)
    assert good["overall"]["parse_rate"] == pytest.approx(214 / n)
    assert set(good["by_tier"]) == set(vocalgrad.TIERS)
    assert list(good["by_trajectory"]) == list(vocalgrad.TRAJECTORIES)
    assert good["by_direction"]["increase"]["n"] == n // 2
    lo, hi = good["overall"]["ci"]["acc"]["binomial"]
    assert lo < good["overall"]["acc"] < hi
    # 3 sources: no clustered interval (fewer than MIN_CLUSTERS), said so in a warning
    assert good["overall"]["ci"]["acc"]["clustered"] == [None, None] and good["overall"]["n_sources"] == 3
    assert good["overall"]["verdict_clustered"] == "n/a (3 sources)"
    assert any("no clustered intervals" in w for w in good["warnings"])
    top = good["top_outputs"]
    assert len(top) <= 20 and top[0]["output"] == "Decrease." and top[0]["count"] == 36 + 24 + 24 - 12
    # constant model: the bias table says 100 % increase, accuracy is at chance
    for cat in CATS:
        assert const["bias"][cat]["increase_ratio"] == 1.0
        assert const["bias"][cat]["increase_ratio_all"] == 1.0
    assert const["overall"]["acc"] == 0.5 and const["overall"]["verdict"] == "not different from chance"
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
                 "**not different from chance**", "Human (paper)", "Audio Flamingo 3 (paper)",
                 "## Paired comparisons", "McNemar p", "Response bias", "most frequent raw outputs",
                 "`Decrease.`", "![comparison](plots/comparison.png)", "quad_first_flat"):
        assert text in md, text
    row = next(line for line in md.splitlines() if line.startswith("| Human (paper) |"))
    # 3 sources: no claim over voices; the headline is the clip-level figure, labelled "these voices", and says why
    summary = next(line for line in md.splitlines() if line.startswith("| vocalgrad-oracle |")).split("|")
    assert summary[5].strip() == summary[7].strip() != "–"  # headline interval = the clip bootstrap's
    assert summary[6].strip() == "above chance on these voices" and "over voices |" not in md
    assert ("**No claim over voices** (vocalgrad-oracle: 3 sources; a claim about voices in general needs at "
            "least 20" in md)
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


def test_one_missing_sample_log_is_a_warning_naming_the_file(tmp_path, capsys):
    # three categories logged, then one sample log lost: the report warns and covers the other two
    docs = clips(sources=2, categories=("pitch", "volume", "echo"))
    write_results(tmp_path / "res", "m", lambda d: d["direction"] if d["category"] != "echo" else "increase",
                  docs=docs)
    (lost,) = (tmp_path / "res").rglob("samples_vocalgrad_pitch_*.jsonl")
    lost.unlink()
    rc = cli.main(["report", str(tmp_path / "res"), "--out", str(tmp_path / "rep"), "--draws", "200"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert f"warning: m: pitch: no sample log {lost.name}" in err
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    (m,) = data["models"]
    assert m["categories"] == ["pitch", "volume", "echo"] and m["categories_sampled"] == ["volume", "echo"]
    assert set(m["by_category"]) == set(m["bias"]) - {"all"} == {"volume", "echo"}
    assert m["overall"]["acc"] == pytest.approx((1.0 + 0.5) / 2) and m["overall"]["n"] == 96
    assert any(w.startswith("no sample log for pitch: the overall figures") and "pitch 100.0 %" in w
               for w in m["warnings"])
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"> warning: pitch: no sample log {lost.name}" in md


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
    from vocalgrad_commands.demo import write_summary

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


# ----------------------------------------------------------------------------- yes/no and ternary
def format_docs(fmt: str, *, sources: int, categories) -> list[dict]:
    """Docs of a yes/no or ternary task: the clips of ``clips()`` plus one unmodified source clip
    per source and category, gold ``label`` as the task sets it."""
    docs = []
    for doc in clips(sources=sources, categories=categories):
        docs.append(doc)
    for s in range(sources):
        sid = f"spk{s:02d}_{s:02d}"
        for cat in categories:
            docs.append({"id": f"{sid}__{cat}__source", "category": cat, "direction": "constant",
                         "tier": "", "trajectory": "", "source_id": sid})
    for doc in docs:
        doc["label"] = ({"increase": "yes"}.get(doc["direction"], "no") if fmt == "yesno" else doc["direction"])
    return docs


def write_format_results(root, model: str, fmt: str, answer, *, docs: list[dict], samples: bool = True,
                         codes: bool = True, stamp: str = "2026-01-01T00-00-00.000000"):
    """Write what `vocalgrad-eval --tasks vocalgrad_<fmt> --log_samples` leaves: per-sample values from
    the task's own ``process_results_<fmt>``, per-task metrics from its lm-eval aggregations."""
    from harness_tasks import utils

    out = root / model
    out.mkdir(parents=True, exist_ok=True)
    process = getattr(utils, f"process_results_{fmt}")
    results, nsamp = {}, {}
    for cat in dict.fromkeys(d["category"] for d in docs):
        task = f"vocalgrad_{fmt}_{cat}"
        lines, per_metric = [], {}
        for i, doc in enumerate(d for d in docs if d["category"] == cat):
            raw = answer(doc)
            values = process(doc, [raw])
            for k, v in values.items():
                per_metric.setdefault(k, []).append(v)
            line = {"doc_id": i, "doc": doc, "target": doc["label"], "resps": [[raw]], "filtered_resps": [raw],
                    "filter": "none", **(values if codes else {"acc": values["acc"]})}
            lines.append(json.dumps(line))
        if samples:
            (out / f"samples_{task}_{stamp}.jsonl").write_text("\n".join(lines) + "\n")
        res = {"alias": cat, "acc,none": float(np.mean(per_metric["acc"])), "acc_stderr,none": "N/A"}
        for name in utils.label_metric_names(fmt):
            res[f"{name},none"] = getattr(utils, f"agg_{name}_{fmt}")(per_metric[name])
        results[task] = res
        nsamp[task] = {"original": len(lines), "effective": len(lines)}
    results[f"vocalgrad_{fmt}"] = {"alias": f"vocalgrad_{fmt}", "acc,none": 0.5}
    path = out / f"results_{stamp}.json"
    path.write_text(json.dumps({"results": results, "n-samples": nsamp,
                                "config": {"model": model, "model_args": ""}, "model_name": model}))
    return path


def good_format_answer(doc):
    """Ternary/yes-no: right, except the sources of echo ('increase' / 'yes') and one unparsed pitch clip."""
    if doc["category"] == "pitch" and doc["id"] == vocalgrad.clip_id("spk00_00", "pitch", "linear", "low", "increase"):
        return "no idea"
    if doc["direction"] == "constant" and doc["category"] == "echo":
        return "It increases." if doc["label"] == "constant" else "Yes."
    return doc["label"].capitalize() + "."


@pytest.fixture(scope="module")
def format_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("fmt")
    cats = ("pitch", "echo")
    for i, fmt in enumerate(("yesno", "ternary")):  # one lm-eval run per group: its own time stamp
        docs = format_docs(fmt, sources=2, categories=cats)
        stamp = f"2026-01-0{i + 2}T00-00-00.000000"
        write_format_results(root, "good", fmt, good_format_answer, docs=docs, stamp=stamp)
        write_format_results(root, "const", fmt, lambda d: "constant" if d["label"] in ("increase", "decrease",
                             "constant") else "no", docs=docs, samples=fmt == "ternary", stamp=stamp)
    write_results(root, "good", lambda d: d["direction"], docs=clips(sources=2, categories=cats))
    out = tmp_path_factory.mktemp("fmtrep")
    rep = build_report([root], out, draws=200, plots=False)
    return root, out, rep


def test_format_numbers(format_runs):
    _, out, _ = format_runs
    data = json.loads((out / "report.json").read_text())
    assert [m["label"] for m in data["models"]] == ["good"]  # the binary task is still reported
    tern = {e["label"]: e for e in data["formats"]["ternary"]}
    g, c = tern["good"], tern["const"]
    assert g["categories"] == ["pitch", "echo"] and g["has_samples"] and not g["warnings"]
    # pitch: 23/24 increase right (1 unparsed), 24 decrease, 2 constant -> 49/50
    assert g["by_category"]["pitch"]["acc"] == pytest.approx(49 / 50)
    assert g["by_category"]["pitch"]["macro_f1"] == pytest.approx((46 / 47 + 1 + 1) / 3)
    # echo: the 2 sources said 'increase' -> F1(constant) = 0, F1(increase) = 48/50
    assert g["by_category"]["echo"]["acc"] == pytest.approx(48 / 50)
    assert g["by_category"]["echo"]["macro_f1"] == pytest.approx((48 / 50 + 1 + 0) / 3)
    assert g["overall"]["mean_macro_f1"] == pytest.approx(((46 / 47 + 2) / 3 + (1.96 / 3)) / 2)
    assert g["overall"]["acc"] == pytest.approx(97 / 100) and g["overall"]["n"] == 100
    assert g["gold_counts"] == {"increase": 48, "decrease": 48, "constant": 4, "all": 100}
    dist = g["distribution"]
    assert dist["increase"] == pytest.approx({"increase": 47 / 48, "decrease": 0, "constant": 0, "unparsed": 1 / 48})
    assert dist["constant"] == pytest.approx({"increase": 0.5, "decrease": 0, "constant": 0.5, "unparsed": 0})
    assert dist["all"] == pytest.approx({"increase": 0.49, "decrease": 0.48, "constant": 0.02, "unparsed": 0.01})
    assert g["distribution_by_category"]["echo"]["constant"]["increase"] == 1.0
    # constant answer: acc 2/50, macro-F1 = F1(constant)/3 = (4/52)/3 in each category
    assert c["by_category"]["echo"]["acc"] == pytest.approx(2 / 50)
    assert c["overall"]["mean_macro_f1"] == pytest.approx(4 / 52 / 3)
    assert {row["constant"] for row in c["distribution"].values()} == {1.0}
    # yes/no: the const model has no sample log -> lm-eval's numbers only
    yn = {e["label"]: e for e in data["formats"]["yesno"]}
    assert yn["good"]["overall"]["acc"] == pytest.approx(97 / 100)
    assert yn["good"]["overall"]["pred_yes"] == pytest.approx((47 + 2) / 100)
    assert not yn["const"]["has_samples"] and "distribution" not in yn["const"]
    assert yn["const"]["by_category"]["pitch"]["acc"] == pytest.approx(26 / 50)  # 'no' on 24 decrease + 2 sources
    assert "acc" not in yn["const"]["overall"]  # no pooled numbers without a sample log
    assert any("--log_samples" in w for w in yn["const"]["warnings"])


def test_format_markdown(format_runs):
    _, out, _ = format_runs
    md = (out / "report.md").read_text()
    lines = md.splitlines()
    assert "## Yes/no and ternary formats" in md and "### Ternary (`vocalgrad_ternary`)" in md
    assert md.index("## Summary") < md.index("## Yes/no and ternary formats") < md.index("## good")
    assert "| model | metric | pitch | echo | mean | pooled |" in lines
    assert "| good | acc % | 98.0 | 96.0 | 97.0 | 97.0 |" in lines
    assert "| const | acc % | 52.0 | 52.0 | 52.0 | – |" in lines  # yes/no without a sample log
    assert "No sample log (`--log_samples`) for const" in md
    assert "| model | gold | clips | increase % | decrease % | constant % | unparsed % |" in lines
    assert "| good | constant | 4 | 50.0 | 0.0 | 50.0 | 0.0 |" in lines
    assert "| good | all | 100 | 49.0 | 48.0 | 2.0 | 1.0 |" in lines
    assert "| const | increase | 48 | 0.0 | 0.0 | 100.0 | 0.0 |" in lines
    assert md.count("#### Ternary prediction distribution") == 1


def test_formats_only_and_reparsed_logs(tmp_path):
    docs = format_docs("ternary", sources=1, categories=("volume",))
    write_format_results(tmp_path / "a", "good", "ternary", good_format_answer, docs=docs)
    write_format_results(tmp_path / "b", "good", "ternary", good_format_answer, docs=docs, codes=False)
    ra = build_report([tmp_path / "a"], tmp_path / "ra", draws=100)
    rb = build_report([tmp_path / "b"], tmp_path / "rb", draws=100)
    assert ra["models"] == [] and not (tmp_path / "ra" / "plots").exists()
    ea, eb = ra["formats"]["ternary"][0], rb["formats"]["ternary"][0]
    assert ea["by_category"] == eb["by_category"] and ea["distribution"] == eb["distribution"]
    assert ea["by_category"]["volume"]["acc"] == 1.0 and "yesno" not in ra["formats"]
    assert "#### Ternary prediction distribution" in (tmp_path / "ra" / "report.md").read_text()
    with pytest.raises(ResultsError, match="no VocalGrad tasks"):
        load_evaluations([tmp_path / "a"])  # binary tasks only, as before
    evs, fevs = load_all([tmp_path / "a"])
    assert evs == [] and [(f.label, f.fmt, f.categories) for f in fevs] == [("good", "ternary", ["volume"])]
    assert parse_format_task("vocalgrad_yesno_speed") == ("yesno", "speed")
    assert parse_format_task("vocalgrad_ternary") is None and parse_task("vocalgrad_ternary_echo") is None


def test_format_reruns_and_bad_labels(tmp_path):
    docs = format_docs("yesno", sources=1, categories=("noise", "echo"))
    write_format_results(tmp_path, "m", "yesno", lambda d: "no", docs=docs)
    write_format_results(tmp_path, "m", "yesno", lambda d: d["label"], stamp="2026-02-01T00-00-00.000000",
                         docs=[d for d in docs if d["category"] == "noise"])
    _, (fev,) = load_all([tmp_path])
    assert fev.task_metrics["noise"]["acc"] == 1.0 and fev.task_metrics["echo"]["acc"] == pytest.approx(13 / 25)
    assert sorted(r["correct"] for r in fev.records if r["category"] == "noise") == [True] * 25
    assert len(fev.records) == 50 and any("replace" in w for w in fev.warnings)
    sfile = next(tmp_path.rglob("samples_vocalgrad_yesno_echo_*.jsonl"))
    sfile.write_text(sfile.read_text().replace('"label": "no"', '"label": "maybe"', 1)
                     .replace('"no:', '"maybe:', 1))
    with pytest.raises(ResultsError, match=r"samples_vocalgrad_yesno_echo.*:\d+: gold label 'maybe'"):
        load_all([tmp_path])


def test_logit_scored_answers_get_their_own_section(tmp_path):
    """scoring=both: generated answers unparsed, the logit choice right on pitch and always
    'increase' on volume -> acc_logit 100 % / 50 %, mean 75 %, generated accuracy 0 %."""
    from harness_tasks.logit_answers import logit_answer

    def both(doc):
        choice = doc["direction"] if doc["category"] == "pitch" else "increase"
        other = "decrease" if choice == "increase" else "increase"
        return logit_answer(choice, {choice: -0.5, other: -1.5}, text="hmm")

    docs = clips(sources=2, categories=("pitch", "volume"))
    write_results(tmp_path / "res", "vocalgrad-hf", both, docs=docs, model_args="scoring=both")
    rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=200, plots=False)
    lg = rep["models"][0]["logits"]
    assert lg["pitch"]["acc_logit"] == 1.0 and lg["volume"]["acc_logit"] == 0.5
    assert lg["volume"]["increase_ratio_logit"] == 1.0 and lg["all"]["acc_logit"] == 0.75
    assert lg["pitch"]["acc_generated"] == 0.0 and lg["all"]["n"] == len(docs)
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "### Answers by logits" in text and "| all | 96 | 75.0 |" in text
    # plain answers: no section
    write_results(tmp_path / "plain", "vocalgrad-constant", lambda d: "increase", docs=docs)
    plain = build_report([tmp_path / "plain"], tmp_path / "rep2", draws=200, plots=False)
    assert plain["models"][0]["logits"] is None
    assert "Answers by logits" not in (tmp_path / "rep2" / "report.md").read_text()


def test_model_index_files_parse_with_huggingface_hub(tmp_path):
    import yaml

    docs = clips(sources=2)
    write_results(tmp_path / "res", "vocalgrad-oracle", good_answer, docs=docs)
    write_results(tmp_path / "res", "vocalgrad-constant", lambda d: "increase", docs=[d for d in docs
                  if d["category"] in CATS], model_args="direction=increase")
    rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=200, plots=False)
    files = sorted((tmp_path / "rep" / "model-index").glob("*.yaml"))
    assert [f.name for f in files] == ["vocalgrad-constant-direction-increase.yaml", "vocalgrad-oracle.yaml"]
    models = {m["label"]: m for m in rep["models"]}
    for f in files:
        index = yaml.safe_load(f.read_text())["model-index"]
        (entry,) = index
        m = models[entry["name"]]
        by_config = {r["dataset"]["config"]: r for r in entry["results"]}
        assert list(by_config)[:len(m["by_category"])] == list(m["by_category"])
        for cat, g in m["by_category"].items():
            r = by_config[cat]
            assert r["task"]["type"] == "audio-text-to-text" and r["dataset"]["type"] == vocalgrad.HUB_REPO_ID
            assert r["dataset"]["split"] == "test"
            (metric,) = r["metrics"]
            assert metric["type"] == "accuracy" and metric["value"] == round(100 * g["acc"], 2)
        # the mean over categories only when all nine were evaluated
        assert ("all" in by_config) == (len(m["by_category"]) == 9)
        if "all" in by_config:
            assert by_config["all"]["metrics"][0]["value"] == round(100 * m["overall"]["category_mean_acc"], 2)
        hub = pytest.importorskip("huggingface_hub")
        from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

        name, results = model_index_to_eval_results(index)        # the Hub's own parser
        assert name == m["label"] and len(results) == len(entry["results"])
        assert eval_results_to_model_index(name, results) == index  # and back: nothing lost or added
        card = hub.ModelCardData(**yaml.safe_load(f.read_text()))
        assert card.model_name == m["label"] and len(card.eval_results) == len(results)
