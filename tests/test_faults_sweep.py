"""Bad input around the magnitude sweeps: each fails in one line naming the field or option, before any work."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from generation import attributes
from generation.attributes import AttributeDeclarationError
from generation.attributes.sweep import Sweep

ROOT = Path(__file__).resolve().parents[1]


def _with_sweep(sweep):
    return replace(attributes.get("brightness"), sweep=sweep)


def test_a_sweep_without_the_tiers_as_points_names_the_tier():
    with pytest.raises(AttributeDeclarationError, match=r"'brightness': sweep: sweep: tier low .* not exactly one point"):
        _with_sweep(Sweep((0.0, 1.0, 3.0, 5.0, 8.0, 12.0, 14.0), "dB/octave", lambda m: (-m / 2, m / 2)))


def test_a_sweep_without_a_zero_control_or_out_of_order_is_refused():
    with pytest.raises(AttributeDeclarationError, match="must start at 0"):
        _with_sweep(Sweep((2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0), "dB/octave", lambda m: (-m / 2, m / 2)))
    with pytest.raises(AttributeDeclarationError, match="no level beyond the high tier"):
        _with_sweep(Sweep((0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0), "dB/octave", lambda m: (-m / 2, m / 2)))


def test_render_trajectories_without_sweep_fails_before_writing(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "vocalgrad_commands.cli", "render", "--source", "demo", "--categories",
                           "volume", "--trajectories", "linear", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "--trajectories applies to --sweep renders only" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_sweep_render_refuses_a_folder_of_the_paper_set(tmp_path):
    from generation.render import RenderError, render

    render("demo", tmp_path, categories=["volume"], n_sources=1, jobs=1, progress=False)
    with pytest.raises(RenderError, match=r"holds a render with sweep=None, this run asks for sweep="):
        render("demo", tmp_path, categories=["volume"], n_sources=1, jobs=1, progress=False, sweep=True)


def test_unknown_sweep_trajectory_is_named():
    from generation.sweep_plan import sweep_trajectories

    with pytest.raises(ValueError, match="unknown zigzag; choose from linear"):
        sweep_trajectories(["zigzag"])


# ---- degenerate sweep answers: one clear line in the report's threshold table (issue 35) -------------------
def _sweep_docs(levels=None, directions=("increase", "decrease")):
    """Docs of a 3-source pitch sweep (every level x 4 trajectories x ``directions``), as the sweep configs hold."""
    import vocalgrad
    from generation.sweep_plan import sweep_levels

    return [{"id": vocalgrad.clip_id(f"spk{s:02d}_{s:02d}", "pitch", traj, lv.token, d), "category": "pitch",
             "direction": d, "label": d, "tier": lv.token, "trajectory": traj, "source_id": f"spk{s:02d}_{s:02d}",
             "level_null": bool(levels == "null" and lv.magnitude > 0)}
            for s in range(3) for lv in sweep_levels("pitch")
            if levels in (None, "null") or lv.token in levels for d in directions for traj in vocalgrad.TRAJECTORIES]


def _hears(doc):
    """Right from 3 semitones on, alternating answers below."""
    m = float(doc["tier"][1:].replace("p", "."))
    flip = {"increase": "decrease", "decrease": "increase"}
    return doc["direction"] if m >= 3 or doc["trajectory"] in ("linear", "jump") else flip[doc["direction"]]


STAMP = "2026-01-01T00-00-00.000000"
LOG = f"samples_vocalgrad_sweep_pitch_{STAMP}.jsonl"
DEGENERATE = {  # model -> (docs, answer, the line its row must carry after "no threshold: ")
    "zero-only": (_sweep_docs(["m0"]), _hears, "only zero-change clips (24): no change to hear, so no threshold can "
                  "be fitted; sweep clips with non-zero magnitudes are needed"),
    "one-level": (_sweep_docs(["m0", "m4"]), _hears, "answers at one non-zero magnitude only (4): a threshold needs "
                  "at least two magnitudes (a function's rise cannot be placed from one point)"),
    "unparsed": (_sweep_docs(), lambda d: "I cannot tell.", "all 192 answers at non-zero magnitudes are unparsed "
                 "(no direction): no threshold can be fitted"),
    "nan": (_sweep_docs(), lambda d: "NAN", "all 192 answers at non-zero magnitudes are unparsed (no direction): "
            "no threshold can be fitted"),
    "says-increase": (_sweep_docs(), lambda d: "increase", 'all 192 parsed answers are "increase", on increase and '
                      "decrease clips alike: they do not depend on the direction, so no threshold can be fitted"),
    "says-decrease": (_sweep_docs(), lambda d: "Decrease.", 'all 192 parsed answers are "decrease", on increase and '
                      "decrease clips alike: they do not depend on the direction, so no threshold can be fitted"),
    "increases-only": (_sweep_docs(directions=("increase",)), _hears, "no parsed answers on decrease clips: bias and "
                       "sensitivity cannot be told apart, no threshold fitted"),
    "null-levels": (_sweep_docs("null"), _hears, "all 192 clips at non-zero magnitudes are null levels (level_null: "
                    "the level cannot change their source), so no threshold can be fitted"),
    "empty-log": (_sweep_docs(), _hears, f"its vocalgrad_sweep_pitch run (results_{STAMP}.json) has no answers: the "
                  f"sample log {LOG} is empty"),
    "no-log": (_sweep_docs(), _hears, f"its vocalgrad_sweep_pitch run (results_{STAMP}.json) has no answers: the "
               f"sample log {LOG} is missing (run with --log_samples)"),
}


def test_degenerate_sweep_answers_get_a_line_saying_why_there_is_no_threshold(tmp_path):
    import json

    from _report_helpers import write_results
    from analysis.report.command import build_report

    for model, (docs, answer, _) in DEGENERATE.items():
        write_results(tmp_path / "results", model, answer, docs=docs, variant="sweep", stamp=STAMP)
    log = tmp_path / "results"
    (log / "empty-log" / LOG).write_text("")
    (log / "no-log" / LOG).unlink()
    nan = log / "nan" / LOG  # NaN outputs, no logged record: the loader scores the raw output again
    lines = [json.loads(t) for t in nan.read_text().splitlines()]
    for line in lines:
        line["filtered_resps"], line["resps"] = [float("nan")], [[float("nan")]]
        for k in ("acc_parsed", "balanced_acc", "increase_ratio"):
            del line[k]
    nan.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    good = tmp_path / "good"  # a model that hears: its row is fitted, the section is not all excuses
    write_results(good, "hears", _hears, docs=_sweep_docs(), variant="sweep", stamp=STAMP)

    report = build_report([log, good], tmp_path / "report", plots=False, draws=0)
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    rows = {r.split(" | ")[0].strip("| "): r.split(" | ")[1] for r in md.splitlines() if r.startswith("| ")}
    for model, (*_, line) in DEGENERATE.items():
        assert rows[model] == "no threshold: " + line, (model, rows[model])
    assert rows["hears"][0].isdigit() and report["psychometric"]["attributes"]["pitch"]["observers"][-1]["reached"]
    entries = {o["label"]: o for o in report["psychometric"]["attributes"]["pitch"]["observers"]}
    for model, (*_, line) in DEGENERATE.items():  # report.json says the same
        assert entries[model]["problem"] == line and entries[model]["threshold"] is None, model
