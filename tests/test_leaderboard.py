"""``vocalgrad leaderboard``: rows by model × variant × build (by content), the folder, the upload plan, the page."""

from __future__ import annotations

import csv
import hashlib
import json
import random
from pathlib import Path

import pytest

from analysis.leaderboard.upload import plan
from vocalgrad_commands.cli import main
from generation.identity import build_digest, short

from _html_helpers import column_values, load_page, widths_at
from _listen_helpers import chromium
from _report_helpers import build_clips, write_results

CATS = ("pitch", "volume")


def _docs(build: str) -> list[dict]:
    return build_clips(build, categories=CATS)


def _flip(d: str) -> str:
    return "decrease" if d == "increase" else "increase"


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """Three results folders: two models on build A, one of them again on build B; out = the leaderboard."""
    root = tmp_path_factory.mktemp("board")
    a, b = _docs("A"), _docs("B")
    rng = random.Random(3)
    write_results(root / "run1", "good", lambda d: d["direction"] if rng.random() < 0.9 else _flip(d["direction"]),
                  docs=a, stamp="2026-11-01T10-00-00.000000")
    write_results(root / "run2", "always", lambda d: "increase", docs=a, stamp="2026-11-02T10-00-00.000000")
    write_results(root / "run3", "good", lambda d: d["direction"], docs=b, stamp="2026-11-03T10-00-00.000000",
                  data={"build": "hub-b", "source_kind": "demo", "source_kind_text": "demo voices (synthetic)",
                        "toolkit_version": "9.9.9"})
    out = root / "lb"
    return {"root": root, "out": out, "a": a, "b": b}


def _run(board, capsys, *extra) -> tuple[int, str, str]:
    r = board["root"]
    rc = main(["leaderboard", str(r / "run1"), str(r / "run2"), str(r / "run3"), "--out", str(board["out"]),
               "--draws", "200", *extra])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_three_runs_two_builds_three_rows(board, capsys):
    rc, _, err = _run(board, capsys)
    assert rc == 0, err
    table = json.loads((board["out"] / "leaderboard.json").read_text())
    rows = table["rows"]
    assert len(rows) == 3
    dig_a = build_digest((d["id"], d["sha256"]) for d in board["a"])
    dig_b = build_digest((d["id"], d["sha256"]) for d in board["b"])
    assert dig_a != dig_b
    assert {(r["model"], r["build"]) for r in rows} == {("good", dig_a), ("always", dig_a), ("good", dig_b)}
    good_b = next(r for r in rows if r["build"] == dig_b)
    assert good_b["acc"] == 1.0 and good_b["n_clips"] == len(board["b"]) and good_b["n_sources"] == 3
    # what vocalgrad-eval recorded of the data and the toolkit goes with the row; the page marks the demo build
    assert good_b["data"]["source_kind"] == "demo voices (synthetic)" and good_b["toolkit"] == "9.9.9"
    assert "not comparable with the paper" in (board["out"] / "index.html").read_text()
    always = next(r for r in rows if r["model"] == "always")
    assert always["acc"] == 0.5 and always["verdict"] == "not different from chance"
    assert always["ci"][0] < 0.5 < always["ci"][1]
    assert table["paper"]["copied"] is True and "Kimi-Audio" in table["paper"]["category_acc"]
    assert f"2 dataset build(s) ({', '.join(sorted([short(dig_a), short(dig_b)]))})" in err
    # one file per run; the CSV has the same rows
    runs = sorted(p.name for p in (board["out"] / "runs").glob("*.json"))
    assert runs == sorted(f"{r['run_id']}.json" for r in rows)
    with open(board["out"] / "leaderboard.csv", newline="") as fh:
        got = list(csv.DictReader(fh))
    assert {(r["model"], r["build"]) for r in got} == {(r["model"], r["build"]) for r in rows}
    # the Space card is a static Space's front matter
    card = (board["out"] / "README.md").read_text()
    assert card.startswith("---\n") and "sdk: static\n" in card and "app_file: index.html\n" in card


def test_same_model_same_build_twice_keeps_the_later_run(board, capsys, tmp_path):
    r = board["root"]
    write_results(tmp_path / "again", "good", lambda d: "decrease", docs=board["a"], stamp="2026-11-05T10-00-00.000000")
    out = tmp_path / "lb"
    rc = main(["leaderboard", str(r / "run1"), str(tmp_path / "again"), "--out", str(out), "--draws", "50"])
    err = capsys.readouterr().err
    assert rc == 0, err
    rows = json.loads((out / "leaderboard.json").read_text())["rows"]
    assert len(rows) == 1 and rows[0]["acc"] == 0.5 and rows[0]["date"].startswith("2026-11-05")
    assert len(rows[0]["superseded"]) == 1 and "run1" in rows[0]["superseded"][0]
    assert "is replaced by the later run" in err


