"""The paper's appendix analyses in the report: cross-attribute heat maps, source-clip bias, paraphrases.

Reads the lm-eval outputs of three task groups (docs/variants.md) from the same folders as the
rest of the report:

``vocalgrad_xattr_<actual>_<prompt>``
    clips of one category asked about another (paper Figure 8): accuracy (gold = the clip's own
    direction, all clips) and increase ratio (parsed answers) per (actual, prompt) cell.
``vocalgrad_sources_<category>``
    the binary question on the unmodified source clips (paper Table 8): increase ratio among
    parsed answers and unparsed rate per category.
``vocalgrad_paraphrase_<pattern>``
    the paper's six question paraphrases (paper Table 13): accuracy and increase ratio per pattern.

Overall figures follow :data:`harness_tasks.metrics.OVERALL_RULE` (unweighted means over the
cells / categories / patterns). Every metric is computed by :mod:`harness_tasks.metrics`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import vocalgrad
from harness_tasks import prompts
from harness_tasks.metrics import summarize
from harness_tasks.source_bias import source_bias
from harness_tasks.models.thinking import answer_text
from harness_tasks.parsing import classify_answer

from .loading import (RESULTS_FILE, ResultsError, args_text, logged_samples, model_label, read_json, read_samples,
                      results_files, samples_file, split_spec)

__all__ = ["ExtraRun", "analyse_extras", "extras_markdown", "load_extras", "parse_extra_task", "plot_xattr"]

_CATS = "|".join(vocalgrad.CATEGORY_NAMES)
_PATTERNS = "|".join(prompts.PARAPHRASES)
_EXTRA = {
    "xattr": re.compile(rf"^vocalgrad_xattr_({_CATS})_({_CATS})$"),
    "sources": re.compile(rf"^vocalgrad_sources_({_CATS})$"),
    "paraphrase": re.compile(rf"^vocalgrad_paraphrase_({_PATTERNS})$"),
}
TITLES = {
    "xattr": "Cross-attribute evaluation (`vocalgrad_xattr`, paper Figure 8)",
    "sources": "Response bias on the unmodified source clips (`vocalgrad_sources`, paper Table 8)",
    "paraphrase": "Question paraphrases (`vocalgrad_paraphrase`, paper Table 13)",
}


def parse_extra_task(name: str) -> tuple[str, dict[str, str]] | None:
    """``(kind, fields)`` of an xattr / sources / paraphrase task name, else ``None``.

    >>> parse_extra_task("vocalgrad_xattr_echo_volume")
    ('xattr', {'actual': 'echo', 'prompt_category': 'volume'})
    >>> parse_extra_task("vocalgrad_paraphrase_tone_rise_fall")
    ('paraphrase', {'pattern': 'tone_rise_fall', 'category': 'pitch'})
    """
    for kind, pattern in _EXTRA.items():
        m = pattern.match(name)
        if m is None:
            continue
        if kind == "xattr":
            return kind, {"actual": m.group(1), "prompt_category": m.group(2)}
        if kind == "sources":
            return kind, {"category": m.group(1)}
        return kind, {"pattern": m.group(1), "category": prompts.PARAPHRASES[m.group(1)][0]}
    return None


@dataclass
class ExtraRun:
    """One model on one of the three groups: per-sample records with the task's fields added."""

    label: str
    model: str
    model_args: str
    kind: str
    records: list[dict[str, Any]] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _read_source_samples(path: Path, category: str) -> list[dict[str, Any]]:
    out = []
    for lineno, _, doc, raw, logged in logged_samples(path, "increase_ratio"):
        if logged is not None:
            pred, status = logged["pred"], logged["status"]
        else:
            pred, status = classify_answer(answer_text(raw))
        out.append({"id": doc.get("id") or f"{category}#{lineno}", "category": category,
                    "source_id": doc.get("source_id"), "raw": raw, "pred": pred, "status": status})
    return out


