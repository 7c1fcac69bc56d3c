"""What a sweep clip realised, measured on the clip (the sweep-only manifest and Hub columns).

A sweep level declares a magnitude (:mod:`generation.attributes.sweep`); what a clip of that level
does to its source is measured here, at the processing rate, before the clip is stored:

``magnitude_realised`` (unit ``realised_unit``)
    The clip's change of the attribute in the increase sense (end minus start, its sign flipped for
    a decrease clip), measured on the clip **as heard**: its samples beyond the 16-bit range held at
    the limits, as the stored clip has them (:func:`generation.audio.clip_int16_range`), so a clip
    that clipped realises less than its transform asked for. The sweep's own measure in the sweep's
    unit where it declares one (:attr:`Sweep.realised`: distortion's held samples, counted only
    where the hold survives, outside the chunks' cross-fades and the clipped samples, and clarity's
    bandwidth, in octaves, read against the zero-change clip), else the attribute's paired measure
    in its unit (the render's ``effect_measured`` of the clip as heard, read against the source).
    Both read the first and last eighth of the speech span: a jump clip realises about its declared
    magnitude, a linear one less (its eighths hold the ends only on average).
``diff_from_zero_db`` / ``level_null``
    The energy of the clip minus the zero-change clip of the same source, trajectory and direction,
    in dB re that clip; the level is *null* for this source when that difference is below the
    rounding noise of a 16-bit clip (:data:`NULL_POWER`): it cannot change this source at all
    (a clarity cut-off above the band limit of speech band-limited to 8 kHz). A null level's clip has
    no right answer and never enters a fit as a change; the zero-change control itself is not
    flagged (it is the control).
``level_change_db``
    The level change over the clip that comes with the transform: RMS level of the last eighth of
    the speech span minus the first, clip minus source (dB, in the clip's own time: a vibration or echo
    increase clip gets quieter towards its end, its decrease twin louder), so that a report can ask
    whether answers follow the level rather than the attribute.
"""

from __future__ import annotations

import numpy as np

from .audio import clip_int16_range
from .label_validity import span_ends
from .measures import MEASURES, hold_share
from .transforms.base import stitch_joins

__all__ = ["NULL_POWER", "crossfade_mask", "diff_from_zero", "level_change_db", "realised_bandwidth_octaves",
           "realised_hold_octaves", "sweep_columns"]

#: Power of the rounding noise of a 16-bit clip (full scale 1.0): a clip closer than this to its
#: zero-change clip is the same clip once stored, so its level is null for its source.
NULL_POWER = (2.0 ** -15) ** 2 / 12.0


def _change(measure, x, span, y, onset, offset, masks=None) -> float:
    """``measure`` of the clip re its reference over the last eighth minus over the first (log2 ratios); with
    ``masks`` (per-sample bools of ``y`` and ``x``), ``measure(window, mask of the window)``."""
    ya, yb = span_ends(onset, offset)
    xa, xb = span_ends(span.onset, span.offset)
    y, x = np.asarray(y, np.float64), np.asarray(x, np.float64)
    if masks is None:
        def m(v, sl, _k):
            return measure(v[sl])
    else:
        def m(v, sl, k):
            return measure(v[sl], masks[k][sl])
    return float((np.log2(m(y, yb, 0)) - np.log2(m(x, xb, 1))) - (np.log2(m(y, ya, 0)) - np.log2(m(x, xa, 1))))


def crossfade_mask(n: int, onset: int, schedule, fade: int) -> np.ndarray:
    """Samples of a chunked clip of ``n`` samples whose speech span starts at ``onset`` that lie outside the
    cross-fades between its chunks (:func:`generation.transforms.base.stitch_joins`); all of them without a
    chunk layout."""
    keep = np.ones(int(n), dtype=bool)
    layout = getattr(schedule, "layout", None)
    if layout is None:
        return keep
    for start, f in stitch_joins((np.asarray(layout.ends) - np.asarray(layout.starts)).tolist(), fade):
        keep[onset + start:onset + start + f] = False
    return keep


def realised_hold_octaves(x, span, y, onset, offset, sr, schedule=None, fade=240) -> float:
    """Distortion's change in octaves of effective rate: log2 of the hold length, end over start, re ``x``.

    The hold length of a window is ``1 / (1 - share of repeated consecutive samples)``
    (:func:`generation.measures.hold_share`), read over the first and last eighth of the speech span
    of the clip and of its reference ``x`` (the zero-change clip), counting only samples where the
    hold survives: outside the cross-fades between the chunks (which blend two held signals and so
    hold nothing; with ``schedule``) and off the 16-bit limits (a clipped run repeats the limit, which
    is no hold).
    """
    def hold(w, keep):
        return 1.0 / max(1e-6, 1.0 - hold_share(w, keep))

    def mask(v, on):
        v = np.asarray(v)
        return crossfade_mask(len(v), on, schedule, fade) & (v > -1.0) & (v < 32767.0 / 32768.0)

    return _change(hold, x, span, y, onset, offset, masks=(mask(y, onset), mask(x, span.onset)))


