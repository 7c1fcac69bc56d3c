"""Report wording and figures: singular heading, no stale warnings after a rerun, human mark, bias intervals."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.report import build_report
from analysis.report.loading import load_all
from analysis.report.markdown import _top_heading
from tests._report_helpers import clips, write_results

CATS = ("pitch", "volume")


def test_top_outputs_heading_agrees_in_number(tmp_path):
    assert _top_heading(1) == "The most frequent raw output"
    assert _top_heading(3) == "The 3 most frequent raw outputs"
    docs = clips(sources=2, categories=CATS)
    write_results(tmp_path / "res", "vocalgrad-constant", lambda d: "increase", docs=docs,
                  model_args="direction=increase")
    build_report([tmp_path / "res"], tmp_path / "rep", draws=200)
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "### The most frequent raw output\n" in text and "1 most frequent raw outputs" not in text


def test_rerun_into_the_same_folder_drops_the_replaced_runs_warnings(tmp_path):
    docs = clips(sources=2, categories=CATS)
    first, second = "2026-01-01T00-00-00.000000", "2026-01-02T00-00-00.000000"
    # first run without --log_samples (a warning per category), then a full rerun into the same folder
    write_results(tmp_path, "vocalgrad-oracle", lambda d: d["direction"], docs=docs, stamp=first, samples=False)
    (ev,), _ = load_all([tmp_path])
    assert sum("no sample log" in w for w in ev.warnings) == len(CATS)
    write_results(tmp_path, "vocalgrad-oracle", lambda d: d["direction"], docs=docs, stamp=second)
    (ev,), _ = load_all([tmp_path])
    assert ev.warnings == [f"results of {second} replace those of {first} (pitch, volume)"]
    assert len(ev.records) == len(docs)


def test_comparison_figure_human_mark_behind_bars_and_bias_intervals(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.collections import LineCollection
    from matplotlib.container import BarContainer, ErrorbarContainer

    from analysis.report import plots

    docs = clips(sources=2, categories=("volume", "noise"))  # the paper's humans: 100 % on both
    write_results(tmp_path / "res", "vocalgrad-oracle", lambda d: d["direction"], docs=docs)  # 100 % too
    write_results(tmp_path / "res", "vocalgrad-constant", lambda d: "increase", docs=docs,
                  model_args="direction=increase")
    rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=200)
    captured = {}
    real_save = plots.save
    plots.save = lambda fig, path: captured.setdefault("fig", fig) and path
    try:
        plots.plot_comparison(rep, tmp_path / "cmp.png")
    finally:
        plots.save = real_save
    acc_ax, bias_ax = captured["fig"].axes[:2]
    human = [c for c in acc_ax.collections if isinstance(c, LineCollection) and c.get_label().startswith("Human")]
    bars = [c for c in acc_ax.containers if isinstance(c, BarContainer)]
    assert human and bars
    assert human[0].get_zorder() < min(p.get_zorder() for b in bars for p in b.patches)  # never over a bar top
    seg = human[0].get_segments()[0]
    left = min(p.get_x() for b in bars for p in b.patches)
    assert seg[0][0] < left  # and wider than the bar group, so it stays visible
    label, intervals = None, {}
    for c in bias_ax.containers:  # each model's bars, then its interval set
        if isinstance(c, BarContainer):
            label = c.get_label()
        elif isinstance(c, ErrorbarContainer):
            intervals[label] = [(seg[0][1], seg[1][1]) for seg in c.lines[2][0].get_segments()]
    assert len(intervals) == 2  # one interval set per model
    constant = next(v for k, v in intervals.items() if "constant" in k)
    oracle = next(v for k, v in intervals.items() if "oracle" in k)
    assert all(lo == pytest.approx(hi) == pytest.approx(100.0) for lo, hi in constant)  # always "increase"
    assert all(hi - lo > 5 for lo, hi in oracle) and np.isfinite(oracle).all()  # a real interval around 50 %
