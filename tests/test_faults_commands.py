"""Faults met by the commands: a rerun repairs a damaged render bit for bit; no space left, a read-only
folder, an unfinished render and a dataset folder that is no Hub folder end in one message naming the
file and what to do (exit status 2), a traceback only with --debug / VOCALGRAD_DEBUG=1."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import generation.audio as aio
from vocalgrad_commands.cli import main
from generation.cli_errors import explain

RENDER = ["--source", "tones", "--sources", "2", "--categories", "volume,noise", "--jobs", "1", "--quiet"]


def _render(out: Path, capsys) -> tuple[int, str, str]:
    code = main(["render", *RENDER, "--out", str(out)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _files(root: Path) -> dict[str, bytes]:
    """Every file of a render folder (verify's record and the folder's marker aside) by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("verify.json", ".vocalgrad.json")}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    out = tmp_path_factory.mktemp("pristine") / "render"
    assert main(["render", *RENDER, "--out", str(out)]) == 0
    return out


@pytest.fixture
def render(pristine, tmp_path):
    dst = tmp_path / "render"
    shutil.copytree(pristine, dst)
    return dst


def _sound(root: Path) -> bool:
    """Whether ``vocalgrad verify`` finds nothing wrong (the seven categories left out by --categories: partial)."""
    from generation.verify import verify

    res = verify(root, write_record=False)
    return res.ok and res.partial == ["2 of 9 categories, as asked (rendered with --categories noise,volume); not "
                                      "rendered: speed, pitch, distortion, roughness, echo, clarity, vibration"]


def _clips(root: Path) -> list[Path]:
    return sorted((root / "clips").rglob("*.flac"))


def _read_only(monkeypatch):
    """Every toolkit write fails as in a read-only folder (the tests run as root, where chmod does not)."""
    @contextlib.contextmanager
    def refuse(path):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        yield  # pragma: no cover

    monkeypatch.setattr(aio, "atomic_path", refuse)


