"""`vocalgrad listen` without a browser: selection, order, answers file, HTTP security, CLI, report records."""

from __future__ import annotations

import http.client
import json
import multiprocessing
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

import vocalgrad
from vocalgrad_commands.cli import main as cli_main
from analysis.listen import (AnswerLog, CatalogError, ListenApp, annotator_agreement, annotator_order,
                               human_evaluation_fields, human_records, open_catalog, select_study)
from analysis.listen.server import _MAX_BODY
from harness_tasks import metrics

from _harness_helpers import default_signals
from _listen_helpers import make_render, serving
from _timing import hang_guard


@pytest.fixture(scope="module")
def render(tmp_path_factory):
    return make_render(tmp_path_factory.mktemp("listen") / "render", categories=("pitch", "volume", "echo"),
                       n_sources=2)


# ---------------------------------------------------------------------------------------------
# study set and order
# ---------------------------------------------------------------------------------------------
def test_study_set_is_balanced_and_disjoint_from_practice(render):
    clips = open_catalog(render).clips.values()
    practice, study = select_study(clips, per_category=6, practice=3, seed=0)
    assert len(practice) == 3 and {c.category for c in practice} == {"pitch", "volume", "echo"}
    assert not {c.clip_id for c in practice} & {c.clip_id for c in study}
    counts = Counter((c.category, c.direction) for c in study)
    assert set(counts.values()) == {3} and len(counts) == 6
    for cat in ("pitch", "volume", "echo"):  # spread over conditions: 6 clips, 6 different ones
        assert len({(c.tier, c.trajectory) for c in study if c.category == cat}) == 6
    assert select_study(clips, per_category=6, practice=3, seed=0) == (practice, study)  # same for everyone
    assert select_study(clips, per_category=6, practice=3, seed=1)[1] != study
    full = select_study(clips)[1]
    assert len(full) == len(clips)
    with pytest.raises(ValueError, match="per_category"):
        select_study(clips, per_category=0)
    with pytest.raises(ValueError, match="no clips"):
        select_study(clips, categories=["noise"])


def test_order_is_seeded_per_annotator_and_balanced(render):
    study = select_study(open_catalog(render).clips.values(), per_category=8)[1]
    a1, a2, b = (annotator_order(study, name) for name in ("ann1", "ann1", "ann2"))
    assert [c.clip_id for c in a1] == [c.clip_id for c in a2]
    assert [c.clip_id for c in a1] != [c.clip_id for c in b]
    assert sorted(c.clip_id for c in a1) == sorted(c.clip_id for c in study)
    for order in (a1, b):
        cats = [c.category for c in order]
        assert all(x != y for x, y in zip(cats, cats[1:]))  # never the same category twice in a row
        for k in range(0, len(order), 3):  # every round of 3 holds each category once
            assert sorted(cats[k:k + 3]) == ["echo", "pitch", "volume"]
        for cat in ("pitch", "volume", "echo"):  # directions balanced in consecutive pairs
            dirs = [c.direction for c in order if c.category == cat]
            assert all(set(dirs[i:i + 2]) == {"increase", "decrease"} for i in range(0, len(dirs), 2))


# ---------------------------------------------------------------------------------------------
# answers file
# ---------------------------------------------------------------------------------------------
def _rec(ann, cid, answer="increase", direction="increase", **kw):
    return {"annotator": ann, "clip_id": cid, "answer": answer, "direction": direction, **kw}


def _write_many(path, ann, n):
    log = AnswerLog(path)
    for i in range(n):
        log.append(_rec(ann, f"clip{i}"))
        log.append(_rec(ann, f"clip{i}"))  # every answer sent twice (double click)


