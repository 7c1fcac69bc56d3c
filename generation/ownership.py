"""Who owns a folder: the marker file of the folders the toolkit writes, the lock of a writer, its leftovers.

A command clears or replaces only what it made. Every folder a command manages (a render folder, a
Hub folder, a report folder, the demo folder) carries a small marker, ``DIR/.vocalgrad.json``::

    {"kind": "hub", "toolkit_version": "0.1.0", "command": "vocalgrad hub build --out hub",
     "created": "2026-12-02T01:02:03Z", "files": {"README.md": "<sha256>", ...}}

``files`` (where a command keeps it) lists what the command wrote, with the sha256 of each file:
the next run removes or replaces a listed file only while it still holds those bytes, so a file
edited since (a README with the user's changes) is never overwritten silently, and a file the
marker does not list (``.git/``, ``NOTES.md``, ``LICENSE``) is never touched.

An ``--out`` must be missing, empty, or a folder of the same kind (:func:`check_out`); anything
else is refused in one line before any work. Folders written by an earlier version (no marker) are
recognised by their layout (:func:`folder_kind`: a render folder by ``render.json`` or its manifest,
a Hub folder by its VocalGrad card, a report folder by ``report.json`` with ``report.md``, a demo
folder by its ``render/`` or ``hub/`` sub-folder) and adopted: the run that writes them next adds
the marker. The marker and the lock are hidden files: ``vocalgrad publish`` never uploads them.

One writer at a time (:func:`out_lock`): a command holds ``DIR/.vocalgrad.lock`` (an ``flock``
the kernel drops when the process dies, so a killed run never blocks the next one); a second
writer is refused, naming the first. Leftovers of a killed run (:func:`remove_leftovers`: staged
folders ``.NAME.PID.partial``, ``.stage.HOST.PID.partial``, temporary files
``.NAME.HOST.PID.tmp``) are matched by the toolkit's naming and a dead process id, named, and removed.

:func:`signals_deferred` holds SIGINT and SIGTERM while a command commits (moves staged files into
place and writes the marker), so an interrupt never leaves a half-updated folder, and while it makes and
removes its stage, so an interrupt at any moment never leaves the stage behind.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import re
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import vocalgrad

from . import audio as aio
from .contained import inside, outside_reason
from .identity import sha256_bytes, sha256_file
from .render_files import clean_stale_temps, pid_alive

__all__ = ["KIND_NAMES", "LOCK", "MARKER", "OwnershipError", "check_out", "claim_out", "command_line",
           "folder_kind", "generated_task_file", "marker_problem", "out_lock", "owned_files", "read_marker",
           "record_rewrite", "remove_leftovers", "signals_deferred", "owned_update", "stage_dir", "stage_path", "write_marker"]

#: The marker file of a managed folder.
MARKER = ".vocalgrad.json"
#: The lock file a writer holds while it writes the folder.
LOCK = ".vocalgrad.lock"

#: Folder kinds, and how a message names each (with the command that makes it).
KIND_NAMES = {
    "render": "a render folder (made by `vocalgrad render`)",
    "hub": "a Hub folder (made by `vocalgrad hub`)",
    "report": "a report folder (made by `vocalgrad report`)",
    "demo": "a demo folder (made by `vocalgrad demo`)",
    "leaderboard": "a leaderboard folder (made by `vocalgrad leaderboard`)",
    "tasks": "a generated task folder (made by `python -m harness_tasks.ext_tasks` or `.sweep_tasks`)",
}


class OwnershipError(vocalgrad.VocalGradError, ValueError):
    """An output folder the command may not write (someone else's, another kind, or being written)."""


def command_line() -> str:
    """The command line of this process as the marker records it (``vocalgrad hub ...``; a call from
    Python is recorded as ``python: PROGRAM``)."""
    argv = list(sys.argv) if sys.argv else [""]
    prog = Path(argv[0]).name
    if prog in ("vocalgrad", "vocalgrad-eval"):
        return " ".join([prog, *argv[1:]])[:2000]
    if argv[0].endswith(("vocalgrad_commands/cli.py", "harness_tasks/cli.py")) or argv[0] == "-m":
        return " ".join(["vocalgrad", *argv[1:]])[:2000]
    return f"python: {prog or 'interactive'}"


def _toolkit_version() -> str:
    """The installed toolkit's version (the package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vocalgrad")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree that is not installed
        return "unknown"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_marker(folder) -> dict | None:
    """The marker of ``folder`` (a dict with at least ``kind``), ``None`` when it has none or it is unreadable."""
    try:
        data = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("kind"), str) else None


def write_marker(folder, kind: str, *, files: dict[str, str] | None = None, pending: dict[str, str] | None = None,
                 command: str | None = None) -> Path:
    """Write (atomically) the marker of ``folder``: ``kind``, toolkit version, command, created time (kept
    from an earlier marker of the same kind), and ``files`` (relative path -> sha256) when given;
    ``pending``: files being moved in by a commit (also owned, should the commit be cut short)."""
    folder = Path(folder)
    old = read_marker(folder) or {}
    data = {"kind": kind, "toolkit_version": _toolkit_version(), "command": command or command_line(),
            "created": old.get("created") if old.get("kind") == kind and old.get("created") else _now()}
    if files is not None:
        data["files"] = dict(sorted(files.items()))
    if pending:
        data["pending"] = dict(sorted(pending.items()))
    path = folder / MARKER
    aio.atomic_write_text(path, json.dumps(data, indent=1) + "\n")
    return path


def marker_problem(folder, marker: dict | None) -> str | None:
    """Why the marker of ``folder`` is not the toolkit's, ``None`` when it may be trusted.

    Every path its ``files`` and ``pending`` lists name must stay inside ``folder``
    (:func:`generation.contained.outside_reason`: relative, no ``..``, no symbolic link leading out);
    a marker naming any other path is foreign, whatever ``--force``: the toolkit never removes or
    replaces a file outside the folders it was given.
    """
    for key in ("files", "pending"):
        listed = (marker or {}).get(key)
        if listed is None:
            continue
        if not isinstance(listed, dict):
            return f"its {key!r} is not a table of files"
        for rel in listed:
            why = outside_reason(folder, rel)
            if why:
                return f"its {key!r} names a path outside the folder: {why}"
    return None


def _marker_refusal(folder: Path, marker: dict | None, option: str = "--out") -> str | None:
    why = marker_problem(folder, marker)
    if why is None:
        return None
    return (f"{option} {folder}: {folder / MARKER} is not a marker the toolkit wrote ({why}); nothing was "
            f"written or removed; remove that file if the folder is yours, or choose another {option}").strip()


def record_rewrite(folder, rel: str, old: bytes, new: bytes) -> None:
    """A toolkit command rewrote ``folder/rel`` from ``old`` to ``new`` bytes (``vocalgrad publish``
    retargeting the card): if the marker listed the file with ``old``'s sha256 (it was still the
    toolkit's), it now lists ``new``'s, so the next build does not take it for a user's edit."""
    marker = read_marker(folder)
    files = (marker or {}).get("files")
    if isinstance(files, dict) and files.get(rel) == sha256_bytes(old):
        aio.atomic_write_text(Path(folder) / MARKER, json.dumps(
            {**marker, "files": {**files, rel: sha256_bytes(new)}}, indent=1) + "\n")


def _legacy_kind(folder: Path) -> str | None:
    """The kind of a folder written before markers existed, by its layout (``None``: not recognised)."""
    from .hub_dir import HubDir
    from .render_dir import RenderDir

    if RenderDir.looks_like(folder):
        return "render"
    if HubDir(folder).has_vocalgrad_card():
        return "hub"
    if (folder / "report.json").is_file() and (folder / "report.md").is_file():
        return "report"
    if _legacy_json_format(folder / "leaderboard.json").startswith("vocalgrad-leaderboard/"):
        return "leaderboard"
    if any(generated_task_file(p) for p in folder.glob("*.yaml")):
        return "tasks"  # python -m harness_tasks.ext_tasks / .sweep_tasks DIR
    if any(read_marker(folder / sub) or _legacy_kind(folder / sub) for sub in ("render", "hub")
           if (folder / sub).is_dir()):
        return "demo"
    return None


def _legacy_json_format(path: Path) -> str:
    """The ``format`` field of a JSON file ('' when it has none or cannot be read)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(data.get("format", "")) if isinstance(data, dict) else ""


def generated_task_file(path) -> bool:
    """A task file that ``vocalgrad-eval``'s task writers generated (``harness_tasks.ext_tasks``,
    ``.sweep_tasks``): its first line is a generator's header (``# Generated by vocalgrad-eval ...``)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline().startswith("# Generated by vocalgrad-eval")
    except OSError:
        return False


