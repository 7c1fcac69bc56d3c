"""What a sweep clip realised, measured on the clip (the sweep-only manifest and Hub columns).

A sweep level declares a magnitude (:mod:`generation.attributes.sweep`); what a clip of that level
does to its source is measured here, at the processing rate, before the clip is stored:

``magnitude_realised`` (unit ``realised_unit``)
    The clip's change of the attribute in the increase sense (end minus start, its sign flipped for
    a decrease clip): the sweep's own measure in the sweep's unit where it declares one
    (:attr:`Sweep.realised`: distortion's held samples and clarity's bandwidth, in octaves, read
    against the zero-change clip), else the attribute's paired measure in its unit (the render's
    ``effect_measured``, read against the source). Both read the first and last eighth of the speech
    span: a jump or flat-ended clip realises about its declared magnitude, a linear one less (its
    eighths hold the ends only on average).
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

from .label_validity import span_ends
from .measures import MEASURES

__all__ = ["NULL_POWER", "diff_from_zero", "level_change_db", "realised_bandwidth_octaves",
           "realised_hold_octaves", "sweep_columns"]

#: Power of the rounding noise of a 16-bit clip (full scale 1.0): a clip closer than this to its
#: zero-change clip is the same clip once stored, so its level is null for its source.
NULL_POWER = (2.0 ** -15) ** 2 / 12.0


def _ends(x: np.ndarray, span, y: np.ndarray, onset: int, offset: int):
    """The first and last eighth of the speech span in the clip and in its reference ``x`` (as the label checks
    read them)."""
    ya, yb = span_ends(onset, offset)
    xa, xb = span_ends(span.onset, span.offset)
    y, x = np.asarray(y, np.float64), np.asarray(x, np.float64)
    return y[ya], y[yb], x[xa], x[xb]


def _change(measure, x, span, y, onset, offset) -> float:
    """``measure`` of the clip re its reference over the last eighth minus over the first (log2 ratios)."""
    ya, yb, xa, xb = _ends(x, span, y, onset, offset)
    return float((np.log2(measure(yb)) - np.log2(measure(xb))) - (np.log2(measure(ya)) - np.log2(measure(xa))))


def realised_hold_octaves(x, span, y, onset, offset, sr, schedule=None, fade=240) -> float:
    """Distortion's change in octaves of effective rate: log2 of the hold length, end over start, re ``x``.

    The hold length of a window is ``1 / (1 - share of repeated consecutive samples)``
    (:data:`generation.measures.MEASURES` ``distortion``), read over the first and last eighth of
    the speech span of the clip and of its reference ``x`` (the zero-change clip).
    """
    def hold(w):
        return 1.0 / max(1e-6, 1.0 - MEASURES["distortion"](w, sr))

    return _change(hold, x, span, y, onset, offset)


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
        The clip's paired measure (the render's ``effect_measured``).
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
    if own is None:
        change = effect
    elif zero is None:  # the zero-change clip: the reference of the others
        change = 0.0
    else:  # against the zero-change clip: the same pipeline, so its windows line up with the clip's
        change = own(zero[0], zero[1], y, onset, offset, sr, schedule, fade)
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
