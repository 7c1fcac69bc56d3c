"""Ctrl-C and SIGTERM at every moment of a command: during its imports, while it parses, while its
workers render, after an interrupt some code swallowed, and while it exits. Each moment is reached by a
marker the child process prints (it pauses there until the signal comes), never by a sleep whose
verdict depends on the machine's speed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vocalgrad_commands.cli import main
from generation.cli_errors import EXIT_INTERRUPTED, EXIT_TERMINATED, run_command

from _harness_helpers import default_signals
from _timing import hang_guard

ROOT = Path(__file__).resolve().parent.parent
RENDER = ["--source", "tones", "--sources", "2", "--categories", "volume", "--quiet"]

#: A child that runs a command (``module`` as ``__main__``, or the installed console ``script``) and
#: pauses at the import of ``target`` (or, with ``target`` = ``atexit``, while it exits), printing PAUSED.
CHILD = r"""
import atexit, runpy, sys, time
target, how, entry, guard, *args = sys.argv[1:]

def pause():
    sys.stderr.write("PAUSED\n"); sys.stderr.flush()
    deadline = time.monotonic() + float(guard)  # a hang guard: the test signals as soon as it reads PAUSED
    while time.monotonic() < deadline:
        time.sleep(0.02)

class Pause:
    def find_spec(self, name, path=None, target_=None):
        if name == target:
            sys.meta_path.remove(self)
            pause()
        return None

if target == "atexit":
    atexit.register(pause)
else:
    sys.meta_path.insert(0, Pause())
sys.argv = [entry, *args]
if how == "script":
    runpy.run_path(entry, run_name="__main__")
else:
    runpy.run_module(entry, run_name="__main__", alter_sys=True)
"""


def _script(name: str) -> str | None:
    path = Path(sys.executable).parent / name
    return str(path) if path.is_file() else None


def _paused_child(target: str, how: str, entry: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, target, how, entry, str(hang_guard(120)), *args],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, preexec_fn=default_signals)
    line = proc.stderr.readline()
    assert line == "PAUSED\n", line + proc.communicate(timeout=hang_guard(60))[1][-2000:]
    return proc


def _one_line(proc: subprocess.Popen, sig: int) -> str:
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=hang_guard(120))
    lines = err.splitlines()
    want = EXIT_TERMINATED if sig == signal.SIGTERM else EXIT_INTERRUPTED
    assert proc.returncode == want and len(lines) == 1, (proc.returncode, err[-3000:])
    return lines[0]


# (what runs, the module whose import it is paused in, the command's name in the line): the commands the
# campaign interrupted while they imported (render, hub, leaderboard) and vocalgrad-eval
MOMENTS = [
    ("vocalgrad_commands.cli", "argparse", "vocalgrad render"),                # the entry module's first imports
    ("vocalgrad_commands.cli", "generation.render_cli", "vocalgrad hub"),      # the sub-commands' imports (the parser)
    ("vocalgrad_commands.cli", "analysis.leaderboard", "vocalgrad leaderboard"),
    ("harness_tasks.cli", "generation.cli_errors", "vocalgrad-eval"),          # vocalgrad-eval's first imports
]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("entry,target,prog", MOMENTS, ids=[m[1] for m in MOMENTS])
def test_an_interrupt_during_start_up_is_one_line(entry, target, prog, sig, tmp_path):
    """Was: a traceback from the import running (SIGINT), or a silent death (SIGTERM)."""
    out = tmp_path / "out"
    args = {"vocalgrad render": ["render", *RENDER, "--out", str(out)],
            "vocalgrad hub": ["hub", str(tmp_path / "render"), "--out", str(out)],
            "vocalgrad leaderboard": ["leaderboard", str(tmp_path / "results"), "--out", str(out)],
            "vocalgrad-eval": ["--model", "vocalgrad-oracle", "--tasks", "vocalgrad_volume", "--limit", "1",
                               "--output_path", str(out)]}[prog]
    proc = _paused_child(target, "module", entry, *args)
    what = "terminated (SIGTERM)" if sig == signal.SIGTERM else "interrupted"
    assert _one_line(proc, sig) == f"{prog}: {what}; rerun the same command to resume"
    assert not out.exists()


@pytest.mark.parametrize("name,target", [("vocalgrad", "argparse"), ("vocalgrad", "analysis.show"),
                                         ("vocalgrad-eval", "generation.cli_errors")])
def test_the_console_scripts_handle_an_interrupt_during_their_imports(name, target, tmp_path):
    script = _script(name)
    if script is None:
        pytest.skip(f"no {name} script next to {sys.executable}")
    args = ["hub", str(tmp_path / "r"), "--out", str(tmp_path / "h")] if name == "vocalgrad" else ["--help"]
    proc = _paused_child(target, "script", script, *args)
    prog = "vocalgrad hub" if name == "vocalgrad" else name
    assert _one_line(proc, signal.SIGINT) == f"{prog}: interrupted; rerun the same command to resume"


def test_an_interrupt_while_the_command_exits_is_one_line(tmp_path):
    """Was: "Exception ignored in atexit callback" and exit 0."""
    proc = _paused_child("atexit", "module", "vocalgrad_commands.cli", "render", "--help")
    assert _one_line(proc, signal.SIGINT) == "vocalgrad render: interrupted; rerun the same command to resume"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_swallowed_interrupt_still_ends_the_command_with_130(capsys):
    """A KeyboardInterrupt raised inside a __del__ is printed as "Exception ignored" and swallowed by
    Python; the command must not then go on and report success (was: exit 0)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a command

    class Finalised:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)

    def job():
        Finalised()  # collected at once: its __del__ raises KeyboardInterrupt, which Python ignores
        done.append(True)
        return 0

    done: list[bool] = []
    try:
        assert run_command("vocalgrad x", job) == EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, previous)
    err = capsys.readouterr().err
    assert done and err.strip().endswith("vocalgrad x: interrupted; rerun the same command to resume"), err
    assert run_command("vocalgrad x", lambda: 0) == 0  # the next command starts afresh


