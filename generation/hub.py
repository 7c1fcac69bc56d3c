"""Rendered set(s) -> publishable Hugging Face dataset folder (``vocalgrad hub``).

The folder holds ``README.md`` (the dataset card with its YAML header: licence, ``configs:``,
``dataset_info``), ``build.json`` (the build digest of every config: :mod:`generation.hub_build_record`)
and one sub-folder of parquet shards per config, e.g.
``pitch/test-00000-of-00001.parquet``. The ``all`` config lists the nine category folders as its
data files, so no audio is stored twice; ``beep`` and ``train`` get their own folders when those
renders are given, and ``sources`` (the unmodified source clips of the test render, for the
yes/no and ternary formats) whenever the test render has its ``sources/`` folder. No ``.py`` file is written: ``datasets`` >= 4
refuses repos with scripts.

Shards are byte-identical on re-run for the same inputs and the same pyarrow version: rows are
sorted by clip id, the writer settings are fixed and nothing time-dependent is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import vocalgrad

from .hub_build_record import write_build_record
from .hub_card import extension_categories, extension_section, render_card, sweep_section, yaml_header
from .hub_dir import HubBuildError, HubConfig
from .ownership import check_out, owned_update
from .render_dir import RenderCheck, RenderDir, RenderDirError, first_row_per_source, listed

__all__ = [
    "HubBuildError",
    "HubConfig",
    "MAX_SHARD_BYTES",
    "ROW_GROUP_ROWS",
    "RenderCheck",
    "SOURCES_CONFIG",
    "all_config",
    "build_hub",
    "build_summary",
    "card_template_path",
    "check_render",
    "hub_update",
    "out_problems",
    "render_card",
    "shard_rows",
    "source_rows",
    "write_config",
    "write_readme",
    "yaml_header",
]

#: Largest shard, counted in FLAC bytes. 256 MB keeps each file well under the dataset viewer's
#: and ``datasets``' 500 MB shard size while a 2,400-clip category (~0.5 GB) needs only 2 shards.
MAX_SHARD_BYTES = 256 * 1024**2
#: Rows per parquet row group: ~100 four-second clips (~20 MB) per group, the row-group size that
#: ``datasets`` itself uses for audio and small enough for the viewer to page through.
ROW_GROUP_ROWS = 100
#: The Hub card template (its YAML header is filled from vocalgrad.py). Package data of ``generation``, so
#: that an installed wheel has it; in a checkout it is a link to the repository's top-level ``dataset_card.md``
#: (the one copy to edit).
CARD_TEMPLATE = Path(__file__).resolve().parent / "dataset_card.md"
#: Config of the unmodified source clips (``DIR/sources/<source_id>.flac`` of the test render).
SOURCES_CONFIG = vocalgrad.SOURCES_CONFIG


def check_render(render_dir, *, verify_sha256: bool = True) -> RenderCheck:
    """Check one render directory against the render contract (:meth:`RenderDir.verify`).

    Parameters
    ----------
    render_dir : path-like
        Output folder of ``vocalgrad render``.
    verify_sha256 : bool
        Hash every clip and compare with the manifest (reads all audio once).

    Returns
    -------
    RenderCheck
        ``problems`` lists missing files/columns, duplicate ids, split mismatches, missing clips,
        sha256 mismatches and clips on disk that the manifest does not list; ``missing`` lists
        the conditions a complete render of the same sources would have and this one lacks.
    """
    root = Path(render_dir)
    if not root.is_dir():
        raise HubBuildError(f"{root}: no such render directory")
    try:
        return RenderDir(root).verify(verify_sha256=verify_sha256)
    except RenderDirError as exc:
        raise HubBuildError(str(exc)) from None


def _rows_to_table(rows: list[dict], rd: RenderDir, feats):
    import pyarrow as pa

    return pa.Table.from_pylist([rd.clip_record(r) for r in rows], schema=feats.arrow_schema)


def _write_parquet(table, path: Path, *, row_group_rows: int) -> None:
    import pyarrow.parquet as pq

    from .audio import atomic_path

    compression = {name: "zstd" for name in table.schema.names}
    compression["audio"] = "none"  # FLAC is already compressed; this keeps the reader's CPU free
    with atomic_path(path) as tmp, pq.ParquetWriter(
        tmp, table.schema, compression=compression, compression_level=None, use_dictionary=True,
        write_statistics=True, version="2.6", data_page_version="1.0", store_schema=True,
        write_page_index=True, use_content_defined_chunking=True,
    ) as writer:
        writer.write_table(table, row_group_size=row_group_rows)


def shard_rows(rows: list[dict], sizes: dict, max_bytes: int) -> list[list[dict]]:
    """Split sorted rows into consecutive shards of at most ``max_bytes`` of audio (>= 1 row each)."""
    shards, current, size = [], [], 0
    for r in rows:
        n = sizes[r["clip_id"]]
        if current and size + n > max_bytes:
            shards.append(current)
            current, size = [], 0
        current.append(r)
        size += n
    if current:
        shards.append(current)
    return shards


def write_config(stage: Path, cfg: HubConfig, shards: list[list[dict]], to_table, *,
                  row_group_rows: int) -> list[str]:
    """Write one config's shards as ``<name>/<split>-0000i-of-0000n.parquet``; count rows and sizes.

    ``to_table`` turns a shard's rows into an arrow table. Returns the written paths (relative).
    """
    (stage / cfg.name).mkdir()
    written = []
    for i, shard in enumerate(shards):
        rel = f"{cfg.name}/{cfg.split}-{i:05d}-of-{len(shards):05d}.parquet"
        table = to_table(shard)
        _write_parquet(table, stage / rel, row_group_rows=row_group_rows)
        cfg.rows += table.num_rows
        cfg.num_bytes += table.nbytes
        cfg.download_size += (stage / rel).stat().st_size
        written.append(rel)
    return written


def build_hub(
    render_dirs,
    out_dir,
    *,
    allow_partial: bool = False,
    max_shard_bytes: int = MAX_SHARD_BYTES,
    row_group_rows: int = ROW_GROUP_ROWS,
    card_template=None,
    verify_sha256: bool = True,
    sources: bool | None = None,
    repo_id: str | None = None,
    license_id: str | None = None,
    force: bool = False,
) -> dict:
    """Write the publishable Hub folder for one or more render directories.

    Parameters
    ----------
    render_dirs : path-like or list of path-like
        Render folders; at most one per split (``test``, ``beep``, ``train``, from render.json).
    out_dir : path-like
        Folder to write: new, empty, or a Hub folder this command wrote before, whose files it
        replaces; files it did not write there (``.git/``, ``NOTES.md``, ``LICENSE``) are kept
        (:func:`hub_update`). A non-empty folder of anything else is refused.
    allow_partial : bool
        Accept renders lacking conditions or categories (their configs are omitted and the card
        says so) instead of failing.
    max_shard_bytes : int
        Largest shard, in FLAC bytes (see :data:`MAX_SHARD_BYTES`).
    row_group_rows : int
        Rows per parquet row group (see :data:`ROW_GROUP_ROWS`).
    card_template : path-like, optional
        Card template; defaults to :data:`CARD_TEMPLATE` (the toolkit's ``dataset_card.md``).
    verify_sha256 : bool
        Hash every clip against the manifest before writing.
    sources : bool or None
        The ``sources`` config: one row per source utterance of the test render, its audio the
        unmodified source (``DIR/sources/<source_id>.flac``), ``direction`` and ``label``
        ``constant``, empty category/tier/trajectory (see :func:`source_rows`). ``None`` (default):
        added when the test render is given and has a ``sources/`` folder. ``True``: required
        (an error without the test render). ``False``: left out.
    repo_id : str, optional
        Repo id of the card's loading examples (default: the paper's for a VCTK build, else ``ORG/NAME``).
    license_id : str, optional
        Hub licence id for the card; default: from the sources (:func:`generation.card.card_license`).
    force : bool
        Also replace files this command wrote that were edited since (a README with changes), and
        write into a non-empty folder that is no Hub folder (keeping its files).

    Returns
    -------
    dict
        Summary: ``configs`` (name -> rows, shards, bytes), ``files`` (relative paths written).

    Raises
    ------
    HubBuildError
        With every problem found, before anything is written.
    """
    inputs = _check_inputs(render_dirs, Path(out_dir), allow_partial=allow_partial, verify_sha256=verify_sha256,
                           sources=sources, card_template=card_template, force=force)
    feats = vocalgrad.features(inputs.sample_rate)
    with hub_update(inputs.out, force=force) as stage:
        configs, files = _write_render_configs(stage, inputs.by_split, feats, max_shard_bytes=max_shard_bytes,
                                               row_group_rows=row_group_rows)
        if inputs.sources:
            files += _write_sources_config(stage, inputs.by_split["test"], feats, configs,
                                           max_shard_bytes=max_shard_bytes, row_group_rows=row_group_rows)
        _insert_all_config(configs)
        files.append(write_readme(stage, inputs.template, inputs.by_split, configs, feats, repo_id=repo_id,
                                  license_id=license_id))
        files.append(write_build_record(stage, inputs.by_split, configs))  # build.json: digest per config
    return build_summary(configs, files)


@dataclass
class _Inputs:
    """The checked inputs of :func:`build_hub`: output folder, renders by split, sample rate, sources flag, card."""

    out: Path
    by_split: dict
    sample_rate: int
    sources: bool
    template: Path


def _check_inputs(render_dirs, out: Path, *, allow_partial: bool, verify_sha256: bool, sources: bool | None,
                  card_template, force: bool = False) -> _Inputs:
    """Check the renders, the output folder, the sources clips and the card template; raise with every problem."""
    if isinstance(render_dirs, (str, os.PathLike)):
        render_dirs = [render_dirs]
    checks = [check_render(d, verify_sha256=verify_sha256) for d in render_dirs]
    problems, by_split = _render_problems(checks, allow_partial=allow_partial)
    rates = {int(c.meta.get("sample_rate", 48000)) for c in checks}
    if len(rates) > 1:
        problems.append(f"renders have different sample rates {sorted(rates)}; render them at one rate")
    problems += out_problems(out, force=force)
    if out.resolve() in {Path(d).resolve() for d in render_dirs}:
        problems.append(f"{out}: --out must differ from the render directory")
    if sources is None:
        sources = "test" in by_split and RenderDir(by_split["test"].path).sources_dir.is_dir()
    if sources:
        problems += _sources_problems(by_split)
    template, bad_template = card_template_path(card_template)
    problems += bad_template
    if not problems:
        problems += space_problems(out, by_split, sources=sources)
    if problems:
        raise HubBuildError("cannot build the Hub folder: " + problems[0] if len(problems) == 1 else
                            "cannot build the Hub folder:\n  " + "\n  ".join(problems))
    return _Inputs(out, by_split, rates.pop(), sources, template)


#: Room a Hub build needs beyond its audio bytes: the parquet metadata, the card and build.json
#: (a fraction of the audio, and a fixed amount for the small files).
SPACE_MARGIN_FRACTION = 0.05
SPACE_MARGIN_BYTES = 16 * 1024**2


def needed_bytes(by_split: dict, *, sources: bool) -> int:
    """Bytes a Hub build of ``by_split`` writes (an upper estimate): every clip's FLAC file (the
    manifest's rows), the test render's source files with ``sources``, and the margin."""
    audio = 0
    for check in by_split.values():
        rd = RenderDir(check.path)
        audio += sum(rd.clip_path(r).stat().st_size for r in check.rows)
        if sources and check is by_split.get("test"):
            audio += sum(rd.source_path(sid).stat().st_size for sid in {r["source_id"] for r in check.rows})
    return int(audio * (1 + SPACE_MARGIN_FRACTION)) + SPACE_MARGIN_BYTES


def space_problems(out: Path, by_split: dict, *, sources: bool) -> list[str]:
    """The problem of a file system with less free space than the build needs (checked before any
    write: a parquet writer that meets a full disk aborts the process)."""
    import shutil

    need = needed_bytes(by_split, sources=sources)
    where = Path(out).expanduser().absolute()
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    if free >= need:
        return []
    return [f"{out}: the Hub build needs about {need / 1e6:,.0f} MB and the file system holding {where} has "
            f"{free / 1e6:,.0f} MB free; free some space or choose another --out"]


def _render_problems(checks: list[RenderCheck], *, allow_partial: bool) -> tuple[list[str], dict]:
    """Each render's contract problems, its missing conditions (unless ``allow_partial``) and repeated splits."""
    problems = []
    by_split: dict[str, RenderCheck] = {}
    for c in checks:
        problems += c.problems
        if not allow_partial and c.missing:
            problems += _partial_problems(c)
        split = "sweep" if c.meta.get("sweep") else c.meta.get("split")  # a sweep render: configs sweep_<category>
        if split in by_split:
            problems.append(f"{c.path}: a second render with split {split!r} (first: {by_split[split].path})")
        by_split[split] = c
    return problems, by_split


