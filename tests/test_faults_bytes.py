"""Any bytes in, one line out: every reader of a file the user names (sample logs, results JSON, human
answers, the authors' predictions, a render's CSVs and manifest) meets random bytes, text that is not
UTF-8, a binary file, an empty file and one larger than it takes with one line naming the file and what
it expected; never a UnicodeDecodeError, ArrowInvalid or "I/O operation on closed file" traceback."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import generation.user_files as uf
from vocalgrad_commands.cli import main
from generation.user_files import UserFileError, bytes_problem, read_text, text_lines

from _report_helpers import clips, write_results

RANDOM = bytes(random.Random(0).randrange(256) for _ in range(4000))
BAD = {
    "random": (RANDOM, ""),  # not UTF-8 or binary, whichever comes first
    "latin-1": ("caf\xe9 au lait\n".encode("latin-1") * 5, "not UTF-8 text (invalid continuation byte at byte 3)"),
    "utf-16": ('{"doc": 1}\n'.encode("utf-16"), "UTF-16 text, not UTF-8 (save it as UTF-8)"),
}


def _report(specs, out, capsys, *extra) -> list[str]:
    code = main(["report", *map(str, specs), "--out", str(out), "--no-plots", "--draws", "10", *extra])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip() and ": warning: " not in line]
    assert code == 2 and len(err) == 1, err
    return err


@pytest.fixture
def results(tmp_path) -> Path:
    res = tmp_path / "res"
    write_results(res, "m", lambda d: d["direction"], docs=clips(sources=1, categories=("volume",)))
    return res


@pytest.mark.parametrize("kind", BAD)
def test_a_sample_log_of_other_bytes_is_one_line_naming_file_and_line(kind, results, tmp_path, capsys):
    """Was: a UnicodeDecodeError traceback from `vocalgrad report`."""
    log = next(results.rglob("samples_*.jsonl"))
    log.write_bytes(BAD[kind][0])
    err = _report([results], tmp_path / "out", capsys)
    assert err[0].startswith(f"vocalgrad report: error: {log}:1: {BAD[kind][1]}"), err
    assert any(w in err[0] for w in ("not UTF-8 text (", "a binary file, not text (a NUL byte at byte ", "UTF-16"))
    assert err[0].endswith("expected lm-eval's sample log (one JSON object per line, written with --log_samples)")
    assert not (tmp_path / "out").exists()


def test_a_sample_log_good_at_first_then_other_bytes_names_that_line(results, tmp_path, capsys):
    log = next(results.rglob("samples_*.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:3]) + b"\xe9t\xe9\n" + b"".join(lines[3:]))
    err = _report([results], tmp_path / "out", capsys)
    assert f"{log}:4: not UTF-8 text (invalid continuation byte at byte 0)" in err[0]


def test_a_sample_log_with_a_line_longer_than_a_reader_takes(results, tmp_path, capsys, monkeypatch):
    log = next(results.rglob("samples_*.jsonl"))
    sizes = [len(x) for x in log.read_bytes().splitlines(keepends=True)]
    longest = max(sizes)
    monkeypatch.setattr(uf, "MAX_LINE_BYTES", longest)  # the longest line is still read whole
    code = main(["report", str(results), "--out", str(tmp_path / "ok"), "--no-plots", "--draws", "10"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    monkeypatch.setattr(uf, "MAX_LINE_BYTES", longest - 1)
    err = _report([results], tmp_path / "out", capsys)
    at = sizes.index(longest) + 1
    assert f"{log}:{at}: a line of more than {longest - 1} bytes; expected lm-eval's sample log" in err[0]


@pytest.mark.parametrize("kind", [*BAD, "empty", "blank", "huge"])
def test_a_results_json_of_other_bytes_is_one_line(kind, results, tmp_path, capsys, monkeypatch):
    rfile = next(results.rglob("results_*.json"))
    data = {"empty": b"", "blank": b" \n\n", "huge": rfile.read_bytes(), **{k: v[0] for k, v in BAD.items()}}[kind]
    rfile.write_bytes(data)
    if kind == "huge":
        monkeypatch.setattr(uf, "MAX_TEXT_BYTES", len(data) - 1)
    why = {"empty": "empty", "blank": "blank (only white space)",
           "huge": f"{len(data)} bytes, more than the {len(data) - 1} bytes a reader takes"}.get(kind) or BAD[kind][1]
    err = _report([results], tmp_path / "out", capsys)
    assert err[0].startswith(f"vocalgrad report: error: {rfile}: {why}"), err
    assert any(w in err[0] for w in ("not UTF-8 text (", "a binary file, not text (", "UTF-16", "empty", "blank",
                                     "bytes, more than"))
    assert "expected an lm-eval results JSON (results_<time>.json)" in err[0]


@pytest.mark.parametrize("data,why", [(b"", "empty; expected the answers `vocalgrad listen --answers` wrote"),
                                      (b"\n \n", "empty; expected the answers"),
                                      (RANDOM, "not an answers file of `vocalgrad listen`")])
def test_a_human_answers_file_of_other_bytes_is_one_line_naming_it(data, why, tmp_path, capsys):
    """Was, for an empty file: "nothing to report", naming no file."""
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(data)
    err = _report(["--human", answers], tmp_path / "out", capsys)
    assert err[0].startswith(f"vocalgrad report: error: {answers}: {why}"), err


def test_the_authors_predictions_with_other_bytes_after_a_good_start(tmp_path, capsys):
    """The file is recognised by its first line; bytes further on that are not UTF-8 were a traceback."""
    good = {"benchmark_clip_id": "x", "raw_response": "increase", "gold_label": "increase"}
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(json.dumps(good).encode() + b"\n" + b"x" * 70000 + b"\xff\n")
    err = _report([preds], tmp_path / "out", capsys)
    assert err[0].startswith(f"vocalgrad report: error: {preds}: not UTF-8 text (invalid start byte at byte"), err
    assert "expected the authors' predictions (JSON lines or a JSON array)" in err[0]


@pytest.fixture(scope="module")
def render(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bytes") / "render"
    assert main(["render", "--source", "tones", "--sources", "1", "--categories", "volume", "--jobs", "1",
                 "--quiet", "--out", str(out)]) == 0
    return out


#: The render folder's files and the commands that read them.
READERS = {"selection.csv": ("verify", "hub"), "skipped.csv": ("verify",), "label_checks.csv": ("hub",),
           "manifest.parquet": ("verify", "hub")}


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("kind", ["empty", "random"])
def test_a_render_folders_files_of_other_bytes_are_one_line_and_a_rerun_repairs(name, kind, render, tmp_path,
                                                                                  capsys):
    """Was: "ValueError: I/O operation on closed file" (an empty CSV) and an ArrowInvalid traceback (a
    damaged manifest) from `verify` and `hub`."""
    r = tmp_path / "r"
    shutil.copytree(render, r)
    (r / name).write_bytes(b"" if kind == "empty" else RANDOM)
    for command in READERS[name]:
        extra = ["--out", str(tmp_path / "hub"), "--allow-partial"] if command == "hub" else []
        code = main([command, str(r), *extra])
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert code == 2 and len(err) == 1 and f"{r / name}: " in err[0], err
        assert "rerun the render command with the same options" in err[0], err
    assert main(["render", "--source", "tones", "--sources", "1", "--categories", "volume", "--jobs", "1",
                 "--quiet", "--out", str(r)]) == 0
    assert (r / name).read_bytes() == (render / name).read_bytes()


def test_the_readers_boundaries(tmp_path):
    p = tmp_path / "f.txt"
    p.write_bytes("é\n".encode() * 3)  # multi-byte UTF-8 is text
    assert read_text(p, "x", max_bytes=9) == "é\né\né\n"  # exactly the limit: read
    with pytest.raises(UserFileError, match=r"9 bytes, more than the 8 bytes a reader takes; expected x"):
        read_text(p, "x", max_bytes=8)
    assert [n for n, _ in text_lines(p, "x", max_line=3)] == [1, 2, 3]  # a line of exactly the limit
    with pytest.raises(UserFileError, match=r"f.txt:1: a line of more than 2 bytes; expected x"):
        list(text_lines(p, "x", max_line=2))
    p.write_bytes(b"")
    assert read_text(p, "x", empty_ok=True) == ""
    with pytest.raises(UserFileError, match=r"f.txt: empty; expected x"):
        read_text(p, "x")
    with pytest.raises(UserFileError, match=r": a folder; expected x"):
        read_text(tmp_path, "x")
    assert bytes_problem(b"\x00") == "a binary file, not text (a NUL byte at byte 0)"
    assert bytes_problem(b"ab\xc3") == "not UTF-8 text (unexpected end of data at byte 2)"
    assert bytes_problem(b"ab\xc3\xa9") is None


@pytest.mark.parametrize("name", ["finetune.json", "align/alignment.json", "transfer/transfer.json",
                                  "probe/probe.csv"])
def test_finetune_report_on_a_run_folder_with_other_bytes_is_one_line(name, tmp_path, capsys):
    run = tmp_path / "run"
    (run / name).parent.mkdir(parents=True)
    (run / name).write_bytes(b"\x93not json\x94" if name.endswith(".json") else b"")
    assert main(["finetune-report", str(run), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"vocalgrad finetune-report: error: {run / name}: "), err
    assert ("not UTF-8 text" if name.endswith(".json") else "empty; expected the CSV `vocalgrad probe` writes") in err[0]


def test_a_transfer_labels_csv_that_is_not_utf8_names_it(tmp_path):
    from analysis.finetune.transfer import load_transfer_set

    labels = tmp_path / "labels.csv"
    labels.write_bytes("file,label\nclip\xe9.wav,a\n".encode("latin-1"))
    with pytest.raises(UserFileError, match=r"labels.csv: not UTF-8 text \(invalid continuation byte at byte 15\); "
                                            r"expected a labels CSV with columns file,label"):
        load_transfer_set(f"folder:{tmp_path}", labels=str(labels))
