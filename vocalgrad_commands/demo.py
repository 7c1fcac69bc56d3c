"""``vocalgrad demo``: the whole pipeline on the embedded demo voices, offline, in minutes.

Steps (each resumable; rerun the command to continue after an interruption):

1. render the first N demo sources (all nine categories, 216 clips each) into ``OUT/render``;
2. build the Hub folder ``OUT/hub`` from it;
3. score the reference baselines through lm-eval (``vocalgrad-eval``) on that folder:
   the signal-processing oracle, a seeded coin and the constant "increase" answer;
4. write ``OUT/summary.md``: accuracy per category for each baseline, next to the paper's numbers;
5. write the full report (``vocalgrad report --html --data OUT/hub``) into ``OUT/report``: ``report.md``,
   ``report.json`` and plots, with intervals, the response-bias table and paired comparisons, and
   ``index.html``, the same numbers as a page with clips to listen to;
6. print the next commands to type, offline on ``OUT/hub`` (:func:`next_commands`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import vocalgrad as vg

from generation.ownership import OwnershipError, check_out, write_marker
from generation.paper_results import PAPER_CATEGORY_ACC

__all__ = ["run_demo", "register_cli", "BASELINES", "DEMO_PARTS", "check_demo_out", "next_commands", "next_steps"]

#: (label, model name, model_args) of the baselines the demo scores.
BASELINES = (
    ("oracle", "vocalgrad-oracle", ""),
    ("chance", "vocalgrad-chance", "seed=1234"),
    ("always-increase", "vocalgrad-constant", "direction=increase"),
)
#: Paper rows shown in the summary (benchmark.md §9; the data live in generation.paper_results).
SUMMARY_PAPER_SYSTEMS = ("Human", "Gemini 3 Flash")


def _step(msg: str) -> None:
    print(f"\n== {msg}", file=sys.stderr, flush=True)


def _evaluate(hub_dir: Path, results_dir: Path, name: str, model: str, model_args: str) -> Path:
    """Run one baseline through vocalgrad-eval (a subprocess: lm-eval keeps global state)."""
    out = results_dir / name
    done = sorted(out.rglob("results_*.json"))
    if done:
        return done[-1]
    cmd = [sys.executable, "-m", "harness_tasks.cli", "--model", model, "--tasks", "vocalgrad",
           "--output_path", str(out), "--log_samples"]
    if model_args:
        cmd += ["--model_args", model_args]
    env = dict(os.environ, VOCALGRAD_DATASET=str(hub_dir), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"vocalgrad-eval failed for {name}:\n{proc.stdout[-3000:]}")
    done = sorted(out.rglob("results_*.json"))
    if not done:
        raise RuntimeError(f"vocalgrad-eval wrote no results file under {out}")
    return done[-1]


def _category_acc(results_file: Path) -> dict[str, float]:
    res = json.loads(results_file.read_text())["results"]
    acc = {}
    for cat in vg.CATEGORY_NAMES:
        entry = res.get(f"vocalgrad_{cat}", {})
        val = entry.get("acc,none", entry.get("acc"))
        if val is not None:
            acc[cat] = 100.0 * float(val)
    return acc


def write_summary(out_dir: Path, accs: dict[str, dict[str, float]], n_clips: int) -> Path:
    """Markdown table of accuracy per category for the baselines and the paper's rows."""
    head = ["model"] + list(vg.CATEGORY_NAMES) + ["avg"]
    lines = ["# VocalGrad demo: baseline accuracy (%)", "",
             f"{n_clips} clips rendered from the synthetic demo voices (not the VCTK reference set).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, acc in accs.items():
        vals = [acc.get(c) for c in vg.CATEGORY_NAMES]
        have = [v for v in vals if v is not None]
        avg = sum(have) / len(have) if have else None
        cells = ["" if v is None else f"{v:.1f}" for v in vals + [avg]]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for name in SUMMARY_PAPER_SYSTEMS:
        row = PAPER_CATEGORY_ACC[name]
        lines.append(f"| {name} (paper) | " + " | ".join(f"{row[c]:.1f}" for c in vg.CATEGORY_NAMES)
                     + f" | {row['avg']:.1f} |")
    path = out_dir / "summary.md"
    path.write_text("\n".join(lines) + "\n")
    return path


#: The parts of the demo folder that a command of their own writes, and the kind each must be.
DEMO_PARTS = (("render", "render"), ("hub", "hub"), ("report", "report"))


def check_demo_out(out: Path) -> None:
    """Refuse, before anything is rendered, a demo folder (or a ``render``/``hub``/``report`` part of it)
    that is someone else's (:func:`generation.ownership.check_out`)."""
    first = check_out(out, "demo")  # a looping --out is named as such, not through each part
    problems = [first] if first and "symbolic link loop" in first else (
        [check_out(out / sub, kind, option="") for sub, kind in DEMO_PARTS] + [first])
    problems = [p for p in problems if p]
    if problems:
        raise OwnershipError(problems[0] + ("" if len(problems) == 1 else f" (and {len(problems) - 1} more)")
                             + "; nothing was rendered")


def run_demo(out_dir="demo_out", *, n_sources: int | None = 4, jobs: int | None = None,
             evaluate: bool = True) -> Path:
    """Render, build the Hub folder, score the baselines, write the summary and the report.

    Returns the path of ``summary.md``; the full report is ``OUT/report/report.md`` and its page
    ``OUT/report/index.html``. Without ``evaluate`` only the render and the Hub folder are made (no
    results, summary or report), and the Hub folder's path is returned.
    """
    from generation.hub import build_hub
    from generation.render import render

    t0 = time.perf_counter()
    out = Path(out_dir)
    check_demo_out(out)  # before any work: the demo folder and each of its parts must be the demo's
    out.mkdir(parents=True, exist_ok=True)
    write_marker(out, "demo")
    steps = 5 if evaluate else 2
    _step(f"1/{steps} render the demo set ({'all' if n_sources is None else n_sources} sources x 216 clips)")
    summary = render("demo", out / "render", n_sources=n_sources, jobs=jobs)
    n_clips = summary.clips_total
    _step(f"2/{steps} build the Hub folder")
    build_hub([out / "render"], out / "hub")
    if not evaluate:
        print(f"done in {time.perf_counter() - t0:.0f} s: clips in {out / 'render'}, Hub folder in {out / 'hub'} "
              "(no baselines scored: --no-eval)", file=sys.stderr)
        return out / "hub"
    accs: dict[str, dict[str, float]] = {}
    for k, (name, model, args) in enumerate(BASELINES, 1):
        _step(f"3/5 score baseline {k}/{len(BASELINES)}: {name} ({model}) through lm-eval")
        accs[name] = _category_acc(_evaluate(out / "hub", out / "results", name, model, args))
    _step("4/5 summary")
    path = write_summary(out, accs, n_clips)
    print(path.read_text())
    from analysis.report import build_report

    _step("5/5 report: intervals, response bias, paired comparisons, plots, HTML page with clips")
    from analysis.listen.catalog import open_catalog
    from analysis.report.html_page import HtmlOptions

    rep = build_report([f"{name}={out / 'results' / name}" for name, _, _ in BASELINES], out / "report",
                       html=HtmlOptions(catalog=open_catalog(out / "hub")))
    print(f"report: {rep['paths']['report.md']}", file=sys.stderr)
    print(f"HTML page: {rep['html']['path']} (open it in a browser; {rep['html']['clips']} clips, "
          f"{rep['html']['bytes'] / 1e6:.1f} MB)", file=sys.stderr)
    print(f"done in {time.perf_counter() - t0:.0f} s: clips in {out / 'render'}, Hub folder in {out / 'hub'}, "
          f"lm-eval results in {out / 'results'}, report in {out / 'report'}", file=sys.stderr)
    print(next_steps(out), file=sys.stderr)
    return path


def next_commands(out) -> list[tuple[str, str]]:
    """The commands a reader can type after ``vocalgrad demo --out OUT``, offline, as ``(why, command)``.

    They use the demo's own folders (``OUT/hub`` as ``VOCALGRAD_DATASET``, ``OUT/render``), write
    into new folders of the current directory (``results/``, ``report/``, ``clip.png``, ``build-train/``)
    and stay small (``--limit 8``, ``--sources 1``); ``tests/test_docs_run.py`` runs them as printed.
    """
    out = Path(out)
    hub, render = shlex.quote(str(out / "hub")), shlex.quote(str(out / "render"))
    first = sorted((out / "render" / "clips" / "pitch").glob("*__pitch__jump__high__increase.flac"))
    clip = first[0].stem if first else vg.clip_id("SOURCE", "pitch", "jump", "high", "increase")
    return [
        ("score a model on the demo's Hub folder (here the oracle, 8 clips per category; models: docs/models.md)",
         f"VOCALGRAD_DATASET={hub} vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad --limit 8 "
         "--output_path results/ --log_samples"),
        (f"report on it (add --html --data {hub} for the page with clips to listen to)",
         "vocalgrad report results/ --out report/"),
        ("one clip as a picture: spectrogram with the speech span, planned and measured curve, its source beside it",
         f"vocalgrad show {clip} --data {render} --out clip.png"),
        ("render more demo voices (216 clips a source; --sources 100 is the full set, about an hour on 2 cores)",
         "vocalgrad render --source demo --split train --sources 1 --out build-train/"),
    ]


def next_steps(out) -> str:
    """:func:`next_commands` as the text the demo prints last."""
    lines = ["", "Next, offline (copy as written; without VOCALGRAD_DATASET the tasks read the Hub dataset "
             "ynklab/vocalgrad, which needs the network):"]
    for why, cmd in next_commands(out):
        lines += [f"  # {why}", f"  {cmd}"]
    return "\n".join(lines)


def register_cli(sub) -> None:
    from generation.render_cli import positive_int

    p = sub.add_parser(
        "demo", help="render the demo set, build the Hub folder, score baselines, write the report",
        description="""The whole pipeline on the embedded synthetic voices, offline: render, Hub folder, three
            baselines through lm-eval, OUT/summary.md and the full report in OUT/report.""")
    p.add_argument("--out", default="demo_out", help="output folder (default demo_out)")
    p.add_argument("--sources", type=positive_int, default=4, help="demo sources to render (default 4 = 864 clips)")
    p.add_argument("--full", action="store_true", help="render all 100 test sources (21,600 clips)")
    p.add_argument("--jobs", type=positive_int, help="render worker processes, >= 1 (default: all cores)")
    p.add_argument("--no-eval", action="store_true",
                   help="stop after building the Hub folder (no baselines, summary.md or report)")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    try:
        run_demo(args.out, n_sources=None if args.full else args.sources, jobs=args.jobs,
                 evaluate=not args.no_eval)
    except (ValueError, RuntimeError) as exc:
        print(f"vocalgrad demo: error: {exc}", file=sys.stderr)
        return 2
    return 0
