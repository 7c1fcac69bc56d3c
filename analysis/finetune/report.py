"""``vocalgrad finetune-report``: the fine-tuning study's tables and figures (paper Table 4,
Figure 4, Tables 20-22, Figure 9).

Each RUN is a folder. A fine-tuning run is the ``--out`` of ``vocalgrad finetune`` (it has
``finetune.json``); a base-model run is any other folder. Inside, the report reads what is there:

``eval/``      lm-eval output of ``vocalgrad-eval ... --output_path RUN/eval`` (nine categories)
``probe/``     ``vocalgrad probe ... --out RUN/probe`` (``probe.csv``)
``align/``     ``vocalgrad align ... --out RUN/align`` (``alignment.json``)
``transfer/``  ``vocalgrad transfer ... --out RUN/transfer`` (``transfer.json``)

Adapted runs are compared with the base run of the same base model (or the only base run).
Outputs: ``finetune_report.md``, ``finetune_report.json`` and PNG figures.
"""

from __future__ import annotations

import csv
import io
import json
import warnings
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import vocalgrad
from analysis.cli_options import add_command
from generation.audio import atomic_path, atomic_write_text
from generation.user_files import read_json, read_text

__all__ = ["Run", "build_finetune_report", "load_run", "register_cli"]

CATS = list(vocalgrad.CATEGORY_NAMES)


@dataclass
class Run:
    """What one RUN folder holds."""

    path: Path
    label: str
    model: str | None
    scope: str | None = None
    category: str | None = None
    training: dict | None = None
    acc: dict = field(default_factory=dict)            # test category -> accuracy
    probe: list = field(default_factory=list)          # probe.csv rows
    alignment: dict | None = None
    transfer: dict | None = None

    @property
    def is_base(self) -> bool:
        return self.training is None

    @property
    def variant(self) -> str:
        """Training settings that differ from the paper's defaults (``""`` for the protocol run)."""
        if not self.training:
            return ""
        from .config import FinetuneConfig

        d = FinetuneConfig(model="", data="", category="").to_dict()
        keys = ("include_audio_encoder", "learning_rate", "epochs", "batch_size", "grad_accum", "lora_r",
                "lora_alpha", "lora_dropout", "weight_decay", "max_grad_norm", "val_fraction", "seed", "max_train",
                "audio_first", "system_prompt")
        got = self.training.get("settings", {})
        diff = [f"{k}={got[k]}" for k in keys if k in got and got[k] != d[k]]
        return ", ".join(diff)

    @property
    def key(self) -> str:
        """``model / scope [variant]``: runs with one key form one train → test matrix."""
        v = f" [{self.variant}]" if self.variant else ""
        return f"{_model_name(self.model)} / {self.scope}{v}"


def _model_from_args(args: str) -> str | None:
    for part in (args or "").split(","):
        if part.startswith("pretrained="):
            return part.split("=", 1)[1]
    return None


def load_run(path, *, metric: str = "acc") -> Run:
    """Read one RUN folder (see the module docstring); ``metric`` is the lm-eval metric read per
    category (``acc``: generated answers; ``acc_logit``: the answer-logit choice of ``scoring=both``).

    Raises
    ------
    FileNotFoundError
        If the folder holds none of the known parts.
    """
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such run folder")
    training = (read_json(path / "finetune.json", "the record `vocalgrad finetune` writes")
                if (path / "finetune.json").is_file() else None)
    run = Run(path=path, label="base", model=None, training=training)
    if training:
        run.model = training["base_model"]["model"]
        run.scope, run.category = training["lora"]["scope"], training["data"]["category"]
        run.label = f"{run.scope} / {run.category}" + (f" [{run.variant}]" if run.variant else "")
    if (path / "eval").is_dir():
        from analysis.report.loading import load_evaluations

        evs = [e for e in load_evaluations([path / "eval"]) if e.variant == "default"]
        for ev in evs:
            for cat in ev.categories:
                m = ev.task_metrics.get(cat, {})
                if metric in m:
                    run.acc[cat] = float(m[metric])
            run.model = run.model or _model_from_args(ev.model_args)
    if (path / "probe" / "probe.csv").is_file():
        text = read_text(path / "probe" / "probe.csv", "the CSV `vocalgrad probe` writes")
        run.probe = list(csv.DictReader(io.StringIO(text, newline="")))
    if (path / "align" / "alignment.json").is_file():
        run.alignment = read_json(path / "align" / "alignment.json", "the record `vocalgrad align` writes")
        run.model = run.model or run.alignment.get("model")
    if (path / "transfer" / "transfer.json").is_file():
        run.transfer = read_json(path / "transfer" / "transfer.json", "the record `vocalgrad transfer` writes")
        run.model = run.model or run.transfer.get("model")
    if not (training or run.acc or run.probe or run.alignment or run.transfer):
        raise FileNotFoundError(f"{path}: no finetune.json, eval/, probe/probe.csv, align/alignment.json "
                                f"or transfer/transfer.json")
    return run