def test_an_interrupt_in_the_parser_phase_in_process_is_one_line(monkeypatch, capsys):
    """main() called from Python: the sub-commands' imports run under the command's handling too."""
    import vocalgrad_commands.cli as cli

    def interrupted_build():
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "build_parser", interrupted_build)
    assert main(["hub", "x", "--out", "y"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "vocalgrad hub: interrupted; rerun the same command to resume\n"


def test_ctrl_c_to_the_process_group_of_render_with_two_jobs_then_a_rerun_finishes_bit_identical(tmp_path):
    """Ctrl-C in a terminal reaches the command and its workers: exit 130, one line, no "Exception
    ignored" from a worker, no worker left; the rerun gives the clips of an uninterrupted render."""
    psutil = pytest.importorskip("psutil")
    out = tmp_path / "r"
    args = ["render", "--source", "tones", "--sources", "4", "--categories", "volume", "--jobs", "2", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "vocalgrad_commands.cli", *args, "--out", str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=default_signals)
    deadline = time.time() + hang_guard(120)
    while not any(out.glob("clips/volume/*.flac")):
        assert proc.poll() is None and time.time() < deadline, proc.communicate()[1][-2000:]
        time.sleep(0.01)
    workers = psutil.Process(proc.pid).children()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=hang_guard(120))
    assert proc.returncode == EXIT_INTERRUPTED and err == \
        "vocalgrad render: interrupted; rerun the same command to resume\n", err[-3000:]
    _, alive = psutil.wait_procs(workers, timeout=hang_guard(10))
    assert not alive
    assert main([*args, "--out", str(out)]) == 0
    assert main([*args, "--out", str(tmp_path / "clean")]) == 0
    clips = sorted(p.relative_to(out) for p in (out / "clips").rglob("*.flac"))
    assert clips == sorted(p.relative_to(tmp_path / "clean") for p in (tmp_path / "clean" / "clips").rglob("*.flac"))
    assert all((out / c).read_bytes() == (tmp_path / "clean" / c).read_bytes() for c in clips)


def test_workers_are_started_with_interrupts_blocked():
    """A Ctrl-C that comes while a worker starts is never raised inside it (was: the fork inherited the
    command's handler until its initializer ran)."""
    import multiprocessing as mp

    from generation.interrupts import signals_blocked, worker_pool

    with signals_blocked():
        assert signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    pool = worker_pool(mp.get_context("fork"), 1)
    try:
        handler, mask = pool.apply(_signal_state)
    finally:
        pool.terminate()
        pool.join()
    assert handler == signal.SIG_IGN and signal.SIGINT not in mask and signal.SIGTERM not in mask


def _signal_state():
    return signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, [])
