"""Calibration of every interval and test the toolkit prints, by simulated observers with known truth.

Run from the repository root::

    python3 benchmarks/calibration.py --quick            # about a minute on 2 free cores
    python3 benchmarks/calibration.py --out calib/       # the full table (docs/statistics.md)

Each *cell* simulates one design many times (seeded per cell and simulation: the result does not depend on
the number of workers) and counts, per statistic, how often an interval covers its truth (coverage, nominal
95 %) or a test rejects a true null (size, nominal 5 %). The output is a markdown table (``calibration.md``)
and ``calibration.json``: nominal, actual, its Monte-Carlo standard error, and a verdict: *ok* inside
93-97 % / 3.5-6.5 % (the range the toolkit promises), *off* when the actual rate lies outside by more than
two Monte-Carlo standard errors, *borderline* when outside by less (more simulations would tell), *withheld*
where the toolkit gives no interval or verdict at that design (it says so in the report). The tables are
rewritten after every finished cell, so a stopped run leaves the cells it finished.

Cell interface (for other modules' cells)
-----------------------------------------
A provider is a function ``calibration_cells(quick: bool) -> list`` of cells. A cell is a ``dict`` with

``name`` (str)
    What is measured, e.g. ``"accuracy intervals"``.
``design`` (str)
    The simulated design, e.g. ``"20 sources, alike"``.
``kind`` (``"coverage"`` or ``"size"``)
    Coverage of intervals, or rejection rate of tests under a true null.
``nominal`` (float)
    0.95 for a 95 % interval, 0.05 for a 5 % test.
``sims`` (int)
    Simulations (>= 500 for coverage, >= 1,000 for size in the full run).
``run`` (callable)
    ``run(rng) -> dict[str, bool | None]``: one simulation from a ``numpy.random.Generator``, giving per
    statistic whether it covered (coverage) or rejected (size); ``None`` when the toolkit withholds that
    interval or verdict in this simulation. It must be picklable (a module-level function, or a
    ``functools.partial`` of one) as cells run in worker processes.
``note`` (str, optional)
    One line printed under the table.

A provider may instead return *measured* cells, simulated by itself (the sweep fit refits each simulated
observer, and runs its own pool): a ``dict`` with ``method``, ``design``, ``kind`` (``"coverage"``,
``"size"`` or ``"bias"``: the mean relative error of an estimate, nominal 0, band ±5 %), ``nominal``,
``actual``, ``mc_se``, ``n_sims`` and optionally ``truth``, ``note`` and ``at_most`` (true for a rate
whose claim is an upper bound, e.g. "a coin gets a threshold in at most 5 %": only its upper band end
counts). They are added to the table as rows, after the simulated cells.

Providers: :func:`benchmarks.calibration_designs.cells` (accuracy intervals, chance verdicts, paired
comparisons) and ``analysis.report.psychometric_sim.calibration_cells`` when that function exists (the sweep
fit's threshold intervals and chance test); a missing provider is skipped.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import multiprocessing as mp
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

#: ``(module, function)`` of every cell provider, called with ``quick`` (this toolkit's own also with draws, sources).
PROVIDERS = [("calibration_designs", "cells"), ("analysis.report.psychometric_sim", "calibration_cells")]
#: The range within which a nominal 95 % interval / 5 % test is called calibrated.
BANDS = {"coverage": (0.93, 0.97), "size": (0.035, 0.065), "bias": (-0.05, 0.05)}
#: Keys of a measured cell (a provider that simulates by itself).
MEASURED = {"method", "design", "kind", "nominal", "actual", "mc_se", "n_sims"}
SEED = 20261204


def gather_cells(quick: bool, draws: int | None = None, providers=PROVIDERS, sources=None) -> list[dict]:
    """Every provider's cells (a provider module or function that does not exist is skipped); ``draws`` and
    ``sources`` (designs) go to this toolkit's own cells (``calibration_designs``), and with ``sources`` the
    other providers are left out."""
    out = []
    for mod, fn in providers:
        if sources and mod != "calibration_designs":
            continue
        try:
            func = getattr(importlib.import_module(mod), fn)
        except (ImportError, AttributeError):
            continue
        if mod == "calibration_designs":
            cells = func(quick, draws or 2000, tuple(sources) if sources else None)
        else:
            cells = func(quick)
        for c in cells:
            if MEASURED <= set(c) and c["kind"] in BANDS:
                out.append(c)
                continue
            missing = {"name", "design", "kind", "nominal", "sims", "run"} - set(c)
            if missing or c["kind"] not in BANDS or c["kind"] == "bias":
                raise ValueError(f"{mod}.{fn}: a cell lacks {sorted(missing)} or has kind {c.get('kind')!r} "
                                 f"(coverage or size); see the interface in benchmarks/calibration.py")
            out.append(c)
    return out


def measured_row(cell: dict) -> dict:
    """The table row of a measured cell (see the interface above)."""
    lo, hi = BANDS[cell["kind"]]
    p, se = cell["actual"], cell["mc_se"]
    what = cell["method"] + (f" ({cell['truth']})" if cell.get("truth") else "")
    row = {"cell": "psychometric thresholds", "design": cell["design"], "statistic": what, "kind": cell["kind"],
           "nominal": cell["nominal"], "sims": cell["n_sims"], "defined": cell["n_sims"], "note": cell.get("note", "")}
    if p is None or not math.isfinite(p):
        return {**row, "actual": None, "mc_se": None, "verdict": "withheld"}
    n = max(int(cell["n_sims"]), 1)
    if cell["kind"] != "bias":  # a rate: never a smaller s.e. than a binomial one with p(1-p) >= 0.25/n
        se = math.sqrt(max(p * (1 - p), 0.25 / n) / n)
    se = se if se is not None and math.isfinite(se) else 0.0
    if cell.get("at_most"):
        lo = -math.inf
    verdict = "ok" if lo <= p <= hi else ("off" if (p + 2 * se < lo or p - 2 * se > hi) else "borderline")
    return {**row, "actual": p, "mc_se": se, "verdict": verdict}


def _seed(cell: dict, i: int) -> np.random.Generator:
    key = zlib.crc32(f"{cell['name']}|{cell['design']}".encode())
    return np.random.default_rng(np.random.SeedSequence([SEED, key, i]))


def _chunk(job):
    cell, start, stop = job
    out: dict[str, list[int]] = {}
    for i in range(start, stop):
        for stat, hit in cell["run"](_seed(cell, i)).items():
            row = out.setdefault(stat, [0, 0, 0])  # events, defined, simulations
            row[2] += 1
            if hit is not None:
                row[0] += bool(hit)
                row[1] += 1
    return out


def run_cells(cells: list[dict], workers: int = 2, chunk: int = 25, progress=None) -> list[dict]:
    """Simulate every cell; one row per (cell, statistic), in the cells' order.

    ``progress(rows)``, when given, is called with the rows of the cells finished so far (in order).
    """
    jobs = [(i, (c, s, min(s + chunk, c["sims"]))) for i, c in enumerate(cells) for s in range(0, c["sims"], chunk)]
    left = [sum(1 for i, _ in jobs if i == k) for k in range(len(cells))]
    totals: list[dict[str, list[int]]] = [{} for _ in cells]
    pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        results = pool.imap(_chunk, [j for _, j in jobs]) if pool else map(_chunk, [j for _, j in jobs])
        done = 0
        for (i, _), res in zip(jobs, results):
            for stat, (e, d, n) in res.items():
                row = totals[i].setdefault(stat, [0, 0, 0])
                row[0] += e
                row[1] += d
                row[2] += n
            left[i] -= 1
            while done < len(cells) and left[done] == 0:
                done += 1
                if progress is not None:
                    progress(_rows(cells[:done], totals))
    finally:
        if pool:
            pool.close()
            pool.join()
    return _rows(cells, totals)


def _rows(cells, totals) -> list[dict]:
    return [_row(cell, stat, e, d, n) for cell, tot in zip(cells, totals) for stat, (e, d, n) in tot.items()]


def _row(cell: dict, stat: str, events: int, defined: int, sims: int) -> dict:
    lo, hi = BANDS[cell["kind"]]
    row = {"cell": cell["name"], "design": cell["design"], "statistic": stat, "kind": cell["kind"],
           "nominal": cell["nominal"], "sims": sims, "defined": defined, "note": cell.get("note", "")}
    if defined == 0:
        return {**row, "actual": None, "mc_se": None, "verdict": "withheld"}
    p = events / defined
    se = math.sqrt(max(p * (1 - p), 0.25 / defined) / defined)
    verdict = "ok" if lo <= p <= hi else ("off" if (p + 2 * se < lo or p - 2 * se > hi) else "borderline")
    return {**row, "actual": p, "mc_se": se, "verdict": verdict}


def markdown(rows: list[dict]) -> str:
    """The table: one line per statistic and design."""
    lines = ["| what | design | statistic | nominal | actual (MC s.e.) | sims | verdict |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        act = ("–" if r["actual"] is None else f"{100 * r['actual']:+.1f} % (±{100 * r['mc_se']:.1f})" if r["kind"] == "bias"
               else f"{100 * r['actual']:.1f} % (±{100 * r['mc_se']:.1f})")
        lines.append(f"| {r['cell']} | {r['design']} | {r['statistic']} | {100 * r['nominal']:.0f} % | {act} | "
                     f"{r['defined']} | {r['verdict']} |")
    notes = sorted({r["note"] for r in rows if r["note"]})
    return "\n".join(lines + [""] + [f"- {n}" for n in notes]) + "\n"


def main(argv=None) -> int:
    from calibration_designs import SOURCES
    from generation.option_types import out_folder, positive_int

    p = argparse.ArgumentParser(description="Coverage of every interval and size of every test, by simulation.")
    p.add_argument("--quick", action="store_true",
                   help="2, 5 and 20 sources, 80 / 160 simulations per cell (about a minute on 2 free cores)")
    p.add_argument("--workers", type=positive_int, default=min(2, os.cpu_count() or 1),
                   help="processes, >= 1 (default 2)")
    p.add_argument("--draws", type=positive_int, default=None,
                   help="bootstrap draws per interval in the simulations (default 2,000; the report uses 10,000)")
    p.add_argument("--sources", type=int, nargs="+", default=None, metavar="K", choices=SOURCES,
                   help="only the designs with these numbers of sources (default: all; quick: 2 5 20)")
    p.add_argument("--out", type=out_folder, default=None,
                   help="folder for calibration.md and calibration.json (default: print); checked before the work")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    cells = gather_cells(args.quick, args.draws, sources=args.sources)
    meta = {"quick": args.quick, "sources": args.sources, "workers": args.workers, "seed": SEED, "bands": BANDS,
            "cells": len(cells)}

    def write(rows, final=False):
        if not args.out:
            return
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        info = {**meta, "finished": final, "seconds": round(time.perf_counter() - t0, 1)}
        for name, text in (("calibration.md", markdown(rows)), ("calibration.json",
                                                                json.dumps({**info, "rows": rows}, indent=1))):
            tmp = out / f".{name}.tmp"
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(out / name)  # after each finished cell: a stopped run leaves the cells it finished

    measured = [measured_row(c) for c in cells if "run" not in c]
    cells = [c for c in cells if "run" in c]
    rows = run_cells(cells, workers=max(1, args.workers), progress=lambda r: write(r + measured)) + measured
    took = time.perf_counter() - t0
    write(rows, final=True)
    print(markdown(rows))
    off = sum(r["verdict"] == "off" for r in rows)
    print(f"{len(rows)} rows, {off} off, {took:.0f} s on {args.workers} worker(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
