"""Seconds the psychometric (magnitude sweep) section adds to ``vocalgrad report``.

Usage::

    python benchmarks/sweep_report_cost.py [--sources 20] [--paper-sources 5] [--repeats 1] [--cpus 1,all]

Writes lm-eval output folders for 3 simulated models (the writer of the report tests,
``tests/_report_helpers.write_results``): the paper set (``--paper-sources`` sources, the 9
attributes), and, in a second folder, the same plus a ``vocalgrad_sweep_<attribute>`` sample log
for each of the 11 sweep attributes (the paper's 9, brightness, formants) with ``--sources``
sources x 4 trajectories x 2 directions per level, answered by
``analysis.report.psychometric_sim.simulate``: a sharp unbiased observer (threshold at the low
tier), a biased lapsing one (threshold at the medium tier, 80 % "increase", lapse 0.1, 5 %
unparsed) and a coin (60 % "increase"). Then runs ``python -m vocalgrad_commands.cli report`` on each
folder (default settings), pinned to 1 CPU (the fits one after another) and to all CPUs (the
fits and figures in worker processes), interleaved, ``--repeats`` times, and prints one table:

* wall seconds and CPU seconds (user + system of the report process and its worker processes) of
  the report without and with the sweeps, and the difference;
* the load average before and after, because the machine may be shared: the CPU seconds are the
  fair figure; "idle estimate" is the extra CPU seconds divided by the CPUs the report may use
  (the fits and figures are split over that many workers; loading the logs, about 1 s, is not);
* the sha256 of report.json's ``psychometric`` block in every run (it must not depend on the CPUs).

The target (issue 35): at most 30 s more than the report without sweeps on 2 idle cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OBSERVERS = {  # label -> simulate() keywords; "low"/"medium": the threshold at that paper tier
    "sharp": {"threshold": "low", "beta": 3.0, "lapse": 0.02},
    "biased": {"threshold": "medium", "beta": 2.0, "increase_share": 0.8, "lapse": 0.1, "unparsed": 0.05},
    "coin": {"threshold": None, "increase_share": 0.6, "lapse": 0.0},
}


def sweep_docs_and_answers(category: str, label: str, *, sources: int, seed: int) -> tuple[list[dict], dict]:
    """The sweep docs of one attribute (every level incl. the zero change) and the observer's answer per clip id."""
    import vocalgrad
    from analysis.report.psychometric_sim import simulate
    from generation.sweep_plan import sweep_levels

    levels = sweep_levels(category)
    tiers = {lv.tier: lv.magnitude for lv in levels if lv.tier}
    obs = dict(OBSERVERS[label])
    if isinstance(obs["threshold"], str):
        obs["threshold"] = tiers[obs["threshold"]]
    per = 2 * len(vocalgrad.TRAJECTORIES)
    counts = simulate([lv.magnitude for lv in levels], n_sources=sources, per_source=per, seed=seed, **obs)
    docs, answers = [], {}
    for s in range(sources):
        sid = f"spk{s:02d}_{s:02d}"
        for j, lv in enumerate(levels):
            for d, (k, n) in (("increase", counts[s, 0:2, j]), ("decrease", counts[s, 2:4, j])):
                for t, traj in enumerate(vocalgrad.TRAJECTORIES):
                    cid = vocalgrad.clip_id(sid, category, traj, lv.token, d)
                    docs.append({"id": cid, "category": category, "direction": d, "label": d, "tier": lv.token,
                                 "trajectory": traj, "source_id": sid, "magnitude": lv.magnitude,
                                 "level_null": False})
                    answers[cid] = ("increase" if t < k else "decrease") if t < n else "I cannot tell."
    return docs, answers


def write_folders(tmp: Path, *, sources: int, paper_sources: int) -> tuple[Path, Path]:
    """``tmp/paper`` (the paper set only) and ``tmp/sweep`` (the same plus the sweep logs)."""
    import shutil

    from generation import attributes
    from tests._report_helpers import clips, write_results

    paper, sweep = tmp / "paper", tmp / "sweep"
    docs = clips(sources=paper_sources)
    for i, label in enumerate(OBSERVERS):
        def answer(doc, i=i):  # about 70 % correct, a few unparsed, seeded by the clip id
            h = hashlib.sha256(f"{i}:{doc['id']}".encode()).digest()[0]
            other = "decrease" if doc["direction"] == "increase" else "increase"
            return "maybe" if h < 8 else doc["direction"] if h < 185 else other
        write_results(paper, f"model-{label}", answer, docs=docs)
    shutil.copytree(paper, sweep)
    cats = list(attributes.installed())
    for i, label in enumerate(OBSERVERS):
        docs, answers = [], {}
        for c, cat in enumerate(cats):
            d, a = sweep_docs_and_answers(cat, label, sources=sources, seed=1000 * i + c)
            docs += d
            answers.update(a)
        write_results(sweep, f"model-{label}", lambda doc: answers[doc["id"]], docs=docs, variant="sweep",
                      stamp="2026-01-02T00-00-00.000000")
    return paper, sweep


