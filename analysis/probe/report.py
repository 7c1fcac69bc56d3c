"""Probe outputs: ``probe.csv``, ``probe.md`` and the two figures."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from generation.audio import atomic_path, atomic_write_text

__all__ = ["CSV_COLUMNS", "STAGE_LABELS", "plot_layers", "plot_stages", "write_csv", "write_markdown"]

CSV_COLUMNS = ("model", "category", "stage", "layer", "accuracy", "balanced_accuracy", "train_accuracy",
               "n_train", "n_test", "dim", "seconds")
STAGE_LABELS = {"mel": "log-mel", "pre_lm": "audio features (pre-LM)", "lm_audio": "LM, audio positions",
                "lm_text": "LM, last position", "encoder": "encoder layers",
                "shuffled": "encoder, shuffled train labels"}


def write_csv(rows: list[dict], path) -> Path:
    """Write the result rows (columns :data:`CSV_COLUMNS`) atomically."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "layer": "" if r.get("layer") is None else r["layer"]})
    return path


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _last_layer_rows(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """(category, stage) -> row of the stage (deepest probed layer for layered stages)."""
    best: dict[tuple[str, str], dict] = {}
    for r in rows:
        k = (r["category"], r["stage"])
        if k not in best or (r["layer"] or 0) > (best[k]["layer"] or 0):
            best[k] = r
    return best


def write_markdown(rows: list[dict], path, *, model: str | None, data: str, epochs: int = 200,
                   notes: list[str] | None = None) -> Path:
    """Summary tables: stages x categories, then accuracy per layer for the layered stages, then ``notes``
    (markdown lines, e.g. an encoder's weights)."""
    path = Path(path)
    cats = list(dict.fromkeys(r["category"] for r in rows))
    stages = [s for s in dict.fromkeys(r["stage"] for r in rows) if s != "shuffled"]  # its own table (notes)
    last = _last_layer_rows(rows)
    lines = ["# Linear probes (toolkit docs/benchmark.md §10)", "", f"- model: `{model or '-'}`", f"- data: `{data}`",
             "- probe: standardised features, one linear layer, logistic loss, AdamW lr 1e-3, wd 1e-4, "
             f"batch 512, {epochs} epochs, seed 1234; trained on `train`, scored on `test`",
             "- features: sequences mean-pooled into 16 equal time segments and flattened", "",
             "## Test accuracy by stage (%)", "",
             "Layered stages show the deepest probed layer; balanced accuracy in parentheses.", "",
             "| stage | " + " | ".join(cats) + " |", "|---|" + "---|" * len(cats)]
    for s in stages:
        cells = []
        for c in cats:
            r = last.get((c, s))
            cells.append("-" if r is None else f"{_pct(r['accuracy'])} ({_pct(r['balanced_accuracy'])})")
        label = STAGE_LABELS.get(s, s)
        layer = next((last[(c, s)]["layer"] for c in cats if (c, s) in last), None)
        lines.append(f"| {label}{'' if layer is None else f' L{layer}'} | " + " | ".join(cells) + " |")
    for s in stages:
        layered = [r for r in rows if r["stage"] == s and r["layer"] is not None]
        if not layered:
            continue
        table = defaultdict(dict)
        for r in layered:
            table[r["layer"]][r["category"]] = r["accuracy"]
        lines += ["", f"## {STAGE_LABELS.get(s, s)}: test accuracy per layer (%)", "",
                  "| layer | " + " | ".join(cats) + " |", "|---|" + "---|" * len(cats)]
        for layer in sorted(table):
            lines.append(f"| {layer} | " + " | ".join(
                _pct(table[layer][c]) if c in table[layer] else "-" for c in cats) + " |")
    lines.append("")
    if notes:
        lines += list(notes)
    atomic_write_text(path, "\n".join(lines))
    return path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_layers(rows: list[dict], path, *, title: str = "") -> Path | None:
    """Accuracy vs layer, one panel per category, with the 50 % chance line.

    Layered stages are lines; ``mel`` and ``pre_lm`` are horizontal reference lines.
    Returns ``None`` when no layered stage was probed.
    """
    layered = [r for r in rows if r["layer"] is not None]
    if not layered:
        return None
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    cats = list(dict.fromkeys(r["category"] for r in rows))
    ncol = min(3, len(cats))
    nrow = -(-len(cats) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.0 * nrow), squeeze=False, sharey=True)
    styles = {"lm_audio": ("C0", "-"), "lm_text": ("C3", "-"), "mel": ("0.4", ":"), "pre_lm": ("C2", "--"),
              "encoder": ("C4", "-")}
    for ax, c in zip(axes.flat, cats):
        for r in (r for r in layered if r["category"] == c and r["stage"] == "shuffled"):
            ax.plot([r["layer"]], [100 * r["accuracy"]], "x", color="k", label=STAGE_LABELS["shuffled"])
        for s in ("lm_audio", "lm_text", "encoder"):
            pts = sorted((r["layer"], r["accuracy"]) for r in layered if r["category"] == c and r["stage"] == s)
            if pts:
                color, ls = styles[s]
                ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], ls, color=color, marker=".",
                        label=STAGE_LABELS[s])
        for s in ("mel", "pre_lm"):
            r = next((r for r in rows if r["category"] == c and r["stage"] == s), None)
            if r is not None:
                color, ls = styles[s]
                ax.axhline(100 * r["accuracy"], color=color, ls=ls, lw=1, label=STAGE_LABELS[s])
        ax.axhline(50, color="k", lw=0.8, ls="--", alpha=0.7, label="chance (50 %)")
        ax.set_title(c)
        ax.set_ylim(0, 102)
        ax.set_xlabel("encoder layer" if any(r["stage"] == "encoder" for r in layered) else "LM layer")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("test accuracy (%)")
    for ax in list(axes.flat)[len(cats):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), frameon=False, fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.1 if nrow == 1 else 0.06, 1, 1))
    return _save(fig, plt, path)


def plot_stages(rows: list[dict], path, *, title: str = "") -> Path:
    """Grouped bars: test accuracy per category for each stage (deepest probed layer)."""
    plt = _pyplot()
    last = _last_layer_rows(rows)
    cats = list(dict.fromkeys(r["category"] for r in rows))
    stages = [s for s in STAGE_LABELS if any(k[1] == s for k in last)]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(cats)) + 3.2, 3.4))
    width = 0.8 / max(1, len(stages))
    for j, s in enumerate(stages):
        xs = [i + (j - (len(stages) - 1) / 2) * width for i in range(len(cats))]
        ys = [100 * last[(c, s)]["accuracy"] if (c, s) in last else 0 for c in cats]
        layer = None if s == "shuffled" else next((last[(c, s)]["layer"] for c in cats if (c, s) in last), None)
        ax.bar(xs, ys, width=width, label=STAGE_LABELS[s] + ("" if layer is None else f" (L{layer})"))
    ax.axhline(50, color="k", lw=0.8, ls="--", label="chance (50 %)")
    ax.set_xticks(range(len(cats)), cats, rotation=30, ha="right")
    ax.set_ylim(0, 102)
    ax.set_ylabel("test accuracy (%)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return _save(fig, plt, path)


def _save(fig, plt, path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    return path