def _base_for(run: Run, bases: list[Run]) -> Run | None:
    same = [b for b in bases if b.model and run.model and Path(b.model).name == Path(run.model).name]
    return same[0] if same else (bases[0] if len(bases) == 1 else None)


def _pct(v) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def _mean(vals) -> float:
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else math.nan


def _table(head, rows) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(map(str, r)) + " |"
                                                                        for r in rows]


def _model_name(m: str | None) -> str:
    return Path(m).name if m else "?"


# ---------------------------------------------------------------------------------- sections
def in_domain(runs: list[Run], bases: list[Run]) -> list[dict]:
    """Table 4 layout: per adapted run, base vs adapted accuracy on the trained category and the mean
    over the other categories."""
    rows = []
    for r in runs:
        b = _base_for(r, bases)
        bacc = b.acc if b else {}
        others = [c for c in CATS if c != r.category and c in r.acc]
        rows.append({
            "model": _model_name(r.model), "scope": r.scope, "variant": r.variant, "category": r.category,
            "base": bacc.get(r.category), "adapted": r.acc.get(r.category),
            "base_other": _mean([bacc.get(c) for c in others]) if bacc else math.nan,
            "adapted_other": _mean([r.acc[c] for c in others]),
            "val_before": (r.training.get("validation_before") or {}).get("accuracy"),
            "val_after": (r.training.get("validation_after") or {}).get("accuracy"),
            "trainable_parameters": r.training["trainable_parameters"], "steps": r.training["steps"]})
    return rows


def transfer_matrices(runs: list[Run], bases: list[Run]) -> dict:
    """Per (model, scope): 9 x 9 matrix of adapted - base accuracy (train category x test category)."""
    out = {}
    for r in runs:
        m = out.setdefault(r.key, {"delta": np.full((len(CATS), len(CATS)), np.nan),
                                   "acc": np.full((len(CATS), len(CATS)), np.nan)})
        b = _base_for(r, bases)
        i = CATS.index(r.category)
        for j, c in enumerate(CATS):
            if c in r.acc:
                m["acc"][i, j] = r.acc[c]
                if b and c in b.acc:
                    m["delta"][i, j] = r.acc[c] - b.acc[c]
    return out


def probe_curves(run: Run, stage: str = "lm_text") -> dict[str, list[tuple[int, float]]]:
    """Category -> [(layer, balanced accuracy)] of one stage."""
    out: dict[str, list] = {}
    for row in run.probe:
        if row.get("stage") == stage and row.get("layer") not in (None, ""):
            out.setdefault(row["category"], []).append((int(row["layer"]), float(row["balanced_accuracy"])))
    return {c: sorted(v) for c, v in out.items()}


def table4(mats: dict) -> list[str]:
    """Markdown rows: scope x model, one column per category = in-domain accuracy (diagonal)."""
    keyed = []
    for key, m in mats.items():
        model, scope = key.split(" / ", 1)
        keyed.append((scope, model, np.diagonal(m["acc"])))
    order = {"lm_head_only": 0, "all_linear": 1}
    keyed.sort(key=lambda t: (order.get(t[0].split(" [")[0], 2), t[0], t[1]))
    rows = []
    for scope, model, diag in keyed:
        same = [d for s, _, d in keyed if s == scope]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            best = np.nanmax(np.stack(same), axis=0)
        cells = []
        for j, v in enumerate(diag):
            cell = _pct(float(v)) if np.isfinite(v) else "–"
            cells.append(f"**{cell}**" if np.isfinite(v) and len(same) > 1 and v == best[j] else cell)
        rows.append([scope, model] + cells)
    return _table(["scope", "model"] + CATS, rows)


