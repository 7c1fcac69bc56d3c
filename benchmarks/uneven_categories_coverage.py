"""Coverage of the overall interval over voices when one category has far fewer voices than the run.

A run's categories need not share their voices: a partial run, or one whose small category was rendered from
a few sources only. Simulated observers of known truth answer such a run: ``--sources`` voices in all, one
category on ``--small`` of them, every other category on a random 20-40 of them (each voice 24 conditions
per category). Voice ``s`` answers a clip of category ``c`` right with probability
``logistic(a_c + u_s + w_sc)``: ``a_c`` the category's accuracy at a typical voice (60-90 %),
``u_s ~ Normal(0, shared^2)`` the voice across categories and ``w_sc ~ Normal(0, own^2)`` the voice on that
category. The truth is the figure the interval claims: the mean over the categories of each category's
accuracy over voices in general (by quadrature over ``u + w``).

Each simulation computes the overall row's interval over voices exactly as the report does
(:func:`analysis.report.stats.intervals`, its ``clustered`` entry: the figure averaging the categories,
clustered by source) and counts whether it covers the truth. Intervals withheld (``nan``) are counted apart.

Usage::

    nice -n 10 python3 benchmarks/uneven_categories_coverage.py --sims 1000

Prints one line per scenario: coverage with its Monte-Carlo standard error and the mean width. Seeded: the
same arguments give the same figures.
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

#: (name, shared voice sd, category-specific voice sd, the small category's) on the logit scale.
SCENARIOS = (("voice shared, sd 0.75 + 0.375", 0.75, 0.375, 0.375),
             ("voice per category, sd 0.25 + 0.75", 0.25, 0.75, 0.75),
             ("voice per category, sd 0.25 + 1.0", 0.25, 1.0, 1.0),
             ("small category's voices differ most, sd 0.25 + 0.5, its own 1.5", 0.25, 0.5, 1.5))


def truth(base: np.ndarray, shared: float, own: float, small_own: float) -> float:
    """The mean over categories of each category's accuracy over voices in general (the first is the small
    one, whose voices spread by ``small_own`` on their own)."""
    sds = [math.hypot(shared, small_own if j == 0 else own) for j in range(len(base))]
    return float(np.mean([population_accuracy(np.array([a]), sd)[0] for a, sd in zip(base, sds)]))


def category_bases(n_categories: int) -> np.ndarray:
    """Each category's logit at a typical voice: accuracies spread evenly over 60-90 %."""
    acc = np.linspace(0.6, 0.9, n_categories)
    return np.log(acc / (1 - acc))


def simulate_records(rng: np.random.Generator, *, sources: int, small: int, shared: float, own: float,
                     small_own: float, categories=vocalgrad.CATEGORY_NAMES, others=(20, 40)) -> list[dict]:
    """Scored records of one run: the first category on ``small`` voices, the others on 20-40 each."""
    base = category_bases(len(categories))
    u = rng.normal(0.0, shared, size=sources)
    recs = []
    for j, cat in enumerate(categories):
        k = small if j == 0 else int(rng.integers(others[0], min(others[1], sources) + 1))
        voices = np.sort(rng.choice(sources, size=k, replace=False))
        w = rng.normal(0.0, small_own if j == 0 else own, size=k)
        right = rng.random((k, len(CONDITIONS))) < _expit(base[j] + u[voices] + w)[:, None]
        for i, s in enumerate(voices):
            recs += [parsed_record(f"spk{s:03d}", cat, tier, traj, d, ok)
                     for (tier, traj, d), ok in zip(CONDITIONS, right[i])]
    return recs


def coverage(*, sims: int, sources: int, small: int, shared: float, own: float, small_own: float,
             seed: int = 1234, categories=vocalgrad.CATEGORY_NAMES) -> dict[str, float]:
    """Share of ``sims`` runs whose displayed overall interval over voices covers the truth, its mean width
    and the share withheld."""
    from analysis.report.stats import intervals

    rng = np.random.default_rng([seed, sources, small, int(shared * 1000), int(own * 1000), int(small_own * 1000)])
    target = truth(category_bases(len(categories)), shared, own, small_own)
    covered = withheld = 0
    widths = []
    for _ in range(sims):
        recs = simulate_records(rng, sources=sources, small=small, shared=shared, own=own, small_own=small_own,
                                categories=categories)
        lo, hi = intervals(recs, "acc", draws=1, macro_by="category")["clustered"]
        if math.isnan(lo):
            withheld += 1
            continue
        covered += lo <= target <= hi
        widths.append(hi - lo)
    shown = sims - withheld
    return {"coverage": covered / shown if shown else math.nan, "width": float(np.mean(widths)) if widths else math.nan,
            "withheld": withheld / sims, "truth": target, "shown": shown}


def main(argv=None) -> int:
    from generation.option_types import positive_int

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sims", type=positive_int, default=400, help="runs per scenario (default 400)")
    p.add_argument("--sources", type=positive_int, nargs="+", default=[40], help="voices in the run (default 40)")
    p.add_argument("--small", type=positive_int, nargs="+", default=[4],
                   help="voices of the small category (default 4)")
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)
    if min(args.sources) < 20 or max(args.small) > min(args.sources):
        p.error(f"argument --sources: every run needs at least 20 voices and at least --small's {max(args.small)}")
    for sources, small in ((n, k) for n in args.sources for k in args.small):
        for name, shared, own, small_own in SCENARIOS:
            t0 = time.process_time()
            r = coverage(sims=args.sims, sources=sources, small=small, shared=shared, own=own,
                         small_own=small_own, seed=args.seed)
            se = share_se(r["coverage"], r["shown"])
            print(f"{small} voices in one category, 20-{min(40, sources)} in the others, {sources} in all; {name}: "
                  f"coverage {100 * r['coverage']:.1f} % (±{100 * se:.1f}) of {r['shown']} runs, mean width "
                  f"{100 * r['width']:.1f} points, withheld in {100 * r['withheld']:.0f} %, truth "
                  f"{100 * r['truth']:.1f} % [{time.process_time() - t0:.0f} CPU-s]", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