def test_upload_plan_is_the_commits_a_push_would_send(board, capsys):
    from huggingface_hub import CommitOperationAdd

    rc, out, err = _run(board, capsys, "--push-space", "org/board", "--push-results", "org/board-runs", "--dry-run")
    assert rc == 0, err
    commits = plan(board["out"], space="org/board", results="org/board-runs")
    assert [(c["repo_id"], c["repo_type"]) for c in commits] == [("org/board", "space"), ("org/board-runs", "dataset")]
    space, results = commits
    assert all(isinstance(op, CommitOperationAdd) for c in commits for op in c["operations"])
    assert {op.path_in_repo for op in space["operations"]} == {"index.html", "leaderboard.json", "leaderboard.csv",
                                                               "README.md"}
    run_files = {op.path_in_repo for op in results["operations"]} - {"README.md"}
    assert run_files == {f"runs/{p.name}" for p in (board["out"] / "runs").glob("*.json")} and len(run_files) == 3
    for f in space["files"]:
        data = (board["out"] / f["path_in_repo"]).read_bytes()
        assert f["bytes"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
    assert "dry run: one commit to space org/board: 4 files" in out
    assert "dry run: one commit to dataset org/board-runs: 4 files" in out


def test_out_must_be_new_empty_or_a_leaderboard(board, capsys, tmp_path):
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "NOTES.md").write_text("mine")
    rc = main(["leaderboard", str(board["root"] / "run1"), "--out", str(foreign)])
    err = capsys.readouterr().err
    assert rc == 2 and "is not a leaderboard folder" in err and err.count("\n") == 1
    assert sorted(p.name for p in foreign.iterdir()) == ["NOTES.md"]
    rc = main(["leaderboard", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")])
    assert rc == 2 and "no such file or folder" in capsys.readouterr().err
    rc = main(["leaderboard", str(board["root"] / "run1"), "--out", str(tmp_path / "y"), "--dry-run"])
    assert rc == 2 and "--dry-run needs --push-space" in capsys.readouterr().err


def test_page_in_headless_chromium(board, capsys, tmp_path):
    rc, _, err = _run(board, capsys)
    assert rc == 0, err
    with chromium(tmp_path, logs=True) as driver:
        seen = load_page(driver, board["out"] / "index.html")
        assert seen["severe"] == [] and seen["failed"] == [] and seen["remote"] == []
        names = column_values(driver, "table.leaderboard", 0)
        assert sum("paper" not in n for n in names) == 3 and sum("paper" in n for n in names) == 6
        builds = column_values(driver, "table.leaderboard", 2)
        assert len({b for b, n in zip(builds, names) if "paper" not in n}) == 2
        driver.find_element("xpath", "//table[1]//th/button[normalize-space()='acc\u00a0%']").click()
        accs = [float(v) for v in column_values(driver, "table.leaderboard", 4)]
        assert accs == sorted(accs, reverse=True)


def test_the_table_fits_a_1400_pixel_window(board, capsys, tmp_path):
    """Three runs and the paper's rows, no sideways scrolling at 1,400 px; the short heads and the day-only
    dates keep their full text as hover text."""
    rc, _, err = _run(board, capsys)
    assert rc == 0, err
    with chromium(tmp_path) as driver:
        driver.get((board["out"] / "index.html").resolve().as_uri())
        w = widths_at(driver, 1400, "table.leaderboard")
        assert w["inner"] >= 1380, w          # the window really is that wide
        assert w["box_scroll"] <= w["box"] and w["page"] <= w["inner"], w
        heads = driver.execute_script("return Array.from(document.querySelectorAll('table.leaderboard thead th'))"
                                      ".map(th => [th.textContent.trim(), (th.querySelector('abbr') || {}).title])")
        assert ["dist.", "distortion"] in heads and ["pitch", None] in heads
        dates = driver.execute_script("return Array.from(document.querySelectorAll('table.leaderboard tbody tr'))"
                                      ".slice(0, 3).map(r => [r.cells[r.cells.length - 1].textContent,"
                                      " r.cells[r.cells.length - 1].title])")
        assert all(len(d) == 10 and t.startswith(d) and len(t) > 10 for d, t in dates), dates
