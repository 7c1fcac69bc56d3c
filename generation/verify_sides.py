"""The builds ``vocalgrad verify`` reads, each as a :class:`Side`: a render folder, a Hub folder, or the
authors' published AudioFolder release (:func:`load_side`, the one place that knows the layouts).

A :class:`Side` holds the build's clip rows (id, category, tier, trajectory, direction, label,
source, sha256), what the folder records about itself and a reader of the clips' bytes, so that
every check and the clip-by-clip comparison read any layout the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import vocalgrad as vg

from .hub_dir import HubDir
from .render_dir import RenderDir, RenderDirError

__all__ = ["Side", "VerifyError", "load_side"]


@dataclass
class Side:
    """One build, read the same way whatever its layout.

    Attributes
    ----------
    path : Path
    kind : {"render", "hub", "published"}
    meta : dict
        render.json (render) or what the Hub folder records (empty when nothing).
    rows : list of dict
        One per clip: ``id, category, tier, trajectory, direction, label, source_id, sha256`` (and
        ``path`` for a render).
    iter_bytes : callable
        ``iter_bytes(ids=None)`` yields ``(clip_id, bytes or None)`` for every clip (or the ids
        given) in storage order; None when the file is missing.
    """

    path: Path
    kind: str
    meta: dict
    rows: list
    iter_bytes: Callable[..., Iterator[tuple[str, bytes | None]]]
    selected_sources: list | None = None
    skipped: dict = field(default_factory=dict)
    unreadable: list = field(default_factory=list)  # files that could not be read (e.g. a truncated shard)


class VerifyError(vg.VocalGradError, ValueError):
    """A folder that is neither a render nor a Hub folder, or cannot be read; the message says which."""


def _render_side(root: Path) -> Side:
    rd = RenderDir(root)
    try:
        meta, manifest = rd.meta, rd.rows()
    except RenderDirError as exc:
        raise VerifyError(str(exc)) from None
    rows = [{**r, "id": r["clip_id"], "label": r["direction"]} for r in manifest]
    by_id = {r["id"]: r for r in rows}

    def iter_bytes(ids=None):
        for cid in (ids if ids is not None else list(by_id)):
            p = rd.clip_path(by_id[cid]) if cid in by_id else None
            yield cid, (p.read_bytes() if p is not None and p.is_file() else None)

    return Side(root, "render", meta, rows, iter_bytes, rd.selection(), rd.skipped())


def _hub_side(root: Path) -> Side:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = HubDir(root).category_shards()
    if not files:
        raise VerifyError(f"{root}: a Hub folder without category shards (<category>/*.parquet)")
    cols = ["id", "category", "tier", "trajectory", "direction", "label", "source_id", "sha256", "split"]
    rows, where, unreadable = [], {}, []
    for name, paths in files.items():  # the nine category configs (the test split); all/beep/train not read
        for p in paths:
            try:
                have = pq.read_schema(p).names
                t = pq.read_table(p, columns=[c for c in cols if c in have]).to_pylist()
            except (pa.ArrowException, OSError) as exc:  # a truncated or damaged shard is a problem found
                unreadable.append(f"{p}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                continue
            for i, r in enumerate(t):
                r.setdefault("sha256", None)
                rows.append({**r, "config": name})
                where[r["id"]] = (p, i)

    def iter_bytes(ids=None):
        wanted = None if ids is None else set(ids)
        for p in sorted({p for p, _ in where.values()}):
            try:
                table = pq.read_table(p, columns=["id", "audio"]).to_pylist()
            except (pa.ArrowException, OSError):  # its rows were read: audio torn later in the file
                table = [{"id": cid, "audio": None} for cid, (q, _) in where.items() if q == p]
            for r in table:
                if wanted is None or r["id"] in wanted:
                    yield r["id"], (r["audio"] or {}).get("bytes")
        for cid in sorted(wanted - set(where)) if wanted is not None else ():
            yield cid, None

    # a Hub folder keeps no render settings: the checks that need them (frozen ids) are the render's; its
    # build.json says what its test render was asked for (--categories) and whether it was partial
    test = ((HubDir(root).build_record() or {}).get("renders") or {}).get("test") or {}
    meta = {k: v for k, v in (("categories", test.get("categories")),
                              ("built_partial", bool(test.get("missing_conditions")))) if v}
    return Side(root, "hub", meta, rows, iter_bytes, unreadable=unreadable)


def load_side(path) -> Side:
    """Read a build for verification or comparison: a render folder or a Hub folder.

    This is the one place that knows the layouts; to accept another (e.g. the authors' published
    AudioFolder layout), add a branch that returns a :class:`Side`.

    Raises
    ------
    VerifyError
        When ``path`` is neither.
    """
    from . import published

    if published.is_published(path):
        # The authors' AudioFolder release (a local copy or a Hub id). Their sha256 would be of the
        # WAV files, ours is of FLAC bytes: the two cannot match, so none is given.
        rows = [{**r, "sha256": None} for r in published.load_published_rows(path)]
        return Side(Path(str(path)), "published", {}, rows,
                    lambda ids=None: published.iter_file_bytes(rows, ids))
    root = Path(path)
    if not root.is_dir():
        raise VerifyError(f"{root}: no such folder")
    if RenderDir.looks_like(root):
        return _render_side(root)
    if HubDir.looks_like(root):
        return _hub_side(root)
    raise VerifyError(f"{root}: neither a render folder (render.json + manifest.parquet) nor a Hub folder "
                      "(README.md + <config>/*.parquet)")