def _partial_problems(c: RenderCheck) -> list[str]:
    """The missing conditions of a partial render and how to finish it."""
    problems = listed("condition not rendered", c.missing)
    chosen = c.meta.get("categories")
    left = sorted({m.split("__")[1] for m in c.missing} - set(chosen or []))
    if chosen and left:  # partial by choice (--categories): re-running the same command adds nothing
        problems.append(f"{c.path}: rendered with --categories {','.join(chosen)}; render the others into "
                        f"the same folder (--categories {','.join(left)}) or pass --allow-partial")
    else:
        problems.append(f"{c.path}: render is partial; finish it (re-run the same render command: "
                        f"{RenderDir(c.path).render_command()}) or pass --allow-partial")
    return problems


def out_problems(out: Path, *, force: bool = False) -> list[str]:
    """``out`` must be missing, empty or a Hub folder (marker, or an earlier version's card); with
    ``force`` also a non-empty folder of nobody's (:func:`generation.ownership.check_out`)."""
    problem = check_out(out, "hub", force=force)
    return [problem] if problem else []


def _legacy_hub_files(out: Path) -> list[str]:
    """What ``vocalgrad hub`` wrote in a Hub folder of an earlier version (no marker): the card and
    the ``<config>/*.parquet`` shards, and ``build.json`` where the version wrote one; everything else
    there is someone else's."""
    return ["README.md"] + (["build.json"] if (out / "build.json").is_file() else []) + [
        p.relative_to(out).as_posix() for p in sorted(out.glob("*/*.parquet")) if not p.parent.name.startswith(".")]


