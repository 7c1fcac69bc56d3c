"""``vocalgrad hub``: the command line of :mod:`generation.hub` (render folders) and
:mod:`generation.from_published` (the authors' release); it imports both, they import neither it
nor each other's command line.
"""

from __future__ import annotations

import argparse
import sys

from .from_published import build_from_published
from .cli_errors import report_error
from .hub import MAX_SHARD_BYTES, ROW_GROUP_ROWS, HubBuildError, build_hub
from .option_types import NameTooLongError, name_fits, positive_float, positive_int

__all__ = ["register_cli"]


def register_cli(subparsers) -> None:
    """Add ``vocalgrad hub DIR [DIR ...] --out HUB``."""
    p = subparsers.add_parser(
        "hub", help="build the publishable Hugging Face dataset folder from render output",
        description="Build README.md (card + configs) and parquet shards per config from one or more render "
                    "folders (one per split: test, beep, train). See docs/hub.md.",
    )
    p.add_argument("render_dirs", nargs="*", metavar="DIR", help="render output folder(s)")
    p.add_argument("--from-published", metavar="SRC",
                   help="instead of renders: convert the authors' published release (Hub id or local copy; "
                        "AudioFolder with metadata.csv) into this layout, keeping their clip ids; see docs/published.md")
    p.add_argument("--out", required=True, metavar="HUB",
                   help="folder to write: new, empty or a Hub folder; the files an earlier `vocalgrad hub` wrote there "
                        "are replaced, others (.git/, LICENSE, notes) kept")
    p.add_argument("--force", action="store_true",
                   help="also replace files an earlier build wrote that were edited since (e.g. README.md), and "
                        "write into a non-empty folder that is no Hub folder (its files are kept)")
    p.add_argument("--allow-partial", action="store_true",
                   help="accept renders with missing conditions; their configs are omitted and the card says so")
    p.add_argument("--max-shard-mb", type=positive_float, default=MAX_SHARD_BYTES / 1024**2,
                   help="largest shard in MiB of FLAC, > 0 (default %(default)g)")
    p.add_argument("--row-group-rows", type=positive_int, default=ROW_GROUP_ROWS,
                   help="rows per parquet row group, >= 1 (default %(default)d)")
    p.add_argument("--card", metavar="PATH", help="card template (default: dataset_card.md of the toolkit)")
    p.add_argument("--repo", metavar="ORG/NAME", help="repo id the card's loading examples use (default: "
                   "ynklab/vocalgrad for a VCTK build, else ORG/NAME; `vocalgrad publish --repo` rewrites it)")
    p.add_argument("--license", metavar="ID", help="Hub licence id of the card (e.g. cc-by-4.0); default: from "
                   "the sources (VCTK: cc-by-4.0; folder/hf: their README or LICENSE; else unknown)")
    p.add_argument("--skip-sha256", action="store_true", help="do not hash clips against the manifest")
    p.add_argument("--sources", action=argparse.BooleanOptionalAction, default=None,
                   help="the `sources` config: the unmodified source clips of the test render (for the "
                        "yes/no and ternary task formats); default: added when the test render has its "
                        "sources/ folder; --sources requires it, --no-sources leaves it out")
    p.set_defaults(func=_run_cli)


def _run_cli(args) -> int:
    try:
        name_fits(args.out, what=f"--out {args.out}")
    except NameTooLongError as exc:
        return report_error("vocalgrad hub", exc)
    if args.from_published:
        return _run_from_published(args)
    if not args.render_dirs:
        print("vocalgrad hub: give render folder(s) DIR or --from-published SRC", file=sys.stderr)
        return 2
    try:
        summary = build_hub(
            args.render_dirs, args.out, allow_partial=args.allow_partial,
            max_shard_bytes=max(1, int(args.max_shard_mb * 1024**2)), row_group_rows=args.row_group_rows,
            card_template=args.card, verify_sha256=not args.skip_sha256, sources=args.sources,
            repo_id=args.repo, license_id=args.license, force=args.force,
        )
    except HubBuildError as exc:
        print(f"vocalgrad hub: {exc}", file=sys.stderr)
        return 2
    return _print_summary(summary, args.out)


def _run_from_published(args) -> int:
    """``vocalgrad hub --from-published SRC --out HUB``."""
    if args.render_dirs:
        print("vocalgrad hub: give render folders or --from-published, not both", file=sys.stderr)
        return 2
    try:
        summary = build_from_published(args.from_published, args.out, max_shard_bytes=max(1, int(args.max_shard_mb * 1024**2)),
                                       row_group_rows=args.row_group_rows, card_template=args.card,
                                       progress=sys.stderr.isatty(), force=args.force)
    except HubBuildError as exc:
        print(f"vocalgrad hub: {exc}", file=sys.stderr)
        return 2
    return _print_summary(summary, args.out)


def _print_summary(summary: dict, out) -> int:
    for name, info in summary["configs"].items():
        print(f"{name:>10}  {info['split']:<5}  {info['rows']:>7,} clips  {info['download_size'] / 1e6:9.1f} MB")
    print(f"wrote {len(summary['files'])} files to {out}")
    return 0
