"""Report: the source-domain table (Table 15 layout) from runs labelled MODEL@DOMAIN."""

from __future__ import annotations

import pytest

from analysis.report.domains import domain_markdown, domain_rows, split_label
from tests._report_helpers import clips, write_results


def test_split_label():
    assert split_label("qwen@loquacious") == ("qwen", "loquacious")
    assert split_label("org/model@cv-spontaneous") == ("org/model", "cv-spontaneous")
    assert split_label("vocalgrad-oracle") == ("vocalgrad-oracle", None)
    assert split_label("x [swap]") == ("x [swap]", None)


def test_domain_table_from_lm_eval_outputs(tmp_path):
    from analysis.report.command import build_report

    docs = clips(sources=2, categories=("pitch", "volume"))
    always_up = write_results(tmp_path / "a", "m", lambda d: "increase", docs=docs)
    right = write_results(tmp_path / "b", "m", lambda d: d["direction"], docs=docs)
    pitch_only = write_results(tmp_path / "c", "m",
                               lambda d: d["direction"] if d["category"] == "pitch" else "decrease", docs=docs)
    rep = build_report([f"m@vctk={right}", f"m@loquacious={always_up}", f"m@cv-spontaneous={pitch_only}",
                        f"other={right}"], tmp_path / "rep", plots=False, draws=50)
    rows = rep["domains"]
    assert set(rows) == {"m"}  # 'other' names no domain
    assert rows["m"]["vctk"] == {"pitch": 1.0, "volume": 1.0, "mean": 1.0}
    assert rows["m"]["loquacious"]["mean"] == pytest.approx(0.5)
    assert rows["m"]["cv-spontaneous"] == {"pitch": 1.0, "volume": 0.5, "mean": 0.75}
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Source domains" in md
    assert "| m | VCTK | 100.0 | 100.0 | 100.0 |" in md
    assert "| m | LoquaciousSet | 50.0 | 50.0 | 50.0 |" in md
    assert "| m | CV Spontaneous Speech | 100.0 | 50.0 | 75.0 |" in md
    assert md.index("| m | VCTK") < md.index("| m | LoquaciousSet") < md.index("| m | CV Spontaneous")


def test_no_domain_labels_no_section():
    assert domain_markdown({"models": [{"label": "a", "by_category": {"pitch": {"acc": 0.5}}}]}) == ""
    assert domain_rows({"models": []}) == {}
