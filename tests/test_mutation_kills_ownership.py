"""Markers, the out check, owned files, the staged update, the lock and the leftovers, pinned on small
folders in tmp_path: the exact refusal, the file that must survive, the marker's listed sha256 (computed
here with hashlib). What mutation testing of generation/ownership.py found unchecked (docs/testing.md)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from generation import audio as aio
from generation import ownership as own
from generation.ownership import (LOCK, MARKER, OwnershipError, check_out, claim_out, command_line, folder_kind,
                                  generated_task_file, marker_problem, out_lock, owned_files, owned_update, read_marker,
                                  record_rewrite, remove_leftovers, signals_deferred, stage_dir, stage_path,
                                  write_marker)


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(scope="module")
def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("argv, line", [
    (["/usr/bin/vocalgrad", "hub", "--out", "h"], "vocalgrad hub --out h"),
    (["vocalgrad-eval", "run"], "vocalgrad-eval run"),
    (["/x/vocalgrad_commands/cli.py", "render"], "vocalgrad render"),
    (["/x/harness_tasks/cli.py", "eval"], "vocalgrad eval"),
    (["-m", "report"], "vocalgrad report"),
    (["/x/myscript.py", "a"], "python: myscript.py"),
    ([""], "python: interactive"),
    ([], "python: interactive"),
])
def test_the_marker_records_the_command_line(monkeypatch, argv, line):
    monkeypatch.setattr(sys, "argv", argv)
    assert command_line() == line


def test_a_long_command_line_is_cut_at_2000_characters(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["vocalgrad", "x" * 3000])
    assert command_line() == ("vocalgrad " + "x" * 3000)[:2000]


def test_read_and_write_marker(tmp_path, monkeypatch):
    assert read_marker(tmp_path) is None
    for bad in ("{", "[1]", '{"kind": 3}', '{"files": {}}'):
        (tmp_path / MARKER).write_text(bad)
        assert read_marker(tmp_path) is None
    (tmp_path / MARKER).unlink()
    monkeypatch.setattr(own, "_now", lambda: "T1")
    write_marker(tmp_path, "hub", files={"b": "2", "a": "1"}, pending={"z": "9", "y": "8"}, command="cmd")
    m = read_marker(tmp_path)
    assert m["kind"] == "hub" and m["command"] == "cmd" and m["created"] == "T1"
    assert list(m["files"]) == ["a", "b"] and list(m["pending"]) == ["y", "z"]
    assert m["toolkit_version"] == own._toolkit_version()
    monkeypatch.setattr(own, "_now", lambda: "T2")
    write_marker(tmp_path, "hub", command="cmd")            # same kind: created kept; no files, no pending
    m = read_marker(tmp_path)
    assert m["created"] == "T1" and "files" not in m and "pending" not in m
    write_marker(tmp_path, "hub", files={}, pending={}, command="c")
    assert read_marker(tmp_path)["files"] == {} and "pending" not in read_marker(tmp_path)
    write_marker(tmp_path, "render", command="cmd")         # another kind: a new created time
    assert read_marker(tmp_path)["created"] == "T2"
    (tmp_path / MARKER).write_text(json.dumps({"kind": "render", "created": ""}))
    write_marker(tmp_path, "render", command="cmd")
    assert read_marker(tmp_path)["created"] == "T2"


def test_a_marker_naming_paths_outside_or_no_table_is_foreign(tmp_path):
    assert marker_problem(tmp_path, None) is None
    assert marker_problem(tmp_path, {"kind": "hub", "files": {"a/b": "1"}, "pending": {"c": "2"}}) is None
    assert marker_problem(tmp_path, {"files": ["a"]}) == "its 'files' is not a table of files"
    assert marker_problem(tmp_path, {"kind": "hub", "pending": {"../x": "1"}}) == (  # no files: pending still checked
        "its 'pending' names a path outside the folder: '../x' climbs out with '..'")
    assert marker_problem(tmp_path, {"files": {"a": "1"}, "pending": ["x"]}) == "its 'pending' is not a table of files"
    assert marker_problem(tmp_path, {"files": {"a": "1"}, "pending": {"../x": "1"}}) == (
        "its 'pending' names a path outside the folder: '../x' climbs out with '..'")
    assert marker_problem(tmp_path, {"files": {"ok": "1", "/etc/x": "1"}}) == (
        "its 'files' names a path outside the folder: '/etc/x' is an absolute path")


def test_record_rewrite_follows_only_a_file_still_the_toolkits(tmp_path):
    write_marker(tmp_path, "hub", files={"README.md": _sha(b"old"), "x": "1"}, command="c")
    record_rewrite(tmp_path, "README.md", b"other", b"new")  # not the recorded bytes: unchanged
    assert read_marker(tmp_path)["files"]["README.md"] == _sha(b"old")
    record_rewrite(tmp_path, "README.md", b"old", b"new")
    m = read_marker(tmp_path)
    assert m["files"] == {"README.md": _sha(b"new"), "x": "1"} and m["kind"] == "hub"
    record_rewrite(tmp_path / "none", "README.md", b"old", b"new")  # no marker: nothing written
    assert not (tmp_path / "none").exists()


def test_folder_kind_by_marker_or_by_an_earlier_versions_layout(tmp_path):
    def fresh(name):
        d = tmp_path / name
        d.mkdir()
        return d

    assert folder_kind(tmp_path / "missing") is None
    f = tmp_path / "file"
    f.write_text("x")
    assert folder_kind(f) is None
    assert folder_kind(fresh("empty")) is None
    d = fresh("marked")
    write_marker(d, "leaderboard", command="c")
    (d / "render.json").write_text("{}")
    assert folder_kind(d) == "leaderboard"
    d = fresh("render")
    (d / "manifest.parquet").write_bytes(b"")
    assert folder_kind(d) == "render"
    d = fresh("hub")
    (d / "README.md").write_text("---\npretty_name: VocalGrad\n---\n")
    assert folder_kind(d) == "hub"
    d = fresh("report")
    (d / "report.json").write_text("{}")
    assert folder_kind(d) is None           # report.json alone is not a report folder
    (d / "report.md").write_text("")
    assert folder_kind(d) == "report"
    d = fresh("lb")
    (d / "leaderboard.json").write_text('{"format": "vocalgrad-leaderboard/1"}')
    assert folder_kind(d) == "leaderboard"
    (d / "leaderboard.json").write_text('{"format": "other/1"}')
    assert folder_kind(d) is None
    (d / "leaderboard.json").write_text('["vocalgrad-leaderboard/1"]')
    assert folder_kind(d) is None
    d = fresh("tasks")
    (d / "a.yaml").write_text("task: x\n")
    assert folder_kind(d) is None
    (d / "b.yaml").write_text("# Generated by vocalgrad-eval 0.1\ntask: y\n")
    assert folder_kind(d) == "tasks" and generated_task_file(d / "b.yaml") and not generated_task_file(d / "a.yaml")
    assert not generated_task_file(d / "missing.yaml")
    d = fresh("demo")
    (d / "render").mkdir()
    assert folder_kind(d) is None
    (d / "render" / "render.json").write_text("{}")
    assert folder_kind(d) == "demo"
    d = fresh("demo2")
    (d / "hub").mkdir()
    write_marker(d / "hub", "hub", command="c")
    assert folder_kind(d) == "demo"
    d = fresh("demo3")
    (d / "hub").write_text("a file, not a sub-folder")
    assert folder_kind(d) is None


def test_check_out_names_each_refusal(tmp_path):
    assert check_out(tmp_path / "new", "hub") is None
    empty = tmp_path / "empty"
    empty.mkdir()
    for name in (LOCK, f".x.{aio.HOST_TAG}.12.tmp", ".stage.h.3.partial"):
        (empty / name).write_text("")
    assert check_out(empty, "hub") is None            # only a lock and a writer's transient files
    (empty / ".stage.h.x.partial").write_text("")     # not a writer's name: not empty
    assert check_out(empty, "hub", force=True) is None
    assert check_out(empty, "hub") == (f"--out {empty}: exists, is not empty and is not a Hub folder (made by "
                                       "`vocalgrad hub`) (no .vocalgrad.json); nothing was written; choose an "
                                       "empty or new --out")
    f = tmp_path / "f"
    f.write_text("x")
    assert check_out(f, "hub") == f"--out {f}: exists and is not a folder; choose another --out"
    assert check_out(f, "hub", option="") == f"{f}: exists and is not a folder; choose another folder"
    rd = tmp_path / "rd"
    rd.mkdir()
    write_marker(rd, "render", command="c")
    assert check_out(rd, "render") is None
    msg = ("--out {0}: is a render folder (made by `vocalgrad render`), not a Hub folder; nothing was written; "
           "choose another --out").format(rd)
    assert check_out(rd, "hub") == msg and check_out(rd, "hub", force=True) == msg
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / MARKER).write_text(json.dumps({"kind": "hub", "files": {"../v": "1"}}))
    refusal = (f"--report {bad}: {bad / MARKER} is not a marker the toolkit wrote (its 'files' names a path outside "
               "the folder: '../v' climbs out with '..'); nothing was written or removed; remove that file if the "
               "folder is yours, or choose another --report")
    assert check_out(bad, "hub", option="--report", force=True) == refusal
    with pytest.raises(OwnershipError, match="is not a marker the toolkit wrote"):
        claim_out(bad, "hub")
    claim_out(tmp_path / "new", "hub")


def test_owned_files_tell_the_toolkits_from_edited_ones(tmp_path):
    (tmp_path / "a").write_bytes(b"A")
    (tmp_path / "b").write_bytes(b"edited")
    (tmp_path / "p").write_bytes(b"P")
    marker = {"kind": "hub", "files": {"a": _sha(b"A"), "b": _sha(b"B"), "gone": "1", "p": _sha(b"old")},
              "pending": {"p": _sha(b"P"), "q": "2"}}
    assert owned_files(tmp_path, marker, ["x"]) == ({"a": _sha(b"A"), "p": _sha(b"P")}, ["b"])
    (tmp_path / "sub").mkdir()
    assert owned_files(tmp_path, None, ["b", "a", "missing", "sub", "../a"]) == ({"a": "", "b": ""}, [])
    assert owned_files(tmp_path, {"kind": "hub"}, ["a"]) == ({"a": ""}, [])
    with pytest.raises(OwnershipError, match="is not a marker the toolkit wrote"):
        owned_files(tmp_path, {"kind": "hub", "files": {"/x": "1"}}, [])


def test_an_update_replaces_what_it_wrote_and_leaves_the_rest(tmp_path):
    out = tmp_path / "hub"
    with owned_update(out, "hub", what="vocalgrad hub") as stage:
        (stage / "d").mkdir()
        (stage / "d" / "old.txt").write_text("1")
        (stage / "keep.txt").write_text("k")
    m = read_marker(out)
    assert m["files"] == {"d/old.txt": _sha(b"1"), "keep.txt": _sha(b"k")} and "pending" not in m
    (out / "NOTES.md").write_text("mine")
    with owned_update(out, "hub", what="vocalgrad hub") as stage:
        (stage / "keep.txt").write_text("k2")
    assert (out / "NOTES.md").read_text() == "mine" and (out / "keep.txt").read_text() == "k2"
    assert not (out / "d").exists()                     # the emptied folder of a removed file goes too
    assert read_marker(out)["files"] == {"keep.txt": _sha(b"k2")}
    assert sorted(p.name for p in out.iterdir()) == sorted([".vocalgrad.json", LOCK, "NOTES.md", "keep.txt"])
    # a staged file over a file the command did not write
    with pytest.raises(OwnershipError, match=(f"^{out}: NOTES.md not written by `vocalgrad hub`; nothing was changed; "
                                              "move it away and rerun, or pass --force to replace$")):
        with owned_update(out, "hub", what="vocalgrad hub") as stage:
            (stage / "NOTES.md").write_text("new")
    assert (out / "NOTES.md").read_text() == "mine" and (out / "keep.txt").read_text() == "k2"
    assert not stage_path(out).exists()
    with owned_update(out, "hub", what="vocalgrad hub", force=True) as stage:
        (stage / "NOTES.md").write_text("new")
    assert (out / "NOTES.md").read_text() == "new" and not (out / "keep.txt").exists()  # keep.txt: not staged


def test_an_edited_file_is_refused_unless_force(tmp_path):
    out = tmp_path / "hub"
    with owned_update(out, "hub", what="vocalgrad hub") as stage:
        (stage / "a.txt").write_text("a")
        (stage / "b.txt").write_text("b")
    (out / "a.txt").write_text("user")
    with pytest.raises(OwnershipError, match=(f"^{out}: a.txt changed since `vocalgrad hub` wrote it; nothing was "
                                              "written. HINT. Move the file\\(s\\) away and rerun, or pass --force "
                                              "to replace it$")):
        with owned_update(out, "hub", what="vocalgrad hub", edited_hint="HINT. ") as stage:
            pass
    (out / "b.txt").write_text("user")
    with pytest.raises(OwnershipError, match="a.txt, b.txt changed since `w` wrote them;.*to replace them$"):
        with owned_update(out, "hub", what="w"):
            pass
    assert (out / "a.txt").read_text() == "user"
    with owned_update(out, "hub", what="w", force=True) as stage:
        (stage / "c.txt").write_text("c")
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["c.txt"]


def test_an_adopted_folder_removes_only_its_legacy_files(tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    for name, text in (("report.json", "{}"), ("report.md", "old"), ("notes.txt", "mine")):
        (out / name).write_text(text)
    with owned_update(out, "report", what="r", legacy_files=lambda o: ["report.json", "report.md"]) as stage:
        (stage / "report.md").write_text("new")
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["notes.txt", "report.md"]
    assert read_marker(out)["files"] == {"report.md": _sha(b"new")}


def test_a_failed_update_leaves_a_new_folder_absent_and_an_old_one_as_it_was(tmp_path):
    out = tmp_path / "new"
    with pytest.raises(RuntimeError):
        with owned_update(out, "hub", what="w") as stage:
            (stage / "x").write_text("x")
            raise RuntimeError("boom")
    assert not out.exists()
    old = tmp_path / "old"
    with owned_update(old, "hub", what="w") as stage:
        (stage / "x").write_text("x")
    with pytest.raises(RuntimeError):
        with owned_update(old, "hub", what="w") as stage:
            (stage / "y").write_text("y")
            raise RuntimeError("boom")
    assert sorted(p.name for p in old.iterdir()) == sorted([".vocalgrad.json", LOCK, "x"])


def test_a_second_writer_is_refused_naming_the_first(tmp_path):
    with out_lock(tmp_path / "o", "vocalgrad hub") as lock:
        assert lock == tmp_path / "o" / LOCK
        assert lock.stat().st_mode & 0o111 == 0        # not executable (0o644 before the umask)
        assert lock.read_text() == f"`vocalgrad hub` (pid {os.getpid()} on {aio.HOST_TAG})\n"
        code = ("import sys; from generation.ownership import out_lock\n"
                "try:\n    with out_lock(sys.argv[1], 'x'): print('got it')\n"
                "except Exception as e: print(e)")
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "o")], capture_output=True, text=True,
                           timeout=30, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert r.stdout.strip() == (f"{tmp_path / 'o'}: being written by `vocalgrad hub` (pid {os.getpid()} on "
                                    f"{aio.HOST_TAG}); wait for it to finish (or stop it), then rerun, or choose "
                                    "another --out")
    with out_lock(tmp_path / "o", "second"):  # released: the next one gets it
        assert (tmp_path / "o" / LOCK).read_text().startswith("`second`")


def test_leftovers_of_dead_writers_are_removed_and_only_those(tmp_path, dead_pid, capsys):
    out = tmp_path / "hub"
    out.mkdir()
    host = aio.HOST_TAG
    dead = [tmp_path / f".hub.{dead_pid}.partial", out / f".stage.{host}.{dead_pid}.partial",
            out / "sub" / f".a.{host}.{dead_pid}.tmp"]
    alive = [tmp_path / f".hub.{os.getpid()}.partial", tmp_path / f".other.{dead_pid}.partial",
             out / f".stage.{host}.{os.getpid()}.partial", out / f".stage.otherhost.{dead_pid}.partial",
             out / f".a.{host}.{os.getpid()}.tmp"]
    for p in dead[:2] + alive[:4]:
        p.mkdir(parents=True)
    for p in (dead[2], alive[4]):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    (tmp_path / f".hub.{dead_pid}.partial.txt").write_text("")  # a file, not a stage folder
    gone = remove_leftovers(out)
    assert gone == dead
    assert all(not p.exists() for p in dead) and all(p.exists() for p in alive)
    assert capsys.readouterr().err == f"vocalgrad: removed what an interrupted run left: {', '.join(map(str, dead))}\n"
    for i in range(7):
        (out / f".stage.{host}.{dead_pid}{i}.partial").mkdir()
    gone = remove_leftovers(out, warn=True)
    assert len(gone) == 7
    assert capsys.readouterr().err.endswith(" and 2 more\n")
    for i in range(5):
        (out / f".stage.{host}.{dead_pid}{i}.partial").mkdir()
    assert len(remove_leftovers(out)) == 5
    assert "more" not in capsys.readouterr().err      # five are all named
    (out / f".stage.{host}.{dead_pid}.partial").mkdir()
    assert remove_leftovers(out, warn=False) == [out / f".stage.{host}.{dead_pid}.partial"]
    assert capsys.readouterr().err == ""
    assert remove_leftovers(tmp_path / "missing") == []


def test_stage_dir_is_made_empty(tmp_path):
    stage = stage_dir(tmp_path)
    assert stage == tmp_path / f".stage.{aio.HOST_TAG}.{os.getpid()}.partial" == stage_path(tmp_path)
    (stage / "junk").write_text("x")
    assert list(stage_dir(tmp_path).iterdir()) == []


def test_a_signal_during_the_block_is_acted_on_after_it(tmp_path):
    got = []
    previous = signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # SIGTERM handler swapped for a recorder
    old_term = signal.signal(signal.SIGTERM, lambda s, f: got.append(("handler", s)))
    try:
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
            assert got == []
        assert got == [("handler", signal.SIGTERM)]   # the first one that came, once, after the block
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGUSR1, previous)


def test_a_leftover_removed_by_another_cleaner_meanwhile_is_no_error(tmp_path, monkeypatch, capsys):
    out = tmp_path / "hub"
    stage = out / f".stage.{aio.HOST_TAG}.999999.partial"
    (stage / "x").mkdir(parents=True)

    def gone_meanwhile(pid):  # another run's clean-up removes it between the listing and the removal
        shutil.rmtree(stage)
        return False

    monkeypatch.setattr(own, "pid_alive", gone_meanwhile)
    assert remove_leftovers(out) == [stage]


def test_six_leftovers_name_five_and_one_more(tmp_path, dead_pid, capsys):
    out = tmp_path / "hub"
    for i in range(6):
        (out / f".stage.{aio.HOST_TAG}.{dead_pid}{i}.partial").mkdir(parents=True)
    assert len(remove_leftovers(out)) == 6
    assert capsys.readouterr().err.endswith(".partial and 1 more\n")


def test_a_failed_update_keeps_an_existing_empty_folder(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    with pytest.raises(RuntimeError):
        with owned_update(out, "hub", what="w"):
            raise RuntimeError("boom")
    assert out.is_dir()                    # it was the user's before the run: only what the run made goes


def test_an_uninstalled_toolkit_records_version_unknown(monkeypatch):
    import importlib.metadata as md

    def missing(name):
        raise md.PackageNotFoundError(name)

    monkeypatch.setattr(md, "version", missing)
    assert own._toolkit_version() == "unknown"


def test_a_default_handled_signal_during_the_block_ends_the_process_after_it():
    code = ("import os, signal\nfrom generation.ownership import signals_deferred\n"
            "signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
            "with signals_deferred():\n    os.kill(os.getpid(), signal.SIGTERM)\n    print('block done', flush=True)\n"
            "print('after')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert r.returncode == -signal.SIGTERM and r.stdout == "block done\n"


def test_a_sibling_folder_sharing_the_name_as_a_prefix_keeps_its_leftover(tmp_path, dead_pid):
    """The near miss of the legacy stage's name: `.hub2.PID.partial` and `.hub.x.PID.partial` belong to the
    sibling folders `hub2` and `hub.x` (a dead writer of theirs is their business), `.hub.PID.partial` to `hub`."""
    out = tmp_path / "hub"
    out.mkdir()
    ours = tmp_path / f".hub.{dead_pid}.partial"
    siblings = [tmp_path / f".hub2.{dead_pid}.partial", tmp_path / f".hub.x.{dead_pid}.partial"]
    for p in [ours, *siblings]:
        p.mkdir()
    assert remove_leftovers(out, warn=False) == [ours]
    assert all(p.is_dir() for p in siblings)