def folder_kind(folder) -> str | None:
    """What ``folder`` is: its marker's kind, else the kind its layout shows (an earlier version's
    folder), else ``None`` (missing, empty or foreign)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    marker = read_marker(folder)
    return marker["kind"] if marker else _legacy_kind(folder)


#: Entries that do not make a folder non-empty: the lock, and temporary files and stages of a writer
#: that has just started (a ``--shard I/N`` render writing ``render.json`` while the next one looks).
_TRANSIENT = re.compile(r"^(\.vocalgrad\.lock|\..+\.[^.]+\.\d+\.tmp|\.stage\.[^.]+\.\d+\.partial)$")


def _is_empty(folder: Path) -> bool:
    """No entry but the toolkit's lock file and writers' temporary files."""
    return all(_TRANSIENT.match(p.name) for p in folder.iterdir())


def check_out(out, kind: str, *, option: str = "--out", force: bool = False) -> str | None:
    """Why ``out`` cannot be written as a folder of ``kind``, or ``None`` when it can.

    It can when it is missing, empty, or a folder of the same kind (marker, or an earlier version's
    layout). A folder of another kind is refused whatever ``force``; a non-empty folder of nobody's
    is refused unless ``force`` (then only what the command writes is added; nothing is removed).
    """
    from .option_types import symlink_loop_problem

    out = Path(out)
    named = f"{option} {out}".strip()
    loop = symlink_loop_problem(out, what=named or str(out))
    if loop:
        return loop
    if out.exists() and not out.is_dir():
        return f"{named}: exists and is not a folder; choose another {option or 'folder'}"
    if not out.exists() or _is_empty(out):
        return None
    refusal = _marker_refusal(out, read_marker(out), option)
    if refusal:  # whatever force: a marker is never trusted to name files outside its folder
        return refusal
    found = folder_kind(out)
    if found == kind:
        return None
    if found is not None:
        return (f"{named}: is {KIND_NAMES.get(found, found)}, not {KIND_NAMES[kind].split(' (')[0]}; "
                f"nothing was written; choose another {option or 'folder'}")
    if force:
        return None
    return (f"{named}: exists, is not empty and is not {KIND_NAMES[kind]} (no {MARKER}); nothing was "
            f"written; choose an empty or new {option or 'folder'}")


def claim_out(out, kind: str, *, option: str = "--out", force: bool = False) -> None:
    """:func:`check_out`, raising :class:`OwnershipError` with its message."""
    problem = check_out(out, kind, option=option, force=force)
    if problem:
        raise OwnershipError(problem)


def owned_files(folder, marker: dict | None, legacy_files) -> tuple[dict[str, str], list[str]]:
    """The files of ``folder`` this command may remove or replace, and those it may not (edited since).

    With a marker listing ``files``: each listed file still holding its recorded sha256 is owned; a
    listed file whose bytes differ is *edited* (returned second); a missing one is neither. Without
    (an earlier version's folder, adopted): ``legacy_files`` (relative paths the layout says the
    command wrote) are owned. Returns ``({relative path: sha256}, [edited relative paths])``.
    """
    folder = Path(folder)
    owned: dict[str, str] = {}
    edited: list[str] = []
    refusal = _marker_refusal(folder, marker)
    if refusal:
        raise OwnershipError(refusal)
    listed = (marker or {}).get("files")
    if isinstance(listed, dict):
        accepted = {rel: {sha} for rel, sha in listed.items()}
        for rel, sha in ((marker or {}).get("pending") or {}).items():  # a commit cut short (SIGKILL)
            accepted.setdefault(rel, set()).add(sha)
        for rel, shas in sorted(accepted.items()):
            path = folder / rel
            if not path.is_file():
                continue
            digest = sha256_file(path)
            (owned.__setitem__(rel, digest) if digest in shas else edited.append(rel))
    else:
        for rel in sorted(legacy_files):
            if outside_reason(folder, rel) is None and (folder / rel).is_file():
                owned[rel] = ""
    return owned, edited


def _files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@contextlib.contextmanager
def owned_update(out, kind: str, *, what: str, legacy_files=lambda out: [], force: bool = False,
                 edited_hint: str = "") -> Iterator[Path]:
    """A staging folder for the new contents of ``out``; on success, what the command made before is
    replaced by it and nothing else is touched.

    Holds the lock of ``out`` (:func:`out_lock`), removes leftovers of killed runs, then yields an
    empty folder (``OUT/.stage.HOST.PID.partial``). When the block succeeds the commit runs with
    SIGINT/SIGTERM held (:func:`signals_deferred`): the files the marker lists (or ``legacy_files(out)``
    for an earlier version's folder) that the new contents do not have are removed, the staged files
    are moved into place, and the marker lists the new files with their sha256. Foreign files
    (``.git/``, ``NOTES.md``...) stay. On an error or an interrupt ``out`` is as it was and the stage
    is gone, wherever the interrupt came (the stage is made and removed with interrupts held).

    Raises
    ------
    OwnershipError
        Before the block: ``out`` is someone else's (:func:`check_out`), another writer holds it, or a
        file the command wrote was edited since (unless ``force``). At the commit: a staged file would
        replace a file the command did not write (unless ``force``).
    """
    out = Path(out)
    claim_out(out, kind, force=force)
    created = not out.exists()
    try:
        with out_lock(out, what):
            remove_leftovers(out)
            marker = read_marker(out)
            marker = marker if marker and marker.get("kind") == kind else None
            adopted = marker is None and _legacy_kind(out) == kind
            owned, edited = owned_files(out, marker, legacy_files(out) if adopted else [])
            if edited and not force:
                raise OwnershipError(
                    f"{out}: {', '.join(edited)} changed since `{what}` wrote {'it' if len(edited) == 1 else 'them'}; "
                    f"nothing was written. {edited_hint}Move the file(s) away and rerun, or pass --force to replace "
                    f"{'it' if len(edited) == 1 else 'them'}")
            owned.update({rel: "" for rel in edited})  # --force
            try:
                with signals_deferred():  # made and inside the try as one step: never made and then lost
                    stage = stage_dir(out)
                yield stage
                new = {rel: sha256_file(stage / rel) for rel in _files_under(stage)}
                foreign = [rel for rel in new if (out / rel).exists() and rel not in owned]
                if foreign and not force:
                    raise OwnershipError(f"{out}: {', '.join(foreign[:5])} not written by `{what}`; nothing was "
                                         f"changed; move {'it' if len(foreign) == 1 else 'them'} away and rerun, "
                                         "or pass --force to replace")
                gone = {rel: inside(out, rel, source=str(out / MARKER)) for rel in sorted(set(owned) - set(new))}
                dest = {rel: inside(out, rel, source=str(stage)) for rel in new}  # no link of out leads out
                with signals_deferred():
                    write_marker(out, kind, files={k: v for k, v in owned.items() if v}, pending=new)
                    for rel, path in gone.items():
                        path.unlink(missing_ok=True)
                        _remove_empty_parents(out, path)
                    for rel, path in dest.items():
                        path.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(stage / rel, path)
                    write_marker(out, kind, files=new)
            finally:
                with signals_deferred():  # an interrupt now waits until the stage is gone
                    shutil.rmtree(stage_path(out), ignore_errors=True)
    except BaseException:
        with signals_deferred():
            # An interrupt that came as the clean-up above began (before it held signals) cut it short:
            # the stage's name is this process's, so it is found whenever it exists.
            shutil.rmtree(stage_path(out), ignore_errors=True)
            if created and out.is_dir() and _is_empty(out):
                shutil.rmtree(out, ignore_errors=True)
        raise


def _remove_empty_parents(root: Path, path: Path) -> None:
    """Remove the folders between ``path`` and ``root`` that became empty."""
    for parent in path.parents:
        if parent == root or root not in parent.parents:
            return
        try:
            parent.rmdir()
        except OSError:
            return


# ------------------------------------------------------------------------------------------- the lock
@contextlib.contextmanager
def out_lock(out, what: str) -> Iterator[Path]:
    """Hold ``OUT/.vocalgrad.lock`` (``flock``) while the block writes ``out`` (created if missing).

    Raises
    ------
    OwnershipError
        Another process holds it: the message names its command and process id.
    """
    import fcntl

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip() or "another process"
            raise OwnershipError(f"{out}: being written by {holder}; wait for it to finish (or stop it), "
                                 f"then rerun, or choose another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"`{what}` (pid {os.getpid()} on {aio.HOST_TAG})\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # drops the lock; the file stays (removing it would race a waiting writer)


# --------------------------------------------------------------------------------------- leftovers
_LEGACY_STAGE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.partial$")
_STAGE = re.compile(r"^\.stage\.(?P<host>[^.]+)\.(?P<pid>\d+)\.partial$")


def stage_path(out) -> Path:
    """The name of this process's staging folder inside ``out`` (``OUT/.stage.HOST.PID.partial``)."""
    return Path(out) / f".stage.{aio.HOST_TAG}.{os.getpid()}.partial"


def stage_dir(out) -> Path:
    """This process's staging folder inside ``out`` (:func:`stage_path`), created empty."""
    stage = stage_path(out)
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    return stage


def remove_leftovers(out, *, warn: bool = True) -> list[Path]:
    """Remove what killed runs of this host left in and beside ``out``; return the paths removed.

    Only the toolkit's own names with a process id that no longer runs: staged folders
    (``OUT/.stage.HOST.PID.partial``; ``.OUT.PID.partial`` beside ``out``, the earlier version's) and
    temporary files (``.NAME.HOST.PID.tmp``, anywhere under ``out``). Each removal is named on stderr.
    """
    out = Path(out)
    gone: list[Path] = []
    if out.parent.is_dir():
        for p in out.parent.iterdir():
            m = _LEGACY_STAGE.match(p.name)
            if m and m["name"] == out.name and p.is_dir() and not pid_alive(int(m["pid"])):
                gone.append(p)
    if out.is_dir():
        for p in out.iterdir():
            m = _STAGE.match(p.name)
            if m and m["host"] == aio.HOST_TAG and p.is_dir() and not pid_alive(int(m["pid"])):
                gone.append(p)
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    if out.is_dir():
        before = set(out.rglob(".*.tmp"))
        clean_stale_temps(out)
        gone += sorted(p for p in before if not p.exists())
    if warn and gone:
        names = ", ".join(str(p) for p in gone[:5]) + (f" and {len(gone) - 5} more" if len(gone) > 5 else "")
        print(f"vocalgrad: removed what an interrupted run left: {names}", file=sys.stderr)
    return gone


# ----------------------------------------------------------------------------------------- signals
@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then act on the first one that came.

    For the commit of a command (moving staged files into place, writing the marker): it finishes,
    then the interrupt is raised as usual. Outside the main thread, a no-op.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in wanted}
    for s in wanted:
        if previous[s] not in (signal.SIG_IGN, None):
            signal.signal(s, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        for s in wanted:
            if previous[s] not in (signal.SIG_IGN, None):
                signal.signal(s, previous[s])
        if got:
            handler = previous[got[0]]
            if callable(handler):
                handler(got[0], None)
            else:  # SIG_DFL: what the default would have done
                signal.raise_signal(got[0])