def _disk_full_after(monkeypatch, n_files: int) -> None:
    """The disk fills up: after ``n_files`` files were written, every ``write`` fails with ENOSPC."""
    import builtins

    real_open, opened = builtins.open, [0]

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fake_open(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        if "w" not in mode:
            return fh
        opened[0] += 1
        return fh if opened[0] <= n_files else Full(fh)

    monkeypatch.setattr(aio, "open", fake_open, raising=False)  # the module's writes see it before the builtin


# ------------------------------------------------------------------------------------------ repair on rerun
def test_rerun_renders_deleted_and_damaged_files_again_bit_identical(render, pristine, capsys):
    clips = _clips(render)                                   # clips/noise/ (tone00, tone01), clips/volume/ ...
    clips[0].unlink()                                        # noise/tone00: deleted
    data = bytearray(clips[60].read_bytes())
    data[len(data) // 2] ^= 0x01                             # volume/tone00: one bit flipped, same size and header
    clips[60].write_bytes(bytes(data))
    (render / "sources" / "tone01_harm_123hz.flac").unlink()  # a source clip: one unit of tone01 writes it
    (render / "manifest.parquet").unlink()
    assert main(["verify", str(render)]) == 2
    assert "missing, though all 96 clips are done; rerun the render command" in capsys.readouterr().err
    code, out, err = _render(render, capsys)
    assert code == 0, err
    assert out.startswith("72 clips rendered, 24 already complete")
    assert "72 of these clips re-rendered: 3 finished unit(s) had a missing or damaged file" in out
    assert _files(render) == _files(pristine)               # every file byte for byte, manifest included
    assert _sound(render)


def test_rerun_of_an_intact_render_renders_nothing(render, capsys):
    code, out, _ = _render(render, capsys)
    assert code == 0 and out.startswith("0 clips rendered, 96 already complete")
    assert "re-rendered" not in out


def test_unreadable_part_file_is_not_trusted(render, pristine, capsys):
    part = sorted((render / ".parts").glob("*.json"))[0]
    part.write_text('[{"clip_id": ')                         # a torn write
    code, out, _ = _render(render, capsys)
    assert code == 0 and "24 clips rendered" in out and f"{part}: unreadable part file" in out
    assert _files(render) == _files(pristine)


def test_verify_names_the_command_that_repairs(render, pristine, capsys):
    clip = _clips(render)[5]
    clip.write_bytes(clip.read_bytes()[:100])                # truncated
    assert main(["verify", str(render)]) == 1
    out = capsys.readouterr().out
    cmd = ("vocalgrad render --source tones --out " + str(render) + " --categories volume,noise --sources 2")
    assert f"to render the missing or damaged clips again (bit-identical): {cmd}" in out
    assert main(["render", *cmd.split()[2:], "--jobs", "1", "--quiet"]) == 0  # the printed command works
    assert _files(render) == _files(pristine)


# ------------------------------------------------------------------------------------------ unfinished render
def test_an_unfinished_render_is_named_with_the_command_that_finishes_it(render, pristine, capsys):
    (render / "manifest.parquet").unlink()
    for part in sorted((render / ".parts").glob("*.json"))[:3]:
        part.unlink()
    cmd = f"vocalgrad render --source tones --out {render} --categories volume,noise --sources 2"
    assert main(["verify", str(render)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"vocalgrad verify: error: {render}/manifest.parquet: missing: an unfinished render (24 of 96 "
                   "clips done, 72 to go; the manifest is written at the end); finish it by rerunning the render "
                   f"command with the same options: {cmd}"]
    assert main(["hub", str(render), "--out", str(render.parent / "hub")]) == 2
    assert "an unfinished render (24 of 96 clips done" in capsys.readouterr().err
    assert "point data_dir" not in " ".join(err)
    assert main(["render", *cmd.split()[2:], "--jobs", "1", "--quiet"]) == 0
    assert _files(render) == _files(pristine)


@pytest.mark.parametrize("damage, why", [(b"\x81\x00 not text", "a binary file, not text (a NUL byte at byte 1)"),
                                         (b"\x81 not text", "not UTF-8 text (invalid start byte at byte 0)"),
                                         (b"\xff\xfeid", "UTF-16 text, not UTF-8 (save it as UTF-8)"),
                                         (b"", "empty; expected a CSV file with a header line"),
                                         (b"id,speaker\nx,y\n", "no column source_id")])
def test_a_damaged_csv_of_the_render_is_named_and_a_rerun_rewrites_it(damage, why, render, pristine, capsys):
    (render / "selection.csv").write_bytes(damage)
    assert main(["verify", str(render)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"vocalgrad verify: error: {render}/selection.csv: {why}" + err[0].split(why, 1)[1]]
    assert err[0].endswith("; rerun the render command with the same options to write it again")
    assert _render(render, capsys)[0] == 0
    assert _files(render) == _files(pristine)


# ------------------------------------------------------------------------------------------ no space left
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_disk_full_during_a_render_is_one_line_and_loses_nothing(jobs, tmp_path, pristine, monkeypatch, capsys):
    out = tmp_path / "render"
    # render.json, selection.csv, then a worker's first unit (source + 24 clips + part file) fit; its next fails
    _disk_full_after(monkeypatch, 2 + 26 + 10)  # (forked workers inherit the full disk, each with its count)
    code = main(["render", *RENDER, "--jobs", jobs, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"vocalgrad render: error: {out}/clips/")
    assert ".flac: no space left on device; free some space (or write elsewhere) and rerun the same command" in lines[0]
    done = len(list((out / ".parts").glob("*.json")))
    assert 1 <= done < 4
    if jobs == "1":
        assert done == 1 and not list(out.rglob("*.tmp"))  # no half-written file under any name
    monkeypatch.undo()
    code, stdout, _ = _render(out, capsys)
    assert code == 0 and stdout.startswith(f"{96 - 24 * done} clips rendered, {24 * done} already complete")
    assert not list(out.rglob("*.tmp"))
    assert _files(out) == _files(pristine)


def test_disk_full_with_debug_shows_the_traceback(tmp_path, monkeypatch):
    _disk_full_after(monkeypatch, 3)
    with pytest.raises(OSError) as exc:
        main(["--debug", "render", *RENDER, "--out", str(tmp_path / "render")])
    assert exc.value.errno == errno.ENOSPC and exc.value.filename.endswith(".flac")


def test_hub_checks_the_space_it_needs_before_writing(pristine, tmp_path, monkeypatch, capsys):
    """A disk too small for the Hub build: one line naming the need and the free space, nothing written (was:
    pyarrow aborting the process, exit 134, a 4 MB stage left behind)."""
    from collections import namedtuple

    import generation.hub as hub

    Usage = namedtuple("Usage", "total used free")
    audio = sum(p.stat().st_size for p in _clips(pristine))
    free = [audio // 2]
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10**12, 0, free[0]))
    out = tmp_path / "hub"
    code = main(["hub", str(pristine), "--out", str(out), "--allow-partial"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) <= 2
    assert f"{out}: the Hub build needs about " in err and "free; free some space or choose another --out" in err
    assert not out.exists()
    assert hub.needed_bytes({"test": hub.check_render(pristine, verify_sha256=False)}, sources=False) > audio
    free[0] = 10**12  # room enough: the same command builds
    assert main(["hub", str(pristine), "--out", str(out), "--allow-partial"]) == 0


# ------------------------------------------------------------------------------------------ read-only folder
def test_a_finished_render_can_be_rechecked_read_only(render, monkeypatch, capsys):
    before = {p: p.stat().st_mtime_ns for p in render.rglob("*")}
    _read_only(monkeypatch)
    code, out, err = _render(render, capsys)
    assert code == 0, err
    assert out.startswith("0 clips rendered, 96 already complete")
    assert {p: p.stat().st_mtime_ns for p in render.rglob("*")} == before


def test_a_damaged_read_only_render_fails_in_one_line(render, monkeypatch, capsys):
    _clips(render)[0].unlink()
    _read_only(monkeypatch)
    code, _, err = _render(render, capsys)
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"vocalgrad render: error: {render}/clips/noise/tone00_pure_220hz__")
    assert lines[0].endswith(".flac: read-only file system; make it writable or write elsewhere")


def test_verify_works_on_a_read_only_build(render, monkeypatch, capsys):
    _read_only(monkeypatch)
    assert main(["verify", str(render)]) == 0               # the 7 categories left out by --categories: partial
    cap = capsys.readouterr()
    assert "PASS (partial)" in cap.out and "clip file missing" not in cap.out
    assert cap.err.splitlines() == [f"vocalgrad verify: note: could not write {render}/verify.json (Read-only file "
                                    "system); the result above stands, only its record is missing"]
    assert not (render / "verify.json").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_verify_and_rerun_in_a_really_read_only_folder(render, capsys):
    modes = {p: p.stat().st_mode for p in [render, *render.rglob("*")] if p.is_dir()}
    for p in modes:
        p.chmod(0o555)
    try:
        assert main(["verify", str(render)]) == 0
        assert "could not write" in capsys.readouterr().err
        assert _render(render, capsys)[0] == 0
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


# ------------------------------------------------------------------------------------------ vocalgrad-eval
@pytest.mark.parametrize("kind", ["empty", "missing", "render", "file"])
def test_eval_on_a_folder_that_is_no_hub_folder(kind, render, tmp_path, monkeypatch, capsys):
    from harness_tasks import cli

    path = {"empty": tmp_path / "empty", "missing": tmp_path / "nope", "render": render,
            "file": render / "render.json"}[kind]
    if kind == "empty":
        path.mkdir()
    monkeypatch.setenv("VOCALGRAD_DATASET", str(path))
    assert cli.main(["--model", "vocalgrad-oracle", "--tasks", "vocalgrad", "--limit", "1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"vocalgrad-eval: error: VOCALGRAD_DATASET={path}: ")
    expected = {"empty": "not a Hub folder", "missing": "no such folder", "file": "not a folder",
                "render": f"a render folder (the output of `vocalgrad render`), not a Hub folder; build one with "
                          f"`vocalgrad hub {render} --out HUB_DIR`"}[kind]
    assert expected in err[0]


def test_eval_on_a_hub_folder_lacking_a_category(render, tmp_path, monkeypatch, capsys):
    pytest.importorskip("lm_eval")
    from generation.hub import build_hub
    from harness_tasks import cli

    hub = tmp_path / "hub"
    build_hub(render, hub, allow_partial=True, sources=False)  # volume and noise only
    monkeypatch.setenv("VOCALGRAD_DATASET", str(hub))
    assert cli.main(["--model", "vocalgrad-oracle", "--tasks", "vocalgrad_pitch", "--limit", "1"]) == 2
    # lines of ours (an earlier in-process lm-eval run may leave a log handler on a closed capture stream,
    # whose "Logging error" report quotes this call)
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("vocalgrad-eval")]
    assert err == [f"vocalgrad-eval: error: {hub}: no config folder 'pitch' (found: noise, volume); rebuild "
                   "the Hub folder with `vocalgrad hub` from the renders that give that config, ask only for tasks of "
                   "the configs it has, or point VOCALGRAD_DATASET elsewhere"]


# ------------------------------------------------------------------------------------------ the switch
def test_debug_flag_and_env_show_the_traceback(tmp_path, monkeypatch, capsys):
    from generation.verify import VerifyError

    assert main(["verify", str(tmp_path)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    with pytest.raises(VerifyError):
        main(["--debug", "verify", str(tmp_path)])
    with pytest.raises(VerifyError):
        main(["verify", str(tmp_path), "--debug"])  # after the command's name too
    monkeypatch.setenv("VOCALGRAD_DEBUG", "1")
    with pytest.raises(VerifyError):
        main(["verify", str(tmp_path)])
    monkeypatch.setenv("VOCALGRAD_DEBUG", "0")
    assert main(["verify", str(tmp_path)]) == 2


def test_explain_names_the_file_and_what_to_do():
    assert explain(OSError(errno.ENOSPC, "No space left on device", "/x/a.flac")).startswith(
        "/x/a.flac: no space left on device; free some space")
    assert explain(PermissionError(errno.EACCES, "Permission denied", "/x")) == (
        "/x: permission denied; check the permissions of the file and its folder, or use another folder")
    assert explain(FileNotFoundError("made by the toolkit")) == "made by the toolkit"
    assert explain(KeyError("a bug")) is None and explain(ZeroDivisionError()) is None


def test_parallel_pictures_end_without_a_traceback_under_the_commands_sigterm_handler(tmp_path):
    """The page's drawing workers are forked from a command that turns SIGTERM into Ctrl-C; the pool's end
    sends them SIGTERM, which must end them quietly (was: one `KeyboardInterrupt: SIGTERM` traceback per
    worker at the end of every `report --html`, also in the demo)."""
    code = ("from generation.cli_errors import sigterm_as_interrupt\n"
            "from analysis.report.parallel import run_tasks\n"
            "with sigterm_as_interrupt():\n"
            "    print(list(run_tasks([(abs, (-i,)) for i in range(8)], jobs=2)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(list(range(8)))
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr, proc.stderr
