"""Paths read from disk stay inside their folder: the one check every reader and writer uses.

A marker's file list, a manifest's ``path`` column, a part file, a published ``metadata.csv``'s
``file_name``, the links of an earlier report page: each names files *relative to a folder* the user
gave. Such a path is data, not an instruction: :func:`inside` accepts it only when it is relative,
has no ``..`` part, and resolves (symbolic links followed) to a place inside the folder; anything
else (``../victim.txt``, ``clips/../../x``, ``/etc/passwd``, ``clips`` a link to ``/``) is refused,
so no file outside the folders a command was given is read, written or removed because a file said so.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath

import vocalgrad

__all__ = ["OutsideFolderError", "inside", "outside_reason", "refuse_links_out"]


class OutsideFolderError(vocalgrad.VocalGradError, ValueError):
    """A path read from a file leads outside the folder it belongs to."""


def outside_reason(folder, rel, *, links: bool = True) -> str | None:
    """Why ``rel`` (read from a file) is not a path inside ``folder``, ``None`` when it is.

    ``rel`` must be a non-empty relative POSIX path with no ``..`` part and no NUL, and (``links``,
    the default, for the folders the toolkit writes) ``folder / rel``, resolved with its symbolic
    links, must lie inside ``folder`` resolved. ``links=False`` is for a user's own data folder (a
    corpus of linked audio files), read only: the path itself is checked, its links are not.
    """
    if not isinstance(rel, str) or not rel or "\0" in rel:
        return f"{rel!r} is not a relative path"
    posix, win = PurePosixPath(rel), PureWindowsPath(rel)
    if posix.is_absolute() or win.is_absolute() or win.drive or rel.startswith("\\"):
        return f"{rel!r} is an absolute path"
    if ".." in posix.parts or ".." in win.parts:
        return f"{rel!r} climbs out with '..'"
    root = Path(folder)
    if not links:
        return None
    try:
        base = root.resolve()
        target = (root / rel).resolve()
    except (OSError, RuntimeError):  # a symbolic-link loop
        return f"{rel!r} goes through a symbolic-link loop"
    if target == base or not target.is_relative_to(base):
        return f"{rel!r} leads outside {root} through a symbolic link"
    return None


def inside(folder, rel, *, source: str = "") -> Path:
    """``folder / rel`` when ``rel`` stays inside ``folder`` (:func:`outside_reason`).

    Parameters
    ----------
    folder : path-like
        The folder the file that named ``rel`` belongs to.
    rel : str
        The path as read from that file.
    source : str
        What named it, for the message (``hub/.vocalgrad.json``, ``build/manifest.parquet``).

    Raises
    ------
    OutsideFolderError
        ``rel`` leaves the folder; nothing was read, written or removed.
    """
    why = outside_reason(folder, rel)
    if why:
        raise OutsideFolderError(f"{source or folder}: path {why}; it must stay inside {folder}: the file is not "
                                 "trusted and nothing was read, written or removed through it")
    return Path(folder) / rel


def refuse_links_out(folder, names, *, option: str = "--out") -> None:
    """Refuse, before any work, a ``folder`` whose sub-folders ``names`` (where a command writes:
    ``clips``, ``sources``...) are symbolic links leading outside it: the command would write there.

    Raises
    ------
    OutsideFolderError
        Naming the first such link and the fix; nothing was written.
    """
    root = Path(folder)
    for rel in names:
        why = outside_reason(root, rel) if (root / rel).is_symlink() or (root / rel).exists() else None
        if why:
            raise OutsideFolderError(f"{option} {root}: {why}; the command writes there and never writes outside "
                                     f"the folder it was given: replace the link by a folder (copy its files in) or "
                                     f"choose another {option}")