def test_answer_log_threads_and_processes_lose_nothing(tmp_path):
    path = tmp_path / "answers.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_many, args=(path, f"p{k}", 40)) for k in range(2)]
    for p in procs:
        p.start()
    threads = [threading.Thread(target=_write_many, args=(path, f"t{k}", 40)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = [json.loads(x) for x in path.read_text().splitlines()]  # every line is whole JSON
    assert len(lines) == 5 * 40
    assert Counter(x["annotator"] for x in lines) == {a: 40 for a in ("p0", "p1", "t0", "t1", "t2")}
    assert len({(x["annotator"], x["clip_id"]) for x in lines}) == 200
    assert AnswerLog(path).answered("p1") == {f"clip{i}" for i in range(40)}  # resume from the file


def test_answer_log_survives_a_torn_line(tmp_path):
    path = tmp_path / "answers.jsonl"
    log = AnswerLog(path)
    assert log.append(_rec("a", "c1")) is True
    assert log.append(_rec("a", "c1", answer="decrease")) is False  # same clip never twice
    with open(path, "ab") as fh:
        fh.write(b'{"annotator": "a", "clip_id": "c2", "ans')  # a crash in the middle of a write
    log2 = AnswerLog(path)
    assert log2.answered("a") == {"c1"}
    assert log2.append(_rec("a", "c3")) is True
    with pytest.warns(UserWarning, match="damaged answer line"):
        recs = [json.loads(x) for x in path.read_text().splitlines() if x.startswith('{"annotator": "a", "clip_id": "c3"')]
        from analysis.listen.answers import read_answer_lines

        got = read_answer_lines(path)
    assert recs and [x["clip_id"] for x in got] == ["c1", "c3"]


# ---------------------------------------------------------------------------------------------
# report records and agreement
# ---------------------------------------------------------------------------------------------
def test_human_records_feed_the_metrics(tmp_path):
    cids = [vocalgrad.clip_id("s1", "pitch", "linear", t, d) for t in vocalgrad.TIERS for d in vocalgrad.DIRECTIONS]
    gold = {c: vocalgrad.parse_clip_id(c)["direction"] for c in cids}
    flip = {"increase": "decrease", "decrease": "increase"}
    lines = []
    for i, c in enumerate(cids):  # ann1 all right; ann2 wrong on the first two; ann3 on the first four
        for ann, wrong in (("ann1", 0), ("ann2", 2), ("ann3", 4)):
            lines.append(_rec(ann, c, flip[gold[c]] if i < wrong else gold[c], gold[c], rt_sec=1.0))
    lines.append(_rec("ann1", cids[0], "decrease", gold[cids[0]], practice=True))  # practice: ignored
    lines.append(_rec("ann1", cids[0], flip[gold[cids[0]]], gold[cids[0]]))  # repeat: first answer kept
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    recs = human_records(path)
    assert len(recs) == 18
    assert set(recs[0]) >= {"id", "category", "tier", "trajectory", "direction", "source_id", "raw", "pred",
                            "status", "exact", "retried", "correct", "annotator"}
    assert metrics.accuracy(recs) == pytest.approx(12 / 18)
    by = metrics.breakdown(recs, "annotator")
    assert by["ann1"]["acc"] == 1.0 and by["ann2"]["acc"] == pytest.approx(4 / 6)
    assert by["ann3"]["acc"] == pytest.approx(2 / 6) and by["ann1"]["exact_match_rate"] == 1.0
    agree = annotator_agreement(recs)
    # ann1 vs the others: clips 0-1 both others differ (0), clips 2-3 a tie (0.5), clips 4-5 agree (1)
    assert agree["per_annotator"]["ann1"]["agreement"] == pytest.approx(3 / 6)
    assert agree["per_annotator"]["ann1"]["shared"] == 6
    assert agree["pairwise"]["ann1|ann2"] == {"n": 6, "agreement": pytest.approx(4 / 6)}
    assert agree["pairwise"]["ann2|ann3"]["agreement"] == pytest.approx(4 / 6)
    assert -1 <= agree["fleiss_kappa"] <= 1
    fields = human_evaluation_fields([path])
    assert fields["label"] == "human" and fields["n_samples"] == {"pitch": 18} and len(fields["records"]) == 18

    # the report's "human" model row from this known file
    from analysis.report.analysis import analyse_evaluation

    from analysis.listen import human_evaluation

    row = analyse_evaluation(human_evaluation(path), draws=200)
    assert row["label"] == "human" and row["categories"] == ["pitch"]
    assert row["overall"]["acc"] == pytest.approx(12 / 18)
    assert row["by_category"]["pitch"]["acc"] == pytest.approx(12 / 18)
    assert row["by_tier"]["low"]["acc"] == pytest.approx(2 / 6)  # clips 0,1 = low: only ann1 right


# ---------------------------------------------------------------------------------------------
# HTTP: the API and its bad-input / security answers
# ---------------------------------------------------------------------------------------------
def _req(url, method, path, body=None, headers=None, raw=None):
    host, port = url.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=hang_guard(10))
    if raw is not None:
        conn.sock = None
        conn.connect()
        conn.sock.sendall(raw)
        resp = http.client.HTTPResponse(conn.sock, method=method)
        resp.begin()
    else:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def test_api_flow_and_bad_requests(render, tmp_path):
    app = ListenApp(open_catalog(render), "dave", tmp_path / "answers.jsonl", per_category=2)
    api = {"X-Listen-Token": app.request_token}
    js = {**api, "Content-Type": "application/json"}
    with serving(app) as url:
        status, page = _req(url, "GET", "/")
        assert status == 200 and app.request_token.encode() in page
        status, body = _req(url, "GET", "/api/next", headers=api)
        state = json.loads(body)
        item = state["item"]
        assert status == 200 and state["progress"] == {"practice_done": 0, "practice_total": 0, "done": 0, "total": 6}
        assert item["question"] == vocalgrad.default_prompt(app.study[0].category).split("\n\n")[0]
        assert app.study[0].clip_id not in body.decode()  # the clip id (and so the answer) is never sent
        status, audio = _req(url, "GET", f"/audio/{item['token']}")
        assert status == 200 and audio == app.catalog.audio_bytes(app.study[0].clip_id)

        good = json.dumps({"token": item["token"], "answer": "increase", "rt_sec": 0.8, "plays": 1})
        bad_cases = [
            ("GET", "/api/next", None, {}, 403),  # no request token (another web site cannot read or post)
            ("GET", "/api/next", None, {"X-Listen-Token": "x" * 32}, 403),
            ("POST", "/api/answer", good, {"Content-Type": "application/json"}, 403),
            ("POST", "/api/answer", "{not json", js, 400),
            ("POST", "/api/answer", "[1, 2]", js, 400),
            ("POST", "/api/answer", good, {**api, "Content-Type": "text/plain"}, 415),
            ("POST", "/api/answer", json.dumps({"token": "0" * 24, "answer": "increase"}), js, 404),
            ("POST", "/api/answer", json.dumps({"token": item["token"], "answer": "up"}), js, 400),
            ("POST", "/api/answer", json.dumps({"token": item["token"], "answer": "increase", "rt_sec": -1}), js, 400),
            ("POST", "/api/answer", json.dumps({"token": item["token"], "answer": "increase", "plays": "2"}), js, 400),
            ("POST", "/api/answer", "x" * (_MAX_BODY + 1), js, 413),
            ("GET", "/api/answer", None, api, 405),
            ("DELETE", "/api/answer", None, api, 405),
            ("GET", "/audio/" + "0" * 24, None, {}, 404),
            ("GET", f"/audio/{app.study[0].clip_id}", None, {}, 404),  # clip ids are not URLs
            ("GET", f"/show/{item['token']}.png", None, api, 404),  # study clips: no figure (answer)
            ("GET", "/../../../../etc/passwd", None, {}, 400),
            ("GET", "/audio/..%2f..%2fmanifest.parquet", None, {}, 400),
            ("GET", "/static/../manifest.parquet", None, {}, 400),
            ("GET", "/manifest.parquet", None, {}, 404),
            ("GET", "/clips/pitch/x.flac", None, {}, 404),
            ("GET", "/" + "a" * 600, None, {}, 400),
            ("GET", "/", None, {"Host": "evil.example:80"}, 421),  # DNS rebinding
        ]
        for method, path, body, headers, want in bad_cases:
            status, data = _req(url, method, path, body, headers)
            assert status == want, (method, path, headers, status, data[:200])
            if status >= 400 and method != "HEAD":
                assert "error" in json.loads(data)
        status, _ = _req(url, "POST", "/api/answer", raw=b"POST /api/answer HTTP/1.1\r\nHost: "
                         + url.split("//")[1].encode() + b"\r\nX-Listen-Token: " + app.request_token.encode()
                         + b"\r\nContent-Type: application/json\r\n\r\n")
        assert status == 411
        assert app.log.answered("dave") == set()  # none of that wrote anything

        status, body = _req(url, "POST", "/api/answer", good, js)
        body = json.loads(body)
        assert status == 200 and body["recorded"] is True and body["repeat"] is False
        assert body["progress"]["done"] == 1 and "feedback" not in body  # no answer given away
        status, body = _req(url, "POST", "/api/answer", good, js)  # double submit: not written again
        assert status == 200 and json.loads(body)["repeat"] is True
        status, body = _req(url, "GET", "/api/next", headers=api)
        assert json.loads(body)["progress"]["done"] == 1 and json.loads(body)["item"]["token"] != item["token"]
    assert len((tmp_path / "answers.jsonl").read_text().splitlines()) == 1


def test_manifest_path_outside_the_folder_is_refused(tmp_path):
    cid = vocalgrad.clip_id("tone00", "volume", "linear", "low", "increase")
    root = make_render(tmp_path / "r", categories=("volume",), path_override={cid: "../../etc/passwd"})
    with pytest.raises(CatalogError, match="outside the data folder"):
        open_catalog(root)


def test_hub_folder_serves_the_same_clips(render, tmp_path):
    from generation.hub import build_hub

    build_hub(render, tmp_path / "hub", allow_partial=True)
    hub, ren = open_catalog(tmp_path / "hub"), open_catalog(render)
    assert hub.kind == "hub" and list(hub.clips) == list(ren.clips)
    cid = next(iter(ren.clips))
    assert hub.audio_bytes(cid) == ren.audio_bytes(cid)
    assert hub.clips[cid].direction == ren.clips[cid].direction and hub.source_path("tone00") is None
    with pytest.raises(CatalogError, match="neither manifest.parquet"):
        open_catalog(tmp_path / "hub", config="noise")


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------
def test_cli_refuses_remote_binding_and_bad_input(render, tmp_path, capsys):
    assert cli_main(["listen", str(render), "--annotator", "eve", "--host", "0.0.0.0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err
    assert cli_main(["listen", str(render), "--annotator", "../eve", "--port", "0"]) == 2
    assert "annotator name" in capsys.readouterr().err
    assert cli_main(["listen", str(tmp_path / "nothing"), "--annotator", "eve"]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert cli_main(["listen", str(tmp_path), "--annotator", "eve"]) == 2
    assert "neither manifest.parquet" in capsys.readouterr().err


def test_restarted_server_resumes_and_never_repeats(render, tmp_path):
    answers = tmp_path / "answers.jsonl"
    first = ListenApp(open_catalog(render), "fay", answers, per_category=2, practice=1)
    seen = []
    for _ in range(3):  # the practice clip, then two study clips
        item = first.state()["item"]
        seen.append(item["token"])
        assert first.answer({"token": item["token"], "answer": "decrease", "rt_sec": 0.5, "plays": 1})[0] == 200
    again = ListenApp(open_catalog(render), "fay", answers, per_category=2, practice=1)  # new process/secret
    state = again.state()
    assert state["phase"] == "study" and state["progress"]["done"] == 2 and state["progress"]["practice_done"] == 1
    assert again.lookup(state["item"]["token"])[0].clip_id == again.study[2].clip_id
    stale = first.token(again.study[0].clip_id)  # tokens of the old process mean nothing to the new one
    assert again.answer({"token": stale, "answer": "increase"})[0] == 404
    assert again.answer({"token": again.token(again.study[0].clip_id), "answer": "increase"})[1]["repeat"] is True
    lines = [json.loads(x) for x in answers.read_text().splitlines()]
    assert len(lines) == 3 and len({x["clip_id"] for x in lines}) == 3


def test_cli_remote_binding_warns(render, tmp_path):
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "vocalgrad_commands.cli", "listen", str(render), "--annotator", "gil",
                             "--host", "0.0.0.0", "--allow-remote", "--port", "0",
                             "--answers", str(tmp_path / "a.jsonl")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    try:
        deadline = time.time() + hang_guard(60)
        line = ""
        while time.time() < deadline and "open http" not in line:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
        assert "open http://0.0.0.0:" in line
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "WARNING: serving on 0.0.0.0" in err and "anyone who can reach this machine" in err


def test_missing_clip_file_is_a_500_and_the_server_keeps_serving(tmp_path):
    root = make_render(tmp_path / "r", categories=("volume",))
    app = ListenApp(open_catalog(root), "hal", tmp_path / "answers.jsonl", per_category=2)
    (root / app.catalog._locator[app.study[0].clip_id]).unlink()
    with serving(app) as url:
        status, body = _req(url, "GET", f"/audio/{app.token(app.study[0].clip_id)}")
        assert status == 500 and "FileNotFoundError" in json.loads(body)["error"]
        status, _ = _req(url, "GET", f"/audio/{app.token(app.study[1].clip_id)}")
        assert status == 200


def test_report_shows_humans_as_a_model_row(tmp_path):
    """`vocalgrad report --human answers.jsonl`: a human row with the known accuracy + agreement."""
    cids = [vocalgrad.clip_id("s1", "volume", "jump", t, d) for t in vocalgrad.TIERS for d in vocalgrad.DIRECTIONS]
    gold = {c: vocalgrad.parse_clip_id(c)["direction"] for c in cids}
    flip = {"increase": "decrease", "decrease": "increase"}
    lines = [_rec(ann, c, flip[gold[c]] if i < wrong else gold[c], gold[c], rt_sec=1.0)
             for i, c in enumerate(cids) for ann, wrong in (("amy", 0), ("bob", 3))]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = subprocess.run([sys.executable, "-m", "vocalgrad_commands.cli", "report", "--human", str(path),
                        "--out", str(tmp_path / "rep"), "--no-plots", "--draws", "200"],
                       capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    human = [m for m in rep["models"] if m["label"] == "human"][0]
    assert human["overall"]["acc"] == pytest.approx(9 / 12)
    assert "## Human annotators" in md and "| amy | 6 | 100.0 |" in md and "| bob | 6 | 50.0 |" in md
    assert rep["human_agreement"]["pairwise"]["amy|bob"]["agreement"] == pytest.approx(0.5)
