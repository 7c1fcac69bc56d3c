"""Content identity of results and reports (issue 28 part 2, results side; issue 30 item 4).

Results files and sample logs say which audio a model heard (each clip's sha256, the build digest over
them); ``vocalgrad report`` groups, pairs and plays clips only where that audio is the same. Also the
log-line checks: sample-log lines without a doc, junk answers in an answer log, ``listen --answers``
pointed at a file that is not an answers log.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import vocalgrad
from _harness_helpers import make_hub_folder, offline_lm_eval
from _report_helpers import clips, write_results
from analysis.report.command import build_report
from analysis.report.content import MixedBuildsError
from analysis.report.evaluation import ResultsError
from generation.identity import build_digest, sha256_bytes, short

CATS = ("pitch", "volume")


def _docs():
    return clips(sources=2, categories=CATS)


def _sha(build: str):
    """A build's audio: the sha256 of each clip differs between builds, ids stay the same."""
    return lambda doc: sha256_bytes(f"{build}:{doc['id']}".encode())


def _digest(build: str, docs) -> str:
    return build_digest((d["id"], _sha(build)(d)) for d in docs)


def _right(doc):
    return doc["direction"]


def _half(doc):
    return "increase"


def _two_builds(tmp_path: Path):
    docs = _docs()
    a = write_results(tmp_path / "resA", "m", _right, docs=docs, sha256=_sha("A"), stamp="2026-01-01T00-00-00.000000")
    b = write_results(tmp_path / "resB", "m", _half, docs=docs, sha256=_sha("B"), stamp="2026-01-02T00-00-00.000000")
    return docs, a, b


def test_report_refuses_one_row_of_two_builds(tmp_path):
    docs, a, b = _two_builds(tmp_path)
    with pytest.raises(MixedBuildsError) as exc:
        build_report([tmp_path / "resA", tmp_path / "resB"], tmp_path / "rep", draws=50, plots=False)
    msg = str(exc.value)
    assert str(a) in msg and str(b) in msg and "\n" not in msg
    assert short(_digest("A", docs)) in msg and short(_digest("B", docs)) in msg and "--allow-mixed" in msg
    assert not (tmp_path / "rep").exists()  # refused before anything is written
    # the same build run twice (a rerun of one category) still merges into one row, the later run winning
    write_results(tmp_path / "resA", "m", _half, docs=[d for d in docs if d["category"] == "pitch"],
                  sha256=_sha("A"), stamp="2026-01-03T00-00-00.000000")
    rep = build_report([tmp_path / "resA"], tmp_path / "rep", draws=50, plots=False)
    (m,) = rep["models"]
    assert m["by_category"]["pitch"]["acc"] == 0.5 and m["by_category"]["volume"]["acc"] == 1.0
    assert m["data"]["fingerprint"] == short(_digest("A", docs))


def test_allow_mixed_keeps_each_build_in_its_own_row(tmp_path):
    docs, _, _ = _two_builds(tmp_path)
    rep = build_report([tmp_path / "resA", tmp_path / "resB"], tmp_path / "rep", draws=50, plots=False,
                       allow_mixed=True)
    fa, fb = short(_digest("A", docs)), short(_digest("B", docs))
    by_label = {m["label"]: m for m in rep["models"]}
    assert set(by_label) == {f"m (build {fa})", f"m (build {fb})"}
    assert by_label[f"m (build {fa})"]["overall"]["acc"] == 1.0  # each row holds its own build's answers only
    assert by_label[f"m (build {fb})"]["overall"]["acc"] == 0.5
    assert by_label[f"m (build {fa})"]["overall"]["n"] == len(docs)
    assert rep["comparisons"] == [] and len(rep["not_paired"]) == 1  # never paired, and said so
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Not paired: different builds" in md and f"`{fa}`" in md and f"`{fb}`" in md


def test_one_row_never_mixes_source_kinds(tmp_path):
    """Two runs of one model on different categories (no clip id in common), one on the demo voices and one
    on VCTK: not one row."""
    docs = _docs()
    demo, vctk = ({"source_kind": k, "build": k} for k in ("demo", "vctk"))
    write_results(tmp_path / "res", "m", _right, docs=[d for d in docs if d["category"] == "pitch"],
                  sha256=_sha("A"), data=demo, stamp="2026-01-01T00-00-00.000000")
    write_results(tmp_path / "res", "m", _right, docs=[d for d in docs if d["category"] == "volume"],
                  sha256=_sha("B"), data=vctk, stamp="2026-01-02T00-00-00.000000")
    with pytest.raises(MixedBuildsError, match=r"hold clips of different sources \(demo and vctk\)"):
        build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False)
    rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False, allow_mixed=True)
    assert sorted(m["data"]["source_kind"] for m in rep["models"]) == ["demo", "vctk"]
    assert [m["data"]["comparable_with_paper"] for m in rep["models"]] == [False, True]


