"""The authors' published release -> our Hub folder (``vocalgrad hub --from-published SRC --out HUB``).

The release (``ynklab/vocalgrad``: one AudioFolder config, flat ``audio/``, root
``metadata.csv``; :mod:`generation.published`) is rewritten as the folder ``vocalgrad hub``
makes from a render: one parquet config per category, ``all`` as default, the card. Nothing is
re-rendered: each WAV is re-encoded losslessly as FLAC (same 16-bit samples), rows keep the
authors' ``benchmark_clip_id`` and ``source_clip_id`` beside our columns, and ``id`` is our clip
id of the same clip (:func:`generation.published.to_clip_id`). The shards, card and YAML
header come from :mod:`generation.hub`'s own writer, so the folder can be published with
``vocalgrad publish`` and read with ``load_dataset(REPO, "pitch")``.
"""

from __future__ import annotations

from pathlib import Path

import vocalgrad

from . import hub as _hub
from . import published

__all__ = ["CONVERSION_NOTE", "build_from_published"]

#: Appended to the card: what differs from a folder built from a render.
CONVERSION_NOTE = """
## Converted from the authors' release

This folder was converted from the authors' published AudioFolder release with
`vocalgrad hub --from-published`; nothing was re-rendered. Each clip is the authors' 16-bit WAV re-encoded
losslessly as FLAC (the same samples), so `sha256` is the hash of the *published WAV* file, not of the FLAC
bytes. The extra columns `benchmark_clip_id` and `source_clip_id` keep the authors' clip id and corpus
utterance; `id` is this toolkit's clip id of the same clip. The release records no realised values, gender,
accent, clipping or recipe (those columns are empty), and its `onset_sec`/`offset_sec` are the source's
speech span.
"""


def _sample_rate(rows: list[dict]) -> int:
    import soundfile as sf

    rates: dict[int, str] = {}
    for r in rows:
        try:
            rates.setdefault(int(sf.info(r["audio"]["path"]).samplerate), r["audio"]["path"])
        except Exception as exc:  # soundfile raises several types
            raise _hub.HubBuildError(f"{r['audio']['path']}: not a readable audio file ({exc})") from None
    if len(rates) != 1:
        raise _hub.HubBuildError("clips have different sample rates: " +
                                 ", ".join(f"{sr} Hz ({p})" for sr, p in sorted(rates.items())))
    return rates.popitem()[0]


def build_from_published(src, out_dir, *, max_shard_bytes: int = _hub.MAX_SHARD_BYTES,
                         row_group_rows: int = _hub.ROW_GROUP_ROWS, card_template=None,
                         progress: bool = True, force: bool = False) -> dict:
    """Write our Hub folder for the authors' release.

    Parameters
    ----------
    src : path-like or str
        Local copy of the release, or its Hub repo id (downloaded first,
        :func:`generation.published.local_copy`).
    out_dir : path-like
        Folder to write: new, empty or a Hub folder, whose files an earlier build wrote are replaced
        and others kept (:func:`generation.hub.hub_update`); a non-empty folder of anything else is refused.
    max_shard_bytes, row_group_rows, card_template, force
        As for :func:`generation.hub.build_hub`.
    progress : bool
        Show a progress bar over the clips (the whole folder is written again on a re-run: it is
        staged under a temporary name and renamed at the end, so an interrupted run leaves no half folder).

    Returns
    -------
    dict
        ``configs`` (name -> split, rows, download_size) and ``files`` written, as ``build_hub``.

    Raises
    ------
    HubBuildError
        With what is wrong, before anything is written.
    """
    out = Path(out_dir)
    folder, rows, template = _checked_release(src, out, card_template, force=force)
    sample_rate = _sample_rate(rows)
    feats = published.published_features(sample_rate)

    from tqdm.auto import tqdm

    bar = tqdm(total=len(rows), unit="clip", desc="from-published", disable=not progress)
    sizes = {r["id"]: Path(r["audio"]["path"]).stat().st_size for r in rows}
    keyed = [{**r, "clip_id": r["id"]} for r in rows]  # the shard writer keys rows by clip_id
    check = _release_check(src, folder, keyed, sample_rate)
    try:
        with _hub.hub_update(out, force=force) as stage:
            configs, files = _write_category_configs(stage, keyed, sizes, _table_maker(feats, bar),
                                                     max_shard_bytes=max_shard_bytes, row_group_rows=row_group_rows)
            configs.append(_hub.all_config(configs))
            files.append(_hub.write_readme(stage, template, {"test": check}, configs, feats, note=CONVERSION_NOTE))
    finally:
        bar.close()
    return _hub.build_summary(configs, files)


def _checked_release(src, out: Path, card_template, *, force: bool = False) -> tuple[Path, list[dict], Path]:
    """The release folder, its rows and the card template; raise if the release, ``out`` or the card is unusable."""
    try:
        folder = published.local_copy(src)
        rows = published.load_published_rows(folder)
    except published.PublishedLayoutError as exc:
        raise _hub.HubBuildError(str(exc)) from None
    if not rows:
        raise _hub.HubBuildError(f"{folder / 'metadata.csv'}: no clips")
    if out.resolve() == folder.resolve() or folder.resolve() in out.resolve().parents:
        raise _hub.HubBuildError(f"{out}: --out must lie outside the published copy {folder}")
    template, bad_template = _hub.card_template_path(card_template)
    problems = _hub.out_problems(out, force=force) + bad_template
    if problems:
        raise _hub.HubBuildError(problems[0])
    return folder, rows, template


def _release_check(src, folder: Path, keyed: list[dict], sample_rate: int) -> _hub.RenderCheck:
    """The release as a render check (rows and the render.json fields the card reads), for the card writer."""
    shown = src if published.published_folder(src) is None else Path(src).name  # no local paths in the card
    return _hub.RenderCheck(path=folder, rows=keyed, meta={
        "source": f"the authors' release ({shown})", "recipe": "as published by the authors",
        "sample_rate": sample_rate,
        "toolkit_version": f"{_toolkit_version()}; converted with --from-published, not rendered"})


def _table_maker(feats, bar):
    """``to_table`` of :func:`generation.hub.write_config`: a shard's release rows as arrow, ticking ``bar``."""
    import pyarrow as pa

    def to_table(shard: list[dict]):
        records = []
        for r in shard:
            records.append(published.hub_record(r, Path(r["audio"]["path"]).read_bytes()))
            bar.update(1)
        return pa.Table.from_pylist([{k: rec[k] for k in feats} for rec in records], schema=feats.arrow_schema)

    return to_table


def _write_category_configs(stage: Path, keyed: list[dict], sizes: dict, to_table, *, max_shard_bytes: int,
                            row_group_rows: int) -> tuple[list, list[str]]:
    """Write one config per category that has clips; return the configs and the files written."""
    configs, files = [], []
    for cat in vocalgrad.CATEGORY_NAMES:
        cat_rows = [r for r in keyed if r["category"] == cat]
        if not cat_rows:
            continue
        cfg = _hub.HubConfig(cat, "test", [f"{cat}/test-*.parquet"], categories=(cat,))
        shards = _hub.shard_rows(cat_rows, sizes, max_shard_bytes)
        files += _hub.write_config(stage, cfg, shards, to_table, row_group_rows=row_group_rows)
        configs.append(cfg)
    return configs, files


def _toolkit_version() -> str:
    from .render import TOOLKIT_VERSION

    return TOOLKIT_VERSION
