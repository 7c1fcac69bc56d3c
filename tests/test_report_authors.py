"""The authors' raw prediction files in `vocalgrad report`: same numbers as the same answers via lm-eval."""

from __future__ import annotations

import json
import math

import pytest

import vocalgrad
from _harness_helpers import make_hub_folder, offline_lm_eval

from analysis.report import authors
from analysis.report.command import build_report
from analysis.report.loading import ResultsError, load_all
from generation import published
from harness_tasks import utils

CATS = ("volume", "pitch", "noise")


def _their_row(doc: dict, raw: str | None, *, error: bool = False) -> dict:
    """One prediction as the authors' benchmark script writes it (cli_vocalgrad.py row keys)."""
    cat = vocalgrad.category(doc["category"])
    f = vocalgrad.parse_clip_id(doc["id"])
    clip = f"{doc['source_id']}-utt"
    bid = published.to_benchmark_clip_id(doc["id"], source_clip_id=clip)
    row = {
        "timestamp": "2026-01-01T00:00:00+00:00", "backend": "chance", "model_id": "org/chance-3",
        "category": cat.id, "benchmark_clip_id": bid, "audio_path": f"x/{bid}.wav",
        "original_audio_path": f"x/{bid}.wav", "gold_label": doc["label"], "prediction_label": None,
        "parsed_ok": False, "is_correct": None, "raw_response": raw, "prompt": vocalgrad.default_prompt(cat.name),
        "prompt_settings": {"swap_direction_order": False, "explicit_audio_clip_reference": False,
                            "audio_before_text": False},
        "metadata": {"benchmark_clip_id": bid, "source_clip_id": clip, "category": cat.id,
                     "direction": published.DIRECTION_TO_PUBLISHED[f["direction"]], "curve": f["trajectory"],
                     "tier": published.TIER_TO_PUBLISHED[f["tier"]]},
    }
    if error:
        row.update(error=True, error_type="TimeoutError", traceback="...")
    return row


def _strip(model: dict) -> dict:
    return {k: v for k, v in model.items() if k not in ("label", "model", "model_args", "files", "warnings", "data")}


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b)
    else:
        assert a == b


def test_authors_file_reports_like_the_same_answers_through_lm_eval(tmp_path, monkeypatch):
    from harness_tasks.cli import main

    offline_lm_eval(monkeypatch)
    hub = make_hub_folder(tmp_path / "hub", categories=CATS, sources=2, tiers=("low", "high"),
                          trajectories=("linear", "jump"))
    monkeypatch.setenv(utils.DATASET_ENV, str(hub))
    lm_out = tmp_path / "lm"
    assert main(["--model", "vocalgrad-chance", "--model_args", "seed=3",
                 "--tasks", ",".join(f"vocalgrad_{c}" for c in CATS),
                 "--output_path", str(lm_out), "--log_samples"]) == 0
    raw_root = tmp_path / "outputs" / "raw" / "vocalgrad" / "default"
    n = 0
    for f in sorted(lm_out.rglob("samples_*.jsonl")):
        samples = [json.loads(line) for line in f.read_text().splitlines()]
        rows = [_their_row(s["doc"], s["filtered_resps"][0]) for s in reversed(samples)]  # any order
        cat = vocalgrad.category(samples[0]["doc"]["category"]).id
        (raw_root / cat).mkdir(parents=True)
        (raw_root / cat / "chance-3.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        n += len(rows)
    assert n == 2 * 2 * 2 * 2 * len(CATS)
    assert authors.is_raw_predictions(raw_root) and not authors.is_raw_predictions(lm_out)

    a = build_report([f"m={lm_out}"], tmp_path / "rep_lm", draws=300, plots=False)
    b = build_report([f"m={raw_root}"], tmp_path / "rep_authors", draws=300, plots=False)
    (ma,), (mb,) = a["models"], b["models"]
    assert mb["label"] == "m" and mb["categories"] == ma["categories"] == [c for c in vocalgrad.CATEGORY_NAMES
                                                                           if c in CATS]
    _same(_strip(ma), _strip(mb))
    assert 0 < ma["overall"]["acc"] < 1

    # side by side: paired by clip id, so the same answers differ nowhere
    both = build_report([f"lm={lm_out}", str(raw_root)], tmp_path / "rep_both", draws=300, plots=False)
    assert [m["label"] for m in both["models"]] == ["lm", "org/chance-3"]
    (cmp,) = both["comparisons"]
    assert cmp["overall"]["n"] == n and cmp["overall"]["only_a"] == cmp["overall"]["only_b"] == 0
    assert cmp["overall"]["mcnemar_p"] == 1.0


def test_errors_unparsed_and_variants(tmp_path):
    doc = {"id": vocalgrad.clip_id("s_01", "echo", "jump", "medium", "decrease"), "category": "echo",
           "label": "decrease", "source_id": "s_01"}
    up = dict(doc, id=vocalgrad.clip_id("s_01", "echo", "jump", "medium", "increase"), label="increase")
    rows = [_their_row(doc, "Decrease."), _their_row(up, "It increases, then decreases"),
            _their_row(dict(up, id=vocalgrad.clip_id("s_01", "echo", "linear", "low", "increase")), "boom", error=True)]
    swapped = _their_row(doc, "decrease")
    swapped["prompt_settings"]["swap_direction_order"] = True
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(rows + [swapped]))  # a JSON array is read too
    evals, _ = load_all([str(path)])
    by_variant = {e.variant: e for e in evals}
    recs = {r["id"]: r for r in by_variant["default"].records}
    assert recs[doc["id"]]["status"] == "parsed" and recs[doc["id"]]["correct"] and recs[doc["id"]]["exact"]
    assert recs[up["id"]]["status"] == "ambiguous" and not recs[up["id"]]["correct"]
    assert [r["status"] for r in recs.values()].count("error") == 1
    assert by_variant["swap"].label == "org/chance-3 [swap]"
    assert by_variant["default"].task_metrics["echo"]["acc"] == pytest.approx(1 / 3)
    bad = _their_row(doc, "decrease")
    bad["gold_label"] = "increase"
    (tmp_path / "bad.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(ResultsError, match="bad.jsonl:1: gold_label"):
        load_all([str(tmp_path / "bad.jsonl")])