def test_paired_comparison_only_on_the_same_audio(tmp_path):
    docs = _docs()
    write_results(tmp_path / "resA", "m1", _right, docs=docs, sha256=_sha("A"))
    write_results(tmp_path / "resB", "m2", _half, docs=docs, sha256=_sha("B"))
    write_results(tmp_path / "resC", "m3", _half, docs=docs, sha256=_sha("A"))
    with pytest.raises(MixedBuildsError) as exc:
        build_report([f"a={tmp_path / 'resA'}", f"b={tmp_path / 'resB'}"], tmp_path / "rep", draws=50, plots=False)
    msg = str(exc.value)
    assert "a (" in msg and "b (" in msg and short(_digest("A", docs)) in msg and short(_digest("B", docs)) in msg
    rep = build_report([f"a={tmp_path / 'resA'}", f"b={tmp_path / 'resB'}"], tmp_path / "rep", draws=50,
                       plots=False, allow_mixed=True)
    assert rep["comparisons"] == [] and rep["not_paired"][0]["a"] == "a"
    # the same build pairs every clip, as before
    rep = build_report([f"a={tmp_path / 'resA'}", f"c={tmp_path / 'resC'}"], tmp_path / "rep2", draws=50, plots=False)
    (c,) = rep["comparisons"]
    assert c["overall"]["n"] == len(docs) and c["overall"]["only_a"] == len(docs) // 2 and "not_paired" not in rep


def test_report_names_its_data_and_marks_demo_rows(tmp_path):
    docs = _docs()
    recorded = {"dataset": "demo_out/hub", "build": "hub", "source": "demo", "source_kind": "demo",
                "source_kind_text": "demo voices (synthetic)", "build_digest": _digest("A", docs)}
    write_results(tmp_path / "res", "m", _right, docs=docs, sha256=_sha("A"), data=recorded)
    write_results(tmp_path / "old", "m", _right, docs=docs)  # an earlier results file: no sha256, no record
    rep = build_report([f"demo={tmp_path / 'res'}"], tmp_path / "rep", draws=50, plots=False)
    old = build_report([f"demo={tmp_path / 'old'}"], tmp_path / "rep_old", draws=50, plots=False)
    (m,), (o,) = rep["models"], old["models"]
    assert m["data"]["build"] == "hub" and m["data"]["source_kind"] == "demo"
    assert m["data"]["fingerprint"] == short(_digest("A", docs)) and m["data"]["n_clips"] == len(docs)
    assert m["data"]["n_sources"] == 2 and m["data"]["comparable_with_paper"] is False
    assert o["data"]["fingerprint"] is None and o["data"]["source_kind"] == "unknown"
    # the numbers are those of a results file without any identity: only the new "data" key differs
    strip = ("data", "files")
    def numbers(x):
        return json.dumps({k: v for k, v in x.items() if k not in strip}, sort_keys=True)

    assert numbers(m) == numbers(o)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"| hub | `{short(_digest('A', docs))}` | demo voices (synthetic) | {len(docs)} | 2 | demo |" in md
    assert "| demo ‡ |" in md and "not comparable with the rows copied from the paper" in md
    from analysis.report.html_page import write_html

    from analysis.report.loading import load_all

    evs, _ = load_all([f"demo={tmp_path / 'res'}"])
    page = Path(write_html(tmp_path / "rep", evs)["path"]).read_text()
    assert '<h2 id="data">Data</h2>' in page and short(_digest("A", docs)) in page and "‡ demo voices" in page


def _hub_rows(hub: Path) -> list[dict]:
    cols = ["id", "category", "direction", "label", "tier", "trajectory", "source_id", "audio"]
    return [row for f in sorted(hub.glob("*/*.parquet")) for row in pq.read_table(f, columns=cols).to_pylist()]


def _hub_shas(hub: Path) -> dict[str, str]:
    return {row["id"]: sha256_bytes(row["audio"]["bytes"]) for row in _hub_rows(hub)}


