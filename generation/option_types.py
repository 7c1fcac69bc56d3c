"""argparse types of the numeric options, each with the range where the option means something.

A value outside the range is an argparse error naming the option and the range (``PROG: error:
argument --port: must be 0-65535, got 99999``, exit 2) before any work, instead of a traceback
from deep inside a library (FLAC at 10 MHz, a 100,000-dpi PNG, a port the kernel refuses) or an
option that silently does nothing (``--min-sdr nan`` compared false with every clip).

:func:`name_fits` checks up front that a folder or file name the toolkit is about to create fits
the file system together with the temporary names it writes through (``.NAME.HOST.PID.tmp``,
``.NAME.PID.partial``), so that "File name too long" never names an internal temp path after half
the work is done. Importing this module imports nothing heavy.

Every comma-separated list option of every command parses through :func:`comma_list` (or
:func:`comma_text` where the command reads the text itself): an empty list (``--trajectories ''``,
``--categories ,``) is an argparse error naming the option, never "the default" nor "nothing".
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from vocalgrad import VocalGradError

__all__ = ["FLAC_MAX_SAMPLE_RATE", "MAX_DPI", "MIN_SAMPLE_RATE", "NameTooLongError", "OutFolderError", "comma_list",
           "comma_text", "dpi", "finite_float", "name_fits", "out_folder", "out_folder_problem", "port",
           "positive_float", "positive_int", "positive_ints", "refuse_out_folder", "refuse_symlink_loop", "sample_rate",
           "symlink_loop_problem", "temp_name_room"]

#: Lowest output sample rate (Hz): below it speech loses the band the categories change.
MIN_SAMPLE_RATE = 8000
#: Highest sample rate (Hz) a FLAC file stores (libsndfile refuses more).
FLAC_MAX_SAMPLE_RATE = 655350
#: Highest --dpi of a figure: ``vocalgrad show`` draws 13 x 6.5 inches, 7800 x 3900 pixels at 600 dpi (120 MB
#: of pixels); 100,000 dpi asked for 5 TB.
MAX_DPI = 600


def _whole(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number{what}, got {text!r}") from None


def positive_int(text: str) -> int:
    """A whole number >= 1 (``--jobs``, ``--sources``, ``--row-group-rows``)."""
    value = _whole(text, " >= 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def sample_rate(text: str) -> int:
    """An output sample rate in Hz, :data:`MIN_SAMPLE_RATE` to :data:`FLAC_MAX_SAMPLE_RATE`."""
    value = _whole(text, " of Hz")
    if not MIN_SAMPLE_RATE <= value <= FLAC_MAX_SAMPLE_RATE:
        raise argparse.ArgumentTypeError(f"must be {MIN_SAMPLE_RATE}-{FLAC_MAX_SAMPLE_RATE} Hz (the clips are FLAC, "
                                         f"which stores at most {FLAC_MAX_SAMPLE_RATE} Hz), got {value}")
    return value


def port(text: str) -> int:
    """A TCP port, 0-65535 (0: any free port)."""
    value = _whole(text, "")
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be 0-65535 (0 = any free port), got {value}")
    return value


def dpi(text: str) -> int:
    """A figure resolution in dots per inch, 10 to :data:`MAX_DPI`."""
    value = _whole(text, "")
    if not 10 <= value <= MAX_DPI:
        raise argparse.ArgumentTypeError(f"must be 10-{MAX_DPI} dots per inch (300 is print quality), got {value}")
    return value


def finite_float(text: str) -> float:
    """Any finite number (not nan, not inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (``--max-shard-mb``)."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def comma_list(text: str) -> list[str]:
    """A comma-separated list of one or more names (``"a, b,,c"`` -> ``["a", "b", "c"]``), each once.

    An empty list (``""``, ``","``, blanks) is refused: leaving the option out is how to ask for its default.
    """
    names = list(dict.fromkeys(s.strip() for s in str(text).split(",") if s.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"names nothing ({text!r}); give one or more comma-separated values, "
                                         "or leave the option out for its default")
    return names


def comma_text(text: str) -> str:
    """The text of a comma-separated list option that its command reads itself (``all``, ``1,10,25``),
    refused as :func:`comma_list` when it names nothing."""
    comma_list(text)
    return str(text).strip()


def positive_ints(text: str) -> str:
    """Comma-separated whole numbers >= 1 (``--batches 1,8,32``), returned as normalised text (``"1,8,32"``)."""
    return ",".join(str(positive_int(x)) for x in comma_list(text))


def out_folder(text: str) -> str:
    """An output folder (``--out DIR`` of a script): refused by the parser, before any work, when it is an
    existing file, lies under a file or is a symbolic link loop (:func:`out_folder_problem`)."""
    problem = out_folder_problem(text, what=str(text))
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


# ------------------------------------------------------------------------------------------ name lengths
class NameTooLongError(VocalGradError, ValueError):
    """A name the toolkit would create is too long for the file system, or a path leads through a symbolic
    link loop; the message names the user's path."""


def temp_name_room() -> int:
    """Characters a temporary name adds to the name it stands for (``.NAME.HOST.PID.tmp``, ``.NAME.PID.partial``)."""
    from .audio import HOST_TAG

    return max(len(f"..{HOST_TAG}.{4194304}.tmp"), len(f"..{4194304}.partial"))


def _name_max(folder: Path) -> int:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def symlink_loop_problem(path, *, what: str) -> str | None:
    """The one-line refusal naming ``what`` when ``path`` or a folder above it is a symbolic link loop
    (a self-link or a cycle of links), through which nothing can be read or written; else ``None``."""
    from .audio import symlink_loop

    path = Path(path).expanduser()
    loop = next((p for p in [path, *path.parents] if p.is_symlink() and symlink_loop(p)), None)
    if loop is None:
        return None
    return (f"{what}: {loop} is a symbolic link loop ({loop} -> {os.readlink(loop)} leads back to itself); "
            "remove the link or choose another path")


def refuse_symlink_loop(path, *, what: str) -> None:
    """Raise :class:`NameTooLongError` with :func:`symlink_loop_problem`'s line when there is one."""
    problem = symlink_loop_problem(path, what=what)
    if problem:
        raise NameTooLongError(problem)


class OutFolderError(VocalGradError, ValueError):
    """An output path where a command writes a folder that cannot be one (a file, a path under a file)."""


def out_folder_problem(path, *, what: str) -> str | None:
    """The one-line refusal naming ``what`` (e.g. ``--out PATH``) when no folder can be written at
    ``path``: a symbolic link loop (:func:`symlink_loop_problem`), an existing file, or a path below a
    file; else ``None``. A new path below existing folders, or an existing folder, passes."""
    loop = symlink_loop_problem(path, what=what)
    if loop:
        return loop
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        return f"{what}: an existing file, where a folder is written; give a folder or a new path"
    above = next((p for p in path.parents if p.exists() or p.is_symlink()), None)
    if above is not None and not above.is_dir():
        return f"{what}: {above} is a file, not a folder, so nothing can be written below it; give a folder or a new path"
    return None


def refuse_out_folder(path, *, what: str) -> None:
    """Raise :class:`OutFolderError` with :func:`out_folder_problem`'s line when there is one."""
    problem = out_folder_problem(path, what=what)
    if problem:
        raise OutFolderError(problem)


def name_fits(path, *, what: str, names=()) -> None:
    """Raise :class:`NameTooLongError` naming ``what`` (e.g. ``--out PATH``) when a name is too long, or
    when ``path`` (or a folder above it) is a symbolic link loop, which no name can be created through.

    Checks every component of ``path`` that does not exist yet, and each of ``names`` (file names the
    command will write inside ``path``), each with the room of a temporary name.
    """
    path = Path(path)
    refuse_symlink_loop(path, what=what)
    room = temp_name_room()
    limit = _name_max(path)
    parts = [p for p in [path, *path.parents] if p.name and not p.exists()]
    for p in reversed(parts):
        n = len(os.fsencode(p.name))
        if n + room > limit:
            raise NameTooLongError(f"{what}: the name {p.name[:40]}... is {n} characters long; this file system "
                                   f"allows {limit} per name and the toolkit writes through temporary names "
                                   f"{room} longer: use at most {limit - room} characters")
    for name in names:
        n = len(os.fsencode(name))
        if n + room > limit:
            raise NameTooLongError(f"{what}: it would write {name[:60]}... ({n} characters); this file system allows "
                                   f"{limit} per name and the toolkit writes through temporary names {room} longer "
                                   f"(at most {limit - room} characters)")
