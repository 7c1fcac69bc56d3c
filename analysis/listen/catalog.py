"""The clips a listening test or ``vocalgrad show`` can use: a render folder, a Hub folder, or a
local copy of the authors' published release (:mod:`generation.published`).

A :class:`Catalog` maps clip ids to their metadata (category, direction, tier, trajectory,
source id, speech span, value schedule ends) and returns a clip's FLAC bytes on request. A render
folder reads ``manifest.parquet`` and the files under ``clips/``; every path is resolved and must
stay inside the folder. A Hub folder (``<config>/test-*.parquet``) is indexed once; audio is read
one parquet row group at a time and the last few groups are kept in memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import vocalgrad
from generation.hub_dir import HubDir
from generation.render_dir import RenderDir, RenderDirError, known_categories

__all__ = ["Catalog", "CatalogError", "ClipInfo", "open_catalog"]

#: Metadata fields kept per clip (Hub names; a render's ``clip_id``/``value_unit`` are renamed).
_FIELDS = ("category", "direction", "tier", "trajectory", "source_id", "duration_sec", "onset_sec",
           "offset_sec", "source_onset_sec", "source_offset_sec", "value_start", "value_end", "unit",
           "sample_rate", "recipe", "split")
_ROW_GROUP_CACHE = 4


class CatalogError(vocalgrad.VocalGradError, ValueError):
    """The data folder cannot be used; the message names the file and what to do."""


@dataclass(frozen=True)
class ClipInfo:
    """Metadata of one clip (``extra`` holds every other field found, Hub names)."""

    clip_id: str
    category: str
    direction: str
    tier: str
    trajectory: str
    source_id: str
    extra: dict

    def get(self, name: str, default=None):
        return self.extra.get(name, default)


def _info(row: dict) -> ClipInfo:
    row = {vocalgrad.HUB_RENAMES.get(k, k): v for k, v in row.items()}
    return ClipInfo(row["id"], row["category"], row["direction"], row["tier"], row["trajectory"],
                    row["source_id"], {k: row[k] for k in _FIELDS if k in row})


class Catalog:
    """Clips of one data folder (use :func:`open_catalog`).

    Attributes
    ----------
    root : pathlib.Path
        The folder (resolved).
    kind : {"render", "hub", "published"}
    clips : dict
        Clip id -> :class:`ClipInfo`, sorted by clip id.
    """

    def __init__(self, root: Path, kind: str, clips: dict[str, ClipInfo], locator: dict):
        self.root, self.kind, self.clips = root, kind, clips
        self._locator = locator  # clip id -> relative path (render) or (file, row group, row) (hub)
        self._groups: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, clip_id: object) -> bool:
        return clip_id in self.clips

    def __len__(self) -> int:
        return len(self.clips)

    def audio_bytes(self, clip_id: str) -> bytes:
        """FLAC bytes of a clip.

        Raises
        ------
        KeyError
            Unknown clip id.
        """
        where = self._locator[clip_id]
        if self.kind == "render":
            return _inside(self.root, where).read_bytes()
        if self.kind == "published":  # the authors' WAV files, served as FLAC like the others
            from generation.published import flac_bytes

            return flac_bytes(Path(where).read_bytes(), name=str(where))[0]
        path, group, index = where
        with self._lock:
            key = (path, group)
            col = self._groups.get(key)
            if col is None:
                import pyarrow.parquet as pq

                col = pq.ParquetFile(path).read_row_group(group, columns=["audio"]).column("audio")
                self._groups[key] = col
                while len(self._groups) > _ROW_GROUP_CACHE:
                    self._groups.popitem(last=False)
            else:
                self._groups.move_to_end(key)
        value = col[index].as_py() or {}
        if value.get("bytes") is None:  # a path in a shard is data, never followed (generation.contained)
            raise CatalogError(f"{path}: clip {clip_id} has no audio bytes, only the path {value.get('path')!r}; a Hub "
                               "folder made by `vocalgrad hub` embeds every clip's audio and a path read from a shard "
                               "is never followed: rebuild it with `vocalgrad hub`")
        return value["bytes"]

    def source_path(self, source_id: str) -> Path | None:
        """``sources/<source_id>.flac`` of a render folder, or None (Hub folders hold no sources)."""
        if self.kind != "render":
            return None
        path = RenderDir(self.root).source_path(source_id).resolve()
        return path if path.is_relative_to(self.root) and path.is_file() else None


def _inside(root: Path, rel: str) -> Path:
    from generation.contained import outside_reason

    why = outside_reason(root, rel)
    if why:
        raise CatalogError(f"{root}: manifest path {why}; it points outside the data folder: the manifest is "
                           "not trusted")
    return (root / rel).resolve()


def open_catalog(data, *, config: str | None = None) -> Catalog:
    """Open a render folder (``manifest.parquet``) or a Hub folder (``<config>/*.parquet``).

    Parameters
    ----------
    data : path-like
        The folder.
    config : str, optional
        Hub folders only: the config to read (``beep``, ``train``, a category). Default: the
        nine category configs (the test set; ``all`` repeats them and is never read twice); in a
        Hub folder holding sweep configs only, those (``sweep_<category>``).

    Raises
    ------
    CatalogError
        Not a folder of either kind, an unreadable manifest, or a clip path outside the folder.
    """
    root = Path(data).expanduser().resolve()
    if not root.is_dir():
        raise CatalogError(f"{data}: not a folder; pass a `vocalgrad render` output or a `vocalgrad hub` folder")
    from generation import published

    if published.published_folder(root) is not None:  # the authors' release (docs/published.md)
        if config not in (None, "all", *vocalgrad.CATEGORY_NAMES):
            raise CatalogError(f"{root}: the authors' release holds the test categories only, not config {config!r}")
        try:
            rows = published.load_published_rows(root, categories=None if config in (None, "all") else [config])
        except published.PublishedLayoutError as exc:
            raise CatalogError(str(exc)) from None
        return Catalog(root, "published", {r["id"]: _info(r) for r in rows},
                       {r["id"]: Path(r["audio"]["path"]) for r in rows})
    render = RenderDir(root)
    if render.manifest_path.is_file():
        try:
            rows = render.rows()
        except RenderDirError as exc:
            raise CatalogError(str(exc)) from None
        clips, locator = {}, {}
        for row in rows:
            _inside(root, row["path"])
            info = _info(row)
            clips[info.clip_id] = info
            locator[info.clip_id] = row["path"]
        return Catalog(root, "render", clips, locator)
    return _open_hub(root, config)


def _open_hub(root: Path, config: str | None) -> Catalog:
    import pyarrow.parquet as pq

    if config:
        names = [config]
    else:  # the nine and the installed extension attributes' configs (not `all`: no clip twice)
        here = {p.name for p in root.iterdir() if p.is_dir()}
        names = list(known_categories(here - set(vocalgrad.builder_config_specs()) - {"all"}))
    files = [p for name in names for p in HubDir(root).shards(name)]
    if not files and not config:  # a Hub folder of sweeps only (vocalgrad render --sweep; docs/sweep.md)
        from generation.attributes.sweep import sweep_category

        files = [p for name in sorted(n for n in here if sweep_category(n)) for p in HubDir(root).shards(name)]
    if not files:
        raise CatalogError(
            f"{root}: neither manifest.parquet (a render folder) nor "
            f"{'/'.join([config or '<category>', '*.parquet'])} (a Hub folder) found")
    clips, locator = {}, {}
    meta_cols = ["id"] + list(_FIELDS)
    for path in files:
        try:
            pf = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise CatalogError(f"{path}: not a readable parquet file ({exc})") from None
        have = set(pf.schema_arrow.names)
        missing = {"audio", "id", "category", "direction", "tier", "trajectory", "source_id"} - have
        if missing:
            raise CatalogError(f"{path}: missing columns {sorted(missing)}; rebuild it with `vocalgrad hub`")
        cols = [c for c in meta_cols if c in have]
        for group in range(pf.num_row_groups):
            for index, row in enumerate(pf.read_row_group(group, columns=cols).to_pylist()):
                info = _info(row)
                clips[info.clip_id] = info
                locator[info.clip_id] = (path, group, index)
    clips = dict(sorted(clips.items()))
    return Catalog(root, "hub", clips, locator)