def load_extras(specs) -> dict[str, list[ExtraRun]]:
    """Kind -> one :class:`ExtraRun` per model found (empty dict when none of these tasks ran).

    ``specs`` as in :func:`analysis.report.loading.load_all` (``LABEL=PATH`` allowed); a later
    results file replaces an earlier one's task. A task without its sample log is skipped with a
    warning (these analyses need the per-clip answers).
    """
    runs: dict[tuple[str, str], ExtraRun] = {}
    stamps: dict[tuple[str, str, str], str] = {}
    for spec in specs:
        label_override, path = split_spec(spec)
        try:
            files = results_files(path)
        except ResultsError:
            continue
        files.sort(key=lambda p: RESULTS_FILE.match(p.name).group(1))
        for rfile in files:
            data = read_json(rfile)
            cfg = data.get("config") or {}
            model = str(cfg.get("model") or data.get("model_name") or "model")
            margs = args_text(cfg.get("model_args"))
            label = label_override or model_label(model, margs)
            stamp = RESULTS_FILE.match(rfile.name).group(1)
            for task in data["results"]:
                parsed = parse_extra_task(task)
                if parsed is None:
                    continue
                kind, fields = parsed
                run = runs.setdefault((label, kind), ExtraRun(label, model, margs, kind))
                sfile = samples_file(rfile, task)
                if not sfile.is_file():
                    run.warnings.append(f"{task}: no sample log {sfile.name}; run with --log_samples")
                    continue
                if (label, kind, task) in stamps:
                    run.warnings.append(f"{task}: results of {stamp} replace those of {stamps[(label, kind, task)]}")
                    run.records = [r for r in run.records if r["task"] != task]
                stamps[(label, kind, task)] = stamp
                if kind == "sources":
                    recs = _read_source_samples(sfile, fields["category"])
                else:
                    recs = read_samples(sfile, fields.get("actual") or fields["category"])
                for r in recs:
                    r.update(fields, task=task)
                run.records.extend(recs)
                run.files += [rfile, sfile]
    out: dict[str, list[ExtraRun]] = {}
    for (_, kind), run in runs.items():
        out.setdefault(kind, []).append(run)
    return out


def _mean(vals) -> float:
    vals = list(vals)
    return float(sum(vals) / len(vals)) if vals and not any(math.isnan(v) for v in vals) else math.nan


def _xattr(run: ExtraRun) -> dict[str, Any]:
    cells: dict[tuple[str, str], list] = {}
    for r in run.records:
        cells.setdefault((r["actual"], r["prompt_category"]), []).append(r)
    actual = [c for c in vocalgrad.CATEGORY_NAMES if any(a == c for a, _ in cells)]
    prompt = [c for c in vocalgrad.CATEGORY_NAMES if any(p == c for _, p in cells)]
    acc = {a: {} for a in actual}
    inc = {a: {} for a in actual}
    n = {a: {} for a in actual}
    for (a, p), recs in cells.items():
        s = summarize(recs)
        acc[a][p], inc[a][p], n[a][p] = s["acc"], s["increase_ratio"], s["n"]
    diag = [acc[a][a] for a in actual if a in acc[a]]
    off = [acc[a][p] for a in actual for p in acc[a] if p != a]
    return {"label": run.label, "actual": actual, "prompt": prompt, "acc": acc, "increase_ratio": inc, "n": n,
            "diagonal_acc": _mean(diag), "off_diagonal_acc": _mean(off), "n_cells": len(cells),
            "warnings": run.warnings}


def _sources(run: ExtraRun) -> dict[str, Any]:
    by_cat = {}
    for c in vocalgrad.CATEGORY_NAMES:
        recs = [r for r in run.records if r["category"] == c]
        if recs:
            by_cat[c] = source_bias(recs)
    overall = {"increase_ratio": _mean(g["increase_ratio"] for g in by_cat.values()),
               "unparsed_rate": _mean(g["unparsed_rate"] for g in by_cat.values()),
               "n": sum(g["n"] for g in by_cat.values())}
    return {"label": run.label, "by_category": by_cat, "overall": overall, "warnings": run.warnings}


def _paraphrase(run: ExtraRun) -> dict[str, Any]:
    by_pattern = {}
    for p in prompts.PARAPHRASES:
        recs = [r for r in run.records if r["pattern"] == p]
        if recs:
            s = summarize(recs)
            by_pattern[p] = {"category": prompts.PARAPHRASES[p][0], "acc": s["acc"],
                             "increase_ratio": s["increase_ratio"], "unparsed_rate": s["unparsed_rate"],
                             "n": s["n"]}
    overall = {"acc": _mean(g["acc"] for g in by_pattern.values()),
               "increase_ratio": _mean(g["increase_ratio"] for g in by_pattern.values())}
    return {"label": run.label, "by_pattern": by_pattern, "overall": overall, "warnings": run.warnings}


def analyse_extras(extras: dict[str, list[ExtraRun]]) -> dict[str, list[dict[str, Any]]]:
    """Kind -> one analysed entry per model (what ``report.json`` holds under ``extras``)."""
    fns = {"xattr": _xattr, "sources": _sources, "paraphrase": _paraphrase}
    return {kind: [fns[kind](run) for run in runs if run.records] for kind, runs in extras.items()
            if any(run.records for run in runs)}


def _pct(v) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def _table(head, rows) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows] + [""]


