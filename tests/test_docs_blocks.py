"""The docs test's rules for sample outputs (tests/_docs_blocks.py): a shown output is what the command
prints, line for line, and a block that looks like a command's output is checked as one."""

from __future__ import annotations

import re

import _docs_blocks as db

PRINTED = "     speed  test        24 clips        1.7 MB\nreport written to report/report.md in 3.1 s\n"


def _out(text: str) -> db.Block:
    return db.Block("docs/x.md", 1, "text", text, output=True)


def test_a_shown_line_must_be_a_whole_printed_line():
    assert db.missing_output(_out("speed  test   24 clips  1.7 MB\n"), PRINTED) == []      # spaces collapse
    assert db.missing_output(_out("     speed  test        24 clips\n"), PRINTED)          # a column left out
    assert db.missing_output(_out("speed test 24 clips 1.8 MB\n"), PRINTED)               # a size that drifted
    assert db.missing_output(_out("speed test 25 clips 1.7 MB\n"), PRINTED)               # a count that drifted
    assert db.missing_output(_out("test 24 clips 1.7 MB\n"), PRINTED)                     # part of a line


def test_only_durations_may_differ():
    assert db.missing_output(_out("report written to report/report.md in 13.7 s\n"), PRINTED) == []
    assert db.missing_output(_out("report written to report/report.md in 9 s\n"), PRINTED) == []
    assert db.missing_output(_out("report written to report/other.md in 3.1 s\n"), PRINTED)   # not the path
    assert db.missing_output(_out("speed test 24 clips 1.7 MS\n"), PRINTED)


#: Lines only a toolkit command prints (its summaries): a ```text block holding one is a sample output.
OUTPUT_LINE = re.compile(r"^\s*(?:\d[\d,]* clips rendered|wrote \d+ files to|HTML page: |report written to |"
                         r"(?:PASS|FAIL)\b|\S+\s+(?:test|train|beep)\s+\d+ clips\b)")


def test_every_sample_output_in_the_docs_is_checked():
    """A ```text block that shows what a command prints is an ``output`` block after the command that prints
    it (the docs test compares them), never an unchecked copy that drifts."""
    unchecked = [f"{b.id}: {line.strip()[:80]}" for b in db.all_blocks() if b.lang == "text" and not b.output
                 for line in b.text.splitlines() if OUTPUT_LINE.match(line)]
    assert unchecked == []
    assert OUTPUT_LINE.match("  FAIL clip file missing: 1") and OUTPUT_LINE.match("     speed  test        24 clips")
    assert not OUTPUT_LINE.match("vocalgrad verify DIR [--against HUB_OR_RENDER]")   # a synopsis is no output


def test_the_sweep_tables_sample_head_is_what_report_md_prints():
    """docs/sweep.md's indented sample of a threshold table's head is report.md's, as sweep_markdown writes it."""
    from analysis.report.psychometric import sweep_markdown
    from generation.sweep_plan import sweep_levels

    tiers = {lv.tier: lv.magnitude for lv in sweep_levels("pitch") if lv.tier}
    block = {"form": "f", "threshold": "t", "bootstrap": "b", "tests": "x",
             "attributes": {"pitch": {"unit": "semitones", "tiers": tiers, "observers": [], "largest": 8.0}}}
    printed = sweep_markdown(block)
    doc = (db.ROOT / "docs" / "sweep.md").read_text(encoding="utf-8")
    sample = [line[4:] for line in doc.split("## Reading the table", 1)[1].splitlines() if line.startswith("    ")][:2]
    assert sample[0].startswith("### pitch") and sample[1].startswith("| observer")
    assert db.missing_output(_out("\n".join(sample)), printed) == []
