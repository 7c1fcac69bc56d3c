"""Content identity of a render folder: what its clips are made of, recorded in ``render.json``.

Beside its settings, ``render.json`` records (all digests from :mod:`generation.identity`):

``recipe_digest``
    :attr:`generation.recipe.Recipe.digest`, the content of the recipe beside its ``recipe`` name.
    One folder holds one recipe content: a run whose recipe has another digest is refused
    (:func:`check_recipe`), also when the recipe file keeps the name.
``sources``
    ``{source_id: {"sha256": ..., "flac_sha256": ...}}``: ``sha256`` is the source as read
    (:func:`source_sha256`: the bytes of its file; of the encoded row audio for ``hf:``; of the
    generating parameters for ``tones``), ``flac_sha256`` the bytes of ``sources/<source_id>.flac``
    the render wrote from it. A rerun whose source reads differently is refused naming the source
    (:func:`check_sources`); ``vocalgrad verify`` flags a ``sources/`` file that differs from its record.
``build_digest``, ``n_clips``
    :func:`generation.identity.build_digest` over the manifest's ``(clip_id, sha256)`` pairs and the
    number of clips, written at the end of every run; ``vocalgrad verify`` recomputes it.

Each unit also writes its source's record to ``.parts/source/<source_id>.json`` when it renders, so
an interrupted run is checked as well as a finished one. A folder rendered before these records
existed adopts the current files at its next run (nothing older can be checked).

A render never reads its own output: :func:`exclude_own_output` drops source files in the ``clips/``,
``sources/`` and ``.parts/`` folders of ``--out``, and for ``folder:`` sources also files inside any
render folder (``render.json``, ``manifest.parquet``) or VocalGrad Hub folder under the source, with a
warning naming the folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from pathlib import Path

import vocalgrad as vg

from . import audio as aio
from .identity import (DigestMismatch, build_digest, content_digest, edited_recipe_record,  # noqa: F401
                       recipe_seal, sha256_bytes, sha256_file, short)
from .render_dir import RenderDir
from .sources import SourceItem, SourceWarning

__all__ = ["IdentityError", "RecipeNameWarning", "check_recipe", "check_sources", "exclude_own_output",
           "edited_recipe_record", "identity_fields", "recipe_seal", "recorded_sources", "shipped_name_warning", "source_digests", "source_record_path",
           "source_sha256", "write_source_record"]

#: Sources named in a refusal before "and N more".
_NAME_AT_MOST = 3


class IdentityError(vg.VocalGradError, ValueError):
    """A run would mix content in one render folder (another recipe content, a changed source)."""


class RecipeNameWarning(UserWarning):
    """A recipe file carries the name of a shipped recipe but not its content."""


# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------
def source_sha256(item: SourceItem) -> str | None:
    """The identity of a source as it is read, ``None`` when it cannot be read now.

    A file path: sha256 of the file's bytes. An audio object with a ``sha256()`` method
    (:class:`generation.sources.HFAudio`): its answer. One with a ``path`` to a file
    (:class:`generation.sources.CVAudio`): that file's sha256. A dataclass without a file
    (:class:`generation.sources.ToneSpec`): the content digest of its fields. Anything else: the
    sha256 of its decoded samples and rate.
    """
    audio = item.audio
    try:
        if isinstance(audio, (str, os.PathLike)):
            return sha256_file(audio)
        if callable(getattr(audio, "sha256", None)):
            return audio.sha256()
        path = getattr(audio, "path", None)
        if isinstance(path, (str, os.PathLike)) and os.path.isfile(path):
            return sha256_file(path)
        if dataclasses.is_dataclass(audio):
            return content_digest({"type": type(audio).__qualname__, **dataclasses.asdict(audio)})
        from .sources import load_source_audio

        y, sr = load_source_audio(item)
        return sha256_bytes(f"{int(sr)}:".encode() + y.tobytes())
    except Exception:  # noqa: BLE001 - an unreadable source is the render's to skip, with its reason
        return None


def source_digests(items: list[SourceItem]) -> dict[str, str | None]:
    """Source id -> :func:`source_sha256` of every item."""
    return {it.source_id: source_sha256(it) for it in items}


def source_record_path(out_dir: Path, source_id: str) -> Path:
    """``.parts/source/<source_id>.json``: the digests of a source, written by its first rendered unit."""
    return RenderDir(out_dir).parts_dir / "source" / f"{source_id}.json"


def write_source_record(out_dir: Path, source_id: str, sha256: str | None, flac_sha256: str) -> None:
    """Record the source's digests (unless unknown) beside the part files."""
    if sha256:
        aio.write_if_changed(source_record_path(out_dir, source_id),
                             json.dumps({"sha256": sha256, "flac_sha256": flac_sha256}, sort_keys=True).encode())