def extras_markdown(extras: dict[str, list[dict[str, Any]]], plots: dict[str, str] | None = None) -> list[str]:
    """Report sections of the three analyses (empty when none ran)."""
    plots = plots or {}
    lines: list[str] = []
    if extras.get("xattr"):
        lines += [f"## {TITLES['xattr']}", "",
                  "Clips of the *actual* category (rows), prompt about the *prompt* category (columns); the gold "
                  "label is the clip's own direction. A model that answers about the attribute it was asked should "
                  "be accurate on the diagonal and at 50 % off it (the prompt's attribute does not change). "
                  "Accuracy counts every clip (unparsed = wrong); increase ratio over parsed answers.", ""]
        for e in extras["xattr"]:
            lines += [f"### {e['label']}", "",
                      f"Diagonal mean accuracy {_pct(e['diagonal_acc'])} %, off-diagonal mean "
                      f"{_pct(e['off_diagonal_acc'])} % ({e['n_cells']} cells).", ""]
            if e["label"] in plots.get("xattr", {}):
                lines += [f"![cross-attribute {e['label']}]({plots['xattr'][e['label']]})", ""]
            for key, name in (("acc", "accuracy %"), ("increase_ratio", "increase ratio %")):
                rows = [[f"**{a}**", *(_pct(e[key][a].get(p)) for p in e["prompt"])] for a in e["actual"]]
                lines += [f"{name} (rows: actual, columns: prompt)", ""]
                lines += _table(["actual \\ prompt", *e["prompt"]], rows)
    if extras.get("sources"):
        entries = extras["sources"]
        cats = [c for c in vocalgrad.CATEGORY_NAMES if any(c in e["by_category"] for e in entries)]
        lines += [f"## {TITLES['sources']}", "",
                  "The binary question on the unmodified source clips (nothing changes, so there is no right "
                  "answer): share of *increase* among parsed answers (50 % = no bias) and share of unparsed "
                  "answers. *avg* = unweighted mean over categories.", ""]
        rows = []
        for e in entries:
            for key, name in (("increase_ratio", "increase ratio %"), ("unparsed_rate", "unparsed %")):
                rows.append([e["label"], name, *(_pct(e["by_category"].get(c, {}).get(key)) for c in cats),
                             _pct(e["overall"][key])])
        lines += _table(["model", "metric", *cats, "avg"], rows)
        lines += ["Source clips per category: " + ", ".join(
            f"{e['label']} {e['by_category'][cats[0]]['n']}" for e in entries if cats and cats[0] in e["by_category"]),
            ""]
    if extras.get("paraphrase"):
        entries = extras["paraphrase"]
        lines += [f"## {TITLES['paraphrase']}", "",
                  f"The paper's six paraphrased questions, parsed with the synonym vocabulary "
                  f"(`{prompts.SYNONYM_PARSER}`: exactly one direction among "
                  f"{sum(len(w) for w in prompts.SYNONYM_WORDS.values())} words and inflections). Accuracy "
                  "over all clips (unparsed = wrong); increase ratio over parsed answers.", ""]
        head = ["category", "pattern", "question"]
        for e in entries:
            head += [f"{e['label']} acc %", f"{e['label']} increase ratio %"]
        rows = []
        for p, (cat, question, _) in prompts.PARAPHRASES.items():
            row = [cat, f"`{p}`", question]
            for e in entries:
                g = e["by_pattern"].get(p, {})
                row += [_pct(g.get("acc")), _pct(g.get("increase_ratio"))]
            rows.append(row)
        avg = ["", "**mean**", ""]
        for e in entries:
            avg += [_pct(e["overall"]["acc"]), _pct(e["overall"]["increase_ratio"])]
        lines += _table(head, rows + [avg])
    return lines


def plot_xattr(entry: dict[str, Any], path: Path) -> Path:
    """Two heat maps (actual x prompt) of one model: accuracy and increase ratio, cells annotated."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from .plots import save

    actual, prompt = entry["actual"], entry["prompt"]
    fig, axes = plt.subplots(1, 2, figsize=(6 + 1.1 * len(prompt), 0.55 * len(actual) + 2.2))
    for ax, key, title in ((axes[0], "acc", "accuracy (%)"), (axes[1], "increase_ratio", 'answers "increase" (%)')):
        m = np.array([[100 * entry[key][a].get(p, math.nan) for p in prompt] for a in actual], dtype=float)
        im = ax.imshow(m, vmin=0, vmax=100, cmap="RdBu_r" if key == "increase_ratio" else "viridis")
        for i in range(len(actual)):
            for j in range(len(prompt)):
                if not math.isnan(m[i, j]):
                    ax.text(j, i, f"{m[i, j]:.0f}", ha="center", va="center", fontsize=7,
                            color="white" if (key == "acc" and m[i, j] < 60) else "black")
        ax.set_xticks(range(len(prompt)), prompt, rotation=45, ha="right")
        ax.set_yticks(range(len(actual)), actual)
        ax.set_xlabel("prompt attribute")
        ax.set_ylabel("actual attribute (clips)")
        ax.set_title(title)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.suptitle(f"{entry['label']}: cross-attribute (diagonal {_pct(entry['diagonal_acc'])} %, "
                 f"off-diagonal {_pct(entry['off_diagonal_acc'])} %)", fontsize=11)
    fig.tight_layout()
    return save(fig, path)