def run_report(results: Path, out: Path, cpus: int | None) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its waited-for workers) of ``vocalgrad report``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", MPLBACKEND="Agg")
    pin = (lambda: os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cpus]))) if cpus else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vocalgrad_commands.cli", "report", str(results), "--out", str(out)],
                          env=env, capture_output=True, text=True, preexec_fn=pin)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"report failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def psychometric_digest(out: Path) -> tuple[str, int]:
    """sha256 of report.json's psychometric block (canonical JSON) and its number of observer entries."""
    block = json.loads((out / "report.json").read_text())["psychometric"]
    text = json.dumps(block, sort_keys=True)
    n = sum(len(e["observers"]) for e in (block.get("attributes") or {}).values())
    return hashlib.sha256(text.encode()).hexdigest()[:16], n


def main() -> int:
    from generation.option_types import comma_list, out_folder, positive_int

    def cpu_settings(text: str) -> str:
        """Comma-separated CPU counts >= 1 or ``all``."""
        return ",".join(c if c == "all" else str(positive_int(c)) for c in comma_list(text))

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sources", type=positive_int, default=20, help="sources of every sweep (default 20)")
    ap.add_argument("--paper-sources", type=positive_int, default=5, help="sources of the paper set (default 5)")
    ap.add_argument("--repeats", type=positive_int, default=1, help="reports of each kind, interleaved (medians shown)")
    ap.add_argument("--cpus", type=cpu_settings, default="1,all",
                    help="CPU settings to run, comma-separated whole numbers >= 1 or all (default: 1,all)")
    ap.add_argument("--keep", type=out_folder, metavar="DIR",
                    help="write the folders and reports here (default: a temp folder)")
    args = ap.parse_args()
    ncpu = len(os.sched_getaffinity(0))
    settings = [ncpu if c == "all" else min(int(c), ncpu) for c in args.cpus.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(args.keep or tmp)
        tmp.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        paper, sweep = write_folders(tmp, sources=args.sources, paper_sources=args.paper_sources)
        made = time.perf_counter() - t
        load0 = os.getloadavg()
        runs: dict[tuple[str, int], list] = {}
        for r in range(args.repeats):
            for cpus in settings:
                for name, folder in (("without sweeps", paper), ("with sweeps", sweep)):
                    out = tmp / f"report-{name.split()[0]}-{cpus}cpu-{r}"
                    runs.setdefault((name, cpus), []).append(run_report(folder, out, cpus))
        load1 = os.getloadavg()
        digests = {psychometric_digest(tmp / f"report-with-{c}cpu-{r}") for c in settings for r in range(args.repeats)}
        entries = psychometric_digest(tmp / f"report-with-{settings[0]}cpu-0")[1]
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
    print(f"vocalgrad report, 3 models; paper set {args.paper_sources} sources; sweeps 11 attributes x "
          f"{args.sources} sources x 8 clips per level ({entries} observer x attribute fits); {ncpu} CPUs; "
          f"logs written in {made:.1f} s")
    print(f"load average (1, 5, 15 min) before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
          f"after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; median of {args.repeats}")
    print(f"{'report':<16} {'CPUs':>5} {'wall s':>8} {'CPU s':>8} {'CPU / wall':>11}")
    for (name, cpus), (w, c) in med.items():
        print(f"{name:<16} {cpus:5d} {w:8.1f} {c:8.1f} {c / w:11.2f}")
    for cpus in settings:
        (w0, c0), (w1, c1) = med[("without sweeps", cpus)], med[("with sweeps", cpus)]
        print(f"{'sweeps add':<16} {cpus:5d} {w1 - w0:8.1f} {c1 - c0:8.1f}   idle estimate of the extra wall: "
              f"{(c1 - c0) / cpus:.1f} s (extra CPU s / {cpus}: the fits and figures split over {cpus} "
              f"worker{'s' * (cpus > 1)}; target <= 30 s on 2 cores)")
    same = "identical in every run" if len(digests) == 1 else f"DIFFERS between runs: {sorted(digests)}"
    print(f"report.json psychometric block sha256 {sorted(digests)[0][0]}: {same}")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