def hub_update(out, *, force: bool = False, what: str = "vocalgrad hub"):
    """The staging folder of a Hub build into ``out`` (:func:`generation.ownership.owned_update`):
    on success the files an earlier build wrote are replaced, foreign files kept; one build at a time."""
    return owned_update(out, "hub", what=what, legacy_files=_legacy_hub_files, force=force,
                        edited_hint="Keep your own card text in a card template (--card PATH, a copy of the "
                                    "toolkit's dataset_card.md). ")


def card_template_path(card_template) -> tuple[Path, list[str]]:
    """The card template (default :data:`CARD_TEMPLATE`) and the problem of a missing one."""
    template = Path(card_template) if card_template else CARD_TEMPLATE
    if not template.is_file():
        return template, [f"{template}: card template not found; pass card_template= (--card PATH)"]
    try:
        template.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return template, [f"{template}: card template is not UTF-8 text ({exc.reason} at byte {exc.start}; a binary "
                          "file?); pass a Markdown file (--card PATH)"]
    return template, []


def _sources_problems(by_split: dict) -> list[str]:
    """The sources config needs the test render and every one of its source clips."""
    if "test" not in by_split:
        return ["the sources config needs the test render; pass it or drop --sources"]
    t = by_split["test"]
    rd = RenderDir(t.path)
    lacking = [str(rd.source_path(sid)) for sid in sorted({r["source_id"] for r in t.rows})
               if not rd.source_path(sid).is_file()]
    return listed("source clip missing (needed by the sources config; re-run the render, "
                  "or pass --no-sources)", lacking)


