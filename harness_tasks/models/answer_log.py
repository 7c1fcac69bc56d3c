"""Resumable per-clip answer log shared by every VocalGrad adapter (torch-free).

The log is a folder of JSON-lines files. Each line is one answer::

    {"key": "<sha256>", "clip_id": "...", "answer": "...", "error": false, "max_new_tokens": 128, "t": 1733...}

(``vocalgrad-hf`` adds ``"generation"``: the resolved generation settings it decoded with.)

``key`` is :func:`answer_key` of everything that decides an answer: toolkit version, adapter
identity (class, model id, revision, dtype, adapter settings), prompt, generation settings, the
audio order and the sha256 of every clip's audio. Lines are appended and ``fsync``-ed one by one,
so a run killed at any moment (SIGKILL, power loss) loses at most the answer being written; a
cut-off last line is skipped when the log is read back. Error answers are written for the record
(``"error": true``) but never reused: a rerun asks for them again.

Several processes may share one folder: process ``r`` of a distributed run appends to
``answers.rank<r>.jsonl`` (rank 0 and single runs: ``answers.jsonl``); every ``*.jsonl`` file
of the folder is read back.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

__all__ = ["AnswerLog", "answer_key", "default_log_root", "toolkit_version"]


def toolkit_version() -> str:
    """Installed VocalGrad toolkit version (part of every answer key)."""
    try:
        from importlib.metadata import version

        return version("vocalgrad")
    except Exception:  # not installed (running from a checkout)
        return "0+unknown"


def default_log_root() -> Path:
    """``$VOCALGRAD_CACHE/answers`` or ``~/.cache/vocalgrad/answers``."""
    root = os.environ.get("VOCALGRAD_CACHE")
    return (Path(root).expanduser() if root else Path.home() / ".cache" / "vocalgrad") / "answers"


def answer_key(identity: Any, request: Any) -> str:
    """sha256 of ``[toolkit version, identity, request]`` in canonical JSON."""
    blob = json.dumps([toolkit_version(), identity, request], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class AnswerLog:
    """Append-only, fsync-per-line answer store in ``folder`` (thread-safe).

    Parameters
    ----------
    folder : path
        Created if missing. All ``*.jsonl`` files in it are read.
    rank : int
        Process index; rank ``r > 0`` writes ``answers.rank<r>.jsonl``.
    """

    def __init__(self, folder: str | os.PathLike, *, rank: int = 0) -> None:
        self.folder = Path(folder).expanduser()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / ("answers.jsonl" if rank == 0 else f"answers.rank{rank}.jsonl")
        self._lock = threading.Lock()
        self._data: dict[str, str] = {}
        self.n_errors_logged = 0
        for file in sorted(self.folder.glob("*.jsonl")):
            with open(file, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    try:
                        obj = json.loads(line)
                        if obj.get("error"):
                            self.n_errors_logged += 1
                            continue
                        self._data[obj["key"]] = obj["answer"]
                    except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                        continue  # a line cut off by an interruption
        self._fh = None

    def _open(self):
        if self._fh is None:
            fh = open(self.path, "a+b")
            if fh.tell():  # start on a fresh line if the last write was cut off
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")
            self._fh = fh
        return self._fh

    def get(self, key: str) -> str | None:
        """The logged (non-error) answer for ``key``, or None."""
        return self._data.get(key)

    def put(self, key: str, answer: str, *, error: bool = False, **info: Any) -> None:
        """Append one answer and fsync it."""
        import time

        line = json.dumps({"key": key, "answer": str(answer), "error": bool(error), **info, "t": round(time.time(), 3)},
                          ensure_ascii=False, default=str) + "\n"
        with self._lock:
            fh = self._open()
            fh.write(line.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
            if not error:
                self._data[key] = str(answer)

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data