def test_data_folder_must_hold_the_clips_the_model_heard(tmp_path):
    from analysis.listen.catalog import open_catalog
    from analysis.report.html_page import HtmlOptions

    hub_a = make_hub_folder(tmp_path / "hubA", categories=CATS)
    hub_b = make_hub_folder(tmp_path / "hubB", categories=CATS, sr=22050)  # same ids, other audio
    shas = _hub_shas(hub_a)
    docs = [{k: v for k, v in row.items() if k != "audio"} for row in _hub_rows(hub_a)]
    write_results(tmp_path / "res", "m", _right, docs=docs, sha256=lambda d: shas[d["id"]])
    with pytest.raises(ResultsError) as exc:  # exit 2 with the message
        build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False,
                     html=HtmlOptions(catalog=open_catalog(hub_b), pictures=False))
    first = vocalgrad.clip_id("tone00", "pitch", "linear", "low", "increase")  # the page's first clip
    msg = str(exc.value)
    assert f"clip {first} is not the audio m heard" in msg and str(hub_b.resolve()) in msg
    assert short(shas[first]) in msg and short(_hub_shas(hub_b)[first]) in msg
    assert not (tmp_path / "rep").exists()
    rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False,
                       html=HtmlOptions(catalog=open_catalog(hub_a), pictures=False))
    copied = sorted((tmp_path / "rep" / "clips").glob("*.flac"))
    assert rep["html"]["clips"] == len(docs) == len(copied)
    assert {sha256_bytes(p.read_bytes()) for p in copied} == set(shas.values())


def test_sample_log_line_with_null_doc_adds_no_row(tmp_path):
    docs = _docs()
    write_results(tmp_path / "res", "m", _right, docs=docs)
    sfile = next((tmp_path / "res").rglob("samples_vocalgrad_pitch_*.jsonl"))
    n_lines = len(sfile.read_text().splitlines())
    with open(sfile, "a") as fh:
        fh.write(json.dumps({"doc_id": 99, "doc": None, "acc_parsed": "increase:increase:parsed:exact"}) + "\n")
        fh.write(json.dumps({"doc_id": 98, "doc": {"id": 5, "category": "pitch"}, "filtered_resps": ["increase"]}) + "\n")
        fh.write("[1, 2]\n")
    with pytest.warns(UserWarning, match=rf"{sfile.name}:{n_lines + 1}: skipped 3 sample-log line\(s\) \('doc' is null"):
        rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False)
    (m,) = rep["models"]
    assert m["overall"]["n"] == len(docs) and m["by_category"]["pitch"]["n"] == len(docs) // 2
    assert m["overall"]["acc"] == 1.0


def test_duplicated_sample_log_lines_are_named_and_each_clip_counted_once(tmp_path):
    """Lines of a sample log repeated (a log appended to twice): the repeats are named and each clip counts once
    (was: counted twice, with only "has 29 samples, the results file says 24")."""
    docs = _docs()
    write_results(tmp_path / "res", "m", _half, docs=docs)
    sfile = next((tmp_path / "res").rglob("samples_vocalgrad_pitch_*.jsonl"))
    lines = sfile.read_text().splitlines()
    sfile.write_text("\n".join(lines + lines[:3]) + "\n")
    first = json.loads(lines[0])["doc"]["id"]
    with pytest.warns(UserWarning, match=rf"{sfile.name}: 3 clip\(s\) logged more than once \(line {len(lines) + 1} "
                                         rf"repeats {first} \(line 1\);.*each clip is counted once, from its first line"):
        rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False)
    (m,) = rep["models"]
    assert m["by_category"]["pitch"]["n"] == len(lines) == len(docs) // 2
    assert not any("samples, the results file says" in w for w in m.get("warnings", []))


