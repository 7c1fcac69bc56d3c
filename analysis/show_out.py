"""Where ``vocalgrad show`` writes its picture, and which existing file it may replace.

A command replaces only what it made, matched by content, never by name alone. A folder a command manages
carries a marker listing its files' sha256 (:mod:`generation.ownership`); a lone picture carries its own: a
``tEXt`` chunk ``vocalgrad-show`` holding the sha256 of the PNG's bytes without that chunk
(:func:`mark_png`). An existing file at ``--out`` is replaced only when it still holds such a mark that
matches its bytes (:func:`made_by_show`): a picture ``show`` wrote and nobody edited since. Holding exactly
the bytes about to be written, it is left as it is (a rerun is a no-op). Any other file (the user's
``clip.png``, a picture edited since, a non-PNG) is refused in one line before the drawing, unless
``--force``.

Examples
--------
>>> import zlib
>>> def chunk(kind, data):
...     return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
>>> png = PNG_SIGNATURE + chunk(b"IHDR", bytes(13)) + chunk(b"IEND", b"")
>>> marked_bytes_ok = _mark_matches(mark_png(png))
>>> marked_bytes_ok, _mark_matches(png)
(True, False)
"""

from __future__ import annotations

import zlib
from pathlib import Path

from generation.identity import sha256_bytes

__all__ = ["MARK_KEY", "PNG_SIGNATURE", "made_by_show", "mark_png", "png_path", "replace_problem"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Keyword of the ``tEXt`` chunk that marks a picture of ``vocalgrad show``.
MARK_KEY = b"vocalgrad-show"
#: A larger file is no picture of ``show`` (its PNGs are well under a few MB), and is not read.
_MAX_BYTES = 64 << 20


def _chunks(png: bytes) -> list[tuple[int, int, bytes]] | None:
    """``(start, end, type)`` of every chunk of ``png``; ``None`` when it is not a whole, well-formed PNG."""
    if not png.startswith(PNG_SIGNATURE):
        return None
    out, i = [], len(PNG_SIGNATURE)
    while i < len(png):
        if i + 12 > len(png):
            return None
        n = int.from_bytes(png[i:i + 4], "big")
        end = i + 12 + n
        if end > len(png):
            return None
        out.append((i, end, png[i + 4:i + 8]))
        i = end
    return out if out and out[0][2] == b"IHDR" and out[-1][2] == b"IEND" else None


def _mark_chunks(png: bytes, chunks) -> list[tuple[int, int, bytes]]:
    return [c for c in chunks if c[2] == b"tEXt" and png[c[0] + 8:c[1] - 4].startswith(MARK_KEY + b"\0")]


def mark_png(png: bytes) -> bytes:
    """``png`` with the mark of ``show`` after its header chunk: ``tEXt`` ``vocalgrad-show`` = ``sha256 HEX`` of
    ``png`` as given (deterministic: the same picture gives the same bytes)."""
    chunks = _chunks(png)
    if chunks is None:
        raise ValueError("not a PNG")
    data = MARK_KEY + b"\0" + f"sha256 {sha256_bytes(png)}".encode("latin-1")
    mark = len(data).to_bytes(4, "big") + b"tEXt" + data + zlib.crc32(b"tEXt" + data).to_bytes(4, "big")
    after_header = chunks[0][1]
    return png[:after_header] + mark + png[after_header:]


def _mark_matches(png: bytes) -> bool:
    chunks = _chunks(png)
    if chunks is None:
        return False
    marks = _mark_chunks(png, chunks)
    if len(marks) != 1:
        return False
    start, end, _ = marks[0]
    said = png[start + 8 + len(MARK_KEY) + 1:end - 4]
    return said == f"sha256 {sha256_bytes(png[:start] + png[end:])}".encode("latin-1")


def made_by_show(path) -> bool:
    """Whether the file ``path`` is a picture ``vocalgrad show`` wrote and nobody changed since (its mark
    matches its bytes, :func:`mark_png`)."""
    path = Path(path)
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return False
        return _mark_matches(path.read_bytes())
    except OSError:
        return False


def replace_problem(out: Path, given, *, force: bool = False) -> str | None:
    """Why ``show`` may not write its picture to ``out`` (``--out given``): an existing file it did not
    write, or one edited since; ``None`` when it may (no file there, its own picture, or ``force``)."""
    if force or not out.is_file() or made_by_show(out):
        return None
    where = f"--out {given}" + ("" if Path(given) == out else f": {out}")
    return (f"{where}: an existing file that `vocalgrad show` did not write (or edited since); nothing was "
            "written. Give another --out, or add --force to replace it")


def png_path(out: Path, clip_id: str) -> Path:
    """Where ``--out OUT`` writes the picture: OUT, or OUT/CLIP_ID.png for a folder (as cp takes one).

    Raises
    ------
    generation.option_types.OutFolderError
        One line naming the user's path: a symbolic link loop, a path below a file (was: ``[Errno 17]
        File exists``), or OUT/CLIP_ID.png a folder (was: the error named the temporary file).
    """
    from generation.option_types import OutFolderError, out_folder_problem

    given = out
    if out.is_dir():
        out = out / f"{clip_id}.png"
        if out.is_dir():
            raise OutFolderError(f"--out {given}: {out} is a folder, where the picture goes; remove it or give "
                                 "another --out (a .png file or a folder)")
        return out
    problem = out_folder_problem(out, what=f"--out {given}")
    if problem and not out.is_file():  # an existing file: whether it may be replaced is replace_problem's
        raise OutFolderError(problem)
    return out
