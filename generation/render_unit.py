"""One render unit: the clips of one (source, category) pair (:func:`render_source_category`).

A unit reads and checks its source (:func:`prepare_source`: a :class:`SkipSource` reason for
skipped.csv when it cannot be used), finds its speech span (recorded for a frozen source, else
detected), and renders its 24 conditions (3 tiers x 4 trajectories x 2 directions), or a sweep's
levels (:mod:`generation.sweep_plan`), each a pure function of the source, its condition and the
recipe (:func:`render_clip`). It returns the clips' manifest rows; :mod:`generation.render` runs the
units in worker processes and keeps the books.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import vocalgrad as vg

from . import attributes
from . import audio as aio
from . import label_validity as lv
from . import render_identity as ident
from . import source_checks
from .attributes import category_recipe
from .frozen import recorded_span
from .recipe import Recipe
from .render_files import span_part_path
from .schedule import make_schedule
from .sources import SourceItem, load_source_audio
from .span import Span, detect_span
from .sweep_measures import sweep_columns
from .transforms import ClipKey, Params, get_transform

__all__ = ["MIN_DURATION_SEC", "SPAN_CHECK_TOLERANCE_SEC", "SkipSource", "prepare_source", "render_clip",
           "render_source_category", "source_span", "span_check", "tier_params"]

MIN_DURATION_SEC = 0.5
#: A frozen source whose detected span differs from the recorded one by more than this is listed in span_check.csv.
SPAN_CHECK_TOLERANCE_SEC = 0.010


class SkipSource(vg.VocalGradError):
    """A source cannot be rendered; the message is the one-line reason for skipped.csv."""



def prepare_source(item: SourceItem, recipe: Recipe) -> tuple[np.ndarray, object]:
    """Read, check, downmix and resample a source; detect its speech span.

    Raises
    ------
    SkipSource
        Unreadable or truncated audio, shorter than 0.5 s, silent or near-silent, or channels that cancel
        in the mono mix (:mod:`generation.source_checks`).
    """
    try:
        y, sr = load_source_audio(item)
    except Exception as exc:  # any decoding problem becomes a skip reason
        raise SkipSource(str(exc)) from exc
    problem = source_checks.truncation_problem(item.audio)
    if problem:
        raise SkipSource(problem)
    if y.size == 0 or y.size / sr < MIN_DURATION_SEC:
        raise SkipSource(f"too short ({y.size / sr if sr else 0:.3f} s < {MIN_DURATION_SEC} s)")
    if not np.isfinite(y).all():
        raise SkipSource("audio contains NaN or infinite samples")
    problem = source_checks.level_problem(y, item.audio)  # all-silent, near-silent, channels that cancel
    if problem:
        raise SkipSource(problem)
    # Render from exactly what sources/ stores: the resampled signal on the 16-bit grid (identity
    # for a 48 kHz 16-bit source), so clips can be re-made from the published sources.
    x = aio.quantize_int16(aio.resample(y, sr, recipe.sample_rate))
    return x, source_span(item, x, recipe)


def source_span(item: SourceItem, x: np.ndarray, recipe: Recipe) -> Span:
    """The recorded speech span of a frozen source (``extra["recorded_onset_sec"]``), else the detected one
    (without the source's DC offset, if it has one: :func:`generation.source_checks.without_dc`)."""
    onset = item.extra.get("recorded_onset_sec")
    if onset in (None, ""):
        return detect_span(source_checks.without_dc(x), recipe.sample_rate, **recipe.span)  # x unless DC offset
    a, b = recorded_span(float(onset), float(item.extra["recorded_offset_sec"]), len(x), recipe.sample_rate)
    return Span(a, b, True)


def span_check(item: SourceItem, x: np.ndarray, span: Span, recipe: Recipe) -> dict | None:
    """Compare a recorded span with our detector; the row for span_check.csv when they differ > 10 ms."""
    if item.extra.get("recorded_onset_sec") in (None, ""):
        return None
    sr = recipe.sample_rate
    det = detect_span(source_checks.without_dc(x), sr, **recipe.span)
    d_on, d_off = (det.onset - span.onset) / sr, (det.offset - span.offset) / sr
    if max(abs(d_on), abs(d_off)) <= SPAN_CHECK_TOLERANCE_SEC:
        return None
    return {"source_id": item.source_id, "corpus_id": item.extra.get("corpus_id", ""),
            "recorded_onset_sec": span.onset / sr, "detected_onset_sec": det.onset / sr,
            "recorded_offset_sec": span.offset / sr, "detected_offset_sec": det.offset / sr,
            "onset_diff_ms": round(1000 * d_on, 1), "offset_diff_ms": round(1000 * d_off, 1),
            "detected_found": det.found}


def tier_params(recipe: Recipe, category: str, tier: str) -> Params:
    """The category's checked transform parameters at ``tier`` (per-tier tables resolved, ``crossfade`` set)."""
    return category_recipe(recipe, category).params_for(tier)


def render_clip(x, item: SourceItem, recipe: Recipe, span, *, category: str, tier: str, trajectory: str,
                direction: str, cache: dict | None = None, cat=None, clip_tier: str | None = None):
    """Render one clip at the processing rate; returns the transform's :class:`Result`.

    ``cat`` (default: the recipe's settings of ``category``) and ``clip_tier`` (default ``tier``:
    the tier the clip is keyed by) let a sweep render its levels (:mod:`generation.sweep_plan`).
    """
    cat = cat or category_recipe(recipe, category)
    schedule = make_schedule(recipe, cat, span, tier=tier, trajectory=trajectory, direction=direction)
    clip = ClipKey(item.source_id, item.extra.get("reference_clip_id", item.source_id), trajectory,
                   clip_tier or tier, direction)
    params = cat.params_for(tier).for_clip(clip)
    result = get_transform(cat.transform)(x, recipe.sample_rate, schedule, params, cache=cache)
    return result, schedule


def render_source_category(item: SourceItem, category: str, recipe: Recipe, out_dir: Path, *,
                           split: str, sample_rate: int, plan=None, source_sha256: str | None = None) -> list[dict]:
    """Render the 24 clips of one (source, category) unit and return their manifest rows.

    With a :class:`generation.sweep_plan.SweepPlan` the unit holds the sweep's conditions instead
    (levels x its trajectories x 2 directions; the level token in the ``tier`` column and clip id),
    and each row also holds what its level realised (:func:`generation.sweep_measures.sweep_columns`:
    the :data:`vocalgrad.SWEEP_COLUMNS`).
    ``source_sha256`` is the source's identity (:func:`generation.render_identity.source_sha256`,
    computed here when not given), recorded with the ``sources/`` file's sha256.
    """
    if source_sha256 is None:
        source_sha256 = ident.source_sha256(item)
    x, span = prepare_source(item, recipe)
    proc_sr = recipe.sample_rate
    check_path = span_part_path(out_dir, item.source_id)
    if item.extra.get("recorded_onset_sec") not in (None, "") and not check_path.exists():
        aio.atomic_write_bytes(check_path, json.dumps(span_check(item, x, span, recipe)).encode())
    pcm, _ = aio.to_int16(x)
    source_flac = aio.encode_flac(pcm, proc_sr)
    aio.write_if_changed(out_dir / "sources" / f"{item.source_id}.flac", source_flac)
    cat = vg.category(category)
    attr = attributes.get(category)
    crec = plan.crec if plan is not None else category_recipe(recipe, category)
    unit = crec.unit
    cache: dict = {}
    rows = []
    zeros: dict = {}  # a sweep's zero-change clip per (trajectory, direction), at the processing rate
    src_codes = lv.source_warnings(x, span, proc_sr, category, crec, min_bandwidth_hz=attr.min_bandwidth_hz)
    note = source_checks.dc_offset_note(x)  # kept in the part file, warned once at the end (_finish)
    for tier in (plan.tokens if plan is not None else vg.TIERS):
        for trajectory in (plan.trajectories if plan is not None else vg.TRAJECTORIES):
            for direction in vg.DIRECTIONS:
                res, schedule = render_clip(x, item, recipe, span, category=category, tier=tier,
                                            trajectory=trajectory, direction=direction, cache=cache, cat=crec,
                                            clip_tier=plan.clip_tier(tier) if plan is not None else None)
                y, onset, offset = res.y, res.onset, res.offset
                effect = attr.paired(x, span, y, onset, offset, proc_sr, schedule, recipe.crossfade)
                if plan is not None:  # what the level realised, against the zero-change clip rendered first
                    level = plan.level(tier)
                    if level.zero:
                        zeros[trajectory, direction] = (y, Span(onset, offset))
                    swept = sweep_columns(attr, level, direction=direction, effect=effect, x=x, span=span, y=y,
                                          onset=onset, offset=offset, sr=proc_sr, schedule=schedule,
                                          fade=recipe.crossfade,
                                          zero=None if level.zero else zeros.get((trajectory, direction)))
                if sample_rate != proc_sr:
                    ratio = sample_rate / proc_sr
                    y = aio.resample(np.asarray(y, np.float32), proc_sr, sample_rate)
                    onset, offset = int(round(onset * ratio)), int(round(offset * ratio))
                pcm, clipped = aio.to_int16(y)
                data = aio.encode_flac(pcm, sample_rate)
                cid = vg.clip_id(item.source_id, category, trajectory, tier, direction)
                rel = f"clips/{category}/{cid}.flac"
                aio.atomic_write_bytes(out_dir / rel, data)
                rows.append({
                    "clip_id": cid, "path": rel, "split": split, "category": category,
                    "attribute": cat.attribute, "direction": direction, "tier": tier,
                    "trajectory": trajectory, "source_id": item.source_id, "speaker_id": item.speaker_id,
                    "sentence_id": item.sentence_id, "gender": item.gender, "accent": item.accent,
                    "text": item.text, "sample_rate": sample_rate, "duration_sec": len(pcm) / sample_rate,
                    "onset_sec": onset / sample_rate, "offset_sec": offset / sample_rate,
                    "source_onset_sec": span.onset / proc_sr, "source_offset_sec": span.offset / proc_sr,
                    "speech_found": span.found, "value_start": schedule.start, "value_end": schedule.end,
                    "value_unit": unit, "clipped_ratio": clipped, "sha256": aio.sha256_bytes(data),
                    "recipe": recipe.name, **(swept if plan is not None else {}),
                    # label validity (label_checks.csv; not manifest columns)
                    "effect_measured": effect, "effect_unit": attr.effect_unit,
                    "label_warnings": ";".join(lv.clip_warnings(category, direction, effect, clipped,
                                                                src_codes[tier], min_change=attr.min_change)),
                    **({"source_note": note} if note else {}),
                })
    # the source's digests, before the part file that makes the unit count as done
    ident.write_source_record(out_dir, item.source_id, source_sha256, aio.sha256_bytes(source_flac))
    return rows

