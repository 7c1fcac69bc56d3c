"""Seconds of ``vocalgrad report --html --data`` on the demo: before and after the picture speed-ups.

Usage::

    vocalgrad demo --out demo_out --sources 1      # once (or use an existing demo folder)
    python benchmarks/report_html_speed.py [--demo demo_out] [--max-clips 80] [--jobs N]

Prints one table from one run, each row the whole report (tables, plots, page, clips) into a fresh folder:

* before: the figures and clip pictures drawn one after another, every STFT bin drawn, matplotlib's constrained
  layout, no picture cache (what ``report --html`` did before);
* after, cold: merged log-frequency bands, fixed margins, figures and pictures drawn by worker processes
  (one per CPU), pictures into an empty picture cache;
* after, warm: the same report again (every picture read from the cache).

The target: the demo's page in at most 20 s on 2 idle cores (after, cold).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _report(demo: Path, out: Path, *, max_clips: int) -> float:
    from analysis.listen.catalog import open_catalog
    from analysis.report.command import build_report
    from analysis.report.html_page import HtmlOptions

    t = time.perf_counter()
    build_report([demo / "results"], out, html=HtmlOptions(catalog=open_catalog(demo / "hub"), max_clips=max_clips))
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--demo", default="demo_out", help="a `vocalgrad demo` folder (results/ and hub/)")
    ap.add_argument("--max-clips", type=int, default=80)
    ap.add_argument("--jobs", type=int, default=None, help="worker processes after (default: the CPUs)")
    args = ap.parse_args()
    demo = Path(args.demo)
    if not (demo / "results").is_dir() or not (demo / "hub").is_dir():
        ap.error(f"{demo}: no results/ and hub/; run `vocalgrad demo --out {demo} --sources 1` first")

    import analysis.report.parallel as par
    import analysis.show as show

    real_cpus = par.cpu_count
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["VOCALGRAD_CACHE"] = str(tmp / "cache-before")
        show.LOG_ROWS, show.MAX_COLUMNS, show.FIXED_LAYOUT, par.cpu_count = None, 10**9, False, lambda: 1
        rows.append(("before (serial, every bin, constrained layout, no cache)",
                     _report(demo, tmp / "before", max_clips=args.max_clips)))
        show.LOG_ROWS, show.MAX_COLUMNS, show.FIXED_LAYOUT = 512, 300, True
        par.cpu_count = (lambda: args.jobs) if args.jobs else real_cpus
        os.environ["VOCALGRAD_CACHE"] = str(tmp / "cache-after")
        rows.append((f"after, cold cache ({par.cpu_count()} worker processes)",
                     _report(demo, tmp / "after", max_clips=args.max_clips)))
        rows.append(("after, warm cache (same report again)", _report(demo, tmp / "again", max_clips=args.max_clips)))
        same = (tmp / "after" / "index.html").read_bytes() == (tmp / "again" / "index.html").read_bytes()
    print(f"report --html --data {demo / 'hub'} (max {args.max_clips} clips), {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'run':<62} {'seconds':>8}")
    for name, sec in rows:
        print(f"{name:<62} {sec:8.1f}")
    print(f"speed-up (before / after cold): {rows[0][1] / rows[1][1]:.1f}x; warm page identical to cold: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
