"""Render a VocalGrad set: sources x conditions -> clips + manifest (``vocalgrad render``).

The work is cut into units of one (source, category) pair, 24 clips each (3 tiers x 4
trajectories x 2 directions). Units run in worker processes; every clip is a pure function of its
source, its condition and the recipe, so the output bytes never depend on ``jobs``, ``shard`` or
order. A unit writes its clips (temp name, then rename), then a small part file with its manifest
rows; a unit whose part file exists and whose clips are all on disk with the recorded sha256 is
complete and is skipped on a rerun, any other is rendered (again: a deleted or damaged clip comes
back bit-identical). ``manifest.parquet`` is rebuilt from all part files at the end of every run.

Output layout::

    DIR/render.json                    recipe, split, source, sample rate (guards against mixing) and
                                       the content digests: recipe, each source, the build
                                       (generation.render_identity)
    DIR/selection.csv                  the selected sources
    DIR/sources/<source_id>.flac       each source as processed (48 kHz mono, 16-bit)
    DIR/clips/<category>/<clip_id>.flac
    DIR/manifest.parquet               one row per clip (vocalgrad.MANIFEST_COLUMNS)
    DIR/skipped.csv                    sources that could not be used, with the reason
    DIR/label_checks.csv               measured effect and label warnings per clip (label_validity)
    DIR/span_check.csv                 frozen sources whose recorded speech bounds and our detector's
                                       differ by more than 10 ms (the recorded bounds are used)
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import vocalgrad as vg

from . import audio as aio
from . import label_validity as lv
from . import render_identity as ident
from . import source_checks
from .option_types import FLAC_MAX_SAMPLE_RATE, MIN_SAMPLE_RATE
from .recipe import DEFAULT_RECIPE, Recipe, load_recipe
from .render_dir import RenderDir
from .render_files import (clean_stale_temps, csv_bytes, part_path, part_rows, source_problem, unit_problem,
                           write_manifest, write_selection, write_span_check)
from .render_settings import (SELECTION_NOTES, TOOLKIT_VERSION, RenderError, check_or_write_settings,
                              selection_kind, settings, source_domain)
from .render_unit import (MIN_DURATION_SEC, SPAN_CHECK_TOLERANCE_SEC, SkipSource, prepare_source, render_clip,
                          render_source_category, source_span, span_check, tier_params)
from .sources import SourceItem, SourceOptions, SourceWarning, read_sources
from .warmup import warm_up
from .interrupts import swallowed, worker_pool
from .ownership import claim_out, read_marker, write_marker

# The unit (generation.render_unit) and the folder's settings (generation.render_settings) live in their
# own modules; their public names stay importable from here.
__all__ = ["render", "render_source_category", "RenderError", "RenderSummary", "LongSourceWarning", "LONG_CLIP_SEC",
           "MIN_DURATION_SEC", "SELECTION_NOTES", "SPAN_CHECK_TOLERANCE_SEC", "SkipSource", "TOOLKIT_VERSION",
           "prepare_source", "render_clip", "selection_kind", "source_domain", "source_span", "span_check",
           "tier_params", "units_to_render"]

#: Clips longer than this draw a :class:`LongSourceWarning`: the paper's sources are 3-10 s utterances, and
#: Whisper-style audio encoders of many audio LMs read 30-s windows (longer input is cut or refused).
LONG_CLIP_SEC = 30.0


class LongSourceWarning(UserWarning):
    """Some sources gave clips longer than :data:`LONG_CLIP_SEC` (they are rendered all the same)."""


@dataclass
class RenderSummary:
    """What a :func:`render` call did."""

    out_dir: str
    clips_total: int = 0
    clips_rendered: int = 0
    units_done_before: int = 0
    repaired: list = field(default_factory=list)  # why each finished unit was rendered again (missing/damaged)
    skipped: list = field(default_factory=list)
    seconds: float = 0.0
    label_warnings: dict = field(default_factory=dict)  # warning code -> clips (label_checks.csv)
    span_checks: int = 0
    long_sources: dict = field(default_factory=dict)  # source id -> longest clip (s), over LONG_CLIP_SEC


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------
def _run_unit(args):
    item, category, recipe, out_dir, split, sample_rate, plan, source_sha256 = args
    try:
        rows = render_source_category(item, category, recipe, out_dir, split=split, sample_rate=sample_rate,
                                      plan=plan, source_sha256=source_sha256)
    except SkipSource as exc:
        part_path(out_dir, item.source_id, category).unlink(missing_ok=True)  # a unit rendered before
        return item, category, None, str(exc)
    part = part_path(out_dir, item.source_id, category)
    aio.atomic_write_bytes(part, json.dumps(rows).encode())
    return item, category, len(rows), None


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def render(
    source: str,
    out_dir: str | os.PathLike,
    *,
    split: str = "test",
    categories: list[str] | None = None,
    n_sources: int | None = None,
    jobs: int | None = None,
    shard: tuple[int, int] = (0, 1),
    sample_rate: int = 48000,
    recipe: str = DEFAULT_RECIPE,
    strict: bool = False,
    source_options: SourceOptions | None = None,
    progress: bool = True,
    sweep: bool = False,
    trajectories=None,
) -> RenderSummary:
    """Render (or resume rendering) a VocalGrad set into ``out_dir``.

    Parameters
    ----------
    source : str
        Source string (``tones``, ``folder:PATH``, ``vctk:PATH``, ``loquacious:...``,
        ``cv-spontaneous:PATH``, ``demo``, ``hf:...``); ``source_options.selection`` picks the frozen
        (paper's) or a new seeded selection, recorded in render.json's ``selection``.
    out_dir : path-like
        Output folder; created if needed. A folder holding a render of another recipe, split,
        source or sample rate is refused.
    split : {"test", "train", "beep"}
    categories : list of str, optional
        Config names; default all nine (the four beep categories for ``split="beep"``).
    n_sources : int, optional
        Use only the first N selected sources.
    jobs : int, optional
        Worker processes (default: available cores). Output does not depend on it.
    shard : (int, int)
        ``(i, n)``: render only units with ``index % n == i``.
    sample_rate : int
        Output sample rate in Hz (processing always runs at the recipe's rate).
    recipe : str
        Recipe name or TOML path.
    strict : bool
        Raise on the first unusable source instead of skipping it.
    sweep : bool
        Render each category's magnitude sweep (:mod:`generation.sweep_plan`, docs/sweep.md)
        instead of the paper's three tiers; render.json records it and the folder takes no other render.
    trajectories : list of str, optional
        With ``sweep``: the trajectories to render (default all four).

    Returns
    -------
    RenderSummary
    """
    t0 = time.perf_counter()
    if split not in vg.SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {', '.join(vg.SPLITS)}")
    rec = load_recipe(recipe)
    if categories is None:
        categories = list(vg.BEEP_CATEGORIES if split == "beep" else vg.CATEGORY_NAMES)
    categories = list(dict.fromkeys(vg.category(c).name for c in categories))
    if not categories:
        raise ValueError("categories: none given; name at least one of " + ", ".join(vg.CATEGORY_NAMES))
    plans = None
    if sweep:
        from .sweep_plan import sweep_plan

        plans = {c: sweep_plan(rec, c, trajectories) for c in categories}
    elif trajectories is not None:
        raise ValueError("--trajectories applies to --sweep renders only (the paper set has all four)")
    if jobs is not None and jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {jobs}")
    if not MIN_SAMPLE_RATE <= sample_rate <= FLAC_MAX_SAMPLE_RATE:
        raise ValueError(f"--sample-rate {sample_rate}: must be {MIN_SAMPLE_RATE}-{FLAC_MAX_SAMPLE_RATE} Hz (FLAC)")
    if n_sources is not None and n_sources < 1:
        raise ValueError("--sources must be >= 1")
    out = Path(out_dir)
    opts = source_options or SourceOptions()
    if opts.split != split:
        from dataclasses import replace

        opts = replace(opts, split=split)
    items = read_sources(source, opts)  # before creating anything: a bad source leaves no empty folder
    items = ident.exclude_own_output(items, out, source)  # never the render's own clips or another render's
    if not items:
        raise ValueError(f"{source}: no source left once toolkit output is left out; point --source at the corpus")
    if n_sources is not None:
        items = items[:n_sources]
    source_checks.names_fit(out, items, categories)  # "File name too long" up front, naming the user's path or source
    claim_out(out, "render")  # empty, new or a render folder: never someone else's folder
    _refuse_links_out(out)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _render_into(out, items, rec, source=source, split=split, categories=categories, jobs=jobs,
                            shard=shard, sample_rate=sample_rate, strict=strict, progress=progress, t0=t0,
                            plans=plans)
    except BaseException:
        if created and not any((out / "clips").rglob("*.flac")):
            import shutil

            shutil.rmtree(out, ignore_errors=True)
        raise


def _refuse_links_out(out: Path) -> None:
    """A render writes into ``clips/<category>/``, ``sources/`` and ``.parts/``: none may be a link leading out."""
    from .contained import refuse_links_out

    clips = out / "clips"
    cats = [f"clips/{p.name}" for p in clips.iterdir()] if clips.is_dir() and not clips.is_symlink() else []
    refuse_links_out(out, ["clips", *cats, "sources", ".parts", ".parts/source"])


def _render_into(out: Path, items: list[SourceItem], rec: Recipe, *, source: str, split: str, categories: list,
                 jobs, shard, sample_rate: int, strict: bool, progress: bool, t0: float,
                 plans: dict | None = None) -> RenderSummary:
    if (note := ident.shipped_name_warning(rec)) is not None:
        warnings.warn(ident.RecipeNameWarning(note), stacklevel=3)
    digests = ident.source_digests(items)
    ident.check_sources(out, digests)  # before anything is written: a changed source is refused by name
    meta_settings = settings(items, rec, source=source, split=split, categories=categories, sample_rate=sample_rate)
    if plans:
        meta_settings["sweep"] = {"trajectories": list(next(iter(plans.values())).trajectories),
                             "levels": {c: list(p.tokens) for c, p in plans.items()}}
    check_or_write_settings(out, meta_settings, rec)
    if (read_marker(out) or {}).get("kind") != "render":  # the shards of a --shard I/N render share the first one's
        try:
            write_marker(out, "render")
        except OSError:  # an earlier version's finished render on a read-only copy: a rerun still writes nothing
            pass
    clean_stale_temps(out)
    write_selection(out, items)

    shard_i, shard_n = shard
    units = [(it, c) for it in items for c in categories]
    units = [u for k, u in enumerate(units) if k % shard_n == shard_i]
    # a bar and totals in clips: 24 per unit of the paper set, a sweep's levels x trajectories x 2 per unit
    unit_clips = {c: plans[c].conditions if plans else vg.CONDITIONS_PER_CATEGORY for c in categories}
    todo, repaired = units_to_render(out, units)
    summary = RenderSummary(str(out), clips_total=sum(unit_clips[c] for _, c in units),
                            units_done_before=len(units) - len(todo), repaired=repaired)
    done_clips = summary.clips_total - sum(unit_clips[c] for _, c in todo)
    jobs = max(1, min(jobs or default_jobs(), len(todo) or 1))
    tasks = [(it, c, rec, out, split, sample_rate, plans[c] if plans else None, digests.get(it.source_id))
             for it, c in todo]

    warm_up(rec, list(dict.fromkeys(c for _, c in todo)), render_clip=render_clip,
            progress=progress)  # numba compiles before the bar
    from tqdm.auto import tqdm

    bar = tqdm(total=summary.clips_total, initial=done_clips, unit="clip",
               desc=f"render {split}", disable=not progress, file=sys.stderr, dynamic_ncols=True)
    try:
        skipped, skipped_clips = _run_units(tasks, jobs, bar, summary, strict=strict, unit_clips=unit_clips)
    finally:
        bar.close()
    summary.skipped = sorted(skipped.items())
    summary.clips_total -= skipped_clips
    _finish(out, items, summary, rec, digests)
    summary.seconds = time.perf_counter() - t0
    return summary


def units_to_render(out: Path, units: list) -> tuple[list, list[str]]:
    """The ``(item, category)`` units a run must render, and why each finished one among them is redone.

    A unit is finished when its part file exists; it is trusted when every clip it lists is on disk
    with the recorded sha256 (:func:`generation.render_files.unit_problem`) and its source's
    ``sources/<id>.flac`` is there (:func:`generation.render_files.source_problem`; one unit of the
    source is redone to write it). Anything else is rendered (again), bit-identical to the first time.
    """
    todo, repaired, trusted = [], [], {}
    for it, c in units:
        part = part_path(out, it.source_id, c)
        problem = unit_problem(out, part) if part.exists() else "not rendered"
        if problem is None:
            trusted.setdefault(it.source_id, (it, c))  # the source's first trusted unit
            continue
        todo.append((it, c))
        if part.exists():
            repaired.append(problem)
    redone = {it.source_id for it, _ in todo}  # these write sources/<id>.flac anyway
    for sid, unit in trusted.items():
        problem = None if sid in redone else source_problem(out, sid)
        if problem is not None:
            todo.append(unit)
            repaired.append(problem)
    return todo, repaired


def long_sources(rows: list[dict]) -> dict[str, float]:
    """Source id -> its longest clip (s), for the sources with a clip longer than :data:`LONG_CLIP_SEC`."""
    longest: dict[str, float] = {}
    for r in rows:
        if r["duration_sec"] > LONG_CLIP_SEC:
            longest[r["source_id"]] = max(longest.get(r["source_id"], 0.0), float(r["duration_sec"]))
    return dict(sorted(longest.items()))


def _run_units(tasks: list, jobs: int, bar, summary: RenderSummary, *, strict: bool,
               unit_clips: dict | None = None) -> tuple[dict[str, str], int]:
    """Render the units (in ``jobs`` processes), counting clips into ``summary`` and ``bar``; return the
    skipped sources (id -> reason) and the clips of the skipped units (``unit_clips``: category -> clips
    per unit, default 24)."""
    skipped: dict[str, str] = {}
    skipped_clips = 0
    pool = None
    try:
        if jobs == 1:
            results = map(_run_unit, tasks)
        else:
            import multiprocessing as mp

            ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
            pool = worker_pool(ctx, jobs)  # workers end with the command, also on SIGTERM
            results = pool.imap_unordered(_run_unit, tasks, chunksize=1)
        for item, category, n_rows, reason in results:
            if swallowed() is not None:  # a Ctrl-C some code swallowed: stop at the next unit
                raise KeyboardInterrupt
            if reason is not None:
                if strict:
                    raise RenderError(f"source {item.source_id} ({item.audio}): {reason} (--strict)")
                skipped[item.source_id] = reason
                n = (unit_clips or {}).get(category, vg.CONDITIONS_PER_CATEGORY)
                skipped_clips += n
                bar.total -= n
            else:
                summary.clips_rendered += n_rows
                bar.update(n_rows)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return skipped, skipped_clips


def _finish(out: Path, items: list[SourceItem], summary: RenderSummary, rec: Recipe, digests: dict) -> None:
    """Write skipped.csv, span_check.csv, the manifest, label_checks.csv and render.json's digests
    (:func:`generation.render_identity.identity_fields`); warn on long clips and label warnings."""
    by_id = {it.source_id: it for it in items}
    aio.write_if_changed(RenderDir(out).skipped_path, csv_bytes(
        ["source_id", "audio", "reason"],
        [[sid, str(by_id[sid].audio), reason] for sid, reason in summary.skipped]))
    summary.span_checks = write_span_check(out, items)
    rows = part_rows(out)  # read once: the manifest and label_checks.csv both come from them
    meta_path = RenderDir(out).meta_path
    recorded = json.loads(meta_path.read_text())
    write_manifest(out, rows, sweep=bool(recorded.get("sweep")))
    meta = {**recorded, **ident.identity_fields(out, rows, digests, rec)}
    aio.write_if_changed(meta_path, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())
    summary.label_warnings = dict(lv.write_label_checks(out, rows))
    summary.long_sources = long_sources(rows)
    notes = dict(sorted({(r["source_id"], r["source_note"]) for r in rows if r.get("source_note")}))
    if notes:
        first = next(iter(notes))
        warnings.warn(SourceWarning(
            f"{len(notes)} source(s) rendered with a note, e.g. {first} ({by_id[first].audio if first in by_id else '?'})"
            f": {notes[first]}"), stacklevel=3)
    if summary.long_sources:
        longest = max(summary.long_sources, key=summary.long_sources.get)
        warnings.warn(LongSourceWarning(
            f"{len(summary.long_sources)} source(s) gave clips longer than {LONG_CLIP_SEC:g} s (longest: {longest}, "
            f"{summary.long_sources[longest]:.1f} s); the paper's sources are 3-10 s utterances and many audio LMs "
            "read at most 30 s: cut long recordings into utterances before rendering"), stacklevel=3)
    if summary.label_warnings:
        warnings.warn(lv.LabelWarning(
            "some clips may not carry their label: " + ", ".join(
                f"{code} {n}" for code, n in sorted(summary.label_warnings.items()))
            + f" (see {RenderDir(out).label_checks_path})" + lv.expected_note(summary.label_warnings)),
            stacklevel=3)  # points at render()
