"""Report figures (matplotlib, Agg backend, PNG).

- :func:`plot_model`: one figure per model — accuracy per category with both 95 % intervals and
  the 50 % chance line, accuracy by tier and by trajectory, and the increase ratio per category.
- :func:`plot_comparison`: all models side by side — accuracy per category, increase ratio per
  category, and the paper's human accuracy as a reference mark.

Both take the analysed numbers (:func:`analysis.report.analysis.analyse`), not raw records.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from generation.audio import atomic_path

from .verdicts import headline_text

__all__ = ["plot_comparison", "plot_model", "save"]

_BAR = "#8fb4d9"     # accuracy bars
_CLU = "#34495e"     # clustered interval (thick, translucent)
_CHANCE = "#c0392b"


def _percent_axis(ax, x, labels, ylabel: str, title: str) -> None:
    """Shared styling of the 0-100 % bar panels: ticks, limits, labels, grid, legend outside."""
    ax.set_xticks(x, labels)
    ax.set_ylim(0, 105)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _pct(v) -> float:
    return math.nan if v is None or (isinstance(v, float) and math.isnan(v)) else 100.0 * v


def _err(groups: dict, kind: str, values: list[float]) -> np.ndarray:
    lo = np.array([_pct(g["ci"]["acc"][kind][0]) for g in groups.values()])
    hi = np.array([_pct(g["ci"]["acc"][kind][1]) for g in groups.values()])
    v = np.array(values)
    return np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)])


def _acc_panel(ax, groups: dict, title: str, *, rotate: bool = False) -> None:
    names = [str(k) for k in groups]
    vals = [_pct(g.get("acc")) for g in groups.values()]
    x = np.arange(len(names))
    ax.bar(x, vals, color=_BAR, width=0.6, zorder=2)
    if groups and all("ci" in g for g in groups.values()):
        clustered = _err(groups, "clustered", vals)
        if not np.isnan(clustered).all():  # none from fewer than MIN_CLUSTERS sources
            ax.errorbar(x, vals, yerr=clustered, fmt="none", ecolor=_CLU, alpha=0.35,
                        elinewidth=7, capsize=0, zorder=3, label="95 % CI over voices (clustered by source)")
        ax.errorbar(x, vals, yerr=_err(groups, "binomial", vals), fmt="none", ecolor="black",
                    elinewidth=1.2, capsize=4, zorder=4, label="95 % CI these voices (clip bootstrap)")
    ax.axhline(50, color=_CHANCE, ls="--", lw=1.2, zorder=5, label="chance (50 %)")
    for xi, v in zip(x, vals):
        if not math.isnan(v):
            ax.text(xi, 2, f"{v:.0f}", ha="center", va="bottom", color="black", fontsize=8, zorder=6)
    ax.set_xticks(x, names, rotation=30 if rotate else 0, ha="right" if rotate else "center")
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3, zorder=0)


def _bias_panel(ax, bias: dict, title: str) -> None:
    cats = [c for c in bias if c != "all"]
    x = np.arange(len(cats))
    parsed = [_pct(bias[c]["increase_ratio"]) for c in cats]
    allv = [_pct(bias[c]["increase_ratio_all"]) for c in cats]
    ax.bar(x - 0.2, parsed, width=0.4, color="#d68910", label="over parsed answers", zorder=2)
    ax.bar(x + 0.2, allv, width=0.4, color="#f5cba7", label="over all clips", zorder=2)
    lo = np.array([_pct(bias[c]["increase_ratio_ci"][0]) for c in cats])
    hi = np.array([_pct(bias[c]["increase_ratio_ci"][1]) for c in cats])
    p = np.array(parsed)
    ax.errorbar(x - 0.2, p, yerr=np.vstack([np.clip(p - lo, 0, None), np.clip(hi - p, 0, None)]),
                fmt="none", ecolor="black", capsize=3, zorder=3)
    ax.axhline(50, color=_CHANCE, ls="--", lw=1.2, label="no bias (50 %)", zorder=4)
    ax.set_xticks(x, cats, rotation=30, ha="right")
    ax.set_ylim(0, 118)  # headroom for the legend above 100 %
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel('answers "increase" (%)')
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.legend(fontsize=7, loc="upper center", ncol=3, frameon=False)


def save(fig, path: Path) -> Path:
    """Write ``fig`` to ``path`` (format from the suffix, png if none) atomically, close it, return ``path``."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    return path


