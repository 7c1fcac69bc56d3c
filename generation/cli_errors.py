"""The one error path of the commands (``vocalgrad``, ``vocalgrad-eval``): an expected failure ends
in one or two lines naming the file and what to do, with a documented exit status; a traceback
only with ``--debug`` or ``VOCALGRAD_DEBUG=1``.

Expected failures are the toolkit's own errors (:class:`vocalgrad.VocalGradError`: bad input, a
folder that is not what the command needs, an unfinished render...) and what the system says about
files (:class:`OSError`: no space left, a read-only or forbidden folder, a missing file; the file is
named). Anything else is a bug and keeps its traceback.

Exit status of every command:

====  ==================================================================================
0     done (``vocalgrad verify``: every check passed)
1     the command ran and found problems (``vocalgrad verify``: some check failed); a
      traceback (an unexpected error, i.e. a bug) also exits with 1
2     an expected failure: bad input or options, a file or folder that cannot be used,
      no space left, a read-only folder; the message says which file and what to do
130   interrupted (Ctrl-C, SIGINT); rerun the same command to resume
143   terminated (SIGTERM, what batch schedulers and ``kill`` send): handled like Ctrl-C, the
      unit in flight is finished or rolled back, worker processes end with the command and no
      staged folder stays; rerun the same command to resume
141   the reader of the output went away (e.g. ``| head``); nothing is printed
====  ==================================================================================
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import vocalgrad

from . import interrupts
from .interrupts import worker_signals  # noqa: F401 (re-exported: the initializer of worker pools)

__all__ = ["DEBUG_ENV", "EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_PIPE", "EXIT_PROBLEMS", "EXIT_TERMINATED",
           "debug_from", "debug_wanted", "explain", "report_error", "run_command", "set_debug",
           "sigterm_as_interrupt", "terminated", "worker_signals"]

#: Environment switch: ``VOCALGRAD_DEBUG=1`` shows the traceback of an expected failure too.
DEBUG_ENV = "VOCALGRAD_DEBUG"
EXIT_OK, EXIT_PROBLEMS, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_PIPE = 0, 1, 2, 130, 141
#: Exit status after SIGTERM (128 + 15, what a shell reports for a process SIGTERM ended).
EXIT_TERMINATED = 143

_debug = False

#: What to do about an OSError, by errno (the message names the file first).
_OS_ADVICE = {
    errno.ENOSPC: "no space left on device; free some space (or write elsewhere) and rerun the same command: "
                  "finished files are kept, none is half-written",
    errno.EDQUOT: "disk quota exceeded; free some space (or write elsewhere) and rerun the same command: "
                  "finished files are kept, none is half-written",
    errno.EROFS: "read-only file system; make it writable or write elsewhere",
    errno.EACCES: "permission denied; check the permissions of the file and its folder, or use another folder",
    errno.EPERM: "operation not permitted; check the permissions of the file and its folder, or use another folder",
    errno.ENOENT: "no such file or folder; check the path",
    errno.ENOTDIR: "not a folder; check the path",
    errno.EISDIR: "is a folder, a file was expected; check the path",
    errno.EEXIST: "already exists; remove it or choose another path",
    errno.ENAMETOOLONG: "file name too long for this file system (most allow 255 characters per name); "
                        "choose a shorter name",
}


def set_debug(on: bool = True) -> None:
    """Show tracebacks of expected failures from now on (``vocalgrad --debug``)."""
    global _debug
    _debug = bool(on)


@contextmanager
def debug_from(argv: list[str]) -> Iterator[list[str]]:
    """Take ``--debug`` out of a command line (anywhere in it) and show tracebacks inside the block if
    it was there; yields the command line without it. The switch is off again afterwards."""
    set_debug("--debug" in argv)
    try:
        yield [a for a in argv if a != "--debug"]
    finally:
        set_debug(False)


def debug_wanted() -> bool:
    """Whether ``--debug`` was given or ``VOCALGRAD_DEBUG`` is set to something other than 0 / empty."""
    return _debug or os.environ.get(DEBUG_ENV, "").strip() not in ("", "0", "false", "no")


def explain(exc: BaseException) -> str | None:
    """The one- or two-line message of an expected failure, ``None`` for anything else (a bug)."""
    if isinstance(exc, vocalgrad.VocalGradError):
        return str(exc)
    if isinstance(exc, OSError) and exc.errno is None:  # raised by the toolkit with its own message
        return str(exc)
    if isinstance(exc, OSError):
        what = _OS_ADVICE.get(exc.errno) or (exc.strerror or str(exc))
        if exc.errno == errno.EEXIST and exc.filename is not None and os.path.isfile(exc.filename):
            what = "exists and is not a folder, where a folder is needed; remove it or choose another path"
        names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
        return f"{' -> '.join(names)}: {what}" if names else f"{what} ({exc.strerror or exc})"
    return None


def report_error(prog: str, exc: BaseException, code: int = EXIT_ERROR) -> int:
    """Print ``PROG: error: MESSAGE`` on stderr and return ``code``; raise ``exc`` again under debug.

    For commands that catch their own input errors (e.g. a ``ValueError`` of a bad option): the
    message is :func:`explain`'s when it has one, else ``str(exc)``.
    """
    if debug_wanted():
        raise exc
    print(f"{prog}: error: {explain(exc) or exc}", file=sys.stderr)
    return code


_terminated = False


def terminated() -> bool:
    """Whether the :class:`KeyboardInterrupt` being handled came from SIGTERM (:func:`sigterm_as_interrupt`)."""
    return _terminated


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Inside the block, SIGTERM raises :class:`KeyboardInterrupt` in the main thread as SIGINT does
    (:func:`terminated` then says it was SIGTERM), so every clean-up written for Ctrl-C runs for it
    too; a second SIGTERM during the clean-up is ignored (SIGKILL still ends the process). A SIGTERM
    that was ignored when the process started stays ignored; outside the main thread the block runs
    unchanged."""
    global _terminated
    _terminated = False
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or \
            previous not in (signal.SIG_DFL, interrupts.stop_now):
        yield
        return

    def terminate(signum, frame):
        global _terminated
        _terminated = True
        interrupts.note(signum)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: let the clean-up run
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_command(prog: str, func: Callable[[], int | None]) -> int:
    """Call ``func()`` and return its exit status; an expected failure becomes one message and status 2,
    Ctrl-C status 130, SIGTERM status 143 (see the module docstring), also when some code swallowed the
    ``KeyboardInterrupt`` (:func:`generation.interrupts.swallowed`). Unexpected errors propagate (a
    traceback)."""
    try:
        with sigterm_as_interrupt(), interrupts.recorded():
            code = int(func() or 0)
            if interrupts.swallowed() is None:
                return code
            raise KeyboardInterrupt  # some code swallowed it ("Exception ignored ..."): still an interrupt
    except KeyboardInterrupt:
        if debug_wanted():
            raise
        if terminated():
            print(f"{prog}: terminated (SIGTERM); rerun the same command to resume", file=sys.stderr)
            return EXIT_TERMINATED
        print(f"{prog}: interrupted; rerun the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        if debug_wanted():
            raise
        devnull = os.open(os.devnull, os.O_WRONLY)  # no second error when Python flushes stdout at exit
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE
    except Exception as exc:
        if explain(exc) is None:
            raise
        return report_error(prog, exc)
