"""Outputs are written or the command fails: `vocalgrad-eval --output_path` is checked before the model is
asked (an existing file, a path under a file, a folder that cannot be written: one line, exit 2, lm-eval
not started) and a run whose results lm-eval could not save exits 2 naming it (was: exit 0, the table
printed, nothing on disk). Every writer refuses an existing file where its folder goes, in one line."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from _listen_helpers import make_render
from _report_helpers import clips, write_results
from _writers_helpers import OUT_WRITERS
from vocalgrad_commands.cli import main

EVAL = ["--model", "vocalgrad-oracle", "--tasks", "vocalgrad_pitch", "--limit", "2"]


def _eval_refused(argv, monkeypatch, capsys) -> str:
    pytest.importorskip("lm_eval")
    import lm_eval.__main__ as lm_main

    from harness_tasks.cli import main as eval_main

    monkeypatch.setattr(lm_main, "cli_evaluate", lambda: pytest.fail("lm-eval ran with an unusable --output_path"))
    code = eval_main(argv)
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("vocalgrad-eval")]
    assert code == 2 and len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("form", ["--output_path", "--output_path=", "-o"])
def test_eval_refuses_an_output_path_that_is_an_existing_file_before_asking(form, tmp_path, monkeypatch, capsys):
    out = tmp_path / "results.json"
    out.write_text("{}")
    flag = form.rstrip("=")
    argv = [*EVAL, f"{form}{out}"] if form.endswith("=") else [*EVAL, form, str(out)]
    line = _eval_refused(argv, monkeypatch, capsys)
    assert line == (f"vocalgrad-eval: error: {flag} {out}: an existing file, where a folder is written; give a "
                    "folder or a new path")
    assert out.read_text() == "{}"


def test_eval_refuses_an_output_path_under_a_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "f").write_text("x")
    line = _eval_refused([*EVAL, "--output_path", str(tmp_path / "f" / "a" / "b")], monkeypatch, capsys)
    assert f"--output_path {tmp_path}/f/a/b: {tmp_path}/f is a file, not a folder" in line


def test_eval_refuses_a_folder_it_cannot_write(tmp_path, monkeypatch, capsys):
    """A read-only file system (as root, permissions do not stop a write: the probe's error is simulated)."""
    import harness_tasks.output_path as op

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(op.tempfile, "mkstemp", read_only)
    line = _eval_refused([*EVAL, "--output_path", str(tmp_path / "new")], monkeypatch, capsys)
    assert line == (f"vocalgrad-eval: error: --output_path {tmp_path}/new: the results cannot be written there "
                    f"(creating a file in {tmp_path} failed: Read-only file system); give another path")


def test_eval_names_the_folder_it_cannot_write_never_the_probe(monkeypatch, capsys):
    """A real refusal of the kernel (/proc takes no new files, also for root): the folder is named."""
    line = _eval_refused([*EVAL, "--output_path", "/proc/vocalgrad-results"], monkeypatch, capsys)
    assert line.startswith("vocalgrad-eval: error: --output_path /proc/vocalgrad-results: the results cannot be "
                           "written there (creating a file in /proc failed: ") and "probe" not in line, line


@pytest.mark.parametrize("where", ["new", "new/deeper", "existing folder", "name.json"])
def test_eval_output_paths_that_can_be_written_pass_the_check(where, tmp_path):
    from harness_tasks.output_path import output_path_problem

    (tmp_path / "existing folder").mkdir()
    (tmp_path / "existing folder" / "results_old.json").write_text("{}")
    assert output_path_problem(str(tmp_path / where)) is None
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["existing folder", "results_old.json"]  # no probe left


def test_eval_whose_results_lm_eval_could_not_save_exits_2(tmp_path, monkeypatch, capsys):
    """The run folder lm-eval makes, DIR/<run>, is a file: lm-eval logs "Could not save results aggregated"
    and went on (was: exit 0 with the table printed and nothing saved)."""
    pytest.importorskip("lm_eval")
    from _harness_helpers import make_hub_folder
    from harness_tasks import cli

    hub = make_hub_folder(tmp_path / "hub", categories=("pitch",))
    monkeypatch.setenv("VOCALGRAD_DATASET", str(hub))
    monkeypatch.setenv("VOCALGRAD_ANSWER_LOG", "none")
    out = tmp_path / "results"
    out.mkdir()
    (out / "vocalgrad-oracle").write_text("in the way")
    assert cli.main([*EVAL, "--output_path", str(out)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("vocalgrad-eval")]
    assert len(err) == 1 and err[0].startswith(
        f"vocalgrad-eval: error: --output_path {out}: lm-eval could not save the results (save results "
        "aggregated: FileExistsError("), err
    assert "the evaluation ran but is not on disk" in err[0]
    (out / "vocalgrad-oracle").unlink()
    assert cli.main([*EVAL, "--output_path", str(out)]) == 0  # the near miss: the same run, saved
    assert len(list((out / "vocalgrad-oracle").glob("results_*.json"))) == 1


#: Every writer, as argv for an output path OUT (the folder it writes, or its file for listen --answers).
WRITERS = {**{k: v for k, v in OUT_WRITERS.items() if k != "listen --answers"},  # --answers names a file
           "render": ["render", "--source", "tones", "--sources", "1", "--categories", "volume", "--quiet",
                      "--out", "OUT"],
           "hub": ["hub", "DATA", "--out", "OUT", "--allow-partial"]}


#: show's --out names the PNG itself or a folder: an existing file it did not write is refused too
#: (tests/test_show_out.py: its own picture is replaced).
CASES = [(w, under) for w in sorted(WRITERS) for under in (False, True)]


@pytest.mark.parametrize("writer,under", CASES, ids=[f"{w}-{'under a file' if u else 'a file'}" for w, u in CASES])
def test_every_writer_refuses_a_file_where_its_folder_goes(writer, under, tmp_path, monkeypatch, capsys):
    """One line naming the path, exit 2, before any work, the file unchanged (no `[Errno 17] File exists`)."""
    work = tmp_path / "work"
    work.mkdir()
    res = write_results(work / "res", "m", lambda d: d["direction"], docs=clips(sources=1, categories=("volume",)))
    data = make_render(work / "r", categories=("volume",)) if writer in ("show", "hub") else work
    clip = "tone00__volume__linear__low__increase"
    blocker = tmp_path / "taken"
    blocker.write_text("the user's file\n")
    out = blocker / "sub" if under else blocker
    argv = [{"OUT": str(out), "RES": str(res), "DATA": str(data), "CLIP": clip}.get(a, a) for a in WRITERS[writer]]
    if writer.endswith("_tasks"):
        from harness_tasks.ext_tasks import task_writer_main, write_ext_tasks
        from harness_tasks.sweep_tasks import write_sweep_tasks

        code = task_writer_main(f"python -m harness_tasks.{writer}",
                                write_ext_tasks if writer == "ext_tasks" else write_sweep_tasks, [str(out)])
        err = capsys.readouterr().err.strip().splitlines()
    elif writer.startswith("vocalgrad-eval"):
        err = [_eval_refused(argv, monkeypatch, capsys)]
        code = 2
    else:
        code = main(argv)
        err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert str(blocker) in err[0] and "Errno" not in err[0] and "Traceback" not in err[0], err
    assert blocker.read_text() == "the user's file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken", "work"]


@pytest.fixture(scope="module")
def small_render(tmp_path_factory) -> Path:
    return make_render(tmp_path_factory.mktemp("show") / "r", categories=("volume",))


CLIP = "tone00__volume__linear__low__increase"


def test_show_into_a_folder_whose_clip_png_is_a_folder_names_the_users_path(small_render, tmp_path, capsys):
    """Was: `[Errno 21] Is a directory: '.../.tone00__....png.HOST.PID.tmp' -> ...` (an internal temp file)."""
    (tmp_path / "pics" / f"{CLIP}.png").mkdir(parents=True)
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(tmp_path / "pics")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"vocalgrad show: error: --out {tmp_path}/pics: {tmp_path}/pics/{CLIP}.png is a folder, where "
                   "the picture goes; remove it or give another --out (a .png file or a folder)"]
    assert sorted(p.name for p in (tmp_path / "pics").iterdir()) == [f"{CLIP}.png"]  # no temporary file left


def test_show_to_a_png_under_a_file_is_one_line_without_errno(small_render, tmp_path, capsys):
    """Was: `[Errno 17] File exists: 'FILE'`."""
    (tmp_path / "FILE").write_text("x")
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(tmp_path / "FILE" / "c.png")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"vocalgrad show: error: --out {tmp_path}/FILE/c.png: {tmp_path}/FILE is a file, not a folder, so nothing "
        "can be written below it; give a folder or a new path"]


@pytest.mark.parametrize("out", ["pics", "pics/c.png", "new/c.png"])
def test_show_writes_where_it_may(out, small_render, tmp_path, capsys):
    """The near misses: an empty folder, a PNG in a folder, a new folder (an existing PNG: test_show_out.py)."""
    (tmp_path / "pics").mkdir()
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(tmp_path / out)]) == 0
    written = tmp_path / out / f"{CLIP}.png" if out == "pics" else tmp_path / out
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
