"""The paper's appendix analyses: cross-attribute (vocalgrad_xattr), source-clip bias
(vocalgrad_sources), paraphrase table and the Table 5 trajectory layout with a human row."""

from __future__ import annotations

import json
import math

import pytest

import vocalgrad
from _harness_helpers import make_hub_folder, offline_lm_eval, run_lm_eval, write_config
from test_variants import RecordingLM, source_rows

import harness_tasks
from harness_tasks import prompts, task_configs, utils
from harness_tasks.models.baselines import ConstantLM
from harness_tasks.models.oracle import OracleLM

CATS = vocalgrad.CATEGORY_NAMES


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = make_hub_folder(tmp_path_factory.mktemp("xhub"), sources=2)
    write_config(root, "sources", source_rows(3))
    return root


def _save(res, samples, out, model):
    import copy

    from lm_eval.loggers import EvaluationTracker

    samples = copy.deepcopy(samples)  # the tracker rewrites the samples it saves
    tracker = EvaluationTracker(output_path=str(out))
    tracker.general_config_tracker.model_name = model
    res = dict(res, config={"model": model, "model_args": ""})
    tracker.save_results_aggregated(results=res, samples=samples)
    for task, rows in samples.items():
        tracker.save_results_samples(task_name=task, samples=rows)


@pytest.fixture(scope="module")
def oracle_runs(hub, tmp_path_factory):
    out = tmp_path_factory.mktemp("xout")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(utils.DATASET_ENV, str(hub))
        offline_lm_eval(mp)
        res = run_lm_eval(OracleLM(), ["vocalgrad_xattr", "vocalgrad_sources", "vocalgrad_paraphrase"],
                          log_samples=True)
        const = run_lm_eval(ConstantLM(direction="increase"), ["vocalgrad_sources"], log_samples=True)
    samples = res.pop("samples")
    _save(res, samples, out / "oracle", "vocalgrad-oracle")
    csamples = const.pop("samples")
    _save(const, csamples, out / "const", "vocalgrad-constant")
    return out, res, samples, const


def test_xattr_yamls_are_generated_from_the_template():
    files = task_configs.expected_files()
    tasks = [n for n in files if n.startswith("vocalgrad_xattr_")]
    assert len(tasks) == 81
    group = files["_vocalgrad_xattr.yaml"]
    off = files["_vocalgrad_xattr_off.yaml"]
    assert group.count("  - vocalgrad_xattr_") == 81 and off.count("  - vocalgrad_xattr_") == 72
    assert "vocalgrad_xattr_echo_echo" in group and "vocalgrad_xattr_echo_echo" not in off
    text = files["vocalgrad_xattr_echo_volume.yaml"]
    assert "include: _template_yaml" in text and "dataset_name: echo" in text
    assert json.dumps(vocalgrad.default_prompt("volume")) in text
    src = files["vocalgrad_sources_pitch.yaml"]
    assert "dataset_name: sources" in src and json.dumps(vocalgrad.default_prompt("pitch")) in src
    assert "vocalgrad_category" not in src


def test_oracle_through_xattr_and_sources(oracle_runs):
    _, res, samples, const = oracle_runs
    r = res["results"]
    assert sum(k.startswith("vocalgrad_xattr_") for k in r) == 81
    for c in ("volume", "pitch", "noise"):   # the fixture's changing categories
        assert r[f"vocalgrad_xattr_{c}_{c}"]["acc,none"] == 1.0
    s = samples["vocalgrad_xattr_volume_echo"][0]
    assert s["arguments"][0][0] == vocalgrad.default_prompt("echo")
    assert s["doc"]["category"] == "volume" and s["target"] == s["doc"]["direction"]
    # the oracle answers about the asked attribute: off the diagonal it is not tracking the clip's change
    off = [r[f"vocalgrad_xattr_{a}_{p}"]["acc,none"] for a in ("volume", "pitch", "noise") for p in CATS if p != a]
    assert sum(off) / len(off) < 0.8
    # source clips: 3 per category, no gold, response bias only
    t = r["vocalgrad_sources_pitch"]
    assert set(k.split(",")[0] for k in t if "," in k and "stderr" not in k) == {"increase_ratio", "unparsed_rate"}
    assert len(samples["vocalgrad_sources_pitch"]) == 3
    c = const["results"]
    assert all(c[f"vocalgrad_sources_{k}"]["increase_ratio,none"] == 1.0 for k in CATS)
    assert c["vocalgrad_sources"]["increase_ratio,none"] == 1.0
    assert c["vocalgrad_sources"]["unparsed_rate,none"] == 0.0


