"""``vocalgrad report RESULTS... --out DIR``: load, analyse, plot, write ``report.md`` + ``report.json``."""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from generation.audio import atomic_write_text
from generation.cli_errors import report_error

from .analysis import analyse
from .formats import analyse_formats
from .loading import ResultsError, load_all
from .markdown import headline_line, render_markdown, slug
from .model_index import write_model_indexes
from .stats import DRAWS, SEED

__all__ = ["build_report", "register_cli"]


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {("null" if k is None else str(k)): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "item"):  # numpy scalar
        return _jsonable(obj.item())
    return obj


def build_report(results, out_dir, *, draws: int = DRAWS, seed: int = SEED, top: int = 20,
                 plots: bool = True, labels: dict[str, str] | None = None, human=None,
                 render_dir=None, html=None, force: bool = False, allow_mixed: bool = False) -> dict[str, Any]:
    """Write ``report.md``, ``report.json`` and ``plots/*.png`` for lm-eval outputs.

    Parameters
    ----------
    results : iterable of str or Path
        lm-eval output folders or ``results_*.json`` files; ``LABEL=PATH`` sets a model's name.
    out_dir : str or Path
        New, empty or a report folder: the files an earlier report wrote there are replaced, other
        files kept (:func:`report_update`); a render, Hub or other non-empty folder is refused.
    draws, seed : int
        Bootstrap settings (default 10,000 draws, seed 1234 as in benchmark.md §8).
    top : int
        Number of most frequent raw outputs listed per model.
    plots : bool
        Draw the PNG figures (matplotlib).
    labels : dict, optional
        Path -> label, an alternative to ``LABEL=PATH``.
    human : list of path-like, optional
        ``answers.jsonl`` files of ``vocalgrad listen``: the annotators become one "human" model
        row, and an agreement section (per annotator, pairwise, Fleiss' kappa) is added.
    render_dir : path-like, optional
        The evaluated render folder: its label warnings (``label_checks.csv``) become a section.
    html : analysis.report.html_page.HtmlOptions, optional
        Also write ``index.html`` (:func:`analysis.report.html_page.write_html`) from ``report.json``;
        its summary is returned under ``"html"``. With a data folder, every clip the page will play is
        checked first against the sha256 the sample logs recorded (:func:`analysis.report.content.check_data_folder`).
    force : bool
        Also replace files an earlier report wrote that were edited since, and write into a non-empty
        folder that is no report folder (its files are kept; a render or Hub folder is still refused).
    allow_mixed : bool
        Keep results of different builds (same clip ids, other audio) apart, one row per build and
        never paired, instead of refusing (:mod:`analysis.report.content`).

    Returns
    -------
    dict
        The analysed numbers (what ``report.json`` holds, with ``nan`` as ``null`` there), plus
        ``"paths"``: the files written.
    """
    from generation.ownership import claim_out

    claim_out(out_dir, "report", force=force)  # before any work: never a render, Hub or foreign folder
    specs = [str(r) for r in results]
    if labels:
        specs = [f"{labels[s]}={s}" if s in labels else s for s in specs]
    sweep_observers = _sweep_observers(specs, human)  # vocalgrad_sweep runs and sweep answers (docs/sweep.md)
    evaluations, format_evals, extras = _load_runs(specs, others=bool(sweep_observers), allow_mixed=allow_mixed)
    agreement = _add_human(evaluations, human)
    if not evaluations and not format_evals and not extras and not sweep_observers:
        raise ResultsError("nothing to report: give lm-eval result folders and/or --human answers files")
    report = analyse(evaluations, draws=draws, seed=seed, top=top, allow_mixed=allow_mixed)
    if html is not None and html.catalog is not None:  # before anything is written
        from .content import check_data_folder
        from .html_clips import select_clips

        check_data_folder(html.catalog, evaluations,
                          [c.clip_id for c in select_clips(html.catalog, evaluations, seed=html.seed)[1]])
    report["formats"] = analyse_formats(format_evals, draws=draws, seed=seed)  # yes/no and ternary, {} when absent
    report["extras"] = extras  # cross-attribute, source-clip bias, paraphrases ({} when absent)
    out = Path(out_dir)
    with report_update(out, force=force) as stage:  # the files of an earlier report are replaced, nobody else's
        plot_paths = _draw_plots(report, stage) if plots else {}
        md = _markdown(report, plot_paths, agreement, render_dir)
        md += _psychometric(report, sweep_observers, stage, plot_paths, draws=draws, seed=seed, plots=plots)
        report["paths"] = _write(stage, report, md, plot_paths)
        report["paths"].update({f"sweep:{k}": str(stage / v) for k, v in plot_paths.get("sweep", {}).items()})
        report["paths"].update(write_model_indexes(report, stage))  # DIR/model-index/<model>.yaml
        if html is not None:
            from .html_page import write_html

            report["html"] = write_html(stage, evaluations, html, sweeps=sweep_observers)
            report["paths"]["index.html"] = report["html"]["path"]
    report["paths"] = {k: str(out / Path(v).relative_to(stage)) for k, v in report["paths"].items()}
    if "html" in report:
        report["html"]["path"] = report["paths"]["index.html"]
    return report


