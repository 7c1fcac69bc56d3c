"""The steps of the ``datasets`` builder :class:`vocalgrad.VocalGrad`: cache key, info, rows, examples.

:mod:`vocalgrad` creates the builder class (it is the design card's module and the loading
script) and imports this module when a build runs. A build reads either a render folder, through
:class:`generation.render_dir.RenderDir` (the one reader of that layout), or a local copy of the
authors' release, through :mod:`generation.published` (docs/published.md).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import vocalgrad

from . import published
from .render_dir import RenderDir, RenderDirError

__all__ = ["cache_hash", "dataset_info", "examples", "split_rows"]


def _is_published(data_dir) -> bool:
    """True when ``data_dir`` is a local copy of the authors' release."""
    return bool(data_dir) and bool(published.published_folder(data_dir))


def cache_hash(data_dir, config_name: str | None) -> str | None:
    """``datasets`` cache key of a build: follows the render's content, so a re-render is never served stale.

    ``None`` (the ``datasets`` default) without ``data_dir`` or when it holds neither the authors'
    release (keyed by its ``metadata.csv``) nor a render manifest.
    """
    if not data_dir:
        return None
    if _is_published(data_dir):
        return hashlib.sha256(Path(data_dir, published.METADATA_FILE).read_bytes()).hexdigest()[:16]
    rd = RenderDir(data_dir)
    return rd.content_hash(with_sources=config_name == vocalgrad.SOURCES_CONFIG) if rd.manifest_path.is_file() else None


def dataset_info(data_dir):
    """The :class:`datasets.DatasetInfo` of a build (features at the render's sample rate)."""
    import datasets

    if _is_published(data_dir):
        return datasets.DatasetInfo(description="VocalGrad, as published by its authors",
                                    features=published.published_features(None),
                                    homepage=f"https://huggingface.co/datasets/{vocalgrad.HUB_REPO_ID}",
                                    license=vocalgrad.LICENSE, citation=vocalgrad.PAPER)
    sr = 48000
    if data_dir:
        rd = RenderDir(data_dir)
        if rd.meta_path.is_file():
            sr = int(rd.meta.get("sample_rate", sr))
    return datasets.DatasetInfo(
        description="VocalGrad: does one acoustic attribute increase or decrease over the clip?",
        features=vocalgrad.features(sr), homepage=f"https://huggingface.co/datasets/{vocalgrad.HUB_REPO_ID}",
        license=vocalgrad.LICENSE, citation=vocalgrad.PAPER,
    )


def split_rows(config) -> tuple[list[dict], str]:
    """Rows of a config and the name of the split they make, after checking every file they need.

    Parameters
    ----------
    config : vocalgrad.VocalGradConfig
        The config being built; its ``data_dir`` is a render folder or the authors' release.

    Raises
    ------
    vocalgrad.RenderDirError
        Without ``data_dir``; for a config the folder cannot give (a render of another split, a
        non-test config from the release); for missing or changed clips or source files, all
        listed in one message.
    """
    if not config.data_dir:
        raise RenderDirError(
            "VocalGrad needs data_dir= pointing at a rendered folder (`vocalgrad render --out DIR`) or at "
            f"a local copy of the authors' release {vocalgrad.HUB_REPO_ID!r} (one AudioFolder config; "
            "docs/published.md)"
        )
    data_dir = Path(config.data_dir)
    if _is_published(data_dir):
        return _published_rows(config, data_dir), "test"
    return _render_rows(config, RenderDir(data_dir)), config.hub_split


def _published_rows(config, data_dir) -> list[dict]:
    """Rows of a test config from the authors' release (which holds the test set only)."""
    if config.render_split != "test" or config.name == vocalgrad.SOURCES_CONFIG:
        raise RenderDirError(f"{data_dir}: the authors' release holds the test set only; config "
                             f"{config.name!r} needs a render (`vocalgrad render`)")
    return published.load_published_rows(data_dir, categories=config.categories)


def _render_rows(config, rd: RenderDir) -> list[dict]:
    """Rows of a config from a render folder, after checking its split and every file the rows need."""
    meta = rd.meta
    if meta.get("split") != config.render_split:
        raise RenderDirError(
            f"{rd.meta_path}: split is {meta.get('split')!r} but config {config.name!r} is built from a "
            f"{config.render_split!r} render; pass the matching render folder as data_dir"
        )
    if config.name == vocalgrad.SOURCES_CONFIG:
        firsts = list(rd.first_row_per_source().values())
        if not firsts:
            raise RenderDirError(f"{rd.manifest_path}: no clips, so no source utterances")
        missing = [str(rd.source_path(r["source_id"])) for r in firsts if not rd.source_path(r["source_id"]).is_file()]
        if missing:
            raise RenderDirError(
                f"{rd.path}: config 'sources' needs sources/<source_id>.flac for every source; "
                f"{len(missing)} missing (re-run the render, it resumes):\n  " + "\n  ".join(missing))
        return firsts
    rows = rd.rows(config.categories)
    missing, changed = rd.clip_problems(rows)  # check everything first: one error listing every bad clip
    if missing or changed:
        raise RenderDirError(
            f"{rd.path}: {len(missing)} clip(s) missing, {len(changed)} clip(s) whose sha256 differs from "
            "manifest.parquet; re-run the render (it resumes) to fix them:\n  "
            + "\n  ".join([f"missing: {p}" for p in missing] + [f"sha256 differs: {p}" for p in changed])
        )
    return rows


def examples(config, data_dir, rows):
    """(key, example) pairs of a config's rows (from :func:`split_rows`): published, source or clip records."""
    if _is_published(data_dir):
        for row in rows:
            yield row["id"], published.hub_record(row, Path(row["audio"]["path"]).read_bytes())
    elif config.name == vocalgrad.SOURCES_CONFIG:
        rd = RenderDir(data_dir)
        for row in rows:
            rec = rd.source_record(row)
            yield rec["id"], rec
    else:
        rd = RenderDir(data_dir)
        for row in rows:
            yield row["clip_id"], rd.clip_record(row)