# ---------------------------------------------------------------------------------- figures
def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, bbox_inches="tight", format=path.suffix.lstrip(".") or "png")
    return path


def _panels(plt, n: int, *, cols: int, size: float, hspace: float, wspace: float):
    """Figure and (rows, cols) axes for ``n`` square panels of ``size`` inches, at most ``cols`` a row.

    The cells after the ``n``-th are hidden.
    """
    cols = min(n, cols)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols, size * rows), squeeze=False)
    fig.subplots_adjust(hspace=hspace, wspace=wspace)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return fig, axes


def _heatmap(ax, values: np.ndarray, labels, *, vmin: float, vmax: float, fmt: str, fontsize: float):
    """Draw ``values`` [shape=(n, n)] on a red-blue scale, each finite cell written as ``format(v, fmt)``.

    ``labels`` name both axes (rows and columns); returns the image, for a colour bar.
    """
    im = ax.imshow(values, cmap="RdBu_r", vmin=vmin, vmax=vmax)
    for i in range(len(labels)):
        for j in range(len(labels)):
            if np.isfinite(values[i, j]):
                ax.text(j, i, format(values[i, j], fmt), ha="center", va="center", fontsize=fontsize)
    ax.set_xticks(range(len(labels)), labels, rotation=60, fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    return im


def plot_matrices(mats: dict, path: Path) -> Path:
    import textwrap

    fig, axes = _panels(_plt(), len(mats), cols=2, size=5.6, hspace=0.55, wspace=0.35)
    finite = [np.abs(100 * m["delta"][np.isfinite(m["delta"])]) for m in mats.values()]
    lim = max([5.0] + [float(f.max()) for f in finite if f.size])          # one colour scale for all panels
    for ax, (key, m) in zip(axes.flat, mats.items()):
        im = _heatmap(ax, 100 * m["delta"], CATS, vmin=-lim, vmax=lim, fmt="+.0f", fontsize=7)
        ax.set_xlabel("test category")
        ax.set_ylabel("trained on")
        ax.set_title(textwrap.fill(f"{key}: accuracy change (pp)", 50), fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
    return _save(fig, path)


def plot_probes(base: Run | None, runs: list[Run], path: Path) -> Path | None:
    curves = [(base.label, probe_curves(base))] if base and base.probe else []
    curves += [(r.label, probe_curves(r)) for r in runs if r.probe]
    cats = [c for c in CATS if any(c in cv for _, cv in curves)]
    if not cats:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, len(cats), figsize=(3.6 * len(cats), 3.2), squeeze=False, sharey=True)
    for ax, cat in zip(axes[0], cats):
        for k, (label, cv) in enumerate(curves):
            if cat in cv:
                x, y = zip(*cv[cat])
                ax.plot(x, [100 * v for v in y], marker="o", ms=3, label=label, color="0.3" if k == 0 and base
                        else f"C{k}", ls="--" if k == 0 and base else "-")
        ax.axhline(50, color="#c0392b", lw=0.8, ls=":")
        ax.set_title(cat, fontsize=9)
        ax.set_xlabel("LM layer")
        ax.xaxis.get_major_locator().set_params(integer=True)
    axes[0][0].set_ylabel("probe balanced acc. (%)\nlast input position")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=7, ncol=1, frameon=False)
    return _save(fig, path)


def plot_alignment(aligns: list[dict], layer: int, path: Path) -> Path | None:
    import textwrap

    aligns = [a for a in aligns if layer in a["layers"]]
    if not aligns:
        return None
    fig, axes = _panels(_plt(), len(aligns), cols=3, size=4.8, hspace=0.5, wspace=0.4)
    for ax, a in zip(axes.flat, aligns):
        cos = np.array(a["cosine"], dtype=float)[a["layers"].index(layer)]
        im = _heatmap(ax, cos, a["categories"], vmin=-1, vmax=1, fmt=".2f", fontsize=6)
        ax.set_title(textwrap.fill(f"{a['label']}: cosine, layer {layer}", 40), fontsize=9)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8)
    return _save(fig, path)