def realised_bandwidth_octaves(x, span, y, onset, offset, sr, schedule=None, fade=240) -> float:
    """Clarity's change in octaves of bandwidth: log2 of the -60 dB bandwidth (:data:`generation.measures.MEASURES`
    ``clarity``), end over start, re the reference ``x`` (the zero-change clip), over the first and last
    eighth of the speech span."""
    return _change(lambda w: max(MEASURES["clarity"](w, sr), 1.0), x, span, y, onset, offset)


def _level_db(v: np.ndarray) -> float:
    """RMS level (dB re full scale), floored at the rounding noise of a 16-bit clip (a window that fell silent)."""
    return float(10.0 * np.log10(max(float(np.mean(np.square(v, dtype=np.float64))), NULL_POWER))) if v.size else 0.0


def level_change_db(x: np.ndarray, span, y: np.ndarray, onset: int, offset: int) -> float:
    """RMS level of the clip's last eighth of speech minus its first, less the same change of the source (dB)."""
    ya, yb = span_ends(onset, offset)
    xa, xb = span_ends(span.onset, span.offset)
    return (_level_db(y[yb]) - _level_db(y[ya])) - (_level_db(x[xb]) - _level_db(x[xa]))


def diff_from_zero(y: np.ndarray, zero: np.ndarray) -> tuple[float, bool]:
    """``(dB of (y - zero) re zero, null)`` over the common length; null: the difference is below :data:`NULL_POWER`."""
    n = min(len(y), len(zero))
    y, zero = np.asarray(y[:n], np.float64), np.asarray(zero[:n], np.float64)
    diff = float(np.mean((y - zero) ** 2)) if n else 0.0
    ref = float(np.mean(zero ** 2)) if n else 0.0
    if len(y) != len(zero):  # another length (speed): never the same clip
        return float(10.0 * np.log10(max(diff, 1e-30) / max(ref, 1e-30))), False
    return float(10.0 * np.log10(max(diff, 1e-30) / max(ref, 1e-30))), diff < NULL_POWER


def sweep_columns(attr, level, *, direction: str, effect: float, x: np.ndarray, span, y: np.ndarray, onset: int,
                  offset: int, sr: int, schedule, fade: int, zero: tuple | None) -> dict:
    """The sweep-only columns of one clip (:data:`vocalgrad.SWEEP_COLUMNS`; see the module docstring).

    Parameters
    ----------
    attr : generation.attributes.Attribute
    level : generation.attributes.sweep.SweepLevel
    direction : str
    effect : float
        The clip's paired measure (the render's ``effect_measured``, of the clip before clipping: measured
        again here on the clip as heard when it clipped).
    x, span : the source at the processing rate and its speech span.
    y, onset, offset : the clip at the processing rate and its speech span there.
    sr, schedule, fade : processing rate, the clip's value schedule and the recipe's cross-fade.
    zero : (np.ndarray, Span) or None
        The zero-change clip of the same source, trajectory and direction and its speech span (None
        for that clip itself). A sweep's own measure reads the clip against it (0 for the zero-change
        clip itself); the paired measure (``effect``) reads it against the source.
    """
    sweep = attr.sweep
    own = sweep.realised if sweep is not None else None
    heard = clip_int16_range(y)  # the clip as stored and heard: clipped at the 16-bit limits
    clipped = not np.array_equal(heard, np.asarray(y, np.float32))
    if own is None:  # the paired measure, again on the clip as heard where it clipped
        change = attr.paired(x, span, heard, onset, offset, sr, schedule, fade) if clipped else effect
    elif zero is None:  # the zero-change clip: the reference of the others
        change = 0.0
    else:  # against the zero-change clip: the same pipeline, so its windows line up with the clip's
        change = own(clip_int16_range(zero[0]), zero[1], heard, onset, offset, sr, schedule, fade)
    sign = 1.0 if direction == "increase" else -1.0
    diff_db, null = diff_from_zero(y, zero[0]) if zero is not None else (float("-inf"), False)
    return {
        "magnitude": float(level.magnitude), "magnitude_unit": sweep.unit if sweep is not None else "",
        "magnitude_realised": float(sign * change) + 0.0 if np.isfinite(change) else None,  # no -0.0
        "realised_unit": sweep.unit if own is not None else attr.effect_unit,
        "diff_from_zero_db": diff_db if np.isfinite(diff_db) else None,
        "level_null": bool(null and not level.zero),
        "level_change_db": level_change_db(np.asarray(x, np.float64), span, np.asarray(y, np.float64), onset, offset),
    }
