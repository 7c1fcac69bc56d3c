"""The ``vocalgrad leaderboard`` command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from generation.cli_errors import report_error
from generation.identity import short
from harness_tasks.stat_settings import STATS

__all__ = ["register_cli"]

PROG = "vocalgrad leaderboard"


def register_cli(sub) -> None:
    p = sub.add_parser(
        "leaderboard", help="one static leaderboard page and table from many results folders",
        description="Gather lm-eval / vocalgrad-eval results folders (with --log_samples) into DIR/index.html, "
                    "DIR/leaderboard.json and .csv and DIR/runs/*.json: one row per model, task variant and "
                    "dataset build (by content); the paper's rows copied and marked. The folder is ready to be a "
                    "static Hub Space and a Hub results dataset (--push-space / --push-results, --dry-run).")
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="lm-eval --output_path folder or results_*.json file; LABEL=PATH names the model")
    p.add_argument("--out", required=True, metavar="DIR", help="leaderboard folder (new, empty or an earlier one)")
    p.add_argument("--title", default="VocalGrad leaderboard", help="page and card title")
    p.add_argument("--force", action="store_true",
                   help="replace files of --out that an earlier run did not write (or that were edited since)")
    p.add_argument("--draws", type=int, default=STATS.draws,
                   help=f"bootstrap draws of the intervals (default {STATS.draws}, as the report)")
    p.add_argument("--seed", type=int, default=STATS.seed, help=f"bootstrap seed (default {STATS.seed})")
    p.add_argument("--push-space", metavar="ORG/NAME", help="upload the page as a static Space")
    p.add_argument("--push-results", metavar="ORG/NAME", help="upload runs/*.json as a results dataset")
    p.add_argument("--dry-run", action="store_true",
                   help="with --push-*: print the files each commit would upload (no token, no network)")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    from generation.ownership import claim_out

    from .page import write_folder
    from .runs import LeaderboardError, gather
    from .upload import plan, push

    if args.draws < 1:
        return report_error(PROG, ValueError("--draws must be >= 1"))
    if args.dry_run and not (args.push_space or args.push_results):
        return report_error(PROG, ValueError("--dry-run needs --push-space and/or --push-results"))
    t0 = time.perf_counter()
    out = Path(args.out)
    try:
        claim_out(out, "leaderboard", force=args.force)  # before any work: never someone else's folder
        rows, notes = gather(args.results, draws=args.draws, seed=args.seed)
        files = write_folder(out, rows, notes, title=args.title, force=args.force)
        for n in notes:
            print(f"{PROG}: note: {n}", file=sys.stderr)
        builds = {r.build for r in rows}
        print(f"{len(rows)} rows, {len(builds)} dataset build(s) "
              f"({', '.join(sorted(short(b) for b in builds))}): {out / 'index.html'} "
              f"({len(files)} files, {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        if args.push_space or args.push_results:
            if args.dry_run:
                for c in plan(out, space=args.push_space, results=args.push_results):
                    print(f"dry run: one commit to {c['repo_type']} {c['repo_id']}: {len(c['files'])} files")
                    for f in c["files"]:
                        print(f"  add {f['path_in_repo']} ({f['bytes']:,} bytes, sha256 {short(f['sha256'])})")
            else:
                for url in push(out, space=args.push_space, results=args.push_results):
                    print(f"pushed: {url}", file=sys.stderr)
    except (LeaderboardError, ValueError, OSError) as exc:
        return report_error(PROG, exc)
    return 0
