"""Metrics of the formats with their own labels (yes/no, ternary; docs/variants.md).

Macro-F1 over the format's labels, the per-label F1, the prediction distribution and a stratified
bootstrap interval, all from a confusion table of gold label x predicted label (plus one column,
:data:`UNPARSED`, for answers that did not parse). Records are the record codes of
:func:`harness_tasks.metrics.record_code` with the gold *label* in place of the direction.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .metrics import div_or_nan, percentile_interval, parse_record_code
from .variants import FORMAT_LABELS

__all__ = ["UNPARSED", "bootstrap_ci_labels", "confusion", "f1_per_label", "label_metric", "macro_f1",
           "prediction_distribution", "summarize_labels"]

# --------------------------------------------------------------------------------------------
#: Column of the confusion table that holds unparsed answers (no match, ambiguous, error).
UNPARSED = "unparsed"


def _labels(labels: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(labels, str):
        try:
            return FORMAT_LABELS[labels]
        except KeyError:
            raise ValueError(f"unknown format {labels!r}; choose from {', '.join(FORMAT_LABELS)}") from None
    return tuple(labels)


def confusion(records: Iterable[Mapping[str, Any] | str], labels: str | Sequence[str]) -> np.ndarray:
    """Count table gold label x predicted label, with a last column for unparsed answers.

    Parameters
    ----------
    records : iterable
        Record codes (:func:`record_code`, gold label in place of the direction) or mappings with
        ``direction`` (gold label), ``pred`` and ``status``.
    labels : str or sequence of str
        A format name of :data:`FORMAT_LABELS` or the labels themselves.

    Returns
    -------
    numpy.ndarray
        Shape ``(len(labels), len(labels) + 1)``.
    """
    labels = _labels(labels)
    index = {lab: i for i, lab in enumerate(labels)}
    table = np.zeros((len(labels), len(labels) + 1), dtype=np.int64)
    for rec in records:
        if isinstance(rec, str):
            rec = parse_record_code(rec)
        gold = rec.get("direction")
        if gold not in index:
            raise ValueError(f"record gold label {gold!r} is not one of {labels}")
        pred = rec.get("pred") if rec.get("status") == "parsed" else None
        if pred is not None and pred not in index:
            raise ValueError(f"record prediction {pred!r} is not one of {labels}")
        table[index[gold], len(labels) if pred is None else index[pred]] += 1
    return table


def _f1_from_confusion(table: np.ndarray) -> np.ndarray:
    """Per-label F1 (last axis) of confusion tables (any leading batch shape)."""
    k = table.shape[-2]
    tp = np.diagonal(table[..., :k], axis1=-2, axis2=-1)
    gold = table.sum(axis=-1)                 # row sums include unparsed (= false negatives)
    pred = table[..., :k].sum(axis=-2)        # column sums over gold labels
    return div_or_nan(2 * tp, gold + pred)


def f1_per_label(records, labels) -> dict[str, float]:
    """F1 of each label; unparsed answers are false negatives of their gold label."""
    labels = _labels(labels)
    f1 = _f1_from_confusion(confusion(records, labels))
    return {lab: float(v) for lab, v in zip(labels, f1)}


def _macro_f1(table: np.ndarray) -> np.ndarray:
    f1 = _f1_from_confusion(table)
    with np.errstate(invalid="ignore"):
        ok = ~np.isnan(f1)
        return div_or_nan(np.where(ok, f1, 0.0).sum(axis=-1), ok.sum(axis=-1))


def macro_f1(records, labels) -> float:
    """Unweighted mean F1 over the labels (unparsed = wrong).

    A label that is neither gold nor predicted anywhere has no F1 and is left out of the mean;
    ``nan`` for no records.
    """
    return float(_macro_f1(confusion(records, labels)))


def prediction_distribution(records, labels) -> dict[str, dict[str, float]]:
    """Share of each answer (every label and ``unparsed``) per gold label, plus an ``all`` row.

    The ternary table of the paper (paper: Table 17) is this with the labels increase,
    decrease and constant. Rows with no records are ``nan``.
    """
    labels = _labels(labels)
    table = confusion(records, labels)
    cols = (*labels, UNPARSED)
    rows = {lab: table[i] for i, lab in enumerate(labels)}
    rows["all"] = table.sum(axis=0)
    return {name: {c: float(v) for c, v in zip(cols, div_or_nan(row, np.full(row.shape, row.sum())))}
            for name, row in rows.items()}


def summarize_labels(records, labels) -> dict[str, float]:
    """Metrics of a labelled format: ``acc``, ``macro_f1``, ``f1_<label>``, ``unparsed_rate``,
    ``pred_<label>`` / ``pred_unparsed`` (shares of all answers) and ``n``."""
    labels = _labels(labels)
    table = confusion(list(records), labels)
    n = int(table.sum())
    k = len(labels)
    out: dict[str, float] = {
        "acc": float(div_or_nan(np.trace(table[:, :k]), n)),
        "macro_f1": float(_macro_f1(table)),
        "unparsed_rate": float(div_or_nan(table[:, k].sum(), n)),
    }
    out.update({f"f1_{lab}": float(v) for lab, v in zip(labels, _f1_from_confusion(table))})
    shares = div_or_nan(table.sum(axis=0), np.full(k + 1, n))
    out.update({f"pred_{c}": float(v) for c, v in zip((*labels, UNPARSED), shares)})
    out["n"] = n
    return out


def label_metric(name: str, labels, records) -> float:
    """One metric of :func:`summarize_labels` (what the lm-eval aggregations call)."""
    summary = summarize_labels(records, labels)
    try:
        return summary[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(summary)}") from None


def bootstrap_ci_labels(records, labels, metric: str = "macro_f1", *, draws: int = 10_000, seed: int = 1234,
                        level: float = 0.95, macro_by: str | None = None) -> tuple[float, float]:
    """Percentile bootstrap interval of ``macro_f1`` or ``acc`` of a labelled format.

    Clips are resampled (multinomial on the confusion table). With ``macro_by`` (``"category"``)
    each category is resampled on its own and every draw averages the categories' values (the
    format's overall figure, :data:`OVERALL_RULE`).
    """
    if metric not in ("macro_f1", "acc"):
        raise ValueError(f"bootstrap_ci_labels supports 'macro_f1' and 'acc', got {metric!r}")
    labels = _labels(labels)
    records = list(records)
    if not records:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    groups: dict[Any, list] = {}
    for rec in records:
        groups.setdefault(rec[macro_by] if macro_by else None, []).append(rec)
    k = len(labels)
    per = []
    for key in sorted(groups, key=str):  # sorted: the draws do not depend on record order
        t = confusion(groups[key], labels)
        n = int(t.sum())
        sims = rng.multinomial(n, (t / n).ravel(), size=draws).reshape(draws, *t.shape)
        if metric == "macro_f1":
            per.append(_macro_f1(sims))
        else:
            per.append(np.trace(sims[..., :k], axis1=-2, axis2=-1) / n)
    return percentile_interval(np.mean(np.stack(per, axis=-1), axis=-1), level)
