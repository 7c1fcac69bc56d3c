"""``vocalgrad-eval --output_path``: checked before the model is asked, and the run fails if lm-eval could
not save its results.

lm-eval 0.4.13 writes ``DIR/<run>/results_<time>.json`` (and the sample logs) at the end of the run and,
when that fails (a read-only file system, a file where a folder goes), logs a warning and exits 0 with
the results table printed: the evaluation's cost is spent and nothing is on disk. Here

* :func:`output_path_problem` refuses, before anything is loaded, an ``--output_path`` that is an
  existing file, lies under a file, or whose nearest existing folder cannot be written (a probe file is
  made and removed there); a symbolic link loop is refused too (:mod:`generation.option_types`);
* :func:`watch_saves` notes lm-eval's "Could not save ..." warnings (with the reason it logs next) and
  :func:`unsaved_error` turns them into the command's one-line error, exit 2.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import vocalgrad

__all__ = ["OutputPathError", "output_path_problem", "unsaved_error", "watch_saves"]


class OutputPathError(vocalgrad.VocalGradError, ValueError):
    """An ``--output_path`` lm-eval cannot write its results to, or results it did not save."""


def _nearest_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if os.path.lexists(p):
            return p
    return Path(".")  # pragma: no cover - "/" always exists


def output_path_problem(path: str, flag: str = "--output_path") -> str | None:
    """Why lm-eval could not write its results under ``path`` (one line naming it), or None."""
    from generation.option_types import out_folder_problem

    problem = out_folder_problem(path, what=f"{flag} {path}")
    if problem:
        return problem
    folder = _nearest_existing(Path(path))
    try:
        fd, probe = tempfile.mkstemp(prefix=".vocalgrad-eval-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:  # named by the folder, never by the probe's temporary name
        return (f"{flag} {path}: the results cannot be written there (creating a file in {folder} failed: "
                f"{exc.strerror or exc}); give another path")
    return None


class _SaveRecorder:
    """Stands in for lm-eval's evaluation-tracker logger: forwards every call, notes failed saves."""

    def __init__(self, real):
        self.real = real
        self.failures: list[list[str]] = []

    def warning(self, msg, *args, **kwargs):
        if str(msg).startswith("Could not save"):
            self.failures.append([str(msg), ""])
        return self.real.warning(msg, *args, **kwargs)

    def info(self, msg, *args, **kwargs):
        if self.failures and not self.failures[-1][1]:
            self.failures[-1][1] = str(msg)  # lm-eval logs repr(exception) right after the warning
        return self.real.info(msg, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.real, name)


def watch_saves() -> _SaveRecorder:
    """Note lm-eval's failed saves from now on (idempotent); returns the recorder, its notes cleared."""
    import lm_eval.loggers.evaluation_tracker as tracker

    if not isinstance(tracker.eval_logger, _SaveRecorder):
        tracker.eval_logger = _SaveRecorder(tracker.eval_logger)
    tracker.eval_logger.failures.clear()
    return tracker.eval_logger


def unsaved_error(recorder: _SaveRecorder, path: str | None) -> OutputPathError | None:
    """The command's error when lm-eval could not save results, None when every save went through."""
    if not recorder.failures:
        return None
    what, reason = recorder.failures[0]
    return OutputPathError(
        f"--output_path {path}: lm-eval could not save the results ({what.lower().removeprefix('could not ')}"
        f"{': ' + reason if reason else ''}); the evaluation ran but is not on disk: make the folder writable "
        "or choose another --output_path and rerun (answers already in the answer log are not asked again)")
