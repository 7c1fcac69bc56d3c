"""The leaderboard page shows the numbers of its rows: per row (found by its run file's link), the clips,
acc %, the interval and the per-category accuracies, equal to leaderboard.json and, where the answers make
them known by hand, to those values (always "increase" on a balanced set: 50 %; every answer right: 100 %)."""

from __future__ import annotations

import json
import re

import pytest

from vocalgrad_commands.cli import main

from _report_helpers import build_clips, write_results

CATS = ("pitch", "volume")


def _docs(build: str) -> list[dict]:
    return build_clips(build, categories=CATS)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    root = tmp_path_factory.mktemp("lbnum")
    a, b = _docs("A"), _docs("B")
    write_results(root / "r1", "always", lambda d: "increase", docs=a, stamp="2026-11-02T10-00-00.000000")
    write_results(root / "r2", "perfect", lambda d: d["direction"], docs=b, stamp="2026-11-03T10-00-00.000000")
    out = root / "lb"
    assert main(["leaderboard", str(root / "r1"), str(root / "r2"), "--out", str(out), "--draws", "50"]) == 0
    return {"rows": json.loads((out / "leaderboard.json").read_text())["rows"],
            "page": (out / "index.html").read_text(), "n": len(a)}


def _cells(page: str, run_id: str) -> list[str]:
    """The text of the cells of the page's row for ``run_id`` (after the model name)."""
    m = re.search(rf'<tr><th scope="row"><a href="runs/{re.escape(run_id)}\.json">[^<]*</a></th>(.*?)</tr>', page)
    assert m, f"no row for {run_id}"
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", m.group(1))]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def test_each_row_of_the_page_shows_its_numbers(board):
    assert len(board["rows"]) == 2
    for row in board["rows"]:
        cells = _cells(board["page"], row["run_id"])
        variant, build, n, acc, ci = cells[:5]
        assert (variant, build, int(n)) == (row["variant"], row["build_short"], row["n_clips"])
        assert acc == _pct(row["acc"]) and ci == f"[{_pct(row['ci'][0])}, {_pct(row['ci'][1])}]"
        by_cat = [c for c in cells[7:9]]  # the columns of the categories these runs answered
        assert by_cat == [_pct(row["by_category"][c]) for c in CATS]


def test_the_numbers_known_by_hand(board):
    rows = {r["model"]: r for r in board["rows"]}
    always, perfect = rows["always"], rows["perfect"]
    assert (always["n_clips"], perfect["n_clips"]) == (board["n"], board["n"]) == (144, 144)
    assert always["acc"] == 0.5 and always["by_category"] == {"pitch": 0.5, "volume": 0.5}
    assert perfect["acc"] == 1.0 and perfect["by_category"] == {"pitch": 1.0, "volume": 1.0}
    assert _cells(board["page"], always["run_id"])[3] == "50.0"
    assert _cells(board["page"], perfect["run_id"])[3] == "100.0"
    assert always["ci"][0] < 0.5 < always["ci"][1] and perfect["ci"] == [1.0, 1.0]
