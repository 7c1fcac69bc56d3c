"""The render folder: the one reader of what ``vocalgrad render`` writes.

Layout (written by :mod:`generation.render`)::

    DIR/render.json          recipe, split, source, sample rate, selection; the content digests
                             (recipe, sources, build: :mod:`generation.render_identity`)
    DIR/manifest.parquet     one row per clip (vocalgrad.MANIFEST_COLUMNS)
    DIR/clips/**.flac        the clips (``path`` column, relative to DIR)
    DIR/sources/<id>.flac    the unmodified source utterances
    DIR/selection.csv        the selected sources (optional), DIR/skipped.csv the skipped ones (optional)

Every module that reads a render folder (the datasets builder, ``vocalgrad hub``, ``vocalgrad verify``,
``listen``, ``show``) goes through :class:`RenderDir`; :meth:`RenderDir.verify` is the one check of the
render contract.

Examples
--------
>>> rd = RenderDir("build/test")  # doctest: +SKIP
>>> rd.meta["split"], len(rd.rows())  # doctest: +SKIP
('test', 21600)
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import vocalgrad
from vocalgrad import RenderDirError

from .user_files import read_text

__all__ = ["RenderCheck", "RenderDir", "RenderDirError", "conditions", "expected_categories", "first_row_per_source", "known_categories",
           "listed", "read_render_csv"]

_LIST_AT_MOST = 20


@dataclass
class RenderCheck:
    """Result of :meth:`RenderDir.verify` for one render directory.

    Attributes
    ----------
    path : pathlib.Path
        The render directory.
    meta : dict
        Contents of ``render.json``.
    rows : list of dict
        Manifest rows sorted by clip id.
    problems : list of str
        Everything wrong (empty when the render is usable).
    missing : list of str
        Clip ids a complete render of the same sources would have and this one lacks (a problem
        unless ``allow_partial``).
    """

    path: Path
    meta: dict
    rows: list
    problems: list = field(default_factory=list)
    missing: list = field(default_factory=list)


#: The problem of a symbolic link loop in a render's clips folder (``verify`` and ``hub`` alike).
LINK_LOOP = "symbolic link loop in the clips folder (not a clip; nothing can be read through it: remove it)"


def _link_loop(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def listed(kind: str, items: list[str]) -> list[str]:
    """Problem lines ``"KIND: ITEM"``: the first 20 items, then a count of the rest."""
    shown = [f"{kind}: {item}" for item in items[:_LIST_AT_MOST]]
    if len(items) > _LIST_AT_MOST:
        shown.append(f"{kind}: ... and {len(items) - _LIST_AT_MOST} more")
    return shown


def _in_folder(name: str, doc: str) -> property:
    """A read-only attribute: the path of ``name`` inside the folder."""
    return property(lambda self: self.path / name, doc=doc)


class RenderDir:
    """One render folder: its meta (``render.json``), rows (``manifest.parquet``), paths and checks.

    Parameters
    ----------
    path : path-like
        The output folder of ``vocalgrad render``. Nothing is read until asked for.
    """

    #: The layout's files (besides ``clips/`` and ``sources/``): settings, manifest, and what
    #: ``vocalgrad render`` and ``vocalgrad verify`` write beside them.
    META = "render.json"
    MANIFEST = "manifest.parquet"
    SELECTION = "selection.csv"
    SKIPPED = "skipped.csv"
    LABEL_CHECKS = "label_checks.csv"
    SPAN_CHECK = "span_check.csv"
    VERIFY = "verify.json"
    #: The renderer's part files (one per finished unit); the manifest is rebuilt from them.
    PARTS = ".parts"

    def __init__(self, path):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RenderDir({str(self.path)!r})"

    # ---- paths -------------------------------------------------------------------------------
    meta_path = _in_folder(META, "Settings of the render: recipe, split, source, selection, categories.")
    manifest_path = _in_folder(MANIFEST, "One row per clip (:data:`vocalgrad.MANIFEST_COLUMNS`).")
    selection_path = _in_folder(SELECTION, "The selected sources, one row each (written by the render).")
    skipped_path = _in_folder(SKIPPED, "The sources that could not be used, with the reason.")
    label_checks_path = _in_folder(LABEL_CHECKS, "Measured effect and label warnings per clip.")
    span_check_path = _in_folder(SPAN_CHECK, "Frozen sources whose detected span differs from the recorded one.")
    verify_path = _in_folder(VERIFY, "The record of the last ``vocalgrad verify`` of the folder.")
    parts_dir = _in_folder(PARTS, "The renderer's part files, ``.parts/<source_id>__<category>.json``.")
    clips_dir = _in_folder("clips", "The clips, ``clips/<category>/<clip_id>.flac``.")
    sources_dir = _in_folder("sources", "The source clips, ``sources/<source_id>.flac``.")

    def clip_path(self, row: dict) -> Path:
        """The file of a manifest row (its ``path``, relative to the folder; one leading out of the
        folder raises :class:`generation.contained.OutsideFolderError`)."""
        from .contained import inside

        return inside(self.path, row["path"], source=str(self.manifest_path))

    def source_path(self, source_id: str) -> Path:
        """``sources/<source_id>.flac`` (it may not exist; an id that leads out of the folder, read from
        the manifest, raises :class:`generation.contained.OutsideFolderError`)."""
        from .contained import inside

        return inside(self.path, f"sources/{source_id}.flac", source=f"{self.manifest_path} (source_id)")

    def clip_record(self, row: dict) -> dict:
        """The Hub record of a manifest row (:func:`vocalgrad.hub_record`, its clip's bytes)."""
        return vocalgrad.hub_record(row, self.clip_path(row).read_bytes())

    def source_record(self, row: dict) -> dict:
        """The Hub record of a row's source clip (:func:`vocalgrad.source_record`; its length
        and rate read from ``sources/<source_id>.flac``)."""
        import soundfile as sf

        path = self.source_path(row["source_id"])
        info = sf.info(path)
        return vocalgrad.source_record(row, path.read_bytes(), duration_sec=info.frames / info.samplerate,
                                       sample_rate=info.samplerate)

    @classmethod
    def looks_like(cls, path) -> bool:
        """Whether ``path`` holds a manifest or a render.json (a render folder, maybe a broken one)."""
        return (Path(path) / cls.MANIFEST).is_file() or (Path(path) / cls.META).is_file()

    # ---- contents ----------------------------------------------------------------------------
    @cached_property
    def meta(self) -> dict:
        """Contents of ``render.json``.

        Raises
        ------
        RenderDirError
            The file is missing or not JSON.
        """
        path = _required(self.meta_path)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise RenderDirError(f"{path}: not valid JSON ({exc}); re-run `vocalgrad render`") from None

    def verify_record(self) -> dict | None:
        """Contents of ``verify.json``, ``None`` when the folder was never verified."""
        path = self.verify_path
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def rows(self, categories=None) -> list[dict]:
        """Manifest rows (the :data:`vocalgrad.MANIFEST_COLUMN_NAMES`, and a sweep's :data:`vocalgrad.SWEEP_COLUMNS`
        where the manifest has them), optionally only ``categories``, by clip id.

        Raises
        ------
        RenderDirError
            The manifest is missing or lacks columns.
        """
        import pyarrow.parquet as pq

        if not self.manifest_path.is_file() and self.meta_path.is_file():
            unfinished = self.unfinished()
            if unfinished:
                raise RenderDirError(unfinished)
        import pyarrow as pa

        path = _required(self.manifest_path)
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            reason = (str(exc).splitlines() or [type(exc).__name__])[0].replace(f" '{path}'", "")
            raise RenderDirError(f"{path}: not a readable parquet file ({reason}); the render's manifest is "
                                 "damaged: rerun the render command with the same options, which writes it "
                                 "again") from None
        missing = [name for name in vocalgrad.MANIFEST_COLUMN_NAMES if name not in table.column_names]
        if missing:
            raise RenderDirError(f"{path}: missing columns {', '.join(missing)}; re-run `vocalgrad render`")
        sweep = [name for name in vocalgrad.SWEEP_COLUMN_NAMES if name in table.column_names]
        rows = table.select(list(vocalgrad.MANIFEST_COLUMN_NAMES) + sweep).to_pylist()
        if categories is not None:
            wanted = set(categories)
            rows = [r for r in rows if r["category"] in wanted]
        return sorted(rows, key=lambda r: r["clip_id"])

    def render_command(self) -> str:
        """The ``vocalgrad render`` command that finishes or repairs this folder, from ``render.json`` and
        ``selection.csv`` (options it does not record, such as ``--allow-small``, must be given as before)."""
        import shlex

        from .recipe import DEFAULT_RECIPE

        meta = self.meta
        split = meta.get("split", "test")
        cmd = ["vocalgrad", "render", "--source", str(meta.get("source", "SOURCE")), "--out", str(self.path)]
        if split != "test":
            cmd += ["--split", split]
        every = vocalgrad.BEEP_CATEGORIES if split == "beep" else vocalgrad.CATEGORY_NAMES
        cats = meta.get("categories")
        if cats and set(cats) != set(every):
            cmd += ["--categories", ",".join(c for c in vocalgrad.CATEGORY_NAMES if c in cats)]
        selection = self.selection() if self.selection_path.is_file() else None
        if selection:
            cmd += ["--sources", str(len(selection))]
        if meta.get("selection") == "sample":
            cmd += ["--selection", "sample"]
        if meta.get("sweep"):
            cmd += ["--sweep"]
            trajs = meta["sweep"].get("trajectories")
            if trajs and tuple(trajs) != vocalgrad.TRAJECTORIES:
                cmd += ["--trajectories", ",".join(trajs)]
        if meta.get("recipe", DEFAULT_RECIPE) != DEFAULT_RECIPE:
            cmd += ["--recipe", str(meta["recipe"])]
        if int(meta.get("sample_rate", 48000)) != 48000:
            cmd += ["--sample-rate", str(meta["sample_rate"])]
        return shlex.join(cmd)

    def unfinished(self) -> str | None:
        """A one-line message when the folder holds a render that never finished (``render.json``, no
        manifest yet): units done, clips missing, the command that finishes it; ``None`` otherwise."""
        if self.manifest_path.is_file() or not self.meta_path.is_file():
            return None
        try:
            if "source" not in self.meta:
                return None
            cats, selection, cmd = self.meta.get("categories") or [], self.selection(), self.render_command()
        except (RenderDirError, OSError, ValueError, KeyError):
            return None
        per = vocalgrad.CONDITIONS_PER_CATEGORY
        done = len(list(self.parts_dir.glob("*.json"))) if self.parts_dir.is_dir() else 0
        if selection is None:
            return (f"{self.manifest_path}: missing: an unfinished render ({done * per} clips done; the manifest "
                    f"is written at the end); finish it by rerunning the render command with the same options: {cmd}")
        total = len(selection) * len(cats)
        if done >= total:
            return (f"{self.manifest_path}: missing, though all {done * per} clips are done; rerun the render "
                    f"command with the same options to write it: {cmd}")
        return (f"{self.manifest_path}: missing: an unfinished render ({done * per} of {total * per} clips done, "
                f"{max(total - done, 0) * per} to go; the manifest is written at the end); finish it by rerunning "
                f"the render command with the same options: {cmd}")

    def first_row_per_source(self) -> dict[str, dict]:
        """Source id -> its first manifest row, sorted by source id."""
        return first_row_per_source(self.rows())

    def manifest_sha256(self) -> str | None:
        """sha256 of ``manifest.parquet`` (hex), None when there is none."""
        path = self.manifest_path
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None

    def selection(self) -> list[str] | None:
        """Source ids of ``selection.csv`` in order, or None when the render wrote none."""
        path = self.selection_path
        return [r["source_id"] for r in read_render_csv(path, ("source_id",))] if path.is_file() else None

    def skipped(self) -> dict[str, str]:
        """Source id -> reason, from ``skipped.csv`` (empty when none was skipped)."""
        path = self.skipped_path
        return ({r["source_id"]: r["reason"] for r in read_render_csv(path, ("source_id", "reason"))}
                if path.is_file() else {})

    def content_hash(self, *, with_sources: bool = False) -> str:
        """16 hex digits that change whenever the manifest or render.json does (and, ``with_sources``,
        the names and sizes of ``sources/*.flac``): the datasets cache key of a build."""
        digest = hashlib.sha256(self.manifest_path.read_bytes())
        if self.meta_path.is_file():
            digest.update(self.meta_path.read_bytes())
        if with_sources and self.sources_dir.is_dir():
            for p in sorted(self.sources_dir.glob("*.flac")):
                digest.update(f"{p.name}:{p.stat().st_size};".encode())
        return digest.hexdigest()[:16]

    def build_digest(self, rows: list[dict] | None = None) -> str:
        """:func:`generation.identity.build_digest` of the manifest's (or ``rows``') ``(clip_id, sha256)`` pairs."""
        from .identity import build_digest

        return build_digest((r["clip_id"], r["sha256"]) for r in (self.rows() if rows is None else rows))

    # ---- checks ------------------------------------------------------------------------------
    def identity_problems(self, rows: list[dict] | None = None) -> list[str]:
        """Where the folder's content differs from what ``render.json`` records (empty when it agrees or
        records nothing): its recipe record against its seal (``recipe_seal``), the build digest of the
        manifest's clips (``build_digest``), and every
        ``sources/<source_id>.flac`` against its ``sources.<id>.flac_sha256``."""
        from .identity import sha256_file, short

        from .identity import edited_recipe_record

        meta, problems = self.meta, []
        edited = edited_recipe_record(meta, self.meta_path)
        if edited:
            problems.append(edited)
        fix = f"rerun the render command with the same options to repair it: {self.render_command()}"
        recorded = meta.get("build_digest")
        if recorded:
            try:
                now = self.build_digest(rows)
            except ValueError as exc:
                now = None
                problems.append(f"{self.manifest_path}: {exc}")
            if now is not None and now != recorded:
                problems.append(f"{self.manifest_path}: its clips give build digest {short(now)}, {self.META} records "
                                f"{short(recorded)} (manifest replaced or edited after the render); {fix}")
        changed = []
        for sid, rec in sorted((meta.get("sources") or {}).items()):
            want, path = (rec or {}).get("flac_sha256"), self.source_path(sid)
            if not want:
                continue
            if not path.is_file():
                changed.append(f"{path}: missing ({self.META} records sha256 {short(want)})")
            elif (have := sha256_file(path)) != want:
                changed.append(f"{path}: sha256 {short(have)} differs from the {short(want)} {self.META} records "
                               "(source audio replaced after rendering?)")
        problems += listed("source clip differs from render.json", changed)
        if changed:
            problems.append(f"{self.path}: {len(changed)} source clip(s) differ from their record; {fix}")
        return problems

    def clip_problems(self, rows: list[dict], *, verify_sha256: bool = True) -> tuple[list[str], list[str]]:
        """Paths of the clips of ``rows`` that are missing, and of those whose sha256 differs from the manifest."""
        missing, changed = [], []
        for r in rows:
            path = self.clip_path(r)
            if not path.is_file():
                missing.append(str(path))
            elif verify_sha256 and hashlib.sha256(path.read_bytes()).hexdigest() != r["sha256"]:
                changed.append(str(path))
        return missing, changed

    def files_in_clips(self) -> tuple[list[Path], list[Path]]:
        """The ``*.flac`` files below ``clips/`` (a link to a folder is not followed) and the symbolic link
        loops there (a self-link, a cycle), which are no clips and which nothing can be read through."""
        files, loops = [], []
        for folder, dirs, names in os.walk(self.clips_dir):
            for name in sorted(dirs + names):
                p = Path(folder) / name
                if p.is_symlink() and _link_loop(p):
                    loops.append(p)
                elif name in names and name.endswith(".flac"):
                    files.append(p)
        return files, loops

    def verify(self, *, verify_sha256: bool = True) -> RenderCheck:
        """Check the folder against the render contract.

        Parameters
        ----------
        verify_sha256 : bool
            Hash every clip and compare with the manifest (reads all audio once).

        Returns
        -------
        RenderCheck
            ``problems`` lists duplicate ids, split mismatches, unknown vocabulary, missing clips,
            sha256 mismatches and clips on disk that the manifest does not list; ``missing`` lists
            the conditions a complete render of the same sources would have and this one lacks.

        Raises
        ------
        RenderDirError
            render.json or the manifest cannot be read.
        """
        root, meta, rows = self.path, self.meta, self.rows()
        check = RenderCheck(root, meta, rows)
        split = meta.get("split")
        if split not in vocalgrad.SPLITS:
            check.problems.append(f"{self.meta_path}: split {split!r} is not one of {', '.join(vocalgrad.SPLITS)}")
        check.problems += _row_problems(rows, split, meta)
        missing, mismatch = self.clip_problems(rows, verify_sha256=verify_sha256)
        check.problems += listed("clip listed in manifest.parquet is missing", missing)
        check.problems += listed("clip sha256 differs from manifest.parquet", mismatch)
        if missing or mismatch:
            check.problems.append(f"{root}: {len(missing) + len(mismatch)} clip(s) missing or damaged; rerun the "
                                  f"render command with the same options to render them again (bit-identical): "
                                  f"{self.render_command()}")
        known = {self.clip_path(r).resolve() for r in rows}
        files, loops = self.files_in_clips()
        unlisted = sorted(str(p) for p in files if p.resolve() not in known)
        check.problems += listed("clip on disk not in manifest.parquet (interrupted render? re-run it)", unlisted)
        check.problems += listed(LINK_LOOP, [str(p) for p in loops])
        check.problems += self.identity_problems(rows)
        if not rows:
            check.problems.append(f"{self.manifest_path}: no clips")
        check.missing = _lacking(rows, split, meta)
        return check


def first_row_per_source(rows: list[dict]) -> dict[str, dict]:
    """Source id -> its first row among manifest ``rows``, sorted by source id."""
    first: dict[str, dict] = {}
    for r in rows:
        first.setdefault(r["source_id"], r)
    return dict(sorted(first.items()))


def _required(path: Path) -> Path:
    """``path``, or a :class:`RenderDirError` saying it is missing."""
    if not path.is_file():
        raise RenderDirError(f"{path}: missing; not the output folder of `vocalgrad render` (its --out DIR)")
    return path


def read_render_csv(path: Path, columns: tuple[str, ...] = ()) -> list[dict]:
    """Rows of a CSV file of a render folder (``selection.csv``, ``skipped.csv``, ``label_checks.csv``).

    Raises
    ------
    RenderDirError
        The file is no readable UTF-8 CSV or lacks one of ``columns``; the message names the file and
        line and says to rerun the render, which writes the file again.
    """
    fix = "rerun the render command with the same options to write it again"
    reader = csv.DictReader(io.StringIO(read_text(path, f"a CSV file with a header line; {fix}",
                                                  error=RenderDirError), newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise RenderDirError(f"{path}: not a readable CSV file (line {reader.line_num + 1}: {exc}); {fix}") from None
    missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise RenderDirError(f"{path}: no column {', '.join(missing)}; {fix}")
    return rows


def conditions(meta: dict, category: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(tiers, trajectories)`` a render of ``category`` holds: the paper's, or for a sweep render
    (render.json ``sweep``: the level tokens per category and the trajectories, as rendered) the sweep's."""
    sweep = (meta or {}).get("sweep")
    if not sweep:
        return vocalgrad.TIERS, vocalgrad.TRAJECTORIES
    return (tuple((sweep.get("levels") or {}).get(category) or ()),
            tuple(sweep.get("trajectories") or vocalgrad.TRAJECTORIES))


def _row_problems(rows: list[dict], split, meta: dict | None = None) -> list[str]:
    """Duplicate ids, split mismatches, unknown vocabulary and ids that do not match their columns."""
    dupes = sorted(i for i, n in Counter(r["clip_id"] for r in rows).items() if n > 1)
    problems = listed("duplicate clip_id in manifest.parquet", dupes)
    bad_split = [r["clip_id"] for r in rows if r["split"] != split]
    problems += listed(f"manifest split differs from render.json ({split!r})", bad_split)
    cats = known_categories({r["category"] for r in rows})
    conds = {c: conditions(meta, c) for c in {r["category"] for r in rows}}
    bad_vocab = [
        f"{r['clip_id']} ({name}={r[name]!r})"
        for r in rows
        for name, allowed in (("category", cats), ("tier", conds[r["category"]][0]),
                              ("trajectory", conds[r["category"]][1]), ("direction", vocalgrad.DIRECTIONS))
        if r[name] not in allowed
    ]
    problems += listed("unknown vocabulary value", bad_vocab)
    bad_id = [r["clip_id"] for r in rows if r["clip_id"] != vocalgrad.clip_id(
        r["source_id"], r["category"], r["trajectory"], r["tier"], r["direction"])]
    return problems + listed("clip_id does not match its columns", bad_id)


def known_categories(names) -> tuple[str, ...]:
    """The nine and those of ``names`` that are installed extension attributes (``vocalgrad attributes``)."""
    def known(name: str) -> bool:
        try:
            return vocalgrad.category(name).name == name
        except ValueError:
            return False

    return vocalgrad.CATEGORY_NAMES + tuple(sorted(n for n in names if n not in vocalgrad.CATEGORY_NAMES
                                                   and known(n)))


def expected_categories(split, present) -> tuple[str, ...]:
    """Categories a complete render holds: the four beep ones or the nine, and the extension
    attributes it has; a render of extension attributes only (``--categories brightness``) is
    complete with them alone."""
    ext = tuple(c for c in known_categories(present) if c not in vocalgrad.CATEGORY_NAMES)
    paper = vocalgrad.BEEP_CATEGORIES if split == "beep" else vocalgrad.CATEGORY_NAMES
    if ext and not set(present) & set(vocalgrad.CATEGORY_NAMES):
        return ext
    return tuple(paper) + ext


def _lacking(rows: list[dict], split, meta: dict | None = None) -> list[str]:
    """Clip ids a complete render of the rows' sources would have and the rows lack."""
    present = {r["category"] for r in rows}
    expected_cats = sorted(present) if (meta or {}).get("sweep") else expected_categories(split, present)
    have = {r["clip_id"] for r in rows}
    conds = {c: conditions(meta, c) for c in expected_cats}
    return [
        vocalgrad.clip_id(src, cat, traj, tier, d)
        for src in sorted({r["source_id"] for r in rows})
        for cat in expected_cats
        for traj in conds[cat][1]
        for tier in conds[cat][0]
        for d in vocalgrad.DIRECTIONS
        if vocalgrad.clip_id(src, cat, traj, tier, d) not in have
    ]