def recorded_sources(out_dir: Path) -> dict[str, dict]:
    """Source id -> ``{"sha256", "flac_sha256"}`` as the folder records them (render.json's ``sources``,
    updated by the part records, which are written first)."""
    rd = RenderDir(out_dir)
    rec: dict[str, dict] = {}
    if rd.meta_path.is_file():
        try:
            rec.update(json.loads(rd.meta_path.read_text(encoding="utf-8")).get("sources") or {})
        except (ValueError, AttributeError):
            pass  # an unreadable render.json is refused by the settings check
    folder = rd.parts_dir / "source"
    if folder.is_dir():
        for p in sorted(folder.glob("*.json")):
            try:
                rec[p.stem] = json.loads(p.read_text())
            except ValueError:
                continue  # a damaged record: render.json's, if any, stands
    return rec


def check_sources(out_dir: Path, digests: dict[str, str | None]) -> None:
    """Refuse a run whose sources read differently from the ones the folder's clips were rendered from.

    Raises
    ------
    IdentityError
        Naming the changed source(s), both digests and the fix; nothing has been written.
    """
    recorded = recorded_sources(out_dir)
    changed = [(sid, recorded[sid].get("sha256"), now) for sid, now in digests.items()
               if now and sid in recorded and recorded[sid].get("sha256") not in (None, now)]
    if not changed:
        return
    named = "; ".join(f"{sid} (rendered from {short(old)}, now {short(now)})" for sid, old, now in
                      changed[:_NAME_AT_MOST])
    more = f" and {len(changed) - _NAME_AT_MOST} more" if len(changed) > _NAME_AT_MOST else ""
    raise IdentityError(f"{out_dir}: {len(changed)} source(s) changed since their clips were rendered: {named}{more}; "
                        "nothing was written. Restore the source audio, or render the new audio into another --out")


def check_recipe(out_dir: Path, old_meta: dict, recipe) -> None:
    """Refuse a recipe whose content differs from the one the folder was rendered with.

    Raises
    ------
    generation.identity.DigestMismatch
        (a ``ValueError``) naming both digests; nothing has been written.
    IdentityError
        render.json's recipe record edited after the render (:func:`edited_recipe_record`).
    """
    edited = edited_recipe_record(old_meta, RenderDir(out_dir).meta_path)
    if edited:
        raise IdentityError(edited + "; nothing was written")
    old = old_meta.get("recipe_digest")
    if old and old != recipe.digest:
        raise DigestMismatch(
            "recipe contents", (f"the recipe of {out_dir} ({old_meta.get('recipe')!r})", old),
            (f"this run's recipe {recipe.path} ({recipe.name!r})", recipe.digest),
            "one render folder holds one recipe content; nothing was written. Render into another --out "
            "(and give an edited recipe a new name)")


def shipped_name_warning(recipe) -> str | None:
    """A warning when a recipe file carries a shipped recipe's name with other content, else ``None``."""
    from .recipe import RECIPE_DIR, shipped_digest

    if Path(recipe.path).resolve().parent == RECIPE_DIR.resolve():
        return None
    shipped = shipped_digest(recipe.name)
    if shipped is None or shipped == recipe.digest:
        return None
    return (f"{recipe.path}: named {recipe.name!r} like the shipped recipe but its content differs "
            f"({short(recipe.digest)}, shipped {short(shipped)}); render.json records both name and digest, "
            "give the edited recipe a new name")


