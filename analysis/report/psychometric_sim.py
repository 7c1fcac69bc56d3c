"""Simulated observers for the psychometric fit (:mod:`.psychometric_fit`) and its calibration.

A simulated observer answers every clip of a sweep independently with the model's probabilities
(:func:`analysis.report.psychometric_fit.p_increase`): a sensitivity threshold, slope, criterion
(set from the share of "increase" answers it gives at no change) and lapse rate. Each source
contributes ``per_source`` clips per magnitude, half of them increases (a sweep render: 4
trajectories x 2 directions = 8). With ``source_sd`` the sources differ: every source's threshold
is the observer's times ``exp(N(0, source_sd))`` (voices are not equally easy), and the truth the
interval must hold is the threshold of the average source's answers (:func:`population_threshold`).

:func:`calibration_cells` measures the fit's claims: the coverage of its 95 % threshold interval,
the size of its 5 % chance test and goodness-of-fit flag, the share of coins given a threshold, and
the bias of the threshold for biased and lapsing observers. ``python -m
analysis.report.psychometric_sim [--quick] [--workers N]`` prints the table (docs/statistics.md).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.special import ndtr, ndtri

from .psychometric_fit import ALPHA, D_TARGET, Counts, bootstrap, chance_test, fit, gof_test, p_increase

__all__ = ["alpha_for", "calibration_cells", "criterion_for", "pooled_counts", "population_threshold", "simulate"]

#: The calibration's sweep: a pitch-like sweep of 1..8 units, threshold 3, slope 3 (docs/sweep.md).
MAGS = np.arange(1.0, 9.0)
TRUE_THRESHOLD, TRUE_BETA = 3.0, 3.0
#: The sweep shapes of the lapse cells: pitch-like (slope 3), volume-like (7 levels of 6 dB, slope 2) and a
#: shallow one (the noise sweep's uneven steps, slope 1.5).
SHAPES = ({"threshold": TRUE_THRESHOLD, "beta": 3.0, "shape": "pitch-like sweep 1-8"},
          {"threshold": 20.0, "beta": 2.0, "mags": (6.0, 12.0, 18.0, 24.0, 30.0, 36.0, 42.0),
           "shape": "volume-like sweep 6-42"},
          {"threshold": 0.04, "beta": 1.5, "mags": (0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.12, 0.2),
           "shape": "shallow sweep 0.005-0.2"})


def alpha_for(threshold: float, beta: float) -> float:
    """The scale ``alpha`` whose sensitivity threshold (d' = 1.349) is ``threshold``."""
    return threshold / D_TARGET ** (1.0 / beta)


def criterion_for(increase_share: float) -> float:
    """The criterion of an observer that says "increase" to ``increase_share`` of no-change clips."""
    return float(-ndtri(increase_share))


def simulate(magnitudes, *, threshold: float | None, beta: float = TRUE_BETA, increase_share: float = 0.5,
             lapse: float = 0.02, n_sources: int, per_source: int = 8, source_sd: float = 0.0, unparsed: float = 0.0,
             seed: int = 0) -> np.ndarray:
    """Answers of a simulated observer, per source: array (n_sources, 4, levels) of ``k1, n1, k0, n0``.

    Parameters
    ----------
    threshold : float or None
        Sensitivity threshold; None: a coin (no sensitivity; its criterion still applies).
    increase_share : float
        Share of "increase" answers at no change (0.5: unbiased).
    unparsed : float
        Share of answers that are unparsed (missing: they leave ``n1``/``n0``).
    """
    x = np.asarray(magnitudes, float)
    rng = np.random.default_rng(seed)
    crit = criterion_for(increase_share)
    out = np.zeros((n_sources, 4, x.size))
    half = per_source // 2
    for s in range(n_sources):
        if threshold is None:
            p1 = p0 = np.full(x.size, lapse / 2 + (1 - lapse) * ndtr(-crit))
        else:
            t = threshold * math.exp(source_sd * rng.standard_normal()) if source_sd else threshold
            p1, p0 = p_increase(x, alpha_for(t, beta), beta, crit, lapse)
        n1 = rng.binomial(half, 1 - unparsed, x.size) if unparsed else np.full(x.size, half)
        n0 = rng.binomial(per_source - half, 1 - unparsed, x.size) if unparsed else np.full(x.size, per_source - half)
        out[s] = [rng.binomial(n1, p1), n1, rng.binomial(n0, p0), n0]
    return out


def population_threshold(threshold: float, beta: float, source_sd: float) -> float:
    """The threshold of the average source's unbiased share correct when thresholds vary by ``exp(N(0, sd))``."""
    if not source_sd:
        return threshold
    z, w = np.polynomial.hermite_e.hermegauss(61)
    w = w / w.sum()

    def pc(x):
        d = (x / alpha_for(1.0, beta) / (threshold * np.exp(source_sd * z))) ** beta
        return float(np.sum(w * ndtr(d / 2)))

    lo, hi = threshold / 4, threshold * 4
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if pc(mid) < 0.75 else (lo, mid)
    return math.sqrt(lo * hi)


def pooled_counts(per_source, magnitudes=MAGS) -> Counts:
    """The :class:`Counts` of all sources of :func:`simulate`'s ``(sources, 4, levels)`` counts, pooled."""
    t = np.asarray(per_source).sum(0)
    return Counts(np.asarray(magnitudes, float), t[0], t[1], t[2], t[3])


def _sweep(obs: dict) -> tuple[dict, np.ndarray]:
    """The observer's keywords for :func:`simulate` and its sweep's magnitudes (``obs["mags"]``, default :data:`MAGS`;
    ``obs["shape"]`` names the sweep in the table)."""
    o = dict(obs)
    o.pop("shape", None)
    return o, np.asarray(o.pop("mags", MAGS), float)


# ---- calibration ------------------------------------------------------------------------------
def _coverage_job(args) -> tuple:
    """One simulated observer: (covered by expanded, covered by plain percentile, estimate, truth, relative width)."""
    obs, sources, draws, seed = args
    obs, mags = _sweep(obs)
    data = simulate(mags, n_sources=sources, seed=seed, **obs)
    truth = population_threshold(obs["threshold"], obs.get("beta", TRUE_BETA), obs.get("source_sd", 0.0))
    f = fit(pooled_counts(data, mags))
    b = bootstrap(mags, data, draws=draws, seed=seed, f=f)
    lo, hi = b["threshold_ci"]
    p = b["percentile_ci"]  # the plain percentile interval from the same draws
    return lo <= truth <= hi, p[0] <= truth <= p[1], f.threshold, truth, (hi - lo) / truth


def _size_job(args) -> tuple:
    """One observer under a null: (chance test rejects, threshold reported, gof rejects)."""
    obs, sources, mc_draws, seed, which = args
    obs, mags = _sweep(obs)
    data = simulate(mags, n_sources=sources, seed=seed, **obs)
    c = pooled_counts(data, mags)
    f = fit(c)
    if which == "gof":
        return (False, False, gof_test(c, f, draws=mc_draws, seed=seed)["p"] <= ALPHA)
    p = chance_test(c, f, draws=mc_draws, seed=seed)["p"]
    return (p <= ALPHA, p <= ALPHA and f.threshold <= mags.max(), False)


def _setting(obs: dict, key: str):
    """An observer's ``key``, or :func:`simulate`'s default for it where the cell leaves it out."""
    return obs[key] if key in obs else inspect.signature(simulate).parameters[key].default


def _describe(obs: dict) -> str:
    if obs.get("threshold") is None:
        what = "coin"
    else:
        what = f"threshold {obs['threshold']:g}, slope {_setting(obs, 'beta'):g}"
    extra = [f"{100 * obs['increase_share']:.0f} % 'increase'" if _setting(obs, "increase_share") != 0.5 else "",
             f"lapse {_setting(obs, 'lapse'):g}",
             f"unparsed {obs['unparsed']:g}" if obs.get("unparsed") else "",
             obs["shape"] if "shape" in obs else
             f"sweep {', '.join(f'{m:g}' for m in obs['mags'])}" if "mags" in obs else ""]
    return ", ".join([what] + [e for e in extra if e])


def _design(sources: int, obs: dict) -> str:
    sd = obs.get("source_sd", 0.0)
    return f"{sources} sources, " + (f"sources differ (sd {sd:g} in log threshold)" if sd else "sources alike")


def _plan(quick: bool):
    """(coverage cells, size cells, coverage sims, bootstrap draws, size sims, Monte-Carlo draws).

    The full run's counts can be lowered with ``VOCALGRAD_CAL_COVERAGE_SIMS``, ``VOCALGRAD_CAL_DRAWS``,
    ``VOCALGRAD_CAL_SIZE_SIMS`` and ``VOCALGRAD_CAL_MC_DRAWS`` (the table says what was run)."""
    base = {"threshold": TRUE_THRESHOLD, "beta": TRUE_BETA, "lapse": 0.02}
    cov = [(base, 20), ({**base, "source_sd": 0.25}, 20), ({**base, "increase_share": 0.9}, 20),
           ({**base, "lapse": 0.15}, 20)]
    size = [({"threshold": None, "lapse": 0.0}, 20, "chance"), ({"threshold": None, "lapse": 0.0,
                                                                  "increase_share": 0.8}, 20, "chance")]
    if quick:
        return cov[:2], size[:1], 12, 100, 40, 39
    cov += [({**base, "lapse": 0.2, "increase_share": 0.8}, 20), (base, 5), (base, 10), (base, 100),
            ({**base, "source_sd": 0.25}, 100)]
    # two other sweep shapes: a noise-like sweep (uneven steps, a shallow slope) and a volume-like one
    # (7 levels of 6 dB, a steep slope), so the interval is not only checked on the pitch-like sweep
    noise = (0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.12, 0.2)
    cov += [({"threshold": 0.04, "beta": 1.5, "lapse": 0.05, "mags": noise}, 20),
            ({"threshold": 0.04, "beta": 1.5, "lapse": 0.05, "mags": noise, "source_sd": 0.25}, 20),
            ({"threshold": 20.0, "beta": 5.0, "lapse": 0.02, "mags": (6, 12, 18, 24, 30, 36, 42),
              "increase_share": 0.8}, 20)]
    size += [({"threshold": None, "lapse": 0.0}, 5, "chance"), (base, 20, "gof")]
    # lapse-robust thresholds on every sweep shape: unbiased and biased observers, lapse 0-0.2, 10/20/100 sources
    for shape in SHAPES:
        for share, lapse in ((0.5, 0.0), (0.5, 0.2), (0.8, 0.2)):
            cov += [({**shape, "lapse": lapse, "increase_share": share}, s) for s in (10, 20, 100)]
    # two more observers on every shape (appended, so the cells above keep their seeds): an unbiased one
    # lapsing 10 % and a biased one (80 % "increase") that never lapses
    for shape in SHAPES:
        for share, lapse in ((0.5, 0.1), (0.8, 0.0)):
            cov += [({**shape, "lapse": lapse, "increase_share": share}, s) for s in (10, 20, 100)]
    # the chance test's size at every number of sources, for a coin and a biased coin
    size += [({"threshold": None, "lapse": 0.0, "increase_share": share}, s, "chance")
             for share, s in ((0.5, 10), (0.5, 100), (0.8, 10), (0.8, 100))]
    env = os.environ.get
    return (cov, size, int(env("VOCALGRAD_CAL_COVERAGE_SIMS", 500)), int(env("VOCALGRAD_CAL_DRAWS", 400)),
            int(env("VOCALGRAD_CAL_SIZE_SIMS", 1000)), int(env("VOCALGRAD_CAL_MC_DRAWS", 99)))


def calibration_cells(quick: bool, workers: int | None = None, progress=None, select=None) -> list[dict]:
    """Measure the fit's claims on simulated observers (docs/statistics.md, "Psychometric thresholds").

    Parameters
    ----------
    quick : bool
        A small run (about 30 s on 2 cores; Monte-Carlo errors of several points).
    workers : int, optional
        Processes (default: the cores available).
    progress : callable, optional
        ``progress(cells)`` with the cells finished so far, after each one (the size cells run first).
    select : callable, optional
        ``select(obs, sources, which)`` (``which``: ``"coverage"``, ``"chance"`` or ``"gof"``): run only the
        cells it keeps; each keeps the seeds it has in the whole plan.

    Returns
    -------
    list of dict
        ``method, design, truth, kind ('coverage' | 'size' | 'bias'), nominal, actual, mc_se, n_sims, note``.
    """
    cov, size, n_cov, draws, n_size, mc = _plan(quick)
    keep = select or (lambda *_: True)
    ci = [i for i, (obs, s) in enumerate(cov) if keep(obs, s, "coverage")]
    si = [i for i, (obs, s, which) in enumerate(size) if keep(obs, s, which)]
    jobs_c = [(cov[i][0], cov[i][1], draws, 1000 * i + j) for i in ci for j in range(n_cov)]
    jobs_s = [(size[i][0], size[i][1], mc, 500_000 + 1000 * i + j, size[i][2]) for i in si for j in range(n_size)]
    cov, size = [cov[i] for i in ci], [size[i] for i in si]
    workers = workers or len(os.sched_getaffinity(0))
    rc: list = []
    rs: list = []
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    try:
        for out, fn, jobs, per, chunk in ((rs, _size_job, jobs_s, n_size, 8), (rc, _coverage_job, jobs_c, n_cov, 4)):
            for r in (pool.map(fn, jobs, chunksize=chunk) if pool else map(fn, jobs)):
                out.append(r)
                if progress is not None and len(out) % per == 0:
                    progress(_cells(cov, size, rc, rs, n_cov, n_size, draws, mc))
    finally:
        if pool is not None:
            pool.shutdown()
    return _cells(cov, size, rc, rs, n_cov, n_size, draws, mc)


def _cells(cov, size, rc, rs, n_cov, n_size, draws, mc) -> list[dict]:
    """The table cells of the simulations finished (``rc``, ``rs``: results in job order; whole cells only)."""
    cells = []

    def cell(method, design, truth, kind, nominal, values, note="", at_most=False):
        v = np.asarray(values, float)
        se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
        cells.append({"method": method, "design": design, "truth": truth, "kind": kind, "nominal": nominal,
                      "actual": float(v.mean()), "mc_se": se, "n_sims": int(v.size), "note": note,
                      "at_most": at_most})

    for i, (obs, s) in enumerate(cov[:len(rc) // n_cov] if n_cov else []):
        r = rc[i * n_cov:(i + 1) * n_cov]
        design, truth = _design(s, obs), _describe(obs)
        width = float(np.median([w for *_, w in r]))
        cell("threshold 95 % interval (expanded percentile, sources resampled)", design, truth, "coverage", 0.95,
             [a for a, *_ in r], f"{draws} draws; median width {100 * width:.0f} % of the threshold")
        cell("threshold 95 % interval (plain percentile, for comparison)", design, truth, "coverage", 0.95,
             [b for _, b, *_ in r], f"{draws} draws")
        cell("threshold (relative error of the estimate)", design, truth, "bias", 0.0,
             [(e - t) / t for _, _, e, t, _ in r], "mean of (estimate - truth) / truth")
    for i, (obs, s, which) in enumerate(size[:len(rs) // n_size] if n_size else []):
        r = rs[i * n_size:(i + 1) * n_size]
        design, truth = _design(s, obs), _describe(obs)
        if which == "gof":
            cell("goodness of fit flag (deviance, Monte-Carlo p <= 0.05)", design, truth, "size", ALPHA,
                 [g for _, _, g in r], f"{mc} Monte-Carlo draws per fit")
            continue
        cell("chance test (likelihood ratio, Monte-Carlo p <= 0.05)", design, truth, "size", ALPHA,
             [a for a, _, _ in r], f"{mc} Monte-Carlo draws per fit")
        cell("coin given a threshold within the sweep", design, truth, "size", ALPHA, [b for _, b, _ in r],
             "at most the chance test's size", at_most=True)
    return cells


def format_table(cells: list[dict]) -> str:
    """The cells as a markdown table."""
    rows = ["| method | design | observer | kind | nominal | actual | MC error | sims | note |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        pct = c["kind"] != "bias"
        f = (lambda v: f"{100 * v:.1f} %") if pct else (lambda v: f"{100 * v:+.1f} %")
        rows.append(f"| {c['method']} | {c['design']} | {c['truth']} | {c['kind']} | {f(c['nominal'])} | "
                    f"{f(c['actual'])} | ±{100 * c['mc_se']:.1f} | {c['n_sims']} | {c['note']} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.report.psychometric_sim",
                                 description="Calibrate the psychometric fit on simulated observers.")
    ap.add_argument("--quick", action="store_true", help="a small run (about 30 s on 2 cores)")
    ap.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    ap.add_argument("--json", default=None, help="write the cells finished so far to this file after each one")
    ap.add_argument("--only", choices=("lapse", "chance"), default=None,
                    help="only the lapse cells (the three sweep shapes) or only the chance test's cells")
    ap.add_argument("--sources", type=int, nargs="+", default=None, help="only the cells with these numbers of sources")
    ap.add_argument("--lapse", type=float, nargs="+", default=None, help="only the observers with these lapse rates")
    ap.add_argument("--increase-share", type=float, nargs="+", default=None,
                    help="only the observers giving this share of 'increase' answers at no change (0.5: unbiased)")
    a = ap.parse_args(argv)
    t0 = time.time()

    def save(cells):
        if a.json:
            tmp = f"{a.json}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump({"seconds": round(time.time() - t0, 1), "cells": cells}, fh, indent=1)
            os.replace(tmp, a.json)

    only = {"lapse": lambda obs, s, which: "shape" in obs,
            "chance": lambda obs, s, which: which == "chance"}.get(a.only, lambda *_: True)

    def select(obs, s, which):
        return (only(obs, s, which) and (a.sources is None or s in a.sources)
                and (a.lapse is None or _setting(obs, "lapse") in a.lapse)
                and (a.increase_share is None or _setting(obs, "increase_share") in a.increase_share))

    cells = calibration_cells(a.quick, a.workers, progress=save, select=select)
    save(cells)
    print(format_table(cells))
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