def test_answer_log_junk_answers_are_not_reused(tmp_path, caplog):
    from harness_tasks.models.answer_log import AnswerLog

    folder = tmp_path / "answers"
    folder.mkdir()
    lines = [{"key": "k_null", "answer": None}, {"key": "k_int", "answer": 5}, {"key": "k_obj", "answer": {}},
             {"key": 7, "answer": "increase"}, {"key": "k_ok", "answer": "decrease"}]
    (folder / "answers.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with caplog.at_level(logging.WARNING, logger="vocalgrad"):
        log = AnswerLog(folder)
    assert log.get("k_ok") == "decrease" and len(log) == 1
    assert all(k not in log for k in ("k_null", "k_int", "k_obj"))
    found, mine, held = log.claim(["k_null", "k_int", "k_obj", "k_ok"])
    assert found == {"k_ok": "decrease"} and sorted(mine) == ["k_int", "k_null", "k_obj"]  # asked again
    assert f"{folder / 'answers.jsonl'}:1: 4 answer-log line(s)" in caplog.text and "lines 1, 2, 3, 4" in caplog.text
    log.release(mine)
    log.close()


def test_listen_refuses_an_answers_file_that_is_not_one(tmp_path, capsys):
    from analysis.listen.answers import AnswerLog, AnswersError
    from vocalgrad_commands.cli import main

    report = tmp_path / "report.md"
    report.write_text("# VocalGrad report\n\nsome text\n")
    before = report.read_bytes()
    with pytest.raises(AnswersError, match="report.md: not an answers file of `vocalgrad listen`"):
        AnswerLog(report)
    hub = make_hub_folder(tmp_path / "hub", categories=("pitch",))
    capsys.readouterr()
    assert main(["listen", str(hub), "--annotator", "a1", "--answers", str(report), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "vocalgrad listen: error:" in err and str(report) in err and len(err.strip().splitlines()) == 1
    assert report.read_bytes() == before
    good = tmp_path / "answers.jsonl"
    rec = {"annotator": "a1", "clip_id": "x", "answer": "increase", "direction": "increase"}
    good.write_text(json.dumps(rec) + "\n")
    assert AnswerLog(good).lines() == [rec]  # a real answers file (and a new one) still opens
    assert AnswerLog(tmp_path / "new.jsonl").lines() == []


def test_eval_results_file_carries_the_hub_folders_build_digest(tmp_path, monkeypatch):
    from harness_tasks.cli import main

    offline_lm_eval(monkeypatch)
    hub = make_hub_folder(tmp_path / "hub", categories=CATS, sources=2)
    with open(hub / "README.md", "a") as fh:
        fh.write("\n- Source corpus: `demo`. The reference set uses VCTK.\n")
    monkeypatch.setenv("VOCALGRAD_DATASET", str(hub))
    shas = _hub_shas(hub)
    expected = build_digest(shas.items())
    tasks = ",".join(f"vocalgrad_{c}" for c in CATS)
    assert main(["--model", "vocalgrad-oracle", "--tasks", tasks, "--output_path", str(tmp_path / "logged"),
                 "--log_samples"]) == 0
    assert main(["--model", "vocalgrad-oracle", "--tasks", tasks, "--output_path", str(tmp_path / "plain")]) == 0
    for name in ("logged", "plain"):
        (rfile,) = (tmp_path / name).rglob("results_*.json")
        data = json.loads(rfile.read_text())["vocalgrad_data"]
        assert data["build_digest"] == expected and data["fingerprint"] == short(expected)
        assert data["n_clips"] == len(shas) and data["n_sources"] == 2 and data["build"] == "hub"
        assert data["source_kind"] == "demo" and data["toolkit_version"]
        for cat in CATS:
            mine = {cid: sha for cid, sha in shas.items() if vocalgrad.parse_clip_id(cid)["category"] == cat}
            assert data["tasks"][f"vocalgrad_{cat}"]["build_digest"] == build_digest(mine.items())
    line = json.loads(next((tmp_path / "logged").rglob("samples_vocalgrad_pitch_*.jsonl")).read_text().splitlines()[0])
    audio = line["arguments"]["gen_args_0"]["arg_2"]["audio"][0]
    assert audio == {"clip_id": line["doc"]["id"], "sha256": shas[line["doc"]["id"]]}
    rep = build_report([tmp_path / "logged"], tmp_path / "rep", draws=50, plots=False)
    assert rep["models"][0]["data"]["fingerprint"] == short(expected)


def test_two_runs_of_one_build_recording_different_source_kinds_are_never_called_different_builds(tmp_path):
    """The same clips (the same sha256 each) in two results files, one recording the demo voices and the
    other VCTK: the records disagree, the audio does not (was: "... (build X) and ... (build X) hold clips of
    different sources (demo and vctk): they were computed on different builds")."""
    docs = [d for d in _docs() if d["category"] == "pitch"]
    write_results(tmp_path / "res", "m", _right, docs=docs, sha256=_sha("A"),
                  data={"source_kind": "demo", "build": "x"}, stamp="2026-01-01T00-00-00.000000")
    write_results(tmp_path / "res", "m", _right, docs=docs, sha256=_sha("A"),
                  data={"source_kind": "vctk", "build": "x"}, stamp="2026-01-02T00-00-00.000000")
    with pytest.raises(MixedBuildsError) as exc:
        build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False)
    msg = str(exc.value)
    fp = short(_digest("A", docs))
    assert f"hold the same audio ({len(docs)} clip id(s) in common, the same sha256 each; build {fp}) but record " \
           "different source kinds (demo and vctk): the records disagree, not the clips" in msg, msg
    assert "different builds" not in msg and msg.count(fp) == 1
    rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False, allow_mixed=True)
    labels = sorted(m["label"] for m in rep["models"])
    assert len(set(labels)) == 2 and all("recorded as" in label for label in labels), labels
