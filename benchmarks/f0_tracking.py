"""Do the pitch trackers follow the shift of each pitch clip? (the probe's positive control, without a probe)

Usage::

    python benchmarks/f0_tracking.py RENDER [RENDER ...]                    # pesto, torchcrepe:tiny, fcpe
    python benchmarks/f0_tracking.py build/test build/train --trackers fcpe --limit 48 --csv rows.csv

For every pitch clip of each render folder and each tracker (:mod:`analysis.probe.tracking`): the
decoded f0's change from the early to the late half of the speech span, on the clip and on its
unshifted source, against the change the render planned. Prints, per tracker, by speaker and by tier:

- ``follows``: share of clips where clip minus source has the planned sign (the tracker follows the shift);
- ``slope``: clip minus source regressed on the plan (1 = a perfect tracker);
- ``reads label``: share where the clip's own change has the label's sign (what a probe of the decoded
  f0 alone can reach; the voice's intonation, ``source``, works against it on small shifts);
- ``source``: mean intonation change of the unshifted sources (semitones);
- ``voiced``: mean voiced share of the span on the clips and on the sources;
- ``src Hz``: the sources' median voiced f0 (the median over the group's sources).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _table(summary: list[dict], by: str) -> None:
    print(f"  {by:<16}{'n':>5}{'follows':>9}{'slope':>7}{'reads label':>13}{'source st':>11}"
          f"{'voiced':>8}{'src voiced':>12}{'src Hz':>8}")
    for s in summary:
        print(f"  {str(s[by]):<16}{s['n']:>5}{s['follows']:>9.3f}{s['slope']:>7.2f}{s['reads_label']:>13.3f}"
              f"{s['source']:>11.2f}{s['voiced']:>8.2f}{s['source_voiced']:>12.2f}{s['source_hz']:>8.0f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("renders", nargs="+", help="render folders (vocalgrad render) with pitch clips and sources/")
    ap.add_argument("--trackers", default="pesto,torchcrepe:tiny,fcpe")
    ap.add_argument("--limit", type=int, default=None, help="first N pitch clips of each folder")
    ap.add_argument("--csv", type=Path, default=None, help="write one row per clip and tracker here")
    args = ap.parse_args(argv)

    from analysis.probe.tracking import summarise, track_render

    rows = []
    for name in [n.strip() for n in args.trackers.split(",") if n.strip()]:
        for render in args.renders:
            rows += track_render(render, name, limit=args.limit)
    trackers = list(dict.fromkeys(r["tracker"] for r in rows))
    for tracker in trackers:
        mine = [r for r in rows if r["tracker"] == tracker]
        print(f"{tracker}: {len(mine)} pitch clips of {', '.join(args.renders)}")
        everyone = [dict(r, all="all") for r in mine]
        for by in ("all", "tier", "speaker"):
            _table(summarise(everyone, by=by), by)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
