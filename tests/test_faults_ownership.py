"""Ownership and signals: a command deletes or replaces only what it wrote (marker ``.vocalgrad.json``),
refuses a folder that is someone else's before any work, one writer per ``--out`` (lock), leftovers of
killed runs are named and removed; SIGTERM is handled like Ctrl-C (exit 143), worker processes end
with the command and no staged folder or half-updated page stays."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import generation.audio as aio
from analysis.listen.catalog import open_catalog
from analysis.report import build_report
from analysis.report.html_page import HtmlOptions
from vocalgrad_commands.cli import main
from generation.cli_errors import EXIT_TERMINATED, run_command
from generation.ownership import MARKER, out_lock, read_marker, signals_deferred

from _harness_helpers import default_signals
from _report_helpers import write_results
from _timing import hang_guard

RENDER = ["--source", "tones", "--sources", "1", "--categories", "volume", "--jobs", "1", "--quiet"]
HUB = ["--allow-partial", "--no-sources"]


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (markers and locks aside) by relative path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in (MARKER, ".vocalgrad.lock")}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A real render (1 tone source, volume: 24 clips), its Hub folder, results of one model on it."""
    root = tmp_path_factory.mktemp("own")
    assert main(["render", *RENDER, "--out", str(root / "render")]) == 0
    assert main(["hub", str(root / "render"), "--out", str(root / "hub"), *HUB]) == 0
    docs = [{"id": i.clip_id, "category": i.category, "direction": i.direction, "label": i.direction,
             "tier": i.tier, "trajectory": i.trajectory, "source_id": i.source_id}
            for i in open_catalog(root / "render").clips.values()]
    write_results(root / "results", "good", lambda d: d["direction"], docs=docs)
    return root


