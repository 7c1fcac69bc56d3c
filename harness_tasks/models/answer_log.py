"""Resumable per-clip answer log shared by every VocalGrad adapter (torch-free).

The log is a folder of JSON-lines files. Each line is one answer::

    {"key": "<sha256>", "clip_id": "...", "answer": "...", "error": false, "max_new_tokens": 128, "t": 1733...}

(``vocalgrad-hf`` adds ``"generation"``: the resolved generation settings it decoded with.)

``key`` is :func:`answer_key` of everything that decides an answer: toolkit version, adapter
identity (class, model id, revision, dtype, adapter settings), prompt, generation settings, the
audio order and the sha256 of every clip's audio. Lines are appended and ``fsync``-ed one by one,
so a run killed at any moment (SIGKILL, power loss) loses at most the answer being written; a
cut-off last line is skipped when the log is read back. Error answers are written for the record
(``"error": true``) but never reused: a rerun asks for them again. A line whose ``key`` or ``answer``
is not a string (``null``, ``5``, ``{}``: not written by this module) is not reused either; a warning
names the file and line.

Several processes may share one folder: process ``r`` of a distributed run appends to
``answers.rank<r>.jsonl`` (rank 0 and single runs: ``answers.jsonl``); every ``*.jsonl`` file
of the folder is read back. Independent runs sharing a folder (two evaluations started at once)
do not ask twice for the same clip: :meth:`AnswerLog.claim` re-reads what the others logged and
claims keys before they are asked (:mod:`.claims`), and appends happen under the folder's lock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from vocalgrad import VocalGradError

from .claims import Claims

__all__ = ["AnswerLog", "answer_key", "ask_claimed", "default_log_root", "toolkit_version"]

log = logging.getLogger("vocalgrad")


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
        if self.folder.exists() and not self.folder.is_dir():
            raise VocalGradError(f"answer log {self.folder}: a file, not a folder; the answer log is a folder of "
                                 "*.jsonl files: point VOCALGRAD_ANSWER_LOG (or --model_args answer_log=) at a "
                                 "folder, or leave it unset for the default")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / ("answers.jsonl" if rank == 0 else f"answers.rank{rank}.jsonl")
        self._lock = threading.RLock()
        self._data: dict[str, str] = {}
        self._read_upto: dict[Path, int] = {}  # file -> bytes read (whole lines only)
        self._lines_read: dict[Path, int] = {}  # file -> lines read (for the line numbers of warnings)
        #: error lines read from the folder (never reused)
        self.n_errors_logged = 0
        self.claims = Claims(self.folder)
        self.refresh()
        self._fh = None

    def refresh(self) -> None:
        """Read the lines appended to the folder's files since the last read (other processes' answers).

        Only whole lines are read; a line cut off by an interruption is skipped once completed.
        """
        with self._lock:
            for file in sorted(self.folder.glob("*.jsonl")):
                start = self._read_upto.get(file, 0)
                try:
                    with open(file, "rb") as fh:
                        fh.seek(start)
                        data = fh.read()
                except OSError:
                    continue
                end = data.rfind(b"\n") + 1
                self._read_upto[file] = start + end
                first = self._lines_read.get(file, 0) + 1
                lines = data[:end].decode("utf-8", errors="replace").splitlines()
                self._lines_read[file] = first - 1 + len(lines)
                bad: list[int] = []
                for lineno, line in enumerate(lines, first):
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a line cut off by an interruption
                    if not isinstance(obj, dict) or not isinstance(obj.get("key"), str):
                        bad.append(lineno)
                        continue
                    if obj.get("error"):
                        self.n_errors_logged += 1
                        continue
                    if not isinstance(obj.get("answer"), str):  # null, 5, {}: not an answer a model gave
                        bad.append(lineno)
                        continue
                    self._data[obj["key"]] = obj["answer"]
                if bad:
                    log.warning("%s:%d: %d answer-log line(s) without a string key and answer were not reused "
                                "(lines %s); those clips are asked again", file, bad[0], len(bad),
                                ", ".join(map(str, bad[:10])) + (", ..." if len(bad) > 10 else ""))

    def claim(self, keys, *, limit: int | None = None) -> tuple[dict[str, str], list[str], list[str]]:
        """Before asking the model: which of ``keys`` are answered, ours to ask, or being asked elsewhere.

        Under the folder's lock the log is re-read (:meth:`refresh`); a key another process answered
        meanwhile is *found*; one that a live other process has claimed is *held*; of the rest, up to
        ``limit`` are claimed for this process (*mine*: ask the model, then :meth:`put` releases it).

        Returns
        -------
        found : dict
            Key -> answer logged since this log was read.
        mine : list of str
            Keys this process now claims (and earlier claims of it among ``keys``).
        held : list of str
            Keys a live other process claims: wait for them (call again later).
        """
        found: dict[str, str] = {}
        mine: list[str] = []
        held: list[str] = []
        with self._lock, self.claims.mutex():
            self.refresh()
            others = self.claims.held_by_others() if self.claims.available else {}
            new: list[str] = []
            for key in dict.fromkeys(keys):
                if key in self._data:
                    found[key] = self._data[key]
                elif key in self.claims.mine:
                    mine.append(key)
                elif key in others:
                    held.append(key)
                elif limit is None or len(new) < limit:
                    new.append(key)
            self.claims.claim(new)
        return found, mine + new, held

    def release(self, keys) -> None:
        """Give up this process's claims on ``keys`` without answering them (e.g. interrupted)."""
        self.claims.release(keys)

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
        with self._lock, self.claims.mutex():  # no reader under the lock sees half a line
            fh = self._open()
            fh.write(line.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
            if not error:
                self._data[key] = str(answer)
            self.claims.release([key])  # answered (an error answer too: whoever needs it asks again)

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
        self.claims.close()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data


#: Seconds between looks at a shared answer log while another process asks for clips this run needs.
CLAIM_POLL_S = 0.25


def ask_claimed(logbook: AnswerLog, keys, todo: list[int], ask, found, *, chunk: int, who: str = "vocalgrad") -> int:
    """Get answers for ``todo`` without asking for a clip another process sharing ``logbook`` asks for.

    Each round claims up to ``chunk`` of the keys nobody holds (:meth:`AnswerLog.claim`), hands the
    answers other processes logged meanwhile to ``found(i, answer)``, calls ``ask(indices)`` for the
    claimed ones (its answers reach :meth:`AnswerLog.put`, which releases them), and waits while every
    remaining key is being asked by another live process. A process that dies loses its claims at
    once (:mod:`.claims`), so nothing waits for it.

    Parameters
    ----------
    logbook : AnswerLog
    keys : sequence of str
        Answer key of each query (indexed by the entries of ``todo``).
    todo : list of int
        Indices still without an answer.
    ask, found : callable
        ``ask(indices)`` asks the model; ``found(index, answer)`` takes an answer from the log.
    chunk : int
        Most keys claimed per round.

    Returns
    -------
    int
        How many answers came from other processes.
    """
    import time

    pending, from_others, waited, next_note = list(todo), 0, 0.0, 0.0
    try:
        while pending:
            got, mine, held = logbook.claim([keys[i] for i in pending], limit=chunk)
            ours = set(mine)
            for i in pending:
                if keys[i] in got:
                    found(i, got[keys[i]])
                    from_others += 1
            asked = [i for i in pending if keys[i] in ours]
            if asked:
                ask(asked)
            pending = [i for i in pending if keys[i] not in got and keys[i] not in ours]
            if pending and not asked:
                if waited >= next_note:
                    log.warning("%s: %d clip(s) are being asked by another process sharing the answer log %s; "
                                "waiting for its answers", who, len(held), logbook.folder)
                    next_note = waited + 60.0
                time.sleep(CLAIM_POLL_S)
                waited += CLAIM_POLL_S
    finally:
        logbook.release([keys[i] for i in pending])  # interrupted: let the others ask for what we claimed
    if from_others:
        log.warning("%s: %d answer(s) came from another process sharing the answer log %s", who, from_others,
                    logbook.folder)
    return from_others
