"""Blocked replies and answers sampled at the maker's default, as the report and the leaderboard show them."""

from __future__ import annotations

import json

import pytest

from analysis.leaderboard.page import decoding_text
from analysis.leaderboard.runs import run_rows
from analysis.report import build_report
from harness_tasks.parsing import blocked_answer, error_answer
from tests._report_helpers import clips, write_results

CATS = ("pitch", "volume")
SAMPLING = ("sampled at the maker's default: temperature left out (gemini-3.5-flash is a Gemini 3 or later model; "
            "Google recommends its default 1.0 and greedy decoding is not available); sent: {}")


def answer(doc):
    """Right, except the first source's low-tier clips: blocked on pitch (with a direction word in the
    reason, which must not be parsed), an error on volume's linear ones."""
    if doc["id"].startswith("spk00") and doc["tier"] == "low":
        if doc["category"] == "pitch":
            return blocked_answer("gemini: finishReason SAFETY; increase")
        if doc["trajectory"] == "linear":
            return error_answer("timeout")
    return doc["direction"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    path = write_results(root, "vocalgrad-openai", answer, docs=clips(sources=3, categories=CATS),
                         model_args="provider=gemini,model=gemini-3.5-flash")
    data = json.loads(path.read_text())
    data["config"]["vocalgrad_model"] = {"route": "vocalgrad-openai", "decoding": {
        "provider": "gemini", "greedy": "none", "body": {}, "sampling": SAMPLING}}
    path.write_text(json.dumps(data))
    out = tmp_path_factory.mktemp("report")
    return root, path, out, build_report([root], out, draws=200)


def test_blocked_answers_are_counted_apart_and_wrong(run):
    _, _, out, _ = run
    model = json.loads((out / "report.json").read_text())["models"][0]
    ov = model["overall"]
    n_blocked = sum(1 for d in clips(sources=3, categories=CATS)
                    if d["id"].startswith("spk00") and d["tier"] == "low" and d["category"] == "pitch")
    assert n_blocked > 0 and ov["n_blocked"] == n_blocked and ov["n_error"] > 0
    assert ov["blocked_rate"] == pytest.approx(n_blocked / ov["n"])
    assert ov["error_rate"] == pytest.approx(ov["n_error"] / ov["n"])
    pitch = model["by_category"]["pitch"]
    assert pitch["acc"] == pytest.approx(1 - n_blocked / pitch["n"])          # blocked = wrong
    assert pitch["acc_parsed"] == 1.0                                        # and out of acc_parsed
    md = (out / "report.md").read_text()
    assert "blocked by the provider" in md


def test_the_report_says_the_answers_were_sampled_at_the_makers_default(run):
    _, _, out, _ = run
    md = (out / "report.md").read_text()
    assert "sampled at the maker's default" in md and "not greedy decoding" in md


def test_the_leaderboard_shows_blocked_and_sampling(run):
    _, path, out, _ = run
    (row,) = run_rows(path, draws=200, seed=1)
    ov = json.loads((out / "report.json").read_text())["models"][0]["overall"]
    assert row.blocked_rate == pytest.approx(ov["n_blocked"] / ov["n"]) and row.blocked_rate != row.error_rate
    assert decoding_text(row.decoding).startswith("sampled at the maker's default")
    assert "greedy" not in decoding_text(row.decoding)
    assert decoding_text({"gen_kwargs": {"temperature": 0}, "model": {"greedy": "full"}}) == "greedy"


def test_the_page_shows_the_blocked_share_as_the_terminal_line_does(run, tmp_path, capsys):
    """One row in four places: the terminal line, report.md and report.json name the blocked share; so does the
    page's leaderboard row (it used to show only the parsed share)."""
    import re

    from vocalgrad_commands import cli

    root = run[0]
    assert cli.main(["report", str(root), "--out", str(tmp_path / "rep"), "--no-plots", "--html", "--draws", "200"]) == 0
    ov = json.loads((tmp_path / "rep" / "report.json").read_text())["models"][0]["overall"]
    share = f"{100 * ov['blocked_rate']:.0f} % blocked"
    label = json.loads((tmp_path / "rep" / "report.json").read_text())["models"][0]["label"]
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith(f"{label}: acc"))
    assert f"{share} by the provider (counted wrong)" in line
    page = (tmp_path / "rep" / "index.html").read_text()
    row = re.search(rf'>{re.escape(label)}</a>(.*?)</tr>', page).group(1)
    assert f"({share})" in row and f"{100 * ov['blocked_rate']:.1f} % blocked by the provider (counted wrong)" in row