def _copy(site: Path, name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(site / name, dst)
    return dst


def _report(site: Path, out: Path, **kw):
    html = HtmlOptions(catalog=open_catalog(site / "render"), max_clips=2, pictures=False)
    return build_report([site / "results" / "good"], out, draws=20, plots=False, html=html, **kw)


# ------------------------------------------------------------------------------------------ report
@pytest.mark.parametrize("kind", ["render", "hub"])
def test_report_refuses_an_out_that_is_a_render_or_hub_folder_and_deletes_nothing(kind, site, tmp_path, capsys):
    build = _copy(site, kind, tmp_path)
    before = _tree(build)
    code = main(["report", str(site / "results" / "good"), "--out", str(build), "--html", "--data", str(build)])
    err = capsys.readouterr().err
    assert code == 2 and f"is a {kind if kind == 'render' else 'Hub'} folder" in err and "nothing was written" in err
    assert len(err.strip().splitlines()) == 1
    assert _tree(build) == before  # was: every clip of BUILD/clips/ deleted


def test_report_refuses_a_foreign_folder_and_keeps_user_files_in_clips(site, tmp_path, capsys):
    foreign = tmp_path / "mine"
    (foreign / "clips").mkdir(parents=True)
    (foreign / "clips" / "keep.wav").write_bytes(b"user")
    code = main(["report", str(site / "results" / "good"), "--out", str(foreign), "--draws", "20", "--no-plots"])
    assert code == 2 and "is not a report folder" in capsys.readouterr().err
    assert (foreign / "clips" / "keep.wav").read_bytes() == b"user"


def test_report_replaces_only_its_own_clips_and_adopts_an_earlier_versions_folder(site, tmp_path):
    out = tmp_path / "rep"
    first = _report(site, out)
    ours = sorted(p.name for p in (out / "clips").iterdir())
    assert first["html"]["clips"] == 2 and read_marker(out)["kind"] == "report"
    assert set(read_marker(out)["files"]) >= {"report.md", "report.json", "index.html"}
    (out / "clips" / "notes.txt").write_text("mine")  # a user's file in clips/ (was: deleted)
    (out / MARKER).unlink()  # as an earlier version left it: the layout says it is a report folder
    page = (out / "index.html").read_text()
    assert all(f"clips/{n}" in page for n in ours)
    _report(site, out)  # adopts it: the page's clips are its own, notes.txt is not
    assert (out / "clips" / "notes.txt").read_text() == "mine"
    assert read_marker(out)["kind"] == "report" and "clips/notes.txt" not in read_marker(out)["files"]
    listed = {f for f in read_marker(out)["files"] if f.startswith("clips/")}
    assert listed == {f"clips/{p.name}" for p in (out / "clips").iterdir() if p.name != "notes.txt"}


def test_report_without_html_removes_its_earlier_page_and_nothing_else(site, tmp_path):
    out = tmp_path / "rep"
    _report(site, out)
    (out / "README.txt").write_text("mine")
    build_report([site / "results" / "good"], out, draws=20, plots=False)
    assert not (out / "index.html").exists() and not (out / "clips").exists()  # no stale page of old numbers
    assert (out / "README.txt").read_text() == "mine" and (out / "report.md").is_file()


def test_report_refuses_an_edited_report_unless_force(site, tmp_path, capsys):
    out = tmp_path / "rep"
    build_report([site / "results" / "good"], out, draws=20, plots=False)
    (out / "report.md").write_text("my notes on the numbers")
    args = ["report", str(site / "results" / "good"), "--out", str(out), "--draws", "20", "--no-plots"]
    assert main(args) == 2
    assert "report.md changed since `vocalgrad report` wrote it" in capsys.readouterr().err
    assert (out / "report.md").read_text() == "my notes on the numbers"
    assert main([*args, "--force"]) == 0 and (out / "report.md").read_text().startswith("#")


# --------------------------------------------------------------------------------------------- hub
def test_hub_keeps_git_notes_and_license_and_replaces_its_own_files(site, tmp_path, capsys):
    hub = _copy(site, "hub", tmp_path)
    (hub / ".git").mkdir()
    (hub / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (hub / "NOTES.md").write_text("notes")
    (hub / "LICENSE").write_text("licence")
    stale = hub / "pitch" / "test-00000-of-00001.parquet"  # a config an earlier build wrote, gone now
    stale.parent.mkdir()
    shutil.copy(hub / "volume" / "test-00000-of-00001.parquet", stale)
    marker = read_marker(hub)
    marker["files"]["pitch/test-00000-of-00001.parquet"] = aio.sha256_bytes(stale.read_bytes())
    (hub / MARKER).write_text(json.dumps(marker))
    assert main(["hub", str(site / "render"), "--out", str(hub), *HUB]) == 0
    assert (hub / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"  # was: all deleted
    assert (hub / "NOTES.md").read_text() == "notes" and (hub / "LICENSE").read_text() == "licence"
    assert not (hub / "pitch").exists()  # its own stale shard went, with its empty folder
    assert _tree(hub) == {**_tree(site / "hub"), ".git/HEAD": b"ref: refs/heads/main\n", "NOTES.md": b"notes",
                          "LICENSE": b"licence"}


def test_hub_of_an_earlier_version_is_adopted_keeping_foreign_files(site, tmp_path):
    hub = _copy(site, "hub", tmp_path)
    (hub / MARKER).unlink()
    (hub / "NOTES.md").write_text("notes")
    assert main(["hub", str(site / "render"), "--out", str(hub), *HUB]) == 0
    assert (hub / "NOTES.md").read_text() == "notes" and read_marker(hub)["kind"] == "hub"
    assert "NOTES.md" not in read_marker(hub)["files"]


def test_hub_refuses_an_edited_readme_unless_force(site, tmp_path, capsys):
    hub = _copy(site, "hub", tmp_path)
    with open(hub / "README.md", "a") as fh:
        fh.write("\nMy own section.\n")
    edited = _tree(hub)
    assert main(["hub", str(site / "render"), "--out", str(hub), *HUB]) == 2
    err = capsys.readouterr().err
    assert "README.md changed since `vocalgrad hub` wrote it" in err and "--force" in err
    assert _tree(hub) == edited
    assert main(["hub", str(site / "render"), "--out", str(hub), *HUB, "--force"]) == 0
    assert _tree(hub) == _tree(site / "hub")


def test_a_card_retargeted_by_publish_is_still_the_builds_own(site, tmp_path):
    from generation.publish import retarget_card

    hub = _copy(site, "hub", tmp_path)
    assert retarget_card(hub, "me/mine") is True  # what `vocalgrad publish --repo me/mine` does first
    assert main(["hub", str(site / "render"), "--out", str(hub), *HUB]) == 0  # not taken for a user's edit
    assert _tree(hub) == _tree(site / "hub")


def test_hub_refuses_a_foreign_folder_before_any_work(site, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.txt").write_text("x")
    assert main(["hub", str(site / "render"), "--out", str(other), *HUB]) == 2
    assert "is not a Hub folder" in capsys.readouterr().err and _tree(other) == {"data.txt": b"x"}


def test_leftovers_of_killed_runs_are_named_and_removed_only_when_ours(site, tmp_path, capsys):
    hub = _copy(site, "hub", tmp_path)
    dead = 2**22 + 12345  # above the kernel's default pid_max: no such process
    legacy = tmp_path / f".hub.{dead}.partial"  # the earlier version's stage, beside the folder
    stage = hub / f".stage.{aio.HOST_TAG}.{dead}.partial"
    tmp = hub / "volume" / f".x.parquet.{aio.HOST_TAG}.{dead}.tmp"
    live = tmp_path / f".hub.{os.getpid()}.partial"  # a running process's: kept
    other = hub / ".stage.otherhost.12.partial"  # another host's: kept
    for d in (legacy, stage, live, other):
        (d / "volume").mkdir(parents=True)
        (d / "volume" / "big.parquet").write_bytes(b"0" * 1000)
    tmp.write_bytes(b"half")
    assert main(["hub", str(site / "render"), "--out", str(hub), *HUB]) == 0
    err = capsys.readouterr().err
    assert "removed what an interrupted run left" in err and str(legacy) in err and str(stage) in err
    assert not legacy.exists() and not stage.exists() and not tmp.exists()
    assert live.exists() and other.exists()


def test_a_second_writer_to_one_out_is_refused(site, tmp_path, capsys):
    hub = _copy(site, "hub", tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from generation.ownership import out_lock\n"
         "with out_lock(sys.argv[1], 'vocalgrad hub (test)'):\n print('held', flush=True); time.sleep(60)", str(hub)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = _tree(hub)
        assert main(["hub", str(site / "render"), "--out", str(hub), *HUB]) == 2
        err = capsys.readouterr().err
        assert f"being written by `vocalgrad hub (test)` (pid {holder.pid}" in err  # was: both "succeeded"
        assert _tree(hub) == before
    finally:
        holder.kill()
        holder.wait()
    assert main(["hub", str(site / "render"), "--out", str(hub), *HUB]) == 0  # the kernel dropped the lock
    with out_lock(tmp_path / "rep", "x"), pytest.raises(Exception, match="being written by `x`"):
        _report(site, tmp_path / "rep")


# ------------------------------------------------------------------------------------- render, demo
def test_a_folder_holding_only_a_starting_writers_files_counts_as_empty(tmp_path):
    """``--shard I/N`` renders start together: one may look while another writes its first file."""
    from generation.ownership import check_out

    (tmp_path / f".render.json.{aio.HOST_TAG}.4242.tmp").write_text("{")
    (tmp_path / ".vocalgrad.lock").write_text("")
    assert check_out(tmp_path, "render") is None
    (tmp_path / "render.json").write_text("{}")  # then it is a render folder (of an earlier version's layout)
    assert check_out(tmp_path, "render") is None and "is a render folder" in check_out(tmp_path, "hub")


def test_render_refuses_a_foreign_folder(tmp_path, capsys):
    (tmp_path / "thesis.tex").write_text("x")
    assert main(["render", *RENDER, "--out", str(tmp_path)]) == 2
    assert "is not a render folder" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["thesis.tex"]


def test_demo_with_a_foreign_hub_folder_is_refused_before_rendering(tmp_path, capsys):
    (tmp_path / "demo" / "hub").mkdir(parents=True)
    (tmp_path / "demo" / "hub" / "mine.txt").write_text("x")
    assert main(["demo", "--out", str(tmp_path / "demo"), "--sources", "1", "--no-eval"]) == 2
    err = capsys.readouterr().err
    assert "hub: exists, is not empty and is not a Hub folder" in err and "nothing was rendered" in err
    assert "render test" not in err  # no render progress: refused before rendering (was: 15 s of rendering first)
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["hub"]


# ------------------------------------------------------------------------------------------ signals
def test_sigterm_is_handled_like_ctrl_c_and_exits_143(capsys):
    def job():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        finally:
            cleaned.append(True)  # clean-up written for Ctrl-C runs for SIGTERM too
    cleaned: list[bool] = []
    assert run_command("vocalgrad x", job) == EXIT_TERMINATED == 143
    assert cleaned and "vocalgrad x: terminated (SIGTERM); rerun the same command to resume" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_an_interrupt_during_a_commit_waits_for_its_end():
    done = []
    # as in a command: Python's own Ctrl-C handler (whatever an earlier test in this process left)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals_deferred():
                signal.raise_signal(signal.SIGINT)  # to this thread: no other thread of the process takes it
                time.sleep(0.05)
                done.append("committed")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert done == ["committed"]


def _start(code: str, *args: str) -> subprocess.Popen:
    """A child Python running ``code`` with SIGINT/SIGTERM at their defaults (see default_signals)."""
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_signals)


def _wait_for(cond, proc, timeout: float = 60.0) -> None:
    deadline = time.time() + hang_guard(timeout)
    while not cond():
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.time() < deadline, "timed out"
        time.sleep(0.01)


#: Runs `vocalgrad ARGS...` with one step slowed down (a slow disk), so the test can signal it mid-way.
SLOW = """import sys, time
import {module} as m
real = m.{func}
def slow(*a, **k):
    time.sleep(0.4)
    return real(*a, **k)
m.{func} = slow
from vocalgrad_commands.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_during_hub_leaves_no_partial_and_the_old_folder(site, tmp_path):
    hub = _copy(site, "hub", tmp_path)
    before = _tree(hub)
    proc = _start(SLOW.format(module="generation.hub", func="write_config"), "hub", str(site / "render"),
                  "--out", str(hub), *HUB)
    _wait_for(lambda: any(hub.glob(".stage.*.partial")), proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "vocalgrad hub: terminated (SIGTERM)" in err, err[-2000:]
    assert not list(hub.glob(".stage.*")) and not list(tmp_path.glob(".*.partial"))  # was: 10-43 MB left
    assert _tree(hub) == before


def test_sigterm_during_report_html_leaves_the_earlier_page_whole(site, tmp_path, monkeypatch, capsys):
    """In this process (a real SIGTERM from a watcher thread): the page and its clips are staged and
    committed with interrupts held, so the earlier page stays whole."""
    import threading

    import analysis.report.html_page as hp

    out = tmp_path / "rep"
    _report(site, out)
    before = _tree(out)
    real = hp.write_clips
    monkeypatch.setattr(hp, "write_clips", lambda *a, **k: (time.sleep(0.5), real(*a, **k))[1])

    def kill_when_staged():
        deadline = time.time() + hang_guard(60)
        while not any(out.glob(".stage.*.partial/report.json")) and time.time() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)

    watcher = threading.Thread(target=kill_when_staged)
    watcher.start()
    code = main(["report", str(site / "results" / "good"), "--out", str(out), "--draws", "20", "--no-plots",
                 "--html", "--data", str(site / "render"), "--max-clips", "2"])
    watcher.join()
    assert code == 143 and "vocalgrad report: terminated (SIGTERM)" in capsys.readouterr().err
    assert _tree(out) == before and not list(out.glob(".stage.*"))  # was: the old page with 4 of 32 clips


def _render_with_two_workers(out, psutil):
    """``render --jobs 2`` in a child process, once it has written a clip: the process and its workers."""
    proc = _start("import sys; from vocalgrad_commands.cli import main; sys.exit(main(sys.argv[1:]))", "render",
                  "--source", "tones", "--sources", "4", "--categories", "volume", "--jobs", "2", "--quiet",
                  "--out", str(out))
    _wait_for(lambda: any(out.glob("clips/volume/*.flac")), proc)
    return proc, psutil.Process(proc.pid).children()


def test_sigterm_to_render_with_two_jobs_ends_its_workers(tmp_path):
    psutil = pytest.importorskip("psutil")
    out = tmp_path / "r"
    proc, workers = _render_with_two_workers(out, psutil)
    assert len(workers) == 2
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "vocalgrad render: terminated (SIGTERM)" in err, err[-2000:]
    _, alive = psutil.wait_procs(workers, timeout=hang_guard(5))
    assert not alive  # was: orphaned workers writing part files after the command had exited
    files = sorted(p for p in out.rglob("*") if p.is_file())
    time.sleep(0.5)
    assert sorted(p for p in out.rglob("*") if p.is_file()) == files


def test_render_workers_end_when_the_command_is_killed(tmp_path):
    psutil = pytest.importorskip("psutil")
    out = tmp_path / "r"
    proc, workers = _render_with_two_workers(out, psutil)
    proc.kill()  # SIGKILL: no clean-up in the command at all
    proc.communicate(timeout=60)
    _, alive = psutil.wait_procs(workers, timeout=hang_guard(5))
    assert not alive  # the kernel tells each worker its parent died (PR_SET_PDEATHSIG)