def _write_render_configs(stage: Path, by_split: dict, feats, *, max_shard_bytes: int,
                          row_group_rows: int) -> tuple[list[HubConfig], list[str]]:
    """Write the configs of the renders (the categories of the test render, then beep, train); skip empty ones."""
    specs = vocalgrad.builder_config_specs()  # name -> (categories, render split, Hub split)
    order = list(specs)  # categories, all, beep, train
    configs: list[HubConfig] = []
    files: list[str] = []
    def rank(split: str) -> int:
        return len(order) if split == "sweep" else order.index("all" if split == "test" else split)

    for split, check in sorted(by_split.items(), key=lambda kv: rank(kv[0])):
        rd = RenderDir(check.path)
        sizes = {r["clip_id"]: rd.clip_path(r).stat().st_size for r in check.rows}
        if split == "sweep":  # one config per attribute sweep, never in `all` (docs/sweep.md)
            from .attributes.sweep import sweep_config

            groups = [(sweep_config(cat), (cat,), "test") for cat in sorted({r["category"] for r in check.rows})]
        elif split == "test":  # one config per category; `all` lists their folders
            groups = [(cat, specs[cat][0], specs[cat][2]) for cat in vocalgrad.CATEGORY_NAMES]
            # extension attributes: a config each, after the nine, never in `all` (not the paper's benchmark)
            groups += [(cat, (cat,), "test") for cat in extension_categories(check.rows)]
        else:
            groups = [(split, specs[split][0], specs[split][2])]
        for name, cats, hub_split in groups:
            rows = [r for r in check.rows if r["category"] in cats]
            if not rows:
                continue
            cfg = HubConfig(name, hub_split, [f"{name}/{hub_split}-*.parquet"],
                            categories=tuple(c for c in cats if any(r["category"] == c for r in rows)))
            cfg_feats = vocalgrad.features(feats["audio"].sampling_rate, sweep=True) if split == "sweep" else feats
            files += write_config(stage, cfg, shard_rows(rows, sizes, max_shard_bytes),
                                  lambda shard, f=cfg_feats: _rows_to_table(shard, rd, f),
                                  row_group_rows=row_group_rows)
            configs.append(cfg)
    return configs, files


