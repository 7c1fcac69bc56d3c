"""Coverage of a human row's displayed interval (95 % CI these voices): clips as the units, or answers.

A human row (``vocalgrad report --human``) holds one answer per annotator on each clip. Clips differ in how
hard they are, and every annotator hears the same clip, so the answers on one clip are not independent.
Simulated listeners of known truth: ``--categories`` categories of ``--clips`` clips each, every clip
answered by ``--annotators`` annotators; an annotator answers clip ``k`` of category ``c`` right with
probability ``logistic(a_c + e_k)``, ``a_c`` the category's accuracy on a typical clip (70-90 %),
``e_k ~ Normal(0, clip_sd^2)`` the clip. The truth is what the row's figure estimates: the mean over the
categories of each category's accuracy over its clips (by quadrature over ``e``).

Each simulation computes the row's displayed interval as the report does
(:func:`analysis.report.stats.intervals`, its ``binomial`` entry, which clusters by clip when clips hold
several answers) and, beside it, the interval the report printed before (the percentile bootstrap resampling
the answers as if independent, :func:`harness_tasks.metrics.bootstrap_ci`), and counts how often each covers.

Usage::

    nice -n 10 python3 benchmarks/human_row_coverage.py --sims 1000

Prints one line per design and clip sd. Seeded: the same arguments give the same figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import vocalgrad  # noqa: E402
from calibration_designs import CONDITIONS, logistic as _expit, parsed_record, population_accuracy, share_se  # noqa: E402,E501

#: (categories, clips per category, annotators): the note's 60 answers on 12 clips, and two larger tests.
DESIGNS = ((1, 12, 5), (4, 12, 3), (9, 10, 5))


def bases(n_categories: int) -> np.ndarray:
    """Each category's logit on a typical clip: accuracies spread evenly over 70-90 % (80 % for one)."""
    acc = np.linspace(0.7, 0.9, n_categories) if n_categories > 1 else np.array([0.8])
    return np.log(acc / (1 - acc))


def truth(n_categories: int, clip_sd: float) -> float:
    """The mean over categories of each category's accuracy over its clips."""
    return float(np.mean(population_accuracy(bases(n_categories), clip_sd)))


def simulate_records(rng: np.random.Generator, *, categories: int, clips: int, annotators: int,
                     clip_sd: float) -> list[dict]:
    """Scored records of one human row (module docstring): one record per annotator and clip."""
    recs = []
    for j, a in enumerate(bases(categories)):
        cat = vocalgrad.CATEGORY_NAMES[j]
        p = _expit(a + rng.normal(0.0, clip_sd, size=clips))
        right = rng.random((clips, annotators)) < p[:, None]
        for k in range(clips):
            tier, traj, d = CONDITIONS[k % len(CONDITIONS)]
            recs += [parsed_record(f"spk{k:03d}", cat, tier, traj, d, right[k, who], annotator=f"a{who}")
                     for who in range(annotators)]
    return recs


def coverage(*, sims: int, categories: int, clips: int, annotators: int, clip_sd: float, draws: int = 1000,
             seed: int = 1234) -> dict[str, float]:
    """Coverage of the displayed interval (``"clips"``) and of the old one (``"answers"``) over ``sims`` rows,
    with their mean widths (``"width_clips"``, ``"width_answers"``) and the number of rows with an interval
    (``"shown"``)."""
    from analysis.report.stats import intervals
    from harness_tasks.metrics import bootstrap_ci

    rng = np.random.default_rng([seed, categories, clips, annotators, int(round(clip_sd * 1000))])
    target = truth(categories, clip_sd)
    hits = {"clips": 0, "answers": 0}
    widths: dict[str, list[float]] = {"clips": [], "answers": []}
    shown = 0
    for i in range(sims):
        recs = simulate_records(rng, categories=categories, clips=clips, annotators=annotators, clip_sd=clip_sd)
        new = intervals(recs, "acc", draws=draws, seed=seed + i, macro_by="category")["binomial"]
        old = bootstrap_ci(recs, "acc", draws=draws, seed=seed + i, macro_by="category")
        if math.isnan(new[0]):
            continue
        shown += 1
        for key, (lo, hi) in (("clips", new), ("answers", old)):
            hits[key] += lo <= target <= hi
            widths[key].append(hi - lo)
    return {"clips": hits["clips"] / max(shown, 1), "answers": hits["answers"] / max(shown, 1), "shown": shown,
            "width_clips": float(np.mean(widths["clips"])), "width_answers": float(np.mean(widths["answers"]))}


def main(argv=None) -> int:
    from generation.option_types import positive_float, positive_int

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sims", type=positive_int, default=400, help="rows per design and clip sd (default 400)")
    p.add_argument("--clip-sd", type=positive_float, nargs="+", default=[1.0, 2.0],
                   help="clip logit SDs (default 1 2)")
    p.add_argument("--draws", type=positive_int, default=1000, help="bootstrap draws of the old interval")
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)
    for categories, clips, annotators in DESIGNS:
        for sd in args.clip_sd:
            t0 = time.process_time()
            r = coverage(sims=args.sims, categories=categories, clips=clips, annotators=annotators, clip_sd=sd,
                         draws=args.draws, seed=args.seed)
            se = {k: share_se(r[k], r["shown"]) for k in ("clips", "answers")}
            print(f"{categories} x {clips} clips x {annotators} annotators, clip sd {sd:g}, {r['shown']} rows: "
                  f"clips as units {100 * r['clips']:.1f} % (±{100 * se['clips']:.1f}, width "
                  f"{100 * r['width_clips']:.1f}), answers resampled (old) {100 * r['answers']:.1f} % "
                  f"(±{100 * se['answers']:.1f}, width {100 * r['width_answers']:.1f}) "
                  f"[{time.process_time() - t0:.0f} CPU-s]", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
