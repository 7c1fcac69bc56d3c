"""The calibration program (benchmarks/calibration.py) on small runs: the toolkit's methods pass it, the
mistakes it guards against fail it, it is seeded and pluggable; and one run's interval is the same in the
report and the leaderboard (one settings object)."""

from __future__ import annotations

import json
import sys
import types
from functools import partial
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibration as cal  # noqa: E402
import calibration_designs as designs  # noqa: E402


def _rate(run, sims: int, name: str = "check", kind: str = "coverage") -> dict[str, dict]:
    cell = {"name": name, "design": "test", "kind": kind, "nominal": 0.95 if kind == "coverage" else 0.05,
            "sims": sims, "run": run}
    return {r["statistic"]: r for r in cal.run_cells([cell], workers=1)}


def test_clustered_interval_covers_when_sources_differ():
    """At 20 sources that differ (sd 0.75 on the logit scale) the clustered interval covers the population
    accuracy about 95 % of the time; an interval that resamples clips (where sources must be resampled)
    covers about half the time and fails this check."""
    rows = _rate(partial(designs.clustered_accuracy, sources=20, sd=designs.SOURCE_SD, categories=3), sims=120)
    r = rows["accuracy, clustered (jackknife t)"]
    assert r["defined"] == 120
    assert 0.89 <= r["actual"] <= 1.0, r  # 95 % with 120 simulations: 3 Monte-Carlo s.e. is 6 points


def test_clustered_interval_is_withheld_below_twenty_sources():
    rows = _rate(partial(designs.clustered_accuracy, sources=5, sd=0.0), sims=3)
    assert rows["accuracy, clustered (jackknife t)"]["verdict"] == "withheld"


def test_chance_flags_keep_their_family_wise_error():
    """A coin over 9 categories: Holm's flags and the clustered max-T flags flag a category in about 5 % of
    simulations; without an adjustment it would be about 37 % (1 - 0.95^9) and fail."""
    rows = _rate(partial(designs.chance_flag_errors, sources=20, sd=0.0, draws=400), sims=120, kind="size")
    for name in ("exact binomial + Holm", "clustered max-T"):
        assert rows[name]["actual"] <= 0.12, rows[name]  # 5 % + 3.5 Monte-Carlo s.e. at 120 simulations


def test_runs_are_seeded_per_cell_not_per_worker():
    cell = {"name": "annotators", "design": "test", "kind": "size", "nominal": 0.05, "sims": 60,
            "run": partial(designs.annotator_tests, sources=1, sd=0.0, draws=0)}
    one = cal.run_cells([cell], workers=1, chunk=7)
    two = cal.run_cells([cell], workers=2, chunk=25)
    assert one == two and one[0]["sims"] == 60


def _cheap(rng):
    return {"coin": bool(rng.random() < 0.5)}


def test_providers_are_pluggable_and_a_missing_one_is_skipped(monkeypatch):
    mod = types.ModuleType("fake_cells")
    mod.calibration_cells = lambda quick: [
        {"name": "fake", "design": "d", "kind": "size", "nominal": 0.05, "sims": 10 if quick else 20, "run": _cheap}]
    monkeypatch.setitem(sys.modules, "fake_cells", mod)
    cells = cal.gather_cells(True, providers=[("fake_cells", "calibration_cells"), ("no_such_module", "cells"),
                                              ("fake_cells", "no_such_function")])
    assert [c["name"] for c in cells] == ["fake"] and cells[0]["sims"] == 10
    (row,) = cal.run_cells(cells, workers=1)
    assert row["verdict"] == "off" and 0.1 < row["actual"] < 0.9  # a coin "rejects" half the time
    assert "| fake | d | coin | 5 % |" in cal.markdown([row])
    mod.calibration_cells = lambda quick: [{"name": "bad", "kind": "size"}]
    with pytest.raises(ValueError, match="lacks"):
        cal.gather_cells(True, providers=[("fake_cells", "calibration_cells")])


def test_measured_cells_of_a_provider_become_rows_with_their_verdict(monkeypatch):
    """The sweep fit simulates by itself and hands over measured cells: they pass the gate and are judged by
    the same bands (a bias row by +-5 %)."""
    mod = types.ModuleType("fake_measured")
    base = {"method": "threshold interval", "design": "20 sources", "nominal": 0.95, "mc_se": 0.01, "n_sims": 500}
    mod.calibration_cells = lambda quick: [
        {**base, "kind": "coverage", "actual": 0.95}, {**base, "kind": "coverage", "actual": 0.85},
        {**base, "kind": "bias", "nominal": 0.0, "actual": 0.012, "truth": "lapse 0.2"},
        {**base, "kind": "bias", "nominal": 0.0, "actual": 0.30},
        {**base, "kind": "size", "nominal": 0.05, "actual": 0.0, "at_most": True},
        {**base, "kind": "coverage", "actual": 1.0, "n_sims": 12}]
    monkeypatch.setitem(sys.modules, "fake_measured", mod)
    cells = cal.gather_cells(True, providers=[("fake_measured", "calibration_cells")])
    rows = [cal.measured_row(c) for c in cells]
    # an upper-bound claim met by 0 %; 12 of 12 covered is not "off" (its s.e. is a binomial one, not 0)
    assert [r["verdict"] for r in rows] == ["ok", "off", "ok", "off", "ok", "borderline"]
    assert rows[2]["statistic"] == "threshold interval (lapse 0.2)" and rows[2]["sims"] == 500
    assert "+1.2 % (±1.0)" in cal.markdown(rows)


def test_report_and_leaderboard_print_the_same_interval(tmp_path):
    """One settings object (harness_tasks.stat_settings.STATS): with their default options the report and the
    leaderboard give the same run the same interval, to the last digit."""
    import random

    from _report_helpers import clips, write_results

    from analysis.report import build_report
    from vocalgrad_commands.cli import main
    from harness_tasks.stat_settings import STATS

    rng = random.Random(7)
    docs = clips(sources=3, categories=("pitch", "volume"))
    write_results(tmp_path / "run", "good", lambda d: d["direction"] if rng.random() < 0.8 else "no idea",
                  docs=docs)
    rep = build_report([tmp_path / "run"], tmp_path / "rep", plots=False)
    assert rep["settings"]["bootstrap_draws"] == STATS.draws and rep["settings"]["seed"] == STATS.seed
    assert main(["leaderboard", str(tmp_path / "run"), "--out", str(tmp_path / "lb")]) == 0
    (row,) = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())["rows"]
    on_disk = json.loads((tmp_path / "rep" / "report.json").read_text())["models"][0]["overall"]
    assert row["ci"] == on_disk["ci"]["acc"]["binomial"] == rep["models"][0]["overall"]["ci"]["acc"]["binomial"]
    assert row["acc"] == on_disk["acc"]
