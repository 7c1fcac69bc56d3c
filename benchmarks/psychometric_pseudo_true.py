"""Coverage of the sweep fit's threshold interval at 100 sources that differ, against two truths.

Usage::

    python benchmarks/psychometric_pseudo_true.py [--sims 500] [--workers 2]

The calibration (docs/statistics.md, "Psychometric thresholds") measures the interval against the 75 %
point of the average source's answers. When sources differ, the answers pooled over them follow a
shallower curve than any one source's, and the fitted function matches that shape only approximately: its
threshold sits a little above the average source's. This program prints that offset and the coverage of
the same intervals (same seeds as the calibration's cell) against both truths: the average source's 75 %
point, and the fit's own target, the function fitted to the population's expected answers.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.report import psychometric_sim as sim  # noqa: E402
from analysis.report.psychometric_fit import Counts, bootstrap, fit, p_increase  # noqa: E402

THRESHOLD, BETA, LAPSE, SOURCE_SD, SOURCES = 3.0, 3.0, 0.02, 0.25, 100
CELL = 8  # the index of this design among the calibration's coverage cells: the same seeds


def fit_target() -> float:
    """The threshold of the function fitted to the expected answers of infinitely many sources."""
    z, w = np.polynomial.hermite_e.hermegauss(81)
    w = w / w.sum()
    p1 = p0 = 0.0
    for zi, wi in zip(z, w):
        a, b = p_increase(sim.MAGS, sim.alpha_for(THRESHOLD * np.exp(SOURCE_SD * zi), BETA), BETA, 0.0, LAPSE)
        p1, p0 = p1 + wi * a, p0 + wi * b
    n = np.full(sim.MAGS.size, 1e7)
    return fit(Counts(sim.MAGS, p1 * n, n, p0 * n, n)).threshold


def _job(args):
    j, truths = args
    seed = 1000 * CELL + j
    data = sim.simulate(sim.MAGS, n_sources=SOURCES, seed=seed, threshold=THRESHOLD, beta=BETA, lapse=LAPSE,
                        source_sd=SOURCE_SD)
    lo, hi = bootstrap(sim.MAGS, data, draws=400, seed=seed, f=fit(sim.pooled_counts(data)))["threshold_ci"]
    return [lo <= t <= hi for t in truths]


def main() -> int:
    from generation.option_types import positive_int

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sims", type=positive_int, default=500)
    ap.add_argument("--workers", type=positive_int, default=2)
    args = ap.parse_args()
    avg, target = sim.population_threshold(THRESHOLD, BETA, SOURCE_SD), fit_target()
    with ProcessPoolExecutor(args.workers) as ex:
        hits = np.array(list(ex.map(_job, [(j, (avg, target)) for j in range(args.sims)], chunksize=10)), float)
    se = np.sqrt(hits.mean(0) * (1 - hits.mean(0)) / args.sims)
    print(f"{SOURCES} sources that differ (sd {SOURCE_SD} in log threshold), {args.sims} simulations")
    print(f"average source's 75 % point {avg:.4f}; fit's own target {target:.4f} ({100 * (target / avg - 1):+.1f} %)")
    print(f"coverage of the average source's point: {100 * hits[:, 0].mean():.1f} % (+-{100 * se[0]:.1f})")
    print(f"coverage of the fit's own target:       {100 * hits[:, 1].mean():.1f} % (+-{100 * se[1]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
