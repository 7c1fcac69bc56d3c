"""``folder:PATH``: audio files under a folder (wav, flac, ogg, mp3), described by an optional
``metadata.csv``; used as they are (no selection).
"""

from __future__ import annotations

import csv
import os
import warnings
from pathlib import Path, PurePosixPath, PureWindowsPath

from .base import (AUDIO_EXTENSIONS, SourceItem, SourceOptions, SourceSpecError, SourceWarning, normalise_gender,
                   register_source, safe_id)

__all__ = ["FOLDER_COLUMNS", "folder_candidates"]


#: Columns understood in a folder's ``metadata.csv`` (only ``file_name`` is required).
FOLDER_COLUMNS = ("file_name", "speaker_id", "gender", "accent", "text", "sentence_id", "source_id")


def folder_candidates(root: Path) -> list[SourceItem]:
    """Every utterance of a folder source.

    Without ``metadata.csv`` every audio file is an utterance; its id is the relative path with
    separators as ``-`` and its speaker is the first sub-folder (none for files at the top).
    With ``metadata.csv`` (columns :data:`FOLDER_COLUMNS`, ``file_name`` relative to the folder)
    exactly the listed files are used.

    Raises
    ------
    SourceSpecError
        No audio files; a ``metadata.csv`` that is not UTF-8, has no ``file_name`` column or no
        rows, a row with more fields than the header, or a ``file_name`` that is empty, absolute,
        leads out of the folder (``..``) or does not exist (the message names the file and line).

    Warns
    -----
    SourceWarning
        Columns of ``metadata.csv`` the reader does not use (they are not in the manifest).
    """
    meta = root / "metadata.csv"
    if not meta.is_file():
        # a dangling symbolic link stays in: the render skips it with the reason (skipped.csv), never silently
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in AUDIO_EXTENSIONS
                       and (p.is_file() or (p.is_symlink() and not p.exists())))
        if not files:
            raise SourceSpecError(f"folder source: no audio files ({', '.join(AUDIO_EXTENSIONS)}) under {root}")
        items = []
        for p in files:
            rel = p.relative_to(root).with_suffix("")
            sid = safe_id("-".join(rel.parts))
            items.append(SourceItem(sid, str(p), speaker_id=safe_id(rel.parts[0]) if len(rel.parts) > 1 else "",
                                    sentence_id=sid))
        return items

    rows = _read_metadata(meta)
    items = []
    for line, row in rows:
        rel = row["file_name"]
        if _leaves_folder(rel):
            raise SourceSpecError(f"{meta}, line {line}: file_name {rel!r} must be a path relative to {root} "
                                  "without '..' (the folder is the source)")
        path = root / rel
        if rel and path.is_dir():
            raise SourceSpecError(f"{meta}, line {line}: file_name {rel!r} is a folder, not an audio file; "
                                  "list the audio files themselves")
        if rel and path.is_symlink() and not path.exists():
            raise SourceSpecError(f"{meta}, line {line}: audio file {rel!r} is a broken symbolic link (to "
                                  f"{os.readlink(path)}, which does not exist)")
        if not rel or not path.is_file():
            raise SourceSpecError(f"{meta}, line {line}: audio file {rel!r} not found under {root}")
        sid = row.get("source_id") or "-".join(Path(rel).with_suffix("").parts)
        speaker = safe_id(row["speaker_id"]) if row.get("speaker_id") else ""
        items.append(SourceItem(safe_id(sid), str(path), speaker_id=speaker,
                                sentence_id=row.get("sentence_id", ""), text=row.get("text", ""),
                                gender=normalise_gender(row.get("gender")), accent=row.get("accent", ""),
                                extra={"file_name": rel}))
    return items


def _read_metadata(meta: Path) -> list[tuple[int, dict]]:
    """(line, row) of every row of a folder's ``metadata.csv``, values stripped; warns on unused columns."""
    try:
        with open(meta, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = [h.strip() for h in (reader.fieldnames or [])]
            if "file_name" not in header:
                raise SourceSpecError(f"{meta}: needs a 'file_name' column (found: {', '.join(header) or 'no header'})")
            rows = []
            row_end = reader.line_num  # the header's line
            strict_ok = None  # checked once, at the first field that spans lines
            for row in reader:
                if any("\n" in (v or "") or "\r" in (v or "") for v in row.values() if isinstance(v, str)):
                    if strict_ok is None:
                        strict_ok = _strict_readable(meta)
                    if not strict_ok:  # a quote never closed: the csv module's strict reading cannot read it
                        raise SourceSpecError(_line_break_message(meta, row_end + 1, reader.line_num, row))
                row_end = reader.line_num
                if None in row:  # csv puts the fields beyond the header under None
                    raise SourceSpecError(f"{meta}, line {reader.line_num}: {len(header) + len(row[None])} fields "
                                          f"but the header has {len(header)} (quote fields that hold commas)")
                rows.append((reader.line_num, {(k or "").strip(): (v or "").strip() for k, v in row.items()}))
    except UnicodeDecodeError as exc:
        raise SourceSpecError(f"{meta}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                              "save it as UTF-8") from None
    except csv.Error as exc:
        raise SourceSpecError(f"{meta}: not a readable CSV file ({exc})") from None
    if not rows:
        raise SourceSpecError(f"{meta}: no rows")
    unused = [h for h in header if h and h not in FOLDER_COLUMNS]
    if unused:
        warnings.warn(SourceWarning(
            f"{meta}: column(s) {', '.join(unused)} are not read by the folder source (it reads "
            f"{', '.join(FOLDER_COLUMNS)}); they are not in the manifest"), stacklevel=2)
    return rows


def _strict_readable(meta: Path) -> bool:
    """Whether Python's csv module reads ``meta`` in strict mode: a quoted field that spans lines and
    is closed (``"hello<LF>line2"``) reads; a quote never closed (it swallows the rows after it, up to
    the end of the file) does not."""
    try:
        with open(meta, newline="", encoding="utf-8-sig") as fh:
            for _ in csv.reader(fh, strict=True):
                pass
    except csv.Error:
        return False
    return True


def _line_break_message(meta: Path, start: int, end_line: int, row: dict) -> str:
    """A row whose field runs over several lines: almost always an unterminated quote swallowing the next rows."""
    field = next(k for k, v in row.items() if isinstance(v, str) and ("\n" in v or "\r" in v))
    return (f"{meta}, line {start}: the quoted {field or 'extra'} field opened there runs on to line {end_line} "
            f"(an unterminated quote \" swallows the rows after it); close the quote, or remove the line break")


def _leaves_folder(rel: str) -> bool:
    """Whether a ``file_name`` is absolute (POSIX or Windows form) or steps out of the folder with ``..``."""
    posix, windows = PurePosixPath(rel), PureWindowsPath(rel)
    return (posix.is_absolute() or bool(windows.drive) or windows.root != ""
            or ".." in posix.parts or ".." in windows.parts)


@register_source("folder")
def _folder(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Audio files under a folder, used as they are: the folder is the selection.

    Every file (or every file listed in ``metadata.csv``, in its order) is a source, for whichever
    split is rendered; no benchmark.md §6 selection is drawn, and files that cannot be decoded are left to the
    render, which skips them with the reason. To draw a balanced selection from a folder corpus, read it
    as ``hf:PATH`` (datasets' audiofolder reads the same ``metadata.csv``).
    """
    root = Path(arg).expanduser()
    if not arg or not root.is_dir():
        raise SourceSpecError(f"folder source: {root} is not a folder (use --source folder:PATH)")
    return folder_candidates(root)
