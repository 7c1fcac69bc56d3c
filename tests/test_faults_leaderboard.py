"""``vocalgrad leaderboard`` as a hostile or careless user meets it: two writers at once, models whose
names read alike, a title with YAML in it, dates that are no dates, a marker or folder leading out,
and the decoding column."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from _report_helpers import clips, write_results
from analysis.leaderboard.page import decoding_text
from analysis.leaderboard.runs import LeaderboardWarning
from vocalgrad_commands.cli import main
from generation.identity import sha256_file
from generation.ownership import MARKER, out_lock, read_marker

CATS = ("volume",)


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    root = tmp_path_factory.mktemp("lbf")
    docs = clips(sources=1, categories=CATS)
    write_results(root / "a", "Org/Model", lambda d: d["direction"], docs=docs)
    write_results(root / "b", "org-model", lambda d: "increase", docs=docs)
    return root


def _board(res, out, *extra, runs=("a",)):
    return main(["leaderboard", *[str(res / r) for r in runs], "--out", str(out), "--draws", "20", *extra])


def test_a_second_writer_of_one_out_is_refused_and_outputs_never_mix(res, tmp_path, capsys):
    out = tmp_path / "lb"
    assert _board(res, out) == 0
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".vocalgrad.lock"}
    with out_lock(out, "vocalgrad leaderboard"):  # another leaderboard writing this folder now
        capsys.readouterr()
        assert _board(res, out, runs=("a", "b")) == 2
    err = capsys.readouterr().err
    assert "being written by `vocalgrad leaderboard`" in err and len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".vocalgrad.lock"} == before
    assert read_marker(out)["kind"] == "leaderboard"


def test_models_whose_names_slug_alike_get_their_own_run_files(res, tmp_path):
    out = tmp_path / "lb"
    assert _board(res, out, runs=("a", "b")) == 0
    runs = sorted((out / "runs").glob("*.json"))
    assert len(runs) == 2  # was: one file, the second run overwriting the first
    assert {json.loads(p.read_text())["model"] for p in runs} == {"Org/Model", "org-model"}
    assert all(p.name.startswith("org-model__default__") for p in runs)


@pytest.mark.parametrize("title", ["Lab: results #1", "Board\nsdk: docker\napp_file: evil.py", "'quoted' & <b>"])
def test_the_space_card_is_valid_yaml_and_the_title_reaches_the_page(title, res, tmp_path):
    import html

    out = tmp_path / "lb"
    assert _board(res, out, "--title", title) == 0
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["title"] == title and front["sdk"] == "static" and front["app_file"] == "index.html"  # no injection
    assert set(front) == {"title", "emoji", "colorFrom", "colorTo", "sdk", "app_file", "pinned", "tags"}
    assert yaml.safe_load((out / "results-dataset-card.md").read_text().split("---\n")[1])["configs"]
    page = (out / "index.html").read_text()
    assert f"<h1>{html.escape(title, quote=True)}</h1>" in page and "<b>" not in page  # was: never on the page


@pytest.mark.parametrize("date", [1e20, -1e300, "junk", True, float("nan")])
def test_an_unreadable_date_is_unknown_with_a_warning(date, res, tmp_path, capsys):
    src = tmp_path / "r"
    write_results(src, "m", lambda d: d["direction"], docs=clips(sources=1, categories=CATS), stamp="junk")
    (rfile,) = src.rglob("results_*.json")
    data = json.loads(rfile.read_text())
    data["date"] = date
    rfile.write_text(json.dumps(data))
    with pytest.warns(LeaderboardWarning, match="is not a readable time") as got:
        assert main(["leaderboard", str(src), "--out", str(tmp_path / "lb"), "--draws", "20"]) == 0  # was: OverflowError
    (row,) = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())["rows"]
    assert row["date"] == "unknown" and len(got) == 1 and "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("escape", ["../victim.txt", "runs/../../victim.txt", "ABS"])
def test_a_marker_naming_a_file_outside_is_refused_and_nothing_outside_is_touched(escape, res, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "lb"
    assert _board(res, out) == 0
    marker = read_marker(out)
    marker["files"][str(victim) if escape == "ABS" else escape] = sha256_file(victim)
    (out / MARKER).write_text(json.dumps(marker))
    capsys.readouterr()
    for force in ([], ["--force"]):
        assert _board(res, out, *force) == 2
        assert "is not a marker the toolkit wrote" in capsys.readouterr().err
    assert victim.read_text() == "precious"


def test_a_runs_folder_linked_outside_is_never_written_through(res, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "lb"
    out.mkdir()
    os.symlink(elsewhere, out / "runs")
    assert _board(res, out, "--force") == 2
    assert "through a symbolic link" in capsys.readouterr().err and not any(elsewhere.iterdir())


def test_the_decoding_column_is_short_with_the_full_record_on_hover(res, tmp_path):
    assert decoding_text({"gen_kwargs": {}, "batch_size": 1, "model": {"greedy": True}}) == "greedy"
    assert decoding_text({"gen_kwargs": "temperature=0.7,max_gen_toks=64", "batch_size": 8}) == "sampled T=0.7, 64 tok, batch 8"
    assert decoding_text({"gen_kwargs": {"max_gen_toks": 128}, "model": {"scoring": "logits"}}) == "scoring logits, 128 tok"
    src = tmp_path / "r"
    write_results(src, "m", lambda d: d["direction"], docs=clips(sources=1, categories=CATS))
    (rfile,) = src.rglob("results_*.json")
    data = json.loads(rfile.read_text())
    long = {"decoding": {"greedy": True, "body": {"max_tokens": 128, "extra": "x" * 300, "q": '"<&>'}}}
    data.setdefault("config", {}).update(gen_kwargs={"max_gen_toks": 128}, batch_size=1, vocalgrad_model=long)
    rfile.write_text(json.dumps(data))
    assert main(["leaderboard", str(src), "--out", str(tmp_path / "lb"), "--draws", "20"]) == 0
    page = (tmp_path / "lb" / "index.html").read_text()
    assert ">greedy, 128 tok<" in page and "x" * 300 in page and "&quot;&lt;&amp;&gt;" in page  # hover: escaped
    (run,) = (tmp_path / "lb" / "runs").glob("*.json")
    assert json.loads(run.read_text())["decoding"]["model"] == long["decoding"]  # the full record


def test_the_upload_plan_never_sends_a_file_from_outside(res, tmp_path, capsys):
    out = tmp_path / "lb"
    assert _board(res, out) == 0
    secret = tmp_path / "secret.txt"
    secret.write_text("token")
    (out / "runs" / "zz.json").symlink_to(secret)  # a link planted among the run files
    capsys.readouterr()
    assert _board(res, out, "--push-results", "org/runs", "--dry-run") == 0
    sent = capsys.readouterr().out
    assert "runs/zz.json" not in sent and "dry run: one commit to dataset org/runs: 2 files" in sent
    assert secret.read_text() == "token"