def plot_model(model: dict[str, Any], path: Path) -> Path:
    """Four-panel figure of one analysed model; returns ``path``."""
    if not model.get("has_samples"):
        fig, ax = plt.subplots(figsize=(8, 4))
        _acc_panel(ax, model["by_category"], f"{model['label']}: accuracy per category (no sample log)",
                   rotate=True)
        ax.legend(fontsize=7, loc="upper right")
        return save(fig, path)
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5), gridspec_kw={"width_ratios": [3, 2]})
    ov = model["overall"]
    lo, hi = ov["headline"]["ci"]
    shown = "" if any(v is None or math.isnan(v) for v in (lo, hi)) else f" [{_pct(lo):.1f}, {_pct(hi):.1f}]"
    fig.suptitle(f"{model['label']} — accuracy {_pct(ov['acc']):.1f} %{shown} on {ov['n']} clips "
                 f"({headline_text(ov['headline'])})",
                 fontsize=12, fontweight="bold")
    _acc_panel(axes[0, 0], model["by_category"], "accuracy per category", rotate=True)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    _acc_panel(axes[0, 1], model["by_tier"], "accuracy by tier")
    _bias_panel(axes[1, 0], model["bias"], "response bias: increase ratio per category")
    _acc_panel(axes[1, 1], model["by_trajectory"], "accuracy by trajectory", rotate=True)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=3, fontsize=9,
               frameon=False)
    return save(fig, path)


def plot_comparison(report: dict[str, Any], path: Path, *, paper_reference: str = "Human") -> Path:
    """Models side by side per category (accuracy with binomial intervals; increase ratio)."""
    import vocalgrad

    models = report["models"]
    cats = [c for c in vocalgrad.CATEGORY_NAMES if any(c in m["by_category"] for m in models)]
    x = np.arange(len(cats))
    k = max(len(models), 1)
    width = 0.8 / k
    colors = plt.get_cmap("tab10")
    with_bias = [m for m in models if m.get("has_samples")]
    nrows = 2 if with_bias else 1
    fig, axes = plt.subplots(nrows, 1, figsize=(max(9.0, len(cats) * (0.55 + 0.3 * k)), 4.0 * nrows),
                             squeeze=False)
    ax = axes[0, 0]
    for i, m in enumerate(models):
        off = x - 0.4 + width * (i + 0.5)
        vals = [_pct(m["by_category"].get(c, {}).get("acc")) for c in cats]
        ax.bar(off, vals, width=width, color=colors(i % 10), label=m["label"], zorder=2)
        if m.get("has_samples"):
            groups = {c: m["by_category"][c] for c in cats if c in m["by_category"]}
            offs = [o for o, c in zip(off, cats) if c in groups]
            v = [val for val, c in zip(vals, cats) if c in groups]
            ax.errorbar(offs, v, yerr=_err(groups, "binomial", v), fmt="none", ecolor="black",
                        capsize=2, lw=1, zorder=3)
    paper = report.get("paper", {}).get("category_acc", {}).get(paper_reference)
    if paper:  # behind the bars and wider than them: visible beside the group, never over a bar top
        ax.hlines([paper[c] for c in cats], x - 0.48, x + 0.48, colors="black", lw=1.6, ls=(0, (3, 1.5)),
                  zorder=1, label=f"{paper_reference} (paper's number)")
    ax.axhline(50, color=_CHANCE, ls="--", lw=1.2, label="chance (50 %)", zorder=5)
    _percent_axis(ax, x, cats, "accuracy (%)", "accuracy per category (bars: 95 % binomial bootstrap interval)")
    if with_bias:
        ax = axes[1, 0]
        kb = len(with_bias)
        wb = 0.8 / kb
        for i, m in enumerate(with_bias):
            off = x - 0.4 + wb * (i + 0.5)
            vals = [_pct(m["bias"].get(c, {}).get("increase_ratio")) for c in cats]
            ax.bar(off, vals, width=wb, color=colors(models.index(m) % 10), label=m["label"], zorder=2)
            ci = [m["bias"].get(c, {}).get("increase_ratio_ci") or (None, None) for c in cats]
            v = np.array(vals)
            lo, hi = np.array([_pct(a) for a, _ in ci]), np.array([_pct(b) for _, b in ci])
            ax.errorbar(off, v, yerr=np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)]),
                        fmt="none", ecolor="black", capsize=2, lw=1, zorder=3)
        ax.axhline(50, color=_CHANCE, ls="--", lw=1.2, label="no bias (50 %)", zorder=5)
        _percent_axis(ax, x, cats, 'answers "increase" (%)',
                      "response bias: increase ratio over parsed answers (bars: 95 % binomial bootstrap interval)")
    fig.tight_layout()
    return save(fig, path)
