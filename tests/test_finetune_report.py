"""``vocalgrad finetune-report`` on synthetic run folders (no model needed)."""

from __future__ import annotations

import csv
import json

import _report_helpers as rh
import numpy as np
import pytest

import vocalgrad
from analysis.finetune.report import build_finetune_report, load_run


def _training(model, scope, category):
    return {"base_model": {"model": model}, "lora": {"scope": scope, "target_modules": ["lm_head"]},
            "data": {"category": category}, "trainable_parameters": 1234, "steps": 7,
            "validation_before": {"accuracy": 0.5}, "validation_after": {"accuracy": 0.9}}


def _probe(folder, offset):
    folder.mkdir(parents=True)
    with open(folder / "probe.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["model", "category", "stage", "layer", "accuracy", "balanced_accuracy"])
        w.writeheader()
        for layer in (1, 2, 3):
            w.writerow({"model": "m", "category": "volume", "stage": "lm_text", "layer": layer,
                        "accuracy": 0.5 + offset * layer, "balanced_accuracy": 0.5 + offset * layer})


def _align(folder, label, cos01):
    folder.mkdir(parents=True)
    cats = ["volume", "pitch", "echo"]
    cos = np.eye(3)
    cos[0, 1] = cos[1, 0] = cos01
    (folder / "alignment.json").write_text(json.dumps(
        {"label": label, "model": "tiny", "layers": [5, 10], "categories": cats, "cosine": [cos.tolist()] * 2}))


def _transfer(folder, adapter, f1):
    folder.mkdir(parents=True)
    (folder / "transfer.json").write_text(json.dumps(
        {"model": "tiny", "adapter": adapter, "classes": ["anger", "joy"], "n": 4, "macro_precision": f1,
         "macro_recall": f1, "macro_f1": f1, "letter_tokens": "space",
         "per_class": {"anger": {"f1": f1}, "joy": {"f1": f1}}}))


@pytest.fixture
def runs(tmp_path):
    docs = rh.clips(sources=2)
    base, ad = tmp_path / "base", tmp_path / "vol_all"
    rh.write_results(base / "eval", "vocalgrad-hf", lambda d: "increase", docs=docs, model_args="pretrained=/x/tiny")
    ad.mkdir()
    (ad / "finetune.json").write_text(json.dumps(_training("/x/tiny", "all_linear", "volume")))
    rh.write_results(ad / "eval", "vocalgrad-hf",
                     lambda d: d["direction"] if d["category"] in ("volume", "noise") else "increase", docs=docs,
                     model_args="pretrained=/x/tiny,peft=" + str(ad / "adapter"))
    _probe(base / "probe", 0.0)
    _probe(ad / "probe", 0.1)
    _align(base / "align", "base", 0.2)
    _align(ad / "align", "vol_all", 0.8)
    _transfer(base / "transfer", None, 0.4)
    _transfer(ad / "transfer", str(ad / "adapter"), 0.3)
    return base, ad


def test_report_tables_and_figures(runs, tmp_path):
    from vocalgrad_commands.cli import main

    base, ad = runs
    r = load_run(ad)
    assert r.scope == "all_linear" and r.category == "volume" and r.acc["volume"] == 1.0 and r.acc["pitch"] == 0.5
    out = tmp_path / "rep"
    assert main(["finetune-report", str(base), str(ad), "--out", str(out)]) == 0
    rep = json.loads((out / "finetune_report.json").read_text())
    row = rep["in_domain"][0]
    assert (row["base"], row["adapted"]) == (0.5, 1.0)
    assert row["adapted_other"] == pytest.approx((1.0 + 7 * 0.5) / 8)           # noise improved too
    m = np.array(rep["transfer_matrix"]["tiny / all_linear"]["delta"], dtype=float)
    vi, ni = vocalgrad.CATEGORY_NAMES.index("volume"), vocalgrad.CATEGORY_NAMES.index("noise")
    assert m[vi, vi] == pytest.approx(0.5) and m[vi, ni] == pytest.approx(0.5)
    assert np.nansum(np.abs(m)) == pytest.approx(1.0)
    assert np.isfinite(m[vi]).all() and np.isnan(np.delete(m, vi, axis=0)).all()    # only the volume row
    md = (out / "finetune_report.md").read_text()
    assert "| tiny | all_linear | paper | volume | 50.0 | 100.0 | +50.0 |" in md
    assert "| all_linear | tiny | – | – | 100.0 | – | – | – | – | – | – |" in md          # Table 4: the diagonal
    assert "| base | 0.067 | 0.067 | 0.067 | 0.067 |" in md           # pairs 0.2, 0, 0 at both layers
    assert "| vol_all | 0.267 | 0.267 | 0.267 | 0.267 |" in md
    assert "macro F1" in md and "| 40.0 |" in md and "| 30.0 |" in md
    assert rep["probe"]["all_linear / volume"]["volume"][2] == [3, pytest.approx(0.8)]
    for png in ("transfer_matrix.png", "probe_curves.png", "alignment.png"):
        assert (out / png).stat().st_size > 5000
    assert main(["finetune-report", str(tmp_path / "nothing"), "--out", str(out)]) == 2
