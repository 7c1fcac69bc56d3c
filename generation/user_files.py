"""Files a user names (results, sample logs, answers, CSVs, markers): any bytes in, one line out.

Each reader says what it expected (``what``); bytes that are not that — not UTF-8, a binary file,
nothing at all, more than the reader takes — raise the reader's own error class with one line naming
the file (and the line), never a ``UnicodeDecodeError`` or ``MemoryError`` traceback.

Examples
--------
>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "x.json"
>>> _ = p.write_bytes(b"\\xff\\xfe{}")
>>> read_text(p, "an lm-eval results JSON")
Traceback (most recent call last):
...
generation.user_files.UserFileError: ...x.json: not UTF-8 text (invalid start byte at byte 0); expected an lm-eval results JSON
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import vocalgrad

__all__ = ["MAX_LINE_BYTES", "MAX_TEXT_BYTES", "UserFileError", "bytes_problem", "read_json", "read_text", "text_lines"]

#: The largest whole file a reader takes into memory (results JSON, markers, CSVs): 512 MiB.
MAX_TEXT_BYTES = 512 << 20
#: The longest line a line reader takes (sample logs, answer logs, answers files): 64 MiB.
MAX_LINE_BYTES = 64 << 20


class UserFileError(vocalgrad.VocalGradError, ValueError):
    """A file the user named holds bytes that are not what the command reads."""


def bytes_problem(data: bytes) -> str | None:
    """Why ``data`` is not UTF-8 text (UTF-16 text; a NUL byte: a binary file), or None when it is."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "UTF-16 text, not UTF-8 (save it as UTF-8)"
    nul = data.find(b"\x00")
    if nul >= 0:
        return f"a binary file, not text (a NUL byte at byte {nul})"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    return None


def _mb(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n >= 2**20 else f"{n} bytes"


def read_text(path, what: str, *, error: type[Exception] = UserFileError, empty_ok: bool = False,
              max_bytes: int | None = None) -> str:
    """The text of ``path``, a file holding ``what``.

    Raises
    ------
    error
        One line ``PATH: PROBLEM; expected WHAT`` for a folder, a file larger than ``max_bytes``
        (default :data:`MAX_TEXT_BYTES`), an empty (or blank) file unless ``empty_ok``, a binary
        file or one that is not UTF-8. A missing file raises the usual ``FileNotFoundError``.
    """
    path = Path(path)
    limit = MAX_TEXT_BYTES if max_bytes is None else max_bytes
    if path.is_dir():
        raise error(f"{path}: a folder; expected {what}")
    size = os.stat(path).st_size
    if size > limit:
        raise error(f"{path}: {_mb(size)}, more than the {_mb(limit)} a reader takes; expected {what} "
                    "(is it the right file?)")
    data = path.read_bytes()
    problem = bytes_problem(data)
    if problem is None and not data.strip() and not empty_ok:
        problem = "empty" if not data else "blank (only white space)"
    if problem:
        raise error(f"{path}: {problem}; expected {what}")
    return data.decode("utf-8")


def text_lines(path, what: str, *, error: type[Exception] = UserFileError,
               max_line: int | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, text)`` of each line of ``path`` (a file of ``what``), read one at a time.

    Raises
    ------
    error
        ``PATH:LINE: PROBLEM; expected WHAT`` for a line that is binary, not UTF-8, or longer than
        ``max_line`` bytes (default :data:`MAX_LINE_BYTES`).
    """
    limit = MAX_LINE_BYTES if max_line is None else max_line
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(iter(lambda: fh.readline(limit + 1), b""), 1):
            if len(raw) > limit:
                raise error(f"{path}:{lineno}: a line of more than {_mb(limit)}; expected {what} "
                            "(is it the right file?)")
            problem = bytes_problem(raw)
            if problem:
                raise error(f"{path}:{lineno}: {problem}; expected {what}")
            yield lineno, raw.decode("utf-8")


def read_json(path, what: str, *, error: type[Exception] = UserFileError, max_bytes: int | None = None):
    """The parsed JSON of ``path`` (a file of ``what``); :func:`read_text`'s one-line errors, and
    ``PATH: not JSON (...); expected WHAT`` for text that does not parse."""
    text = read_text(path, what, error=error, max_bytes=max_bytes)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not JSON ({exc}); expected {what}") from None
