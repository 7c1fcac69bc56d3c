"""A run whose answers are (mostly) error answers is not a measurement: the report and the leaderboard
show its error share and no verdict against chance above the limit (:data:`analysis.report.stats.MAX_ERROR_RATE`),
per category too, and ``vocalgrad-eval`` ends with one line when every request failed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _report_helpers import clips, write_results
from analysis.report.stats import MAX_ERROR_RATE
from vocalgrad_commands.cli import main
from harness_tasks.parsing import error_answer

DOCS = clips(sources=1, categories=("pitch", "volume"))


def _answer_with_errors(share: float):
    """Right answers, except an error answer for the first ``share`` of each category's clips."""
    seen: dict[str, int] = {}

    def answer(d):
        i = seen[d["category"]] = seen.get(d["category"], -1) + 1
        return error_answer("HTTP 500") if i < share * 24 else d["direction"]  # 24 clips per category here
    return answer


@pytest.mark.parametrize("share", [1.0, 0.25])
def test_report_gives_no_verdict_to_a_run_of_error_answers(share, tmp_path, capsys):
    res = write_results(tmp_path / "res", "srv", _answer_with_errors(share), docs=DOCS)
    assert main(["report", str(res), "--out", str(tmp_path / "rep"), "--draws", "20", "--no-plots"]) == 0
    err = capsys.readouterr().err
    m = json.loads((tmp_path / "rep" / "report.json").read_text())["models"][0]
    ov = m["overall"]
    assert ov["error_rate"] == pytest.approx(share) and ov["error_rate"] > MAX_ERROR_RATE
    want = f"n/a: {100 * share:.0f} % error answers"
    assert ov["verdict"] == want  # was: "below chance" at 0 %
    assert all(g["verdict"] == want for g in m["by_category"].values())  # per category too
    assert "below chance" not in (tmp_path / "rep" / "report.md").read_text().split("## Summary")[1]
    assert f"srv: acc {100 * ov['acc']:.1f} %" in err and want in err and "above the 10 % limit" in err


def test_report_keeps_the_verdict_under_the_limit(tmp_path):
    res = write_results(tmp_path / "res", "srv", _answer_with_errors(0.05), docs=DOCS)
    assert main(["report", str(res), "--out", str(tmp_path / "rep"), "--draws", "20", "--no-plots"]) == 0
    ov = json.loads((tmp_path / "rep" / "report.json").read_text())["models"][0]["overall"]
    assert 0 < ov["error_rate"] <= MAX_ERROR_RATE and ov["verdict"] == "above chance"


def test_leaderboard_shows_the_error_share_and_no_verdict(tmp_path, capsys):
    res = write_results(tmp_path / "res", "srv", lambda d: error_answer("HTTP 500"), docs=DOCS)
    assert main(["leaderboard", str(res), "--out", str(tmp_path / "lb"), "--draws", "20"]) == 0
    (row,) = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())["rows"]
    assert row["verdict"] == "n/a: 100 % error answers" and row["error_rate"] == 1.0  # was: "below chance"
    page = (tmp_path / "lb" / "index.html").read_text()
    assert "100 % error answers" in page and ">below<" not in page
    assert "error_rate" in (tmp_path / "lb" / "leaderboard.csv").read_text().splitlines()[0]


def _fake_lm_eval(prompt: str):
    """lm-eval's CLI stand-in: one adapter answers four requests (the oracle: an error answer for a
    prompt that names no attribute)."""
    from harness_tasks.clip_audio import ClipAudio
    from harness_tasks.models.oracle import OracleLM

    def run():
        clip = ClipAudio("c", {"array": np.sin(np.arange(8000) / 5).astype(np.float32), "sampling_rate": 8000})
        OracleLM().generate_until([(prompt, {"until": [], "max_gen_toks": 8}, {"audio": [clip]})] * 4,
                                  disable_tqdm=True)
    return run


@pytest.mark.parametrize("prompt, code", [("say hi", 2), (None, 0)])
def test_eval_ends_with_one_line_when_every_request_failed(prompt, code, monkeypatch, capsys):
    import lm_eval.__main__ as lm_main
    import vocalgrad
    from harness_tasks.cli import main as eval_main

    monkeypatch.setattr(lm_main, "cli_evaluate", _fake_lm_eval(prompt or vocalgrad.default_prompt("volume")))
    assert eval_main(["--model", "vocalgrad-oracle", "--output_path", "x"]) == code
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("vocalgrad-eval: error")]
    if code:
        assert len(err) == 1 and "every one of the 4 requests failed (first: c: " in err[0]
    else:
        assert not err