def _sweep_observers(specs: list[str], human) -> list:
    """The observers of the magnitude sweeps: models' ``vocalgrad_sweep`` runs, then the listening test's
    sweep answers (:mod:`.psychometric`)."""
    from .psychometric import human_sweep_observer, load_sweep_observers

    observers = load_sweep_observers(specs) if specs else []
    people = human_sweep_observer(human) if human else None
    return observers + ([people] if people else [])


def _psychometric(report: dict, observers: list, out: Path, plot_paths: dict, *, draws: int, seed: int,
                  plots: bool) -> str:
    """Fit the sweeps into ``report["psychometric"]``, draw their figures; the report.md section ("" without)."""
    from .psychometric import BOOT_DRAWS, analyse_sweeps, plot_sweeps, sweep_markdown

    block = analyse_sweeps(observers, draws=min(draws, BOOT_DRAWS), seed=seed) if observers else {}
    report["psychometric"] = block
    if block and plots:
        plot_paths["sweep"] = plot_sweeps(block, out)
    return sweep_markdown(block, plot_paths.get("sweep"))


def _legacy_report_files(out: Path) -> list[str]:
    """What ``vocalgrad report`` wrote in a report folder of an earlier version (no marker): its named
    files, figures and model-index cards, and the clips its page links to; other files are someone else's."""
    import re

    files = [f for f in ("report.md", "report.json", "index.html") if (out / f).is_file()]
    files += [p.relative_to(out).as_posix() for sub, pat in (("plots", "*.png"), ("model-index", "*.yaml"))
              for p in sorted((out / sub).glob(pat))]
    page = out / "index.html"
    if page.is_file():
        text = page.read_text(encoding="utf-8", errors="replace")
        files += sorted(set(re.findall(r'(?:src|href)="(clips/[^"/]+)"', text)))
    return files


def report_update(out: Path, *, force: bool = False):
    """Stage a report written into ``out`` (:func:`generation.ownership.owned_update`): ``out`` must be
    new, empty or a report folder (a render or Hub folder is refused); the commit replaces the files
    an earlier report wrote (its page and clips too when this run writes none), keeps every other
    file, and runs with interrupts held, so the page is never half-updated."""
    from generation.ownership import owned_update

    return owned_update(out, "report", what="vocalgrad report", legacy_files=_legacy_report_files, force=force)


def _load_runs(specs: list[str], *, others: bool = False, allow_mixed: bool = False) -> tuple[list, list, dict]:
    """Evaluations, format evaluations and the analysed extra groups of the result ``specs``; a
    folder with extra groups only (no per-category task), or with ``others`` (sweep runs) only, is not an error."""
    from .content import MixedBuildsError
    from .extras import analyse_extras, load_extras

    extras = analyse_extras(load_extras(specs)) if specs else {}
    try:
        evaluations, format_evals = load_all(specs, allow_mixed=allow_mixed) if specs else ([], [])
    except MixedBuildsError:
        raise
    except ResultsError:
        if not extras and not others:
            raise
        evaluations, format_evals = [], []
    return evaluations, format_evals, extras


def _add_human(evaluations: list, human) -> dict | None:
    """Append the listening-test answers as one "human" evaluation; return the annotators' agreement."""
    if not human:
        return None
    from analysis.listen.answers import annotator_agreement, human_evaluation

    from .psychometric import is_sweep_record

    ev = human_evaluation(human)
    ev.records = [r for r in ev.records if not is_sweep_record(r)]  # sweep answers go to the threshold fit
    if not ev.records:
        return None
    agreement = annotator_agreement(ev.records)
    dropped = _drop_unmatched(ev, evaluations)
    if not ev.records:
        raise ResultsError(f"--human {' '.join(str(h) for h in human)}: {dropped}, and none on a clip they "
                           "answered: give the listening test's answers on these runs' clips (or report them alone)")
    ev.n_samples = {c: sum(r["category"] == c for r in ev.records) for c in {r["category"] for r in ev.records}}
    evaluations.append(ev)
    return agreement


