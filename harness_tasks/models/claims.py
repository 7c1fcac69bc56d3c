"""Per-key claims that let several processes share one answer log without asking twice (torch-free).

Two evaluations pointed at the same answer log (the same model and settings started twice, or two
task lists that share clips) would otherwise both ask the model for every clip the log did not hold
when they started. Before asking, a process *claims* the keys it is about to ask for; another
process finds them claimed and waits for their answers instead of asking again.

Layout, inside the log folder::

    claims/.lock                      the folder's mutex (``fcntl.flock``, held for milliseconds)
    claims/<host>-<pid>-<nonce>.claims  one per live process: lines ``+<key>`` (claimed), ``-<key>`` (released)

A process holds an exclusive ``flock`` on its own ``.claims`` file for as long as it runs. The kernel
drops that lock when the process ends in any way (exit, exception, SIGKILL, OOM kill), so a claim
belongs to a *live* process exactly while its file is locked: another process that can lock the
file knows the claimant is gone, deletes the file and may claim its keys. No timeout or pid check
is involved, so a crashed claimant never blocks anyone and a slow one is never overtaken.

Every claim decision and every append to the log happens under ``claims/.lock``, so a process
reading the log under the mutex never sees half a line written by a live process.

Where ``fcntl`` is missing (Windows) or the file system refuses locks (then with a warning),
``available`` is False and the log works as before: nothing is claimed, nothing waits.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger("vocalgrad")

__all__ = ["CLAIMS_DIR", "Claims"]

#: Sub-folder of the answer log holding the mutex and the claim files (not read as answers).
CLAIMS_DIR = "claims"
_SUFFIX = ".claims"

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


class Claims:
    """The claims of this process in an answer-log folder, and what other live processes hold.

    Parameters
    ----------
    folder : path
        The answer log's folder; ``folder/claims/`` is created on first use.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.dir = Path(folder) / CLAIMS_DIR
        self.available = fcntl is not None
        self._thread_lock = threading.RLock()  # flock does not exclude threads sharing a file descriptor
        self._mutex_fd: int | None = None
        self._own = None  # our claims file, locked for our lifetime (opened on first claim)
        self._own_path: Path | None = None
        self.mine: set[str] = set()

    # ------------------------------------------------------------------ locking
    def _disable(self, exc: OSError) -> None:
        self.available = False
        log.warning("answer log %s: file locks unavailable (%s); processes sharing this log may ask the model for "
                    "the same clips", self.dir.parent, exc)

    @contextmanager
    def mutex(self):
        """Hold the folder's mutex (a no-op where locks are unavailable)."""
        with self._thread_lock:
            if self.available and self._mutex_fd is None:
                try:
                    self.dir.mkdir(parents=True, exist_ok=True)
                    self._mutex_fd = os.open(self.dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
                except OSError as exc:
                    self._disable(exc)
            if not self.available:
                yield
                return
            try:
                fcntl.flock(self._mutex_fd, fcntl.LOCK_EX)
            except OSError as exc:
                self._disable(exc)
                yield
                return
            try:
                yield
            finally:
                fcntl.flock(self._mutex_fd, fcntl.LOCK_UN)

    def _own_file(self):
        """Our claims file, created and locked under the mutex (so no one takes it for a dead one)."""
        if self._own is None:
            name = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}{_SUFFIX}"
            path = self.dir / name.replace(os.sep, "_")
            fh = open(path, "ab")
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._own, self._own_path = fh, path
            atexit.register(self.close)  # a normal exit removes the file; after a crash the next look does
        return self._own

    def _write(self, lines: list[str]) -> None:
        fh = self._own_file()
        fh.write("".join(lines).encode("utf-8"))
        fh.flush()

    # ------------------------------------------------------------------ what others hold
    def held_by_others(self) -> dict[str, str]:
        """Key -> claimant (``host-pid``) of every key a live other process claims; call under :meth:`mutex`.

        Claim files of processes that are gone (their lock can be taken) are deleted.
        """
        held: dict[str, str] = {}
        for path in sorted(self.dir.glob(f"*{_SUFFIX}")):
            if path == self._own_path:
                continue
            try:
                fh = open(path, "rb")
            except FileNotFoundError:
                continue
            with fh:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:  # its process is alive
                    owner = path.name[: -len(_SUFFIX)].rsplit("-", 1)[0]
                    for key in _claimed(fh.read()):
                        held[key] = owner
                    continue
                path.unlink(missing_ok=True)  # its process ended: its claims end with it
        return held

    # ------------------------------------------------------------------ our claims
    def claim(self, keys: list[str]) -> None:
        """Record ``keys`` as ours; call under :meth:`mutex`."""
        new = [k for k in keys if k not in self.mine]
        if new and self.available:
            self._write([f"+{k}\n" for k in new])
        self.mine.update(new)

    def release(self, keys) -> None:
        """Give up claims (answered, or not going to be asked by us after all)."""
        with self._thread_lock:
            gone = [k for k in keys if k in self.mine]
            if gone and self.available and self._own is not None:
                self._write([f"-{k}\n" for k in gone])
            self.mine.difference_update(gone)

    def close(self) -> None:
        """Drop every claim: delete and unlock our file (again: nothing)."""
        if self._own is None and self._mutex_fd is None:
            self.mine.clear()
            return
        with self.mutex():
            if self._own is not None:
                if self._own_path is not None:
                    self._own_path.unlink(missing_ok=True)
                self._own.close()
                self._own = self._own_path = None
            self.mine.clear()
        with self._thread_lock:
            if self._mutex_fd is not None:
                os.close(self._mutex_fd)
                self._mutex_fd = None


def _claimed(data: bytes) -> set[str]:
    """Keys claimed and not released in a claims file's bytes (an unfinished last line is ignored)."""
    keys: set[str] = set()
    for line in data.decode("utf-8", errors="replace").split("\n")[:-1]:
        if line.startswith("+"):
            keys.add(line[1:])
        elif line.startswith("-"):
            keys.discard(line[1:])
    return keys
