"""How often the report's headline calls a model above/below chance when, over voices, it is at chance.

Simulated observers of known truth answer the benchmark's design (``--sources`` voices x categories x 24
conditions). Voice ``s`` answers a clip of category ``c`` right with probability ``logistic(u_s + w_sc)``,
``u_s ~ Normal(0, sd^2)`` (the voice: hard or easy for the model) and ``w_sc ~ Normal(0, (sd/2)^2)`` (the
voice on that category). Both are symmetric around 0, so the accuracy over voices in general is exactly 50 %
overall and in every category, while the voices drawn are right more or less often than half: the null of
the claim a reader takes away ("model X hears pitch changes").

Each run goes through the report's own path (:func:`analysis.report.analysis.analyse_evaluation`) and counts
a *false claim* when a verdict says above/below chance: the headline of the overall row, any category's
headline flag (family-wise), and beside them the clip-level verdicts (these voices: the paper's bootstrap
and Holm's flags), which answer another question and are not meant to keep 5 % here.

Usage::

    nice python3 benchmarks/headline_false_claims.py --sims 200 --sd 0.5 1.0

Prints one line per sd: the rates with their Monte-Carlo standard errors. Seeded: the same arguments give
the same figures.
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
from calibration_designs import CONDITIONS, parsed_record, share_se  # noqa: E402

CLAIMS = ("above chance", "below chance")


def simulate_records(rng: np.random.Generator, *, sources: int = 20, sd: float = 0.75,
                     categories=vocalgrad.CATEGORY_NAMES) -> list[dict]:
    """Scored records of one run of an observer at chance over voices (module docstring)."""
    u = rng.normal(0.0, sd, size=sources)
    w = rng.normal(0.0, sd / 2, size=(sources, len(categories)))
    recs = []
    for s in range(sources):
        sid = f"spk{s:03d}"
        for j, cat in enumerate(categories):
            p = 1.0 / (1.0 + math.exp(-(u[s] + w[s, j])))
            for tier, traj, d in CONDITIONS:
                rec = parsed_record(sid, cat, tier, traj, d, rng.random() < p, retried=False)
                recs.append({**rec, "raw": rec["pred"]})
    return recs


def one_run(rng: np.random.Generator, *, sources: int, sd: float, categories, draws: int) -> dict[str, bool]:
    """False claims of one simulated run: ``{"headline": ..., "clips": ..., "headline_categories": ...,
    "clips_categories": ...}`` (True = called above/below chance)."""
    from analysis.report.analysis import analyse_evaluation
    from analysis.report.evaluation import Evaluation

    ev = Evaluation("sim", "sim", "", variant="default",
                    records=simulate_records(rng, sources=sources, sd=sd, categories=categories))
    a = analyse_evaluation(ev, draws=draws, seed=int(rng.integers(2**31)))
    ov, cats = a["overall"], a["by_category"].values()
    return {"headline": ov["headline"]["verdict"] in CLAIMS, "clips": ov["verdict"] in CLAIMS,
            "headline_categories": any(g["headline"]["verdict"] in CLAIMS for g in cats),
            "clips_categories": any(g["verdict"] in CLAIMS for g in cats)}


def false_claim_rates(*, sd: float, sims: int, sources: int = 20, categories=vocalgrad.CATEGORY_NAMES,
                      draws: int = 500, seed: int = 1234) -> dict[str, float]:
    """Share of ``sims`` runs with each false claim (:func:`one_run`), seeded from ``seed`` and ``sd``."""
    rng = np.random.default_rng([seed, int(round(sd * 1000)), sources])
    hits: dict[str, int] = {}
    for _ in range(sims):
        for k, v in one_run(rng, sources=sources, sd=sd, categories=categories, draws=draws).items():
            hits[k] = hits.get(k, 0) + int(v)
    return {k: v / sims for k, v in hits.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sims", type=int, default=200, help="runs per sd (default 200)")
    p.add_argument("--sd", type=float, nargs="+", default=[0.5, 1.0], help="voice logit SDs (default 0.5 1.0)")
    p.add_argument("--sources", type=int, default=20, help="voices per run (default 20)")
    p.add_argument("--categories", type=int, default=len(vocalgrad.CATEGORY_NAMES),
                   help="categories per run (default all 9)")
    p.add_argument("--draws", type=int, default=500, help="bootstrap draws of the clip-level intervals")
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args(argv)
    cats = vocalgrad.CATEGORY_NAMES[: args.categories]
    for sd in args.sd:
        t0 = time.perf_counter()
        r = false_claim_rates(sd=sd, sims=args.sims, sources=args.sources, categories=cats, draws=args.draws,
                              seed=args.seed)
        se = {k: share_se(v, args.sims) for k, v in r.items()}
        print(f"sd {sd:g}, {args.sources} voices x {len(cats)} categories, {args.sims} runs: false claims - "
              + ", ".join(f"{k} {100 * v:.1f} % (±{100 * se[k]:.1f})" for k, v in r.items())
              + f" [{time.perf_counter() - t0:.0f} s]", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