# ---------------------------------------------------------------------------------- report
@dataclass
class _Report:
    """The report being built: Markdown lines, the JSON data and the files written so far."""

    out: Path
    md: list[str]
    data: dict
    files: list[Path] = field(default_factory=list)

    def write(self) -> dict:
        """Write ``finetune_report.md`` / ``.json``; the data with the list of files."""
        for name, text in (("finetune_report.md", "\n".join(self.md) + "\n"),
                           ("finetune_report.json", json.dumps(_clean(self.data), indent=2))):
            atomic_write_text(self.out / name, text)
            self.files.append(self.out / name)
        return {"files": [str(f) for f in self.files], **self.data}


def _in_domain_section(rep: _Report, runs: list[Run], bases: list[Run]) -> dict:
    """Table 4 and the per-run base/adapted table; returns the train → test matrices."""
    metric = rep.data["metric"]
    rows = in_domain(runs, bases)
    rep.data["in_domain"] = rows
    mats = transfer_matrices(runs, bases)
    rep.md += ["## In-domain accuracy (Table 4 layout)", "",
               f"Test accuracy (%, lm-eval metric `{metric}`) of the adapter trained on a category, on that "
               "category (the diagonal of the train → test matrix); best per scope and category in bold.", ""]
    rep.md += table4(mats) + [""]
    rep.md += ["Per run: base vs adapted on the trained category, mean over the other categories, validation "
               "accuracy by answer logits before/after training.", ""]
    head = ["model", "scope", "settings", "trained on", "base", "adapted", "Δ", "others base", "others adapted",
            "val before", "val after", "trainable params"]
    rep.md += _table(head, [
        [r["model"], r["scope"], r["variant"] or "paper", r["category"], _pct(r["base"]), _pct(r["adapted"]),
         "–" if r["base"] is None or r["adapted"] is None else f"{100 * (r['adapted'] - r['base']):+.1f}",
         _pct(r["base_other"]), _pct(r["adapted_other"]), _pct(r["val_before"]), _pct(r["val_after"]),
         f"{r['trainable_parameters']:,}"] for r in rows]) + [""]
    return mats


def _matrix_section(rep: _Report, mats: dict) -> None:
    """The train → test matrices (data always; figure and tables when there are any)."""
    rep.data["transfer_matrix"] = {k: {"delta": v["delta"].tolist(), "acc": v["acc"].tolist(), "categories": CATS}
                                   for k, v in mats.items()}
    if not mats:
        return
    rep.files.append(plot_matrices(mats, rep.out / "transfer_matrix.png"))
    rep.md += ["## Train → test matrix (Figure 4 left, Table 20)", "",
               "Adapted minus base accuracy (pp); rows: trained category, columns: test category.", "",
               "![transfer matrix](transfer_matrix.png)", ""]
    for key, m in mats.items():
        rep.md += [f"**{key}**", ""]
        rep.md += _table(["trained on"] + CATS,
                         [[c] + ["–" if not np.isfinite(v) else f"{100 * v:+.1f}" for v in m["delta"][i]]
                          for i, c in enumerate(CATS) if np.isfinite(m["acc"][i]).any()]) + [""]


def _probe_section(rep: _Report, base0: Run | None, runs: list[Run]) -> None:
    """Probe accuracy per layer, base vs adapted (data and figure)."""
    rep.data["probe"] = {r.label: probe_curves(r) for r in ([base0] if base0 else []) + runs if r and r.probe}
    p = plot_probes(base0, runs, rep.out / "probe_curves.png")
    if p:
        rep.files.append(p)
        rep.md += ["## Probes per layer, base vs adapted (Figure 4 right)", "",
                   "Balanced accuracy of the linear probe on the LM state at the last input position.", "",
                   "![probe curves](probe_curves.png)", ""]


