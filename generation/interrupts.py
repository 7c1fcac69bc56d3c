"""Ctrl-C and SIGTERM from a command's first instruction to its exit.

A command (``vocalgrad ...``, ``vocalgrad-eval``) meets an interrupt in one of three phases:

1. **Start-up** (imports, building the parser): :func:`at_start` is the first statement of an
   entry-point module; when the module runs as the command, a SIGINT or SIGTERM prints one line and
   ends the process at once with 130 / 143. Nothing has been written yet, so there is nothing to
   clean up (was: a traceback from whichever import was running).
2. **The command** (:func:`generation.cli_errors.run_command`): SIGINT raises ``KeyboardInterrupt``
   as usual, SIGTERM too, and :func:`recorded` notes that one came. An interrupt that some code
   swallowed (a ``KeyboardInterrupt`` raised inside a ``__del__`` or a weakref callback, where
   Python prints "Exception ignored" and goes on) still ends the command with 130 / 143:
   :func:`swallowed` says so when the command returns.
3. **Exit** (after the status is decided: ``atexit`` callbacks, joining threads): the start-up
   handler is back, so an interrupt there is one line and the exit status 130 / 143 (was:
   "Exception ignored in atexit callback" and exit 0).

Worker processes (:func:`worker_pool`) are created with both signals blocked, so a Ctrl-C that
reaches the whole process group while a worker starts is never raised inside it: the worker
ignores SIGINT before it unblocks it (:func:`worker_signals`), the command
stops its workers itself.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["COMMANDS", "at_start", "command_name", "note", "recorded", "signals_blocked", "stop_now", "swallowed", "worker_pool", "worker_signals"]

#: The console commands (the names of their scripts).
COMMANDS = ("vocalgrad", "vocalgrad-eval")
_WANTED = (signal.SIGINT, signal.SIGTERM)
_prog = "vocalgrad"
_seen: list[int] = []


def command_name(argv: list[str]) -> str:
    """``vocalgrad render`` from ``[.../vocalgrad, --debug, render, ...]``; the script's name alone for
    ``vocalgrad-eval`` or when no sub-command is given."""
    name = Path(argv[0]).name if argv else "vocalgrad"
    if name != "vocalgrad" and name in COMMANDS:
        return name
    sub = next((a for a in argv[1:] if not a.startswith("-")), "")
    return f"vocalgrad {sub}" if re.fullmatch(r"[a-z][a-z0-9-]{0,40}", sub) else "vocalgrad"


def stop_now(signum: int, frame=None) -> None:
    """The handler of the start-up and exit phases: one line on stderr, exit 130 (SIGINT) or 143 (SIGTERM)
    at once (no clean-up runs: nothing was written yet, or the command's own clean-up is done)."""
    what = "terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted"
    try:
        os.write(2, f"{_prog}: {what}; rerun the same command to resume\n".encode())
    finally:
        os._exit(128 + signum)


def at_start(module_name: str, prog: str | None = None) -> None:
    """First statement of an entry-point module: when it runs as the command (its script is one of
    :data:`COMMANDS`, or the module is ``__main__``), SIGINT and SIGTERM end the start-up with one line
    (:func:`stop_now`). Imported by a program, nothing changes. A signal ignored when the process
    started (``nohup``, a background job) stays ignored."""
    global _prog
    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    if module_name != "__main__" and script not in COMMANDS:
        return
    if threading.current_thread() is not threading.main_thread():
        return
    _prog = prog or command_name([script or "vocalgrad", *sys.argv[1:]])
    for s in _WANTED:
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, stop_now)


def _record_int(signum, frame):
    _seen.append(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def recorded() -> Iterator[None]:
    """Inside the block (a command's work), SIGINT raises ``KeyboardInterrupt`` and is noted for
    :func:`swallowed`; the handler before the block is back after it. Outside the main thread, or
    with SIGINT ignored, the block runs unchanged."""
    _seen.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous not in (signal.default_int_handler, stop_now):
        yield
        return
    signal.signal(signal.SIGINT, _record_int)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _seen.clear()


def note(signum: int) -> None:
    """Note a signal the command received (SIGTERM's handler calls it)."""
    _seen.append(signum)


def swallowed() -> int | None:
    """The first signal noted inside :func:`recorded` (SIGINT or SIGTERM), None if none came; asked
    when the command returned normally, it means some code swallowed the ``KeyboardInterrupt``."""
    return _seen[0] if _seen else None


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Block SIGINT and SIGTERM in this thread inside the block; one that comes meanwhile is acted on
    after it. Processes forked and threads started inside inherit the block (a worker unblocks it once
    it ignores SIGINT)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _WANTED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def worker_signals() -> None:
    """Initializer of a worker process (``multiprocessing.Pool(initializer=...)``): it ignores Ctrl-C
    (the command stops its workers itself), dies on SIGTERM (what ``Pool.terminate`` sends), and on
    Linux gets SIGTERM when the command that started it dies, however it died."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # created blocked (generation.interrupts.worker_pool)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))
    if sys.platform.startswith("linux"):
        import ctypes

        parent = os.getppid()
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no prctl
            return
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)


def worker_pool(ctx, jobs: int):
    """``ctx.Pool(jobs)`` whose workers ignore Ctrl-C from their first instruction and die on SIGTERM
    (:func:`worker_signals`); created with both signals blocked, so an interrupt
    during the start of a worker reaches the command only."""
    with signals_blocked():
        return ctx.Pool(jobs, initializer=worker_signals)
