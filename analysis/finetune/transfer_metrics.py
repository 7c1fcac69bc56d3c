"""Scores of the multiple-choice transfer task (paper Table 22; benchmark.md §11). Torch-free.

Prediction = argmax over the option-letter logits, ties to the first option. Per class:
precision, recall, F1 with ``zero_division = 0`` (a class never predicted has precision 0, a class
absent from the gold labels has recall 0); macro = unweighted mean over the classes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["argmax_first", "classification_scores"]


def argmax_first(scores) -> np.ndarray:
    """Row-wise argmax; ties go to the first (lowest-index) option.

    Parameters
    ----------
    scores : array-like [shape=(n, n_options)]
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] == 0:
        raise ValueError(f"scores must have shape (n, n_options), got {s.shape}")
    return np.argmax(s, axis=1)        # numpy returns the first maximum


def classification_scores(gold, pred, classes) -> dict:
    """Per-class precision / recall / F1 / support, their unweighted means, and accuracy.

    Parameters
    ----------
    gold, pred : sequence of str
        Gold and predicted class names, same length.
    classes : sequence of str
        Every class, in report order.

    Returns
    -------
    dict
        ``per_class`` (name -> precision, recall, f1, support, predicted), ``macro_precision``,
        ``macro_recall``, ``macro_f1``, ``accuracy``, ``n``.
    """
    gold, pred, classes = list(gold), list(pred), list(classes)
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    unknown = sorted(set(gold) - set(classes))
    if unknown:
        raise ValueError(f"gold labels {unknown} are not among the classes {classes}")
    per = {}
    for c in classes:
        tp = sum(g == c and p == c for g, p in zip(gold, pred))
        n_pred = sum(p == c for p in pred)
        n_gold = sum(g == c for g in gold)
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per[c] = {"precision": prec, "recall": rec, "f1": f1, "support": n_gold, "predicted": n_pred}
    k = len(classes)
    return {
        "per_class": per,
        "macro_precision": sum(v["precision"] for v in per.values()) / k,
        "macro_recall": sum(v["recall"] for v in per.values()) / k,
        "macro_f1": sum(v["f1"] for v in per.values()) / k,
        "accuracy": sum(g == p for g, p in zip(gold, pred)) / len(gold) if gold else 0.0,
        "n": len(gold),
    }
