"""``vocalgrad render``: the command line of :mod:`generation.render` (argument parsing and the
printed summary); :mod:`generation.render` does not import it.
"""

from __future__ import annotations

import argparse

import vocalgrad as vg

from .cli_errors import report_error
from .option_types import comma_list, positive_int, sample_rate
from .recipe import DEFAULT_RECIPE
from .render import SPAN_CHECK_TOLERANCE_SEC, RenderError, render
from .render_dir import RenderDir
from .sources import SourceOptions

__all__ = ["parse_shard", "positive_int", "category_list", "register_cli"]


def category_list(text: str) -> list[str]:
    """argparse type: comma-separated category names (config names or the paper's ids, or installed
    extension attributes), each once.

    An empty list or an unknown name is an error listing the valid names.
    """
    try:
        names = comma_list(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"names no category ({text!r}); choose from {','.join(vg.CATEGORY_NAMES)}, "
                                         "or leave the option out for all nine") from None
    for name in names:
        try:
            vg.category(name)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return names


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``I/N`` (0 <= I < N) into ``(I, N)``."""
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like I/N (e.g. 0/4), got {text!r}") from None
    if n < 1 or not 0 <= i < n:
        raise ValueError(f"--shard {text}: need 0 <= I < N")
    return i, n


def register_cli(sub) -> None:
    p = sub.add_parser("render", help="render clips + manifest from a source corpus",
                       description="Render VocalGrad clips (resumable: rerun the same command to continue).")
    p.add_argument("--source", required=True,
                   help="source: tones | folder:PATH | vctk:PATH | loquacious[:DATASET] | cv-spontaneous:PATH | demo | "
                        "hf:DATASET[:CONFIG][:SPLIT]")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--split", default="test", choices=vg.SPLITS,
                   help="test (the benchmark), train (probes, few-shot; speakers disjoint from test) or beep "
                        "(pure-tone ablation, with --source tones); default %(default)s")
    p.add_argument("--categories", type=category_list,
                   help=f"comma-separated subset of {','.join(vg.CATEGORY_NAMES)} (default: all nine), "
                        "or extension attributes (`vocalgrad attributes`; not the paper's benchmark)")
    p.add_argument("--sources", type=positive_int, dest="n_sources", help="use only the first N selected sources")
    p.add_argument("--jobs", type=positive_int, help="worker processes, >= 1 (default: all cores)")
    p.add_argument("--shard", default="0/1", help="render only slice I of N (I/N, 0-based)")
    p.add_argument("--sample-rate", type=sample_rate, default=48000,
                   help="output sample rate in Hz, 8000-655350 (default 48000)")
    p.add_argument("--recipe", default=DEFAULT_RECIPE, help="recipe name or TOML path (default faithful-v1)")
    p.add_argument("--strict", action="store_true", help="fail on the first unusable source instead of skipping")
    p.add_argument("--selection", choices=("frozen", "sample"),
                   help="frozen: the paper's published selection (default for vctk, loquacious, cv-spontaneous); "
                        "sample: a new seeded selection, i.e. a new dataset instance (default for hf)")
    p.add_argument("--seed", type=int, default=42, help="source selection seed of --selection sample (default 42)")
    p.add_argument("--vctk-mic", type=int, default=1, choices=(1, 2), help="VCTK 0.92 microphone")
    p.add_argument("--text-column", help="hf: transcript column")
    p.add_argument("--speaker-column", help="hf: speaker column")
    p.add_argument("--allow-small", action="store_true", help="accept a smaller balanced selection")
    p.add_argument("--test-speakers", type=int, default=50, help="test selection: speakers (paper: 50)")
    p.add_argument("--per-speaker", type=int, default=2, help="test selection: utterances per speaker (paper: 2)")
    p.add_argument("--min-duration", type=float, default=3.0,
                   help="test selection: minimum utterance length in seconds (paper: 3.0)")
    p.add_argument("--train-utterances", type=int, default=500, help="train selection size (paper: 500)")
    p.add_argument("--sweep", action="store_true",
                   help="render each category's magnitude sweep (zero change, below the low tier to beyond the high "
                        "tier; the paper's tiers are points of it) instead of the three tiers, into a folder of "
                        "its own; Hub configs sweep_<category>, task group vocalgrad_sweep (docs/sweep.md)")
    p.add_argument("--trajectories", type=comma_list,
                   help="with --sweep: comma-separated trajectories to render (default all four)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    try:
        shard = parse_shard(args.shard)
        cats = args.categories  # category_list: None (all) or a checked, non-empty list
        opts = SourceOptions(split=args.split, seed=args.seed, vctk_mic=args.vctk_mic,
                             text_column=args.text_column, speaker_column=args.speaker_column,
                             allow_small=args.allow_small, test_speakers=args.test_speakers,
                             test_per_speaker=args.per_speaker, min_duration=args.min_duration,
                             train_utterances=args.train_utterances, selection=args.selection)
        s = render(args.source, args.out, split=args.split, categories=cats, n_sources=args.n_sources,
                   jobs=args.jobs, shard=shard, sample_rate=args.sample_rate, recipe=args.recipe,
                   strict=args.strict, source_options=opts, progress=not args.quiet, sweep=args.sweep,
                   trajectories=args.trajectories)
    except (ValueError, RenderError) as exc:
        return report_error("vocalgrad render", exc)
    print(f"{s.clips_rendered} clips rendered, {s.clips_total - s.clips_rendered} already "
          f"complete, {len(s.skipped)} sources skipped (see {RenderDir(s.out_dir).skipped_path}) "
          f"in {s.seconds:.1f} s -> {RenderDir(s.out_dir).manifest_path}")
    if s.repaired:
        print(f"{len(s.repaired) * vg.CONDITIONS_PER_CATEGORY} of these clips re-rendered: {len(s.repaired)} finished "
              f"unit(s) had a missing or damaged file, e.g. {s.repaired[0]}")
    if s.label_warnings:
        print("label warnings (clips): " + ", ".join(f"{c} {n}" for c, n in sorted(s.label_warnings.items()))
              + f" -> {RenderDir(s.out_dir).label_checks_path}")
    if s.span_checks:
        print(f"{s.span_checks} frozen sources: our detector's span differs from the recorded one by more than "
              f"{SPAN_CHECK_TOLERANCE_SEC * 1000:.0f} ms; the recorded bounds were used "
              f"(see {RenderDir(s.out_dir).span_check_path})")
    return 0