def _drop_unmatched(ev, evaluations: list) -> str | None:
    """Leave out of the human row the answers on clips no model run answered, counted and named in a warning
    (``ev.warnings``; returned): a human row is measured on the clips the models were (the annotator agreement
    keeps every answer). Nothing is dropped when no run logged samples (a report of the listening test alone)."""
    answered = {(r["category"], r["id"]) for e in evaluations if e.has_samples for r in e.records}
    extra = sorted({(r["category"], r["id"]) for r in ev.records} - answered, key=str) if answered else []
    if not extra:
        return None
    n_answers = sum((r["category"], r["id"]) not in answered for r in ev.records)
    ev.records = [r for r in ev.records if (r["category"], r["id"]) in answered]
    named = ", ".join(str(cid) for _, cid in extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
    what = f"{n_answers} answer(s) on {len(extra)} clip(s) that no model run answered ({named})"
    ev.warnings.append(f"{what} are left out of the human row (the annotator agreement keeps them): give the "
                       "results of the runs on those clips, or answers on the clips the runs answered")
    return what


def _draw_plots(report: dict[str, Any], out: Path) -> dict[str, Any]:
    """Draw each model's figure, the comparison and the cross-attribute matrices; their paths
    relative to ``out`` (``"xattr"`` maps labels to paths)."""
    from .parallel import run_tasks

    plot_paths: dict[str, Any] = {}
    tasks = []  # independent figures, drawn by worker processes
    if report["models"]:
        from .plots import plot_comparison, plot_model

        used = set()
        for m in report["models"]:
            name = slug(m["label"])
            while name in used:
                name += "-x"
            used.add(name)
            rel = f"plots/{name}.png"
            tasks.append((plot_model, (m, out / rel)))
            plot_paths[m["label"]] = rel
        tasks.append((plot_comparison, (report, out / "plots" / "comparison.png")))
        plot_paths["comparison"] = "plots/comparison.png"
    if report["extras"].get("xattr"):
        from .extras import plot_xattr

        plot_paths["xattr"] = {}
        for e in report["extras"]["xattr"]:
            rel = f"plots/xattr-{slug(e['label'])}.png"
            tasks.append((plot_xattr, (e, out / rel)))
            plot_paths["xattr"][e["label"]] = rel
    for _ in run_tasks(tasks):
        pass
    return plot_paths


def _markdown(report: dict[str, Any], plot_paths: dict, agreement: dict | None, render_dir) -> str:
    """``report.md``: the main sections, then domains, annotator agreement and label validity
    (each also added to ``report``)."""
    from .domains import domain_markdown, domain_rows

    md = render_markdown(report, plots=plot_paths)
    report["domains"] = domain_rows(report)
    md += domain_markdown(report)
    if agreement is not None:
        report["human_agreement"] = agreement
        md += _agreement_markdown(agreement)
    if render_dir is not None:
        from generation.label_validity import label_warning_summary, label_warnings_markdown

        report["label_validity"] = label_warning_summary(render_dir)
        md += label_warnings_markdown(render_dir)
    return md


def _write(out: Path, report: dict[str, Any], md: str, plot_paths: dict) -> dict[str, str]:
    """Write ``report.md`` and ``report.json``; return every file written by name."""
    atomic_write_text(out / "report.md", md)
    report["plots"] = plot_paths
    atomic_write_text(out / "report.json", json.dumps(_jsonable(report), indent=1, ensure_ascii=False) + "\n")
    written = {"report.md": str(out / "report.md"), "report.json": str(out / "report.json")}
    written.update({k: str(out / v) for k, v in plot_paths.items() if isinstance(v, str)})
    written.update({f"xattr:{k}": str(out / v) for k, v in plot_paths.get("xattr", {}).items()})
    return written


def _agreement_markdown(agr: dict[str, Any]) -> str:
    """The human-annotator section: accuracy and agreement per annotator, pairwise, Fleiss' kappa."""
    def pct(v):
        return "" if v is None or v != v else f"{100 * v:.1f}"

    lines = ["", "## Human annotators", "",
             "Agreement = share of shared clips where the annotator gave the majority answer of the others "
             "(ties count half).", "", "| annotator | answers | acc % | shared clips | agreement % |",
             "|---|---|---|---|---|"]
    for name, a in sorted(agr.get("per_annotator", {}).items()):
        lines.append(f"| {name} | {a.get('n', '')} | {pct(a.get('acc'))} | {a.get('shared', '')} | "
                     f"{pct(a.get('agreement'))} |")
    if agr.get("pairwise"):
        lines += ["", "| pair | shared clips | agreement % |", "|---|---|---|"]
        for pair, a in sorted(agr["pairwise"].items()):
            lines.append(f"| {pair} | {a.get('n', '')} | {pct(a.get('agreement'))} |")
    kappa = agr.get("fleiss_kappa")
    if kappa is not None and kappa == kappa:
        lines += ["", f"Fleiss' kappa: {kappa:.3f}"]
    return "\n".join(lines) + "\n"


def register_cli(sub) -> None:
    p = sub.add_parser(
        "report", help="tables, intervals, bias and plots from lm-eval outputs",
        description="Read lm-eval output folders (results JSON + --log_samples JSONL) and write "
                    "DIR/report.md, DIR/report.json and DIR/plots/*.png (with --html also DIR/index.html).")
    p.add_argument("results", nargs="*", metavar="RESULTS",
                   help="lm-eval --output_path folder or results_*.json file, or the authors' raw prediction "
                        "files (*.jsonl, docs/published.md); LABEL=PATH names the model")
    p.add_argument("--out", required=True, help="output folder: new, empty or a report folder (the files an earlier "
                   "report wrote are replaced, others kept; a render or Hub folder is refused)")
    p.add_argument("--force", action="store_true",
                   help="also replace report files edited since they were written, and write into a non-empty "
                        "folder that is no report folder (keeping its files)")
    p.add_argument("--draws", type=int, default=DRAWS, help=f"bootstrap draws (default {DRAWS})")
    p.add_argument("--seed", type=int, default=SEED, help=f"bootstrap seed (default {SEED})")
    p.add_argument("--top", type=int, default=20, help="most frequent raw outputs to list (default 20)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figures")
    p.add_argument("--human", nargs="+", metavar="ANSWERS",
                   help="answers.jsonl of `vocalgrad listen`: adds a 'human' row and annotator agreement")
    p.add_argument("--render", metavar="DIR", help="render folder evaluated: adds its label warnings")
    p.add_argument("--allow-mixed", action="store_true",
                   help="results of different builds (same clip ids, other audio, by the sha256 of the sample "
                        "logs): one row per build, labelled by its fingerprint, never paired (default: refuse)")
    from .html_page import add_html_arguments

    add_html_arguments(p)
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    if args.draws < 1:
        print("vocalgrad report: error: --draws must be >= 1", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    from generation.ownership import claim_out

    from .html_page import html_options

    try:
        claim_out(args.out, "report", force=args.force)  # a render or Hub folder given as --out is refused before --data is read
        html = html_options(args)  # checked (and --data opened) before anything is written
    except ValueError as exc:  # OwnershipError is one
        return report_error("vocalgrad report", exc)
    try:
        rep = build_report(args.results, args.out, draws=args.draws, seed=args.seed, top=args.top,
                           plots=not args.no_plots, human=args.human, render_dir=args.render, html=html,
                           force=args.force, allow_mixed=args.allow_mixed)
    except (ResultsError, OSError) as exc:
        return report_error("vocalgrad report", exc)
    for fmt, entries in rep["formats"].items():
        for e in entries:
            print(f"{e['label']} [{fmt}]: macro-F1 {100 * e['overall']['mean_macro_f1']:.1f} %, "
                  f"acc {100 * e['overall']['mean_acc']:.1f} % (mean over categories)", file=sys.stderr)
    for m in rep["models"]:
        for w in m.get("warnings", []):
            print(f"vocalgrad report: warning: {m['label']}: {w}", file=sys.stderr)
        ov = m["overall"]
        acc = ov.get("acc", ov.get("category_mean_acc"))
        extra = ""
        if m["has_samples"]:
            extra = f" {headline_line(ov)}"  # the claim over voices, or why there is none (analysis.report.verdicts)
            if ov.get("n_error") and "error answers" not in ov["verdict"]:
                extra += f", {100 * ov['error_rate']:.0f} % error answers"
            if ov.get("n_blocked"):
                extra += f", {100 * ov['blocked_rate']:.0f} % blocked by the provider (counted wrong)"
        print(f"{m['label']}: acc {100 * acc:.1f} %{extra}", file=sys.stderr)
    if "html" in rep:
        print(f"HTML page: {rep['html']['path']} ({rep['html']['clips']} clips, "
              f"{rep['html']['bytes'] / 1e6:.1f} MB with its clips and figures)", file=sys.stderr)
    print(f"report written to {rep['paths']['report.md']} in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    return 0
