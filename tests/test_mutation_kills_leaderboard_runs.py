"""Leaderboard rows (analysis/leaderboard/runs.py) on small results folders and synthetic rows: what mutation
testing found unchecked (docs/testing.md): the date read from lm-eval's seconds or the file name, the toolkit
and decoding records, the data facts shown, the merge of runs by build (latest stands, unknown builds never
merged), the order of the rows and the run id."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pytest

from _report_helpers import clips, write_results
from analysis.leaderboard import runs as R
from generation.identity import build_digest


def test_date_from_seconds_the_file_name_or_unknown():
    f = Path("results_2026-12-02T00-55-30.136372.json")
    assert R._date({"date": 0}, f) == "1970-01-01T00:00:00Z"
    assert R._date({"date": 86461.9}, Path("x.json")) == "1970-01-02T00:01:01Z"
    assert R._date({}, f) == "2026-12-02T00:55:30Z"
    assert R._date({"date": True}, f) == "2026-12-02T00:55:30Z"          # a bool is no time
    with pytest.warns(R.LeaderboardWarning, match="date 1e\\+20 is not a readable time"):
        assert R._date({"date": 1e20}, Path("plain.json")) == "unknown"
    with pytest.warns(R.LeaderboardWarning, match="date 'soon'"):
        assert R._date({"date": "soon"}, Path("plain.json")) == "unknown"
    with pytest.warns(R.LeaderboardWarning):
        assert R._date({}, Path("results_2026-13-45T99-00-00.json")) == "unknown"
    long = "y" * 60
    with pytest.warns(R.LeaderboardWarning, match=f"date '{'y' * 39} is not a readable time"):
        assert R._date({"date": long}, Path("plain.json")) == "unknown"      # shown cut to 40 characters
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert R._date({}, Path("plain.json")) == "unknown"                # nothing to read: no warning


def test_toolkit_decoding_and_data_facts():
    assert R._toolkit({}) == "unknown"
    assert R._toolkit({"vocalgrad_data": {"toolkit_version": "1.2"}}) == "1.2"
    assert R._toolkit({"vocalgrad_data": {"toolkit_version": ""}, "config": {"vocalgrad_model": {"toolkit": "3"}}}) \
        == "3"
    assert R._toolkit({"vocalgrad_data": "1.2", "config": None}) == "unknown"
    assert R._decoding({}) == {"gen_kwargs": {}, "batch_size": None}
    assert R._decoding({"config": {"gen_kwargs": {"temperature": 0}, "batch_size": 4,
                                   "vocalgrad_model": {"decoding": {"do_sample": False}}}}) == {
        "gen_kwargs": {"temperature": 0}, "batch_size": 4, "model": {"do_sample": False}}
    assert R._decoding({"vocalgrad_model": {"decoding": {"top_p": 1}}})["model"] == {"top_p": 1}
    assert "model" not in R._decoding({"config": {"vocalgrad_model": {"decoding": {}}}})
    facts = {"dataset": "d", "build": None, "n_clips": 0, "build_digest": "ab", "source_kind": "demo",
             "source_kind_text": "demo voices (synthetic)", "other": 1}
    assert R._data_facts(facts) == {"dataset": "d", "n_clips": 0, "build_digest": "ab",
                                    "source_kind": "demo voices (synthetic)"}
    assert R._data_facts({"source_kind": "hub"}) == {"source_kind": "hub"}
    assert R._data_facts({"source_kind": "unknown"}) == {}


def _row(model, build, date, acc=0.5, variant="default", rfile=None):
    return R.Row(model=model, variant=variant, build=build, n_clips=10, n_sources=2, acc=acc, ci=None,
                 verdict="n/a", by_category={}, decoding={}, toolkit="t", date=date, data={},
                 results_file=rfile or f"{model}-{date}.json")


def test_gather_merges_by_build_keeps_the_latest_and_sorts(monkeypatch):
    from analysis.report import loading

    made = {
        "f1": [_row("m", "b1", "2026-01-01T00:00:00Z", 0.6, rfile="f1")],
        "f2": [_row("m", "b1", "2026-01-03T00:00:00Z", 0.7, rfile="f2")],
        "f3": [_row("m", "b1", "2026-01-02T00:00:00Z", 0.1, rfile="f3")],
        "f4": [_row("m", None, "2026-01-04T00:00:00Z", 0.9, rfile="f4"),
               _row("m", None, "2026-01-05T00:00:00Z", 0.8, rfile="f4b")],
        "f5": [_row("m", "b1", "2026-01-06T00:00:00Z", float("nan"), variant="swap", rfile="f5"),
               _row("a", "b2", "2026-01-06T00:00:00Z", 0.7, rfile="f5a"),
               _row("m", "b2", "2026-01-06T00:00:00Z", 0.7, rfile="f5b"),
               _row("z", "b3", "2026-01-06T00:00:00Z", 0.0, rfile="f5z")],
    }
    monkeypatch.setattr(loading, "results_files", lambda path: [Path(path)])
    monkeypatch.setattr(R, "run_rows", lambda rfile, label, *, draws, seed: made[str(rfile)])
    rows, notes = R.gather(["f1", "f2", "f3", "f4", "f5"])
    got = [(r.model, r.variant, r.build, r.results_file) for r in rows]
    assert got == [("m", "default", None, "f4"), ("m", "default", None, "f4b"), ("a", "default", "b2", "f5a"),
                   ("m", "default", "b1", "f2"), ("m", "default", "b2", "f5b"), ("z", "default", "b3", "f5z"),
                   ("m", "swap", "b1", "f5")]                        # no accuracy (nan): after 0 %
    latest = rows[3]
    assert latest.superseded == ["f1", "f3"]
    assert notes == [
        "m [default] on build b1: f1 (2026-01-01T00:00:00Z) is replaced by the later run f3 (2026-01-02T00:00:00Z)",
        "m [default] on build b1: f3 (2026-01-02T00:00:00Z) is replaced by the later run f2 (2026-01-03T00:00:00Z)"]
    assert rows[0].superseded == [] and rows[1].superseded == []


def test_run_id_and_json():
    a = _row("Org/Model", "b" * 64, "2026-01-01T00:00:00Z")
    b = _row("org-model", "b" * 64, "2026-01-01T00:00:00Z")
    assert a.run_id.startswith("org-model__default__") and a.run_id != b.run_id
    assert len(a.run_id.rsplit("__", 1)[1]) == 12
    c = _row("Org/Model", "b" * 64, "2026-01-01T00:00:00Z")
    c.superseded = ["old.json"]
    assert c.run_id == a.run_id                                    # the superseded list is not content
    j = a.to_json()
    assert j["run_id"] == a.run_id and j["build_short"] == "b" * 12 and j["model"] == "Org/Model"
    assert a.key == ("Org/Model", "default", "b" * 64)
    long = _row("m" * 100, "b" * 64, "2026-01-01T00:00:00Z", variant="v" * 30)
    model_part, variant_part, digest = long.run_id.split("__")
    assert model_part == "m" * 80 and variant_part == "v" * 20 and len(digest) == 12


def test_run_rows_of_a_small_results_file(tmp_path):
    docs = clips(sources=2, categories=("pitch", "volume"))
    for d in docs:
        d["sha256"] = hashlib.sha256(d["id"].encode()).hexdigest()
    f = write_results(tmp_path / "r", "good", lambda d: d["direction"] if d["category"] == "pitch" else "increase",
                      docs=docs, stamp="2026-11-01T10-00-00.000000",
                      data={"toolkit_version": "9.9.9", "source_kind": "demo",
                            "source_kind_text": "demo voices (synthetic)"})
    (row,) = R.run_rows(f, "Label", draws=50, seed=1)
    assert row.model == "Label" and row.variant == "default" and row.results_file == str(f)
    assert row.n_clips == len(docs) and row.n_sources == 2
    assert row.by_category == {"pitch": 1.0, "volume": 0.5} and row.acc == 0.75
    assert row.build == build_digest((d["id"], d["sha256"]) for d in docs)
    assert row.ci is not None and row.ci[0] <= 0.75 <= row.ci[1]
    assert row.date == "2026-11-01T10:00:00Z" and row.toolkit == "9.9.9" and row.error_rate == 0.0
    assert row.data["source_kind"] == "demo voices (synthetic)"
    # without sample logs: no build, no interval, lm-eval's count
    g = write_results(tmp_path / "s", "bare", lambda d: d["direction"], docs=docs, samples=False)
    (bare,) = R.run_rows(g, None, draws=50, seed=1)
    assert bare.build is None and bare.ci is None and bare.n_clips == len(docs) and bare.model == "bare"
    bad = tmp_path / "bad" / "results_x.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"results": {}}))
    with pytest.raises(R.LeaderboardError):
        R.run_rows(bad, None, draws=5, seed=1)
    with pytest.raises(R.LeaderboardError):
        R.gather([str(tmp_path / "nothing-here")], draws=5)
