"""Sweep levels as heard: what each level's clips realised, and the confounds that came with them.

A sweep level declares a magnitude; the render measures what each clip realised on the clip as
heard (``magnitude_realised``, after clipping at the 16-bit limits; ``clipped_ratio``: the share of
samples at the limits; ``level_change_db``: the change of overall level that came with the
transform; docs/sweep.md). Per attribute and declared level this module gives:

* **the level heard**: the median ``magnitude_realised`` of the level's *jump* clips, the only
  trajectory whose first and last eighths (where the realised change is read) hold the schedule's
  ends, so that it realises its declared magnitude when nothing interferes (the others realise less
  by their shape: a linear volume clip about 0.89 of it). Only where the realised unit is the
  declared one (the sweep's own unit, or the paired measure's when it names it: ``dB gain`` for dB).
  The fit uses the level heard where it differs from the declared magnitude by more than
  :data:`REALISED_TOLERANCE` (relative), and the declared magnitude elsewhere;
* **confounds**: the share of the level's clips that clipped (any sample at the limits) and, for
  attributes other than the level itself, the share whose overall level changed by more than
  :data:`LEVEL_CHANGE_DB` (an observer may answer by loudness, not by the attribute).
"""

from __future__ import annotations

import math
from statistics import median

__all__ = ["HOLDS_ENDS", "LEVEL_ATTRIBUTES", "LEVEL_CHANGE_DB", "REALISED_TOLERANCE", "level_rows", "levels_note",
           "same_unit"]

#: Relative difference between the level heard and the declared one beyond which the fit uses the level heard:
#: twice the largest departure measured on unclipped jump clips (volume, distortion; demo voices: 1 %).
REALISED_TOLERANCE = 0.02
#: A change of overall level (dB, |level_change_db|) that a listener may hear (about the level's just-noticeable
#: difference).
LEVEL_CHANGE_DB = 1.0
#: The trajectory whose first and last eighths hold the schedule's ends (:func:`generation.trajectory.g`).
HOLDS_ENDS = "jump"
#: Attributes whose change *is* a change of level (their level change is no confound).
LEVEL_ATTRIBUTES = ("volume",)


def same_unit(realised_unit, magnitude_unit) -> bool:
    """Whether ``magnitude_realised`` is in the declared unit (the same, or the declared one qualified:
    ``"dB gain"`` for ``"dB"``, ``"semitones (log-spectrum shift)"`` for ``"semitones"``)."""
    if not realised_unit or not magnitude_unit:
        return False
    return realised_unit == magnitude_unit or realised_unit.startswith(magnitude_unit + " ")


def _number(v) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def level_rows(records, category: str, magnitude_of) -> dict[float, dict]:
    """Per declared magnitude (> 0) of ``records`` (every observer's, each clip once by its ``id``; null levels
    and clips of unknown magnitude left out): ``clips``; ``clipped`` of ``clipped_of`` clips that say, and
    ``clipped_share`` (None when none says); ``level_changed`` of ``level_changed_of`` and
    ``level_changed_share`` (None for a level attribute or when no clip says);
    ``realised`` (the level heard, None when it cannot be measured), ``realised_clips`` and ``fit_magnitude``
    (what the fit uses)."""
    clips: dict[float, dict] = {}
    for r in records:
        tier = r.get("tier")
        m = magnitude_of(category, tier) if isinstance(tier, str) else None
        if m is None or not m > 0 or r.get("level_null") is True:
            continue
        key = r.get("id") or (r.get("source_id"), r.get("trajectory"), tier, r.get("direction"))
        clips.setdefault(float(m), {}).setdefault(key, r)
    out = {}
    for m, by_id in sorted(clips.items()):
        recs = list(by_id.values())
        ratios = [_number(r.get("clipped_ratio")) for r in recs]
        known = [c for c in ratios if c is not None]
        clipped = sum(c > 0 for c in known)
        changes = [] if category in LEVEL_ATTRIBUTES else \
            [c for c in (_number(r.get("level_change_db")) for r in recs) if c is not None]
        changed = sum(abs(c) > LEVEL_CHANGE_DB for c in changes)
        heard = [v for r in recs if r.get("trajectory") == HOLDS_ENDS
                 and same_unit(r.get("realised_unit"), r.get("magnitude_unit"))
                 and (v := _number(r.get("magnitude_realised"))) is not None]
        realised = median(heard) if heard else None
        use = realised is not None and realised > 0 and abs(realised - m) > REALISED_TOLERANCE * m
        out[m] = {"clips": len(recs), "clipped": clipped, "clipped_of": len(known),
                  "clipped_share": clipped / len(known) if known else None,
                  "level_changed": changed, "level_changed_of": len(changes),
                  "level_changed_share": changed / len(changes) if changes else None,
                  "realised": realised, "realised_clips": len(heard), "fit_magnitude": realised if use else m}
    return out


def levels_note(rows: dict, unit: str) -> str:
    """One paragraph for the threshold table: the levels whose clips clipped or changed level (share of their
    clips), and the levels the fit took as heard; "" when there is nothing to say."""
    def where(key):
        return ", ".join(f"{m:g} ({100 * r[key + '_share']:.0f} % of {r[key + '_of']})" for m, r in rows.items()
                         if r[key + "_share"])

    parts = []
    if clipped := where("clipped"):
        parts.append(f"clips that clipped (samples at the 16-bit limits), per level in {unit}: {clipped}")
    if changed := where("level_changed"):
        parts.append(f"clips whose overall level changed by more than {LEVEL_CHANGE_DB:g} dB (an observer may "
                     f"answer by loudness): {changed}")
    heard = [f"{m:g} as {r['fit_magnitude']:.3g}" for m, r in rows.items() if r["fit_magnitude"] != m]
    if heard:
        parts.append(f"the fit uses the level heard (median realised on the {HOLDS_ENDS} clips; it differs from the "
                     f"declared one by more than {100 * REALISED_TOLERANCE:g} %) at {', '.join(heard)}")
    return ("Levels as heard: " + "; ".join(parts) + ".") if parts else ""
