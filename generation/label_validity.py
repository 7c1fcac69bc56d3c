"""Label validity: a measured effect for every clip, and warnings where a clip may not carry its label.

A VocalGrad label ("increase"/"decrease") is meant to be an objective, measurable fact. The render
therefore measures, for every clip, the change of a cheap category-specific quantity between the
first and the last eighth of the speech span (:func:`measure_effect`; positive = the attribute
grew), and flags clips whose label the audio may not support (:func:`clip_warnings`):

==================  ============================================================================
code                meaning
==================  ============================================================================
``band_limited``    clarity: the source has (almost) no energy above the tier's cut-off, so the
                    low-pass removes nothing (an 8-kHz source in the low tier: the increase and
                    decrease twins are identical to the ear); an extension attribute with a
                    source requirement: no energy above its ``min_bandwidth_hz``
``silence_padded``  the first or last tenth of the speech span is near-silent, so the start or
                    end value of the trajectory falls on silence
``no_speech``       no speech segment was detected; the span is the whole clip
``clipping``        more than 0.1 % of the clip's samples hit the int16 limits
``weak_effect``     the measured change is below the category's minimum (:data:`MIN_CHANGE`)
``reversed_effect`` the measured change has the opposite sign of the label
==================  ============================================================================

``write_label_checks`` collects the per-clip values into ``DIR/label_checks.csv``;
:func:`load_label_checks` and :func:`label_warning_summary` read them back for the report and the
dataset card. See docs/render.md "Label validity".
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import numpy as np

from .render_dir import RenderDir, read_render_csv

__all__ = ["MIN_CHANGE", "EFFECT_UNITS", "LABEL_CHECKS_FILE", "LabelWarning", "EXPECTED_CODES", "expected_note",
           "source_warnings", "measure_effect", "clip_warnings", "aligned_cores", "span_ends", "ends_difference", "kept_db",
           "semitone_shift",
           "write_label_checks", "load_label_checks", "label_warning_summary", "label_warnings_markdown"]

LABEL_CHECKS_FILE = RenderDir.LABEL_CHECKS
LABEL_CHECK_COLUMNS = ("clip_id", "category", "tier", "trajectory", "direction", "source_id",
                       "effect_measured", "effect_unit", "label_warnings")

#: Unit of :func:`measure_effect` per category.
EFFECT_UNITS = {
    "volume": "dB gain",
    "noise": "noise/speech RMS",
    "vibration": "residual/speech RMS",
    "echo": "residual/speech RMS",
    "clarity": "dB of the energy above the cut-off kept",
    "distortion": "dB residual/speech",
    "roughness": "dB residual/speech",
    "pitch": "semitones (log-spectrum shift)",
    "speed": "rate (realised)",
}
#: Smallest |measured change| that counts as carrying the label (same units as EFFECT_UNITS).
MIN_CHANGE = {
    "volume": 1.0, "noise": 0.005, "vibration": 0.02, "echo": 0.02, "clarity": 1.0,
    "distortion": 3.0, "roughness": 3.0, "pitch": 0.25, "speed": 0.02,
}
#: The effect is measured on the first and last 1/REGION_DIV of the span (or of its steps).
REGION_DIV = 8
#: Residual levels (clarity, distortion, roughness) are floored here: an untouched end is "clean".
RESIDUAL_FLOOR_DB = -60.0
#: Clarity: a tier is band-limited when the energy the low-pass can remove is below this (dB re total).
BAND_LIMIT_DB = -40.0
#: silence_padded: first/last tenth of the span this far below the span's RMS (dB).
SILENCE_DB = -30.0
#: clipping: share of samples at the int16 limits.
CLIP_RATIO = 0.001


class LabelWarning(UserWarning):
    """Issued by ``vocalgrad render`` when some clips may not carry their label."""


#: Warning codes that a faithful render is expected to raise, with why (said after the counts).
EXPECTED_CODES = {
    "clipping": "clipping is the paper's known volume flaw (its gains, up to +18 dB, push loud speech past full "
                "scale; the faithful recipe keeps it, docs/render.md, Label validity): expected",
}


def expected_note(counts: dict[str, int]) -> str:
    """``"; clipping is the paper's known flaw ...: expected"`` for the codes of :data:`EXPECTED_CODES`
    among ``counts`` (code -> clips), else ``""``."""
    return "".join(f"; {why}" for code, why in EXPECTED_CODES.items() if counts.get(code))


def _rms(v) -> float:
    v = np.asarray(v, dtype=np.float64)
    return float(np.sqrt(np.mean(v * v))) if v.size else 0.0


def _db(a: float, b: float) -> float:
    return 10.0 * np.log10(max(a, 1e-20) / max(b, 1e-20))


def _power(seg: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """Power spectrum of a segment (one Hann-windowed FFT) and its frequencies."""
    seg = np.asarray(seg, dtype=np.float64)
    if seg.size < 2:
        return np.zeros(1), np.zeros(1)
    P = np.abs(np.fft.rfft(seg * np.hanning(seg.size))) ** 2
    return P, np.fft.rfftfreq(seg.size, 1.0 / sr)


def _frac_above(seg, sr, edge_hz) -> float:
    P, f = _power(seg, sr)
    total = float(P.sum())
    return float(P[f >= edge_hz].sum()) / total if total > 0 else 0.0


def _log_spectrum(seg, sr, grid):
    """Welch log-power spectrum (2048-sample Hann frames, hop 1024) sampled at ``grid`` Hz."""
    seg = np.asarray(seg, dtype=np.float64)
    n = 2048
    if seg.size < n:
        seg = np.pad(seg, (0, n - seg.size))
    frames = np.lib.stride_tricks.sliding_window_view(seg, n)[::1024]
    P = np.mean(np.abs(np.fft.rfft(frames * np.hanning(n), axis=1)) ** 2, axis=0)
    f = np.fft.rfftfreq(n, 1.0 / sr)
    return np.interp(grid, f, 10.0 * np.log10(P + 1e-12))


def kept_db(y, x, cores, sr, edge_hz: float) -> float:
    """Mean share (dB) of each step's source energy above ``edge_hz`` that the clip keeps.

    Per time-aligned step core: the clip's core is scaled so that its energy below the edge equals
    the source's (clarity RMS-matches every chunk), then ``E_clip(>edge) / E_source(>edge)``. Steps
    whose source has almost no energy above the edge (< -40 dB of the step's total) carry no
    information and are left out; 0 dB when none is left (nothing the low-pass could remove, e.g.
    a band-limited source). Averaging per step keeps loud fricatives from outweighing vowels.
    """
    segs = [(x[si], y[so]) for si, so in cores]
    if not segs:
        return 0.0
    n = max(len(a) for a, _ in segs)
    win = np.hanning(n)
    X = np.stack([np.pad(a, (0, n - len(a))) for a, _ in segs]) * win
    Y = np.stack([np.pad(b, (0, n - len(b))) for _, b in segs]) * win
    Px, Py = np.abs(np.fft.rfft(X, axis=1)) ** 2, np.abs(np.fft.rfft(Y, axis=1)) ** 2
    f = np.fft.rfftfreq(n, 1.0 / sr)
    hi, lo = f >= edge_hz, (f < edge_hz) & (f >= 50)
    ex_hi, ex_lo, ey_hi, ey_lo = Px[:, hi].sum(1), Px[:, lo].sum(1), Py[:, hi].sum(1), Py[:, lo].sum(1)
    ok = (ex_hi > (ex_hi + ex_lo) * 10 ** (BAND_LIMIT_DB / 10)) & (ey_lo > 0)
    if not ok.any():
        return 0.0
    kept = (ey_hi[ok] * ex_lo[ok] / ey_lo[ok]) / ex_hi[ok]
    return float(np.mean(10.0 * np.log10(np.maximum(kept, 1e-6))))


#: Log-frequency grid of :func:`semitone_shift`: 80 Hz - 6 kHz in tenths of a semitone.
_GRID = 80.0 * 2.0 ** (np.arange(int(120 * np.log2(6000 / 80))) / 120.0)


def semitone_shift(ys, xs, sr, max_semis: float = 6.0) -> float:
    """Shift (semitones) that best aligns the log-frequency spectrum of ``xs`` with that of ``ys``.

    A pitch shift by resampling moves every spectral feature by the same ratio, i.e. by the same
    offset on a log-frequency axis; the offset is found by cross-correlation (0.1-semitone steps).
    """
    a, b = _log_spectrum(ys, sr, _GRID), _log_spectrum(xs, sr, _GRID)
    lim = int(round(max_semis * 10))
    core = a[lim:len(a) - lim]                                   # y's spectrum, central part
    wins = np.lib.stride_tricks.sliding_window_view(b, len(core))  # x's spectrum at every lag
    core = core - core.mean()
    wins = wins - wins.mean(axis=1, keepdims=True)
    corr = wins @ core / (np.linalg.norm(wins, axis=1) * np.linalg.norm(core) + 1e-12)
    # window j starts at x-bin j, aligned with y-bin lim: y(f) ~ x(f) shifted up by (lim - j) tenths
    return (lim - int(np.argmax(corr))) / 10.0


# --------------------------------------------------------------------------------------------
def source_warnings(x: np.ndarray, span, sr: int, category: str, cat_recipe, *,
                    min_bandwidth_hz: float | None = None) -> dict[str, list[str]]:
    """Warnings that hold for every clip of one (source, category), per tier.

    Parameters
    ----------
    x : np.ndarray
        Source at the processing rate (as rendered).
    span : Span
    category : str
    cat_recipe : CategoryRecipe
        The recipe's settings of ``category`` (clarity: tier cut-offs and ``transition_hz``).
    min_bandwidth_hz : float, optional
        The attribute's source requirement (:class:`generation.attributes.Attribute`): every tier is
        ``band_limited`` when the span has (almost) no energy above it.
    """
    common = []
    if not span.found:
        common.append("no_speech")
    on, off = span.onset, span.offset
    tenth = max(1, (off - on) // 10)
    span_rms = _rms(x[on:off])
    if span_rms > 0 and min(_rms(x[on:on + tenth]), _rms(x[off - tenth:off])) < span_rms * 10 ** (SILENCE_DB / 20):
        common.append("silence_padded")
    out = {}
    for tier, (lo, hi) in cat_recipe.tiers.items():
        codes = list(common)
        if category == "clarity":
            edge = min(lo, hi) - float(cat_recipe.params.get("transition_hz", 0.0)) / 2.0
            if _db(_frac_above(x[on:off], sr, edge), 1.0) < BAND_LIMIT_DB:
                codes.append("band_limited")
        elif min_bandwidth_hz is not None and _db(_frac_above(x[on:off], sr, min_bandwidth_hz), 1.0) < BAND_LIMIT_DB:
            codes.append("band_limited")
        out[tier] = codes
    return out


def span_ends(on: int, off: int) -> tuple[slice, slice]:
    """First and last eighth of ``[on, off)``: where a trajectory sits nearest its start/end value."""
    q = max(1, (off - on) // REGION_DIV)
    return slice(on, on + q), slice(off - q, off)


def ends_difference(measure, x: np.ndarray, span, y: np.ndarray) -> float:
    """``measure(clip part, source part)`` over the last eighth of the span minus over the first.

    The paired measure of an effect that keeps the clip time-aligned with its source
    (:func:`span_ends`); ``x``/``span`` are the source and its span, ``y`` the clip, both as float64.
    """
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    a, b = span_ends(span.onset, span.offset)
    return measure(y[b], x[b]) - measure(y[a], x[a])


def aligned_cores(layout, out_onset: int, fade: int) -> list[tuple[slice, slice]]:
    """(source slice, output slice) of every step's un-faded core in a chunk-stitched clip.

    Follows the stitching rule of benchmark.md §4a (each join overlaps ``min(fade, ...)`` samples), so
    the two slices hold the same speech (pitch, clarity, distortion, roughness keep time alignment).
    """
    out, pos, prev_end = [], 0, None
    for s, e in zip(layout.starts.tolist(), layout.ends.tolist()):
        k = e - s
        f = 0 if prev_end is None else min(fade, prev_end, k)
        pos = 0 if prev_end is None else prev_end - f
        a, b = (fade if prev_end is not None else 0), k - fade
        if b > a:
            out.append((slice(s + a, s + b), slice(out_onset + pos + a, out_onset + pos + b)))
        prev_end = pos + k
    return out


def _joined(y, x, cores):
    return (np.concatenate([y[o] for _, o in cores]) if cores else np.zeros(0),
            np.concatenate([x[si] for si, _ in cores]) if cores else np.zeros(0))


def measure_effect(category: str, x: np.ndarray, span, y: np.ndarray, out_onset: int, out_offset: int,
                   sr: int, schedule, fade: int = 240, transition_hz: float = 800.0) -> float:
    """Measured change of the clip's attribute, last eighth of the span minus the first eighth.

    Positive means the attribute increased (louder, noisier, more vibrato/echo, clearer, more
    distorted, rougher, higher, faster), so its sign should match the label. ``x``/``span`` are the
    source and its span, ``y``/``out_onset``/``out_offset`` the rendered clip at the processing
    rate. Chunk-stitched clips are compared with the source on time-aligned step cores
    (:func:`aligned_cores`); see :data:`EFFECT_UNITS` for what is measured per category.
    """
    y = np.asarray(y, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    if category in ("volume", "noise", "vibration", "echo"):
        a, b = span_ends(span.onset, span.offset)
        if category == "volume":
            return _db(_rms(y[b]) ** 2, _rms(x[b]) ** 2) - _db(_rms(y[a]) ** 2, _rms(x[a]) ** 2)
        r = y[: len(x)] - x
        if category == "noise":
            return (_rms(r[b]) - _rms(r[a])) / (_rms(x[span.onset:span.offset]) or 1.0)
        return _rms(r[b]) / (_rms(x[b]) or 1.0) - _rms(r[a]) / (_rms(x[a]) or 1.0)
    if category == "speed":
        lay, rates = schedule.layout, np.asarray(schedule.values, dtype=np.float64)
        c, k = lay.starts - lay.ctx_starts, lay.ends - lay.starts
        realised = k / np.maximum(np.floor((c + k) / rates) - np.floor(c / rates), 1)
        q = max(1, len(realised) // REGION_DIV)
        return float(realised[-q:].mean() - realised[:q].mean())
    cores = aligned_cores(schedule.layout, out_onset, fade)
    q = max(1, len(cores) // REGION_DIV)
    (ya, xa), (yb, xb) = _joined(y, x, cores[:q]), _joined(y, x, cores[-q:])
    if category == "pitch":
        return semitone_shift(yb, xb, sr) - semitone_shift(ya, xa, sr)
    if category == "clarity":
        edge = float(np.min(schedule.values)) - transition_hz / 2.0
        return kept_db(y, x, cores[-q:], sr, edge) - kept_db(y, x, cores[:q], sr, edge)
    if category in ("distortion", "roughness"):
        def resid_db(ys, xs):
            return max(RESIDUAL_FLOOR_DB, _db(_rms(ys - xs) ** 2, _rms(xs) ** 2))
        return resid_db(yb, xb) - resid_db(ya, xa)
    raise ValueError(f"no effect measure for category {category!r}")


def clip_warnings(category: str, direction: str, effect: float, clipped_ratio: float,
                  source_codes: list[str], *, min_change: float | None = None) -> list[str]:
    """Warning codes of one clip (see the module table).

    ``min_change`` is the attribute's smallest measured change (default :data:`MIN_CHANGE` of
    the category; extension attributes declare theirs).
    """
    codes = list(source_codes)
    if clipped_ratio > CLIP_RATIO:
        codes.append("clipping")
    want = 1.0 if direction == "increase" else -1.0
    if not np.isfinite(effect) or abs(effect) < (MIN_CHANGE[category] if min_change is None else min_change):
        codes.append("weak_effect")
    elif np.sign(effect) != want:
        codes.append("reversed_effect")
    return codes


# --------------------------------------------------------------------------------------------
def write_label_checks(out_dir: Path, rows: list[dict]) -> Counter:
    """Write ``DIR/label_checks.csv`` from the rows of the render's part files
    (:func:`generation.render_files.part_rows`); returns warning-code counts."""
    from . import audio as aio

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(LABEL_CHECK_COLUMNS)
    counts: Counter = Counter()
    for r in rows:
        codes = r.get("label_warnings", "")
        counts.update(c for c in codes.split(";") if c)
        eff = r.get("effect_measured")
        w.writerow([r["clip_id"], r["category"], r["tier"], r["trajectory"], r["direction"], r["source_id"],
                    "" if eff is None else f"{eff:.6g}", r.get("effect_unit", ""), codes])
    aio.write_if_changed(RenderDir(out_dir).label_checks_path, buf.getvalue().encode())
    return counts


def load_label_checks(render_dir) -> list[dict]:
    """Rows of ``label_checks.csv`` (empty list when the render predates it)."""
    path = RenderDir(render_dir).label_checks_path
    if not path.exists():
        return []
    return read_render_csv(path, LABEL_CHECK_COLUMNS)


def label_warning_summary(render_dir) -> dict:
    """For the report and the dataset card: what was flagged, per category and code.

    Returns
    -------
    dict
        ``n_clips``, ``n_flagged``, ``by_code`` {code: n}, ``by_category`` {category: {code: n}},
        ``clips`` [clip ids with at least one warning], ``median_effect`` {category: {direction: x}}.
    """
    rows = load_label_checks(render_dir)
    by_code: Counter = Counter()
    by_cat: dict = {}
    flagged = []
    effects: dict = {}
    for r in rows:
        codes = [c for c in r["label_warnings"].split(";") if c]
        if codes:
            flagged.append(r["clip_id"])
        by_code.update(codes)
        by_cat.setdefault(r["category"], Counter()).update(codes)
        if r["effect_measured"]:
            effects.setdefault(r["category"], {}).setdefault(r["direction"], []).append(float(r["effect_measured"]))
    return {
        "n_clips": len(rows), "n_flagged": len(flagged), "by_code": dict(by_code),
        "by_category": {c: dict(v) for c, v in sorted(by_cat.items()) if v}, "clips": flagged,
        "median_effect": {c: {d: float(np.median(v)) for d, v in sorted(ds.items())} for c, ds in sorted(effects.items())},
    }


def label_warnings_markdown(render_dir, *, max_clips: int = 20) -> str:
    """A short markdown section (counts per category and code, first flagged clips) for report/card.

    Empty string when the render has no ``label_checks.csv``.
    """
    info = label_warning_summary(render_dir)
    if not info["n_clips"]:
        return ""
    lines = ["", "## Label validity", "",
             f"{info['n_flagged']} of {info['n_clips']} clips carry a label warning "
             f"(measured effect and codes per clip in `{LABEL_CHECKS_FILE}`; see docs/render.md).", ""]
    codes = sorted(info["by_code"])
    if codes:
        lines += ["| category | " + " | ".join(codes) + " |", "|---|" + "---|" * len(codes)]
        for cat, cnt in info["by_category"].items():
            lines.append(f"| {cat} | " + " | ".join(str(cnt.get(c, 0)) for c in codes) + " |")
        shown = info["clips"][:max_clips]
        lines += ["", "Flagged clips" + (f" (first {max_clips})" if len(info["clips"]) > max_clips else "")
                  + ": " + ", ".join(f"`{c}`" for c in shown)]
    return "\n".join(lines) + "\n"