def _alignment_section(rep: _Report, aligns: list[dict], align_layer: int | None) -> None:
    """Mean |cosine| and mean cosine per shared layer, and the heat map at ``align_layer``."""
    if not aligns:
        return
    layers = sorted(set.intersection(*(set(a["layers"]) for a in aligns)))
    layer = align_layer if align_layer is not None else (layers[-1] if layers else aligns[0]["layers"][-1])
    rep.data["alignment"] = [{k: a[k] for k in ("label", "layers", "categories", "cosine")} for a in aligns]
    rep.md += ["## Direction alignment (Table 21, Figure 9)", "",
               "Mean |cosine| and mean signed cosine over the category pairs, per layer.", ""]
    head = ["model"] + [f"L{l} mean abs" for l in layers] + [f"L{l} mean" for l in layers]
    trows = []
    for a in aligns:
        cos = np.array(a["cosine"], dtype=float)
        iu = np.triu_indices(len(a["categories"]), 1)
        vals = [cos[a["layers"].index(l)][iu] for l in layers]
        trows.append([a["label"]] + [_f(np.abs(v)) for v in vals] + [_f(v) for v in vals])
    rep.md += _table(head, trows) + [""]
    p = plot_alignment(aligns, layer, rep.out / "alignment.png")
    if p:
        rep.files.append(p)
        rep.md += [f"Signed cosine at layer {layer}:", "", "![alignment](alignment.png)", ""]


def _transfer_section(rep: _Report, transfers: list[dict]) -> None:
    """Scores of the transfer task (Table 22), when any run has them."""
    from .transfer import transfer_markdown

    if transfers:
        rep.data["transfer_task"] = transfers
        rep.md += ["## Transfer to another task (Table 22)", "", transfer_markdown(transfers)]


def build_finetune_report(paths, out, *, align_layer: int | None = None, metric: str = "acc") -> dict:
    """Read the RUN folders and write ``finetune_report.md`` / ``.json`` and the PNGs to ``out``."""
    all_runs = [load_run(p, metric=metric) for p in paths]
    bases = [r for r in all_runs if r.is_base]
    runs = [r for r in all_runs if not r.is_base]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rep = _Report(out, md=["# Fine-tuning study", "", f"Runs: {len(runs)} adapted, {len(bases)} base "
                           f"({', '.join(str(r.path) for r in all_runs)}).", ""],
                  data={"metric": metric,
                        "runs": [{"path": str(r.path), "label": r.label, "model": r.model} for r in all_runs]})
    mats = _in_domain_section(rep, runs, bases)
    _matrix_section(rep, mats)
    base0 = bases[0] if bases else None
    _probe_section(rep, base0, runs)
    with_base = ([base0] if base0 else []) + runs
    _alignment_section(rep, [r.alignment for r in with_base if r and r.alignment], align_layer)
    _transfer_section(rep, [r.transfer for r in with_base if r and r.transfer])
    return rep.write()


def _f(v) -> str:
    v = np.asarray(v, dtype=float)
    return "–" if not np.isfinite(v).any() else f"{np.nanmean(v):.3f}"


def _clean(o):
    """JSON-safe copy: NaN -> None, paths -> str."""
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, Path):
        return str(o)
    return o


def register_cli(subparsers) -> None:
    """Add ``vocalgrad finetune-report RUNS... --out DIR``."""
    p = add_command(
        subparsers, "finetune-report", _run_cli, errors=(ValueError, FileNotFoundError),
        help="tables and figures of the fine-tuning study (Table 4, Figure 4, Tables 20-22)",
        description="""Read fine-tuning run folders (from `vocalgrad finetune`, with eval/, probe/, align/,
            transfer/ inside) and base-model folders (same layout), and write finetune_report.md,
            finetune_report.json and PNG figures. See docs/finetune.md.""")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders (adapted and base)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (finetune_report.md/json, PNGs)")
    p.add_argument("--align-layer", type=int, help="layer of the alignment heat map (default: the last shared)")
    p.add_argument("--metric", default="acc", help="lm-eval metric per category: acc (generated answers, "
                   "default) or acc_logit (answer logits, vocalgrad-hf scoring=both|logits)")


def _run_cli(args) -> int:
    res = build_finetune_report(args.runs, args.out, align_layer=args.align_layer, metric=args.metric)
    for f in res["files"]:
        print(f"wrote {f}")
    return 0
