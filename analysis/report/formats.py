"""The yes/no and ternary formats in the report: macro-F1, accuracy, prediction distribution.

Every number comes from :mod:`harness_tasks.metrics` (``summarize_labels``, whose ``macro_f1``
is :func:`~harness_tasks.label_metrics.macro_f1`, and ``prediction_distribution``), the functions the
lm-eval tasks aggregate with; this module only
groups the records and lays out the tables. Values are fractions; ``nan`` when undefined.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import vocalgrad
from harness_tasks.label_metrics import UNPARSED, bootstrap_ci_labels, prediction_distribution, summarize_labels
from harness_tasks.variants import FORMAT_LABELS

from .loading import FormatEvaluation

__all__ = ["analyse_format", "analyse_formats", "formats_markdown"]

#: Section titles of the formats, in report order.
TITLES = {"yesno": "Yes/no (`vocalgrad_yesno`)", "ternary": "Ternary (`vocalgrad_ternary`)"}


def _mean(vals) -> float:
    vals = [v for v in vals if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def analyse_format(ev: FormatEvaluation, *, draws: int = 10_000, seed: int = 1234) -> dict[str, Any]:
    """Numbers of one model on one format.

    Returns
    -------
    dict
        ``by_category``: category -> :func:`~harness_tasks.label_metrics.summarize_labels` (from the
        sample log; without one, lm-eval's per-task metrics). ``overall``: ``mean_acc`` and
        ``mean_macro_f1`` (unweighted over categories, lm-eval's group score) and, with a sample
        log, the metrics of all clips pooled (``acc``, ``macro_f1``, ``n``, ...).
        ``distribution``: gold label (and ``all``) -> share of each answer, pooled over
        categories, with ``gold_counts``; ``distribution_by_category`` per category.
    """
    labels = FORMAT_LABELS[ev.fmt]
    out: dict[str, Any] = {
        "label": ev.label, "model": ev.model, "model_args": ev.model_args, "format": ev.fmt,
        "labels": list(labels), "categories": ev.categories, "has_samples": ev.has_samples,
        "files": [str(p) for p in ev.files], "warnings": list(ev.warnings),
    }
    if not ev.has_samples:
        out["by_category"] = {c: dict(ev.task_metrics[c], n=ev.n_samples.get(c)) for c in ev.categories}
    else:
        by_cat: dict[str, list] = {}
        for r in ev.records:
            by_cat.setdefault(r["category"], []).append(r)
        out["by_category"] = {c: summarize_labels(by_cat[c], labels) for c in ev.categories if c in by_cat}
        out["distribution_by_category"] = {c: prediction_distribution(by_cat[c], labels)
                                           for c in out["by_category"]}
        for c, g in out["by_category"].items():  # 95 % percentile bootstrap of macro-F1 (clips resampled)
            g["macro_f1_ci"] = list(bootstrap_ci_labels(by_cat[c], labels, draws=draws, seed=seed))
    groups = out["by_category"].values()
    overall: dict[str, Any] = {"mean_acc": _mean([g.get("acc", math.nan) for g in groups]),
                               "mean_macro_f1": _mean([g.get("macro_f1", math.nan) for g in groups])}
    if ev.has_samples:
        overall.update(summarize_labels(ev.records, labels))
        overall["mean_macro_f1_ci"] = list(bootstrap_ci_labels(ev.records, labels, draws=draws, seed=seed,
                                                               macro_by="category"))
        out["distribution"] = prediction_distribution(ev.records, labels)
        gold = Counter(r["direction"] for r in ev.records)
        out["gold_counts"] = {**{lab: gold.get(lab, 0) for lab in labels}, "all": len(ev.records)}
    out["overall"] = overall
    return out


def analyse_formats(evaluations: list[FormatEvaluation], *, draws: int = 10_000,
                    seed: int = 1234) -> dict[str, list[dict[str, Any]]]:
    """Format -> one :func:`analyse_format` entry per model (input order), formats in report order."""
    out: dict[str, list] = {}
    for fmt in TITLES:
        entries = [analyse_format(ev, draws=draws, seed=seed) for ev in evaluations if ev.fmt == fmt]
        if entries:
            out[fmt] = entries
    return out


def _pct(v) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def _ci(pair) -> str:
    if not pair or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in pair):
        return "–"
    return f"[{100 * pair[0]:.1f}, {100 * pair[1]:.1f}]"


def _table(head: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows] + [""]


def formats_markdown(formats: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Lines of the report section on the yes/no and ternary formats (empty when there are none)."""
    if not formats:
        return []
    lines = ["## Yes/no and ternary formats", "",
             "Each category adds its unmodified source clips (gold *no* / *constant*) to its clips, so the "
             "classes are unbalanced: **macro-F1** is the unweighted mean of the per-label F1 (unparsed "
             "answers count as wrong). *mean* = unweighted mean over categories (lm-eval's group score); "
             "*pooled* = all clips together. Intervals: 95 % percentile bootstrap of macro-F1 (clips resampled; for "
             "the mean, each category on its own and the categories averaged in every draw).", ""]
    for fmt, entries in formats.items():
        cats = [c for c in vocalgrad.CATEGORY_NAMES if any(c in e["by_category"] for e in entries)]
        lines += [f"### {TITLES[fmt]}", ""]
        rows = []
        for e in entries:
            ov = e["overall"]
            for key, name in (("macro_f1", "macro-F1 %"), ("acc", "acc %")):
                cells = [_pct(e["by_category"].get(c, {}).get(key)) for c in cats]
                rows.append([e["label"], name, *cells, _pct(ov[f"mean_{key}"]), _pct(ov.get(key))])
            if e["has_samples"]:
                rows.append([e["label"], "macro-F1 95 % CI", *(_ci(e["by_category"].get(c, {}).get("macro_f1_ci"))
                                                               for c in cats),
                             _ci(ov.get("mean_macro_f1_ci")), ""])
        lines += _table(["model", "metric", *cats, "mean", "pooled"], rows)
        no_log = [e["label"] for e in entries if not e["has_samples"]]
        if no_log:
            lines += [f"No sample log (`--log_samples`) for {', '.join(no_log)}: lm-eval's per-category "
                      "numbers only, no pooled column or prediction distribution.", ""]
        if fmt == "ternary" and any(e["has_samples"] for e in entries):
            labels = FORMAT_LABELS[fmt]
            lines += ["#### Ternary prediction distribution", "",
                      "Share of each answer per gold label, all categories pooled (the paper's "
                      "prediction-distribution table); rows sum to 100 %.", ""]
            rows = []
            for e in entries:
                if not e["has_samples"]:
                    continue
                for gold in (*labels, "all"):
                    dist = e["distribution"][gold]
                    rows.append([e["label"], gold, e["gold_counts"][gold],
                                 *(_pct(dist[c]) for c in (*labels, UNPARSED))])
            lines += _table(["model", "gold", "clips", *(f"{c} %" for c in (*labels, UNPARSED))], rows)
    return lines