# --------------------------------------------------------------------------------------------
# A render never reads its own output
# --------------------------------------------------------------------------------------------
def _toolkit_folder(folder: Path, cache: dict) -> Path | None:
    """The render or VocalGrad Hub folder ``folder`` lies in (itself or a parent), else ``None``."""
    from .hub_dir import HubDir

    if folder in cache:
        return cache[folder]
    found = None
    if RenderDir.looks_like(folder) or HubDir(folder).has_vocalgrad_card():
        found = folder
    elif folder.parent != folder:
        found = _toolkit_folder(folder.parent, cache)
    cache[folder] = found
    return found


def exclude_own_output(items: list[SourceItem], out_dir: Path, source: str) -> list[SourceItem]:
    """``items`` without the files that are toolkit output: in the folders a render of ``out_dir`` writes
    (``clips/``, ``sources/``, ``.parts/``), or (``folder:`` sources) inside a render or Hub folder under the
    source folder, the source folder itself included (its ``sources/`` sub-folder may be read: it holds no
    marker). Warns with a :class:`SourceWarning` naming the folder(s) and the number of files left out.
    """
    from .option_types import refuse_symlink_loop

    refuse_symlink_loop(out_dir, what=f"--out {out_dir}")
    out = out_dir.expanduser().resolve()
    written = [out / "clips", out / "sources", out / RenderDir.PARTS]  # what a render writes audio into
    kind, _, arg = source.partition(":")
    root = Path(arg).expanduser().resolve() if kind == "folder" and arg else None
    cache: dict = {}
    if root is not None:  # folders above the source root do not count
        cache[root.parent] = None
    kept, dropped = [], {}
    for it in items:
        if not isinstance(it.audio, (str, os.PathLike)):
            kept.append(it)
            continue
        path = Path(it.audio).expanduser().absolute()
        try:
            resolved = path.resolve()
        except (RuntimeError, OSError):  # a symbolic link loop: kept, the render skips it with the reason
            kept.append(it)
            continue
        owner = out if any(resolved.is_relative_to(w) or path.is_relative_to(w) for w in written) else None
        if owner is None and root is not None and resolved.is_relative_to(root):
            owner = _toolkit_folder(resolved.parent, cache)
        if owner is None:
            kept.append(it)
        else:
            dropped.setdefault(owner, []).append(it.source_id)
    if dropped:
        named = ", ".join(f"{folder} ({len(ids)} file(s))" for folder, ids in sorted(dropped.items()))
        warnings.warn(SourceWarning(f"{source}: left out toolkit output, never read as sources: {named}"),
                      stacklevel=3)
    return kept


# --------------------------------------------------------------------------------------------
# What render.json records at the end of a run
# --------------------------------------------------------------------------------------------
def identity_fields(out_dir: Path, rows: list[dict], digests: dict[str, str | None], recipe) -> dict:
    """render.json's identity keys for the clips of ``rows`` (the part files' rows).

    Sources rendered before the part records existed adopt their current digests and ``sources/``
    file here (their record is written too).
    """
    rd = RenderDir(out_dir)
    recorded = recorded_sources(out_dir)
    sources = {}
    for sid in sorted({r["source_id"] for r in rows}):
        rec = dict(recorded.get(sid) or {})
        if not rec.get("sha256") and digests.get(sid):
            rec["sha256"] = digests[sid]
        if not rec.get("flac_sha256") and rd.source_path(sid).is_file():
            rec["flac_sha256"] = sha256_file(rd.source_path(sid))
        if rec.get("sha256") and rec.get("flac_sha256") and recorded.get(sid) != rec:
            write_source_record(out_dir, sid, rec["sha256"], rec["flac_sha256"])
        sources[sid] = rec
    return {"recipe_digest": recipe.digest, "recipe_seal": recipe_seal(recipe.name, recipe.digest), "sources": sources,
            "build_digest": build_digest((r["clip_id"], r["sha256"]) for r in rows), "n_clips": len(rows)}