def test_unparsed_source_answers(hub, monkeypatch):
    monkeypatch.setenv(utils.DATASET_ENV, str(hub))
    offline_lm_eval(monkeypatch)
    res = run_lm_eval(RecordingLM("no change"), ["vocalgrad_sources_echo"])
    t = res["results"]["vocalgrad_sources_echo"]
    assert t["unparsed_rate,none"] == 1.0 and math.isnan(t["increase_ratio,none"])


def test_report_heat_map_table8_and_table13(oracle_runs, tmp_path):
    from analysis.report import build_report

    out, res, _, _ = oracle_runs
    rep = build_report([f"oracle={out / 'oracle'}", f"constant={out / 'const'}"], tmp_path / "rep", draws=100)
    x = rep["extras"]["xattr"][0]
    assert x["label"] == "oracle" and x["n_cells"] == 81
    assert x["acc"]["pitch"]["pitch"] == 1.0
    assert x["acc"]["volume"]["echo"] == res["results"]["vocalgrad_xattr_volume_echo"]["acc,none"]
    assert x["diagonal_acc"] > x["off_diagonal_acc"]
    png = tmp_path / "rep" / rep["plots"]["xattr"]["oracle"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    src = {e["label"]: e for e in rep["extras"]["sources"]}
    assert src["constant"]["overall"]["increase_ratio"] == 1.0
    assert src["oracle"]["by_category"]["pitch"]["increase_ratio"] == \
        res["results"]["vocalgrad_sources_pitch"]["increase_ratio,none"]
    (para,) = rep["extras"]["paraphrase"]
    assert list(para["by_pattern"]) == list(prompts.PARAPHRASES)
    assert para["by_pattern"]["tone_rise_fall"]["acc"] == 1.0
    md = (tmp_path / "rep" / "report.md").read_text()
    for text in ("Cross-attribute evaluation", "actual \\ prompt", "paper Table 8", "unparsed %",
                 "paper Table 13", "`freq_rise_decline`", "Over time, does the frequency of the voice rise or decline?",
                 "synonym-unique-direction-v1", "![cross-attribute oracle]"):
        assert text in md, text


def _answers(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_table5_human_row_is_computed_the_papers_way(tmp_path):
    """Annotator accuracies per (category, trajectory) are averaged first, then categories."""
    from analysis.report import build_report
    from analysis.report.trajectory import trajectory_accuracy

    rows = []
    # ann1 answers 4 clips per cell (all right on pitch, half right on echo); ann2 answers one pitch
    # clip per trajectory, wrongly. Pooling clips would weight ann1 4:1; the paper's rule does not.
    for traj in vocalgrad.TRAJECTORIES:
        for i in range(4):
            for cat, right in (("pitch", True), ("echo", i % 2 == 0)):
                d = vocalgrad.DIRECTIONS[i % 2]
                ans = d if right else ("decrease" if d == "increase" else "increase")
                cid = vocalgrad.clip_id(f"s{i}", cat, traj, "low", d)
                rows.append({"annotator": "ann1", "clip_id": cid, "answer": ans, "direction": d})
        d = "increase"
        rows.append({"annotator": "ann2", "clip_id": vocalgrad.clip_id("s0", "pitch", traj, "low", d),
                     "answer": "decrease", "direction": d})
    path = _answers(tmp_path / "answers.jsonl", rows)
    rep = build_report([], tmp_path / "rep", human=[path], plots=False, draws=50)
    (human,) = rep["models"]
    # pitch: (1.0 + 0.0) / 2 = 0.5 ; echo: 0.5 -> 0.5 for every trajectory (pooled clips: 8/13)
    assert human["trajectory_table"] == {t: pytest.approx(0.5) for t in vocalgrad.TRAJECTORIES}
    # without the annotator step (clips pooled per cell) pitch would be 4/5: (0.8 + 0.5) / 2
    pooled = [dict(r, annotator=None) for r in human_records_of(path)]
    assert trajectory_accuracy(pooled)["jump"] == pytest.approx((0.8 + 0.5) / 2)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "paper Table 5" in md
    table5 = md[md.index("paper Table 5"):].splitlines()
    line = next(x for x in table5 if x.startswith("| human |"))
    assert line.split("|")[2].strip() == "50.00"
    paper = next(x for x in table5 if x.startswith("| Human (paper) |"))
    assert [c.strip() for c in paper.split("|")[2:6]] == ["98.46", "93.73", "92.02", "93.83"]


def human_records_of(path):
    from analysis.listen.answers import human_records

    return human_records([path])
