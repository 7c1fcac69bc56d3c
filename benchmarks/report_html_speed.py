"""Seconds of ``vocalgrad report --html --data`` on the demo: before and after the picture speed-ups.

Usage::

    vocalgrad demo --out demo_out                  # once (or use an existing demo folder)
    python benchmarks/report_html_speed.py [--demo demo_out] [--max-clips 80] [--jobs N] [--first]

Prints one table from one run, each row the whole report (tables, plots, page, clips) into a fresh folder,
with its wall-clock seconds and the CPU seconds of the process and its workers:

* first (with ``--first``): the figures and clip pictures drawn one after another by matplotlib, every STFT
  bin drawn, matplotlib's constrained layout, no picture cache (what ``report --html`` did first);
* matplotlib, cold: the pictures drawn by matplotlib with merged log-frequency bands and fixed margins, by
  worker processes (one per CPU), into an empty picture cache (the previous version);
* Pillow, cold: the pictures drawn with Pillow alone (:mod:`analysis.report.clip_picture`, the default), by
  worker processes, into an empty picture cache;
* Pillow, warm: the same report again (every picture read from the cache).

The target: the demo's page (``vocalgrad demo``'s 4 sources) in at most 20 s on 2 idle cores (Pillow, cold).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _report(demo: Path, out: Path, *, max_clips: int) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process and its finished workers, clips on the page)."""
    from analysis.listen.catalog import open_catalog
    from analysis.report.command import build_report
    from analysis.report.html_page import HtmlOptions

    from vocalgrad_commands.demo import BASELINES

    runs = [f"{name}={demo / 'results' / name}" for name, _, _ in BASELINES]  # as `vocalgrad demo` calls it
    if not all((demo / "results" / name).is_dir() for name, _, _ in BASELINES):
        runs = [demo / "results"]
    t, c = time.perf_counter(), os.times()
    rep = build_report(runs, out,
                       html=HtmlOptions(catalog=open_catalog(demo / "hub"), max_clips=max_clips))
    e = os.times()
    cpu = (e.user - c.user) + (e.system - c.system) + (e.children_user - c.children_user) + (
        e.children_system - c.children_system)
    return time.perf_counter() - t, cpu, rep["html"]["clips"]


def main() -> int:
    from generation.option_types import positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--demo", default="demo_out", help="a `vocalgrad demo` folder (results/ and hub/)")
    ap.add_argument("--max-clips", type=positive_int, default=80)
    ap.add_argument("--jobs", type=positive_int, default=None, help="worker processes (default: the CPUs)")
    ap.add_argument("--first", action="store_true", help="also the first version's row (serial matplotlib, slow)")
    args = ap.parse_args()
    demo = Path(args.demo)
    if not (demo / "results").is_dir() or not (demo / "hub").is_dir():
        ap.error(f"{demo}: no results/ and hub/; run `vocalgrad demo --out {demo} --sources 1` first")

    import analysis.report.html_pictures as pics
    import analysis.report.parallel as par
    import analysis.show as show

    real_cpus = par.cpu_count
    workers = (lambda: args.jobs) if args.jobs else real_cpus
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.first:
            os.environ["VOCALGRAD_CACHE"] = str(tmp / "cache-first")
            show.LOG_ROWS, show.MAX_COLUMNS, show.FIXED_LAYOUT, par.cpu_count = None, 10**9, False, lambda: 1
            pics.PILLOW = False
            rows.append(("first (matplotlib, serial, every bin, no cache)",
                         *_report(demo, tmp / "first", max_clips=args.max_clips)))
        show.LOG_ROWS, show.MAX_COLUMNS, show.FIXED_LAYOUT, par.cpu_count = 512, 300, True, workers
        os.environ["VOCALGRAD_CACHE"] = str(tmp / "cache-matplotlib")
        pics.PILLOW = False
        rows.append((f"matplotlib, cold cache ({par.cpu_count()} workers)",
                     *_report(demo, tmp / "matplotlib", max_clips=args.max_clips)))
        os.environ["VOCALGRAD_CACHE"] = str(tmp / "cache-pillow")
        pics.PILLOW = True
        rows.append((f"Pillow, cold cache ({par.cpu_count()} workers)",
                     *_report(demo, tmp / "pillow", max_clips=args.max_clips)))
        rows.append(("Pillow, warm cache (same report again)",
                     *_report(demo, tmp / "again", max_clips=args.max_clips)))
        same = (tmp / "pillow" / "index.html").read_bytes() == (tmp / "again" / "index.html").read_bytes()
    print(f"report --html --data {demo / 'hub'} (max {args.max_clips} clips), {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'run':<52} {'wall s':>7} {'CPU s':>7} {'clips':>6}")
    for name, sec, cpu, clips in rows:
        print(f"{name:<52} {sec:7.1f} {cpu:7.1f} {clips:6d}")
    mpl, pil = rows[-3], rows[-2]
    print(f"Pillow vs matplotlib (cold): {mpl[1] / pil[1]:.1f}x wall, {mpl[2] / pil[2]:.1f}x CPU; "
          f"warm page identical to cold: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
