"""Content identity: the one owner of the digests that say what an artefact is made of.

Artefacts are matched by what they hold, never by their names. Four digests cover the pipeline:

==============  =====================================================================================
source          sha256 of a source file's bytes (:func:`sha256_file`), recorded per source in a render
recipe          :func:`content_digest` of the recipe's parsed settings (comments and layout don't count)
build           :func:`build_digest` over the ``(clip id, clip sha256)`` pairs of a set of clips: the same
                for a render folder, its Hub folder and the sample log of a model run on all its clips
results         the build digest of the clips a model answered, recomputed from its sample log
==============  =====================================================================================

A clip's sha256 is the sha256 of its encoded (FLAC) bytes, the value of the manifest's ``sha256``
column, of the Hub parquet's audio bytes and of the sample logs' ``sha256`` field, so all three give
the same build digest for the same clips. Digests are lower-case hex; :func:`short` is the 12-character
form shown to people (``3f2a9c01be7d``).

Examples
--------
>>> build_digest([("b", "22"), ("a", "11")]) == build_digest([("a", "11"), ("b", "22")])
True
>>> short(content_digest({"name": "faithful-v1", "volume": {"low": 6}}))
'...'  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from vocalgrad import VocalGradError

__all__ = ["DigestMismatch", "build_digest", "content_digest", "edited_recipe_record", "file_digests", "recipe_seal",
           "sha256_bytes", "sha256_file", "short"]

_CHUNK = 1 << 20
SHORT = 12


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks (a symlink is followed)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def content_digest(obj) -> str:
    """Hex sha256 of a JSON-able value in canonical form (sorted keys, no spaces, UTF-8).

    Two values that compare equal after a JSON round trip have the same digest, whatever the key
    order or the formatting of the file they were read from.
    """
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return sha256_bytes(text.encode("utf-8"))


def build_digest(clips: Iterable[tuple[str, str]]) -> str:
    """Hex digest of a set of clips: sha256 over the sorted ``"<clip id>\\t<sha256>\\n"`` lines.

    Parameters
    ----------
    clips : iterable of (str, str)
        ``(clip id, sha256 of the clip's encoded bytes)`` pairs, in any order. A clip listed twice
        with the same sha256 counts once.

    Raises
    ------
    ValueError
        When one clip id comes with two different sha256 values, or a sha256 is missing.
    """
    seen: dict[str, str] = {}
    for clip_id, sha in clips:
        if not sha:
            raise ValueError(f"clip {clip_id!r} has no sha256: its build digest cannot be computed")
        if seen.setdefault(clip_id, sha) != sha:
            raise ValueError(f"clip {clip_id!r} appears with two different sha256 values "
                             f"({short(seen[clip_id])} and {short(sha)})")
    h = hashlib.sha256()
    for clip_id in sorted(seen):
        h.update(f"{clip_id}\t{seen[clip_id]}\n".encode("utf-8"))
    return h.hexdigest()


def short(digest: str | None) -> str:
    """The 12-character form of a digest shown to people (``"unknown"`` for None)."""
    return digest[:SHORT] if digest else "unknown"


class DigestMismatch(VocalGradError, ValueError):
    """Two artefacts that must hold the same content do not: the message names both sides."""

    def __init__(self, what: str, a: tuple[str, str | None], b: tuple[str, str | None], hint: str = ""):
        (name_a, dig_a), (name_b, dig_b) = a, b
        msg = f"{what} differ: {name_a} is {short(dig_a)}, {name_b} is {short(dig_b)}"
        super().__init__(msg + (f"; {hint}" if hint else ""))


def file_digests(paths: Iterable[str | os.PathLike]) -> dict[str, str]:
    """``{str(path): sha256}`` for several files (a convenience for source tables)."""
    return {str(Path(p)): sha256_file(p) for p in paths}


def recipe_seal(name, digest) -> str:
    """The seal of render.json's recipe record (``recipe_seal``): the content digest of its ``recipe`` and
    ``recipe_digest``, so a record edited by hand is named as such instead of blamed on a recipe."""
    return content_digest(["recipe_seal", name, digest])


def edited_recipe_record(meta: dict, where) -> str | None:
    """The problem of a render.json whose ``recipe``/``recipe_digest`` no longer match its ``recipe_seal``
    (edited after the render), else None (also for renders of earlier versions, which have no seal)."""
    seal = meta.get("recipe_seal")
    if not seal or seal == recipe_seal(meta.get("recipe"), meta.get("recipe_digest")):
        return None
    return (f"{where}: its recipe record was edited after the render (recipe {meta.get('recipe')!r}, recipe_digest "
            f"{short(str(meta.get('recipe_digest')))} do not match the recipe_seal written with them); restore "
            "render.json's recipe_digest (a backup, or rerun the render into a new --out)")
