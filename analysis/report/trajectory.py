"""Accuracy by trajectory as in the paper's Table 5.

Models: accuracy of every (category, trajectory) cell over all its clips (unparsed, ambiguous and
error answers are wrong), then the unweighted mean over the categories. Humans (records with an
``annotator`` key, from ``vocalgrad listen`` answers files): each annotator's accuracy per
(category, trajectory), the annotators averaged per cell, then the categories averaged equally.
"""

from __future__ import annotations

import math
from typing import Any

import vocalgrad

__all__ = ["TABLE5_ORDER", "trajectory_accuracy", "trajectory_markdown"]

#: Column order of the paper's table.
TABLE5_ORDER: tuple[str, ...] = ("jump", "linear", "quad_first_flat", "quad_last_flat")


def _acc(recs) -> float:
    return sum(bool(r["correct"]) for r in recs) / len(recs) if recs else math.nan


def trajectory_accuracy(records) -> dict[str, float]:
    """Trajectory -> accuracy by the rule above (annotators averaged first when present)."""
    cells: dict[tuple[str, str], dict[Any, list]] = {}
    for r in records:
        cells.setdefault((r["category"], r["trajectory"]), {}).setdefault(r.get("annotator"), []).append(r)
    out = {}
    for traj in TABLE5_ORDER:
        per_cat = []
        for cat in vocalgrad.CATEGORY_NAMES:
            by_ann = cells.get((cat, traj))
            if by_ann:
                per_cat.append(sum(_acc(v) for v in by_ann.values()) / len(by_ann))
        out[traj] = sum(per_cat) / len(per_cat) if per_cat else math.nan
    return out


def trajectory_markdown(rows: dict[str, dict[str, float]], paper: dict[str, dict[str, float]]) -> list[str]:
    """The Table 5 section: one row per model (and human), then the paper's rows."""
    def pct(v):
        return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.2f}"

    lines = ["## Accuracy by trajectory (paper Table 5 layout)", "",
             "Per (category, trajectory) accuracy over all clips (unparsed, ambiguous and error answers are "
             "wrong), then the nine categories averaged equally; for humans each annotator's accuracy per "
             "(category, trajectory) is computed first and the annotators are averaged.", ""]
    head = ["system", *TABLE5_ORDER]
    body = [[label, *(pct(row.get(t)) for t in TABLE5_ORDER)] for label, row in rows.items()]
    body += [[f"{name} (paper)", *(f"{row[t]:.2f}" for t in TABLE5_ORDER)] for name, row in paper.items()]
    lines += ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return lines + [""]