def _write_sources_config(stage: Path, check: RenderCheck, feats, configs: list[HubConfig], *,
                          max_shard_bytes: int, row_group_rows: int) -> list[str]:
    """Write the ``sources`` config from the test render's source clips; append it to ``configs``."""
    import pyarrow as pa

    srows = source_rows(check)
    cfg = HubConfig(SOURCES_CONFIG, "test", [f"{SOURCES_CONFIG}/test-*.parquet"])
    sizes = {r["id"]: len(r["audio"]["bytes"]) for r in srows}
    shards = shard_rows([{**r, "clip_id": r["id"]} for r in srows], sizes, max_shard_bytes)
    files = write_config(
        stage, cfg, shards,
        lambda shard: pa.Table.from_pylist([{k: r[k] for k in feats} for r in shard], schema=feats.arrow_schema),
        row_group_rows=row_group_rows)
    configs.append(cfg)
    return files


def all_config(category_configs: list[HubConfig]) -> HubConfig:
    """The default ``all`` config: the category configs' shards, counts and categories together."""
    return HubConfig(
        "all", "test", [f for c in category_configs for f in c.data_files], sum(c.rows for c in category_configs),
        sum(c.num_bytes for c in category_configs), sum(c.download_size for c in category_configs),
        tuple(n for c in category_configs for n in c.categories))


def _insert_all_config(configs: list[HubConfig]) -> None:
    """Insert the ``all`` config after the category configs (none without them)."""
    cats_cfgs = [c for c in configs if c.name in vocalgrad.CATEGORY_NAMES]
    if cats_cfgs:
        configs.insert(len(cats_cfgs), all_config(cats_cfgs))


def write_readme(stage: Path, template: Path, by_split: dict, configs: list[HubConfig], feats, *,
                 repo_id: str | None = None, license_id: str | None = None, note: str = "") -> str:
    """Write ``README.md`` (YAML header, card, then ``note``); return its relative path."""
    readme = (yaml_header(configs, feats, by_split, license_id=license_id)
              + render_card(template, by_split, configs, repo_id=repo_id, license_id=license_id)
              + extension_section(configs) + sweep_section(configs) + note)
    (stage / "README.md").write_text(readme, encoding="utf-8")
    return "README.md"


def build_summary(configs: list[HubConfig], files: list[str]) -> dict:
    """What a Hub build returns: ``configs`` (name -> split, rows, download size) and the ``files`` written."""
    return {
        "configs": {c.name: {"split": c.split, "rows": c.rows, "download_size": c.download_size} for c in configs},
        "files": sorted(files),
    }


def source_rows(check: RenderCheck) -> list[dict]:
    """Hub rows (all Hub columns) of the unmodified source clips of a render, sorted by source id.

    ``id`` is ``<source_id>__source``; speaker, sentence, text, gender, accent, recipe and the
    detected speech span come from the source's manifest rows; ``duration_sec``,
    ``sample_rate`` and ``sha256`` from the file; ``direction`` and ``label`` are ``constant``;
    ``category``, ``attribute``, ``tier``, ``trajectory``, ``prompt`` and ``unit`` are empty and
    the value columns null (each task fills in its category).
    """
    rd = RenderDir(check.path)
    return [rd.source_record(r) for r in first_row_per_source(check.rows).values()]
