"""Simulated observers with known truth on the benchmark's design, and the calibration cells of the
accuracy intervals, the chance verdicts and the paired comparisons (used by ``benchmarks/calibration.py``).

Design: ``sources`` source utterances x the 9 categories x 24 conditions (3 tiers x 4 trajectories x 2
directions), as in the benchmark. Observer: an answer is unparsed with probability ``UNPARSED`` (it counts as
wrong); a parsed answer is right with probability ``logistic(BASE[category] + TIER[tier] + BIAS * (+1 increase,
-1 decrease) + u[source])``. ``u[source] ~ Normal(0, sd^2)`` is the source effect, shared by the source's
categories (a voice the model finds hard): ``sd = 0`` for sources alike, ``sd = SOURCE_SD`` (0.75 on the logit
scale: per-source accuracy of a 75 % category spans about 50-90 % over the middle 95 % of voices) for sources that
differ. Every cell calls the toolkit's own functions on the simulated answers.

Truths: the *population* value (the figure's expectation over voices, by Gauss-Hermite quadrature over ``u``)
is what a clustered interval claims to cover; the *conditional* value (the expectation given the sources drawn)
is what the binomial interval claims to cover (its randomness is the answers', not the voices').
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

import vocalgrad
from analysis.report import stats
from harness_tasks.cluster_ci import cluster_interval
from harness_tasks.metrics import bootstrap_ci
from harness_tasks.stat_settings import STATS

CATS = vocalgrad.CATEGORY_NAMES
TIERS = vocalgrad.TIERS
DIRS = vocalgrad.DIRECTIONS
#: Accuracy of a parsed answer per category at the medium tier, unbiased, on the logit scale.
BASE = np.log(np.array([0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.70, 0.65]) /
              (1 - np.array([0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.70, 0.65])))
TIER = np.array([-0.4, 0.0, 0.4])   # low, medium, high
BIAS = 0.3                          # increase clips are easier (a model biased towards "increase")
UNPARSED = 0.05
SOURCE_SD = 0.75
SOURCES = (2, 5, 20, 100)
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(60)
_GH_W = _GH_W / _GH_W.sum()


#: A category's conditions, (tier, trajectory, direction), in the builder's order.
CONDITIONS = tuple((t, tr, d) for t in TIERS for tr in vocalgrad.TRAJECTORIES for d in DIRS)


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def parsed_record(source_id: str, category: str, tier: str, trajectory: str, direction: str, right,
                  **extra) -> dict:
    """One parsed answer of a simulated observer, scored as the report reads it (its clip id included): the
    gold direction when ``right``, the other one when not; ``extra`` keys are added (an annotator)."""
    pred = direction if right else DIRS[1 - DIRS.index(direction)]
    return {"id": vocalgrad.clip_id(source_id, category, trajectory, tier, direction), "category": category,
            "tier": tier, "trajectory": trajectory, "direction": direction, "source_id": source_id, "pred": pred,
            "status": "parsed", "exact": True, "correct": bool(right), **extra}


def share_se(share: float, n: int) -> float:
    """Monte-Carlo standard error of a share measured over ``n`` runs (as over one run when ``n`` is 0)."""
    return math.sqrt(max(share * (1 - share), 1e-12) / max(n, 1))


class Design:
    """Clip layout of ``sources`` sources: per clip its source, category, tier and direction index."""

    def __init__(self, sources: int, categories: int = len(CATS)):
        s, c, t, _traj, d = np.meshgrid(np.arange(sources), np.arange(categories), np.arange(len(TIERS)),
                                        np.arange(len(vocalgrad.TRAJECTORIES)), np.arange(len(DIRS)),
                                        indexing="ij")
        self.sources, self.categories = sources, categories
        self.src, self.cat, self.tier, self.dir = s.ravel(), c.ravel(), t.ravel(), d.ravel()
        self.sign = np.where(self.dir == 0, 1.0, -1.0)
        self.n = self.src.size
        self.source_ids = [f"s{i:03d}" for i in range(sources)]

    def eta(self, base: np.ndarray = BASE, bias: float = BIAS) -> np.ndarray:
        """Fixed part of the logit of a right parsed answer, per clip."""
        return base[self.cat] + TIER[self.tier] + bias * self.sign

    def answers(self, rng, p_right: np.ndarray, unparsed: float = UNPARSED):
        """(status parsed?, right?) per clip."""
        parsed = rng.random(self.n) >= unparsed
        right = parsed & (rng.random(self.n) < p_right)
        return parsed, right

    def records(self, parsed: np.ndarray, right: np.ndarray) -> list[dict]:
        """Scored records as the report reads them."""
        out = []
        for s, c, d, ok, r in zip(self.src.tolist(), self.cat.tolist(), self.dir.tolist(), parsed.tolist(),
                                  right.tolist()):
            gold = DIRS[d]
            pred = (gold if r else DIRS[1 - d]) if ok else None
            out.append({"direction": gold, "pred": pred, "status": "parsed" if ok else "unparsed", "exact": ok,
                        "correct": r, "category": CATS[c], "source_id": self.source_ids[s]})
        return out


def population_accuracy(eta: np.ndarray, sd: float) -> np.ndarray:
    """E over u ~ N(0, sd^2) of logistic(eta + u), per entry (computed once per distinct logit)."""
    if sd == 0:
        return logistic(eta)
    vals, inv = np.unique(eta, return_inverse=True)
    return (logistic(vals[:, None] + sd * _GH_X) @ _GH_W)[inv.reshape(eta.shape)]


def _macro(design: Design, per_clip: np.ndarray) -> float:
    """Unweighted mean over categories of the mean over the category's clips."""
    return float(np.mean([per_clip[design.cat == c].mean() for c in range(design.categories)]))


def _inc_ratio(design: Design, p_right: np.ndarray, category: int) -> float:
    """Expected share of 'increase' among parsed answers in one category."""
    m = design.cat == category
    says_inc = np.where(design.dir[m] == 0, p_right[m], 1 - p_right[m])
    return float(says_inc.mean())


def _covers(ci, truth) -> bool | None:
    lo, hi = ci
    if np.isnan(lo) or np.isnan(hi):
        return None
    return bool(lo <= truth <= hi)


# ---- coverage of the accuracy intervals --------------------------------------------------------------------


def accuracy_intervals(rng, *, sources: int, sd: float, draws: int) -> dict[str, bool | None]:
    """One observer: does each interval the report prints cover its truth?"""
    d = Design(sources)
    eta = d.eta()
    u = rng.normal(0.0, sd, sources) if sd > 0 else np.zeros(sources)
    p = logistic(eta + u[d.src])
    parsed, right = d.answers(rng, p)
    recs = d.records(parsed, right)
    keep = 1 - UNPARSED
    cond = keep * _macro(d, p)
    pop = keep * _macro(d, population_accuracy(eta, sd))
    kw = {"draws": draws, "seed": int(rng.integers(2**31))}
    cat0 = [r for r in recs if r["category"] == CATS[0]]
    binomial = bootstrap_ci(recs, "acc", macro_by="category", **kw)
    out = {
        "accuracy, binomial bootstrap (paper)": _covers(binomial, cond),
        "balanced accuracy, binomial bootstrap": _covers(
            bootstrap_ci(recs, "balanced_acc", macro_by="category", **kw), cond),
        "increase ratio of a category, binomial bootstrap": _covers(
            bootstrap_ci(cat0, "increase_ratio", **kw), _inc_ratio(d, p, 0)),
        "accuracy, clustered (jackknife t)": _covers(
            cluster_interval(recs, "acc", macro_by="category"), pop),
    }
    if sources <= STATS.min_clusters:  # the method it replaced (at 100 sources it is close to the t interval)
        out["accuracy, clustered percentile bootstrap (replaced)"] = _covers(
            bootstrap_ci(recs, "acc", macro_by="category", cluster="source_id", min_clusters=2, **kw), pop)
    if sources < STATS.min_clusters:  # what the withheld interval would do
        out["accuracy, clustered (jackknife t) if not withheld"] = _covers(
            cluster_interval(recs, "acc", macro_by="category", min_clusters=2), pop)
    if sd > 0:
        out["accuracy, binomial bootstrap vs the population (not its claim)"] = _covers(binomial, pop)
    return out


def clustered_accuracy(rng, *, sources: int, sd: float, draws: int = 0,
                       categories: int = len(CATS)) -> dict[str, bool | None]:
    """The clustered accuracy interval alone (a fast check of :func:`cluster_interval`)."""
    d = Design(sources, categories)
    eta = d.eta()
    u = rng.normal(0.0, sd, sources) if sd > 0 else np.zeros(sources)
    parsed, right = d.answers(rng, logistic(eta + u[d.src]))
    pop = (1 - UNPARSED) * _macro(d, population_accuracy(eta, sd))
    return {"accuracy, clustered (jackknife t)": _covers(
        cluster_interval(d.records(parsed, right), "acc", macro_by="category"), pop)}


def paired_intervals(rng, *, sources: int, sd: float, draws: int) -> dict[str, bool | None]:
    """Two observers on the same clips, B 0.4 logits worse, each with its own source effects: do the
    intervals of A - B cover?"""
    d = Design(sources)
    eta_a, eta_b = d.eta(), d.eta() - 0.4
    ua, ub = (rng.normal(0.0, sd, (2, sources)) if sd > 0 else np.zeros((2, sources)))
    pa, pb = logistic(eta_a + ua[d.src]), logistic(eta_b + ub[d.src])
    _, ra = d.answers(rng, pa)
    _, rb = d.answers(rng, pb)
    keep = 1 - UNPARSED
    cond = keep * float(np.mean(pa - pb))
    pop = keep * float(np.mean(population_accuracy(eta_a, sd) - population_accuracy(eta_b, sd)))
    seed = int(rng.integers(2**31))
    clusters = [d.source_ids[s] for s in d.src.tolist()]
    out = {
        "paired difference, binomial bootstrap": _covers(
            stats.paired_bootstrap_diff(ra, rb, draws=draws, seed=seed), cond),
        "paired difference, clustered (jackknife t)": _covers(stats.paired_clustered_diff(ra, rb, clusters), pop),
    }
    if sources < STATS.min_clusters:
        out["paired difference, clustered (jackknife t) if not withheld"] = _covers(
            stats.paired_clustered_diff(ra, rb, clusters, min_clusters=2), pop)
    return out


# ---- size of the tests -------------------------------------------------------------------------------------


def chance_tests(rng, *, sources: int, sd: float, draws: int) -> dict[str, bool | None]:
    """A true null of 'no better than chance': every category at 50 % (a coin when sources are alike; voices
    on which the model is right more or less often than half, 50 % on average, when they differ). Rejected?"""
    d = Design(sources)
    u = rng.normal(0.0, sd, sources) if sd > 0 else np.zeros(sources)
    p = logistic(u[d.src])
    parsed, right = d.answers(rng, p, unparsed=0.0)
    rows = [(int(right[d.cat == c].sum()), int((d.cat == c).sum())) for c in range(d.categories)]
    flags = stats.chance_flags(rows)
    out: dict[str, bool | None] = {}
    name = "chance flags over the 9 categories, exact binomial + Holm: family-wise error"
    if sd == 0:
        out[name] = any(v != stats.NOT_DIFFERENT for _, _, v in flags)
        recs = d.records(parsed, right)
        ci = bootstrap_ci(recs, "acc", macro_by="category", draws=draws, seed=int(rng.integers(2**31)))
        out["overall verdict, binomial interval excludes 50 %"] = stats.chance_verdict(ci) != stats.NOT_DIFFERENT
    else:
        out[name + " vs the population null (not its claim)"] = any(v != stats.NOT_DIFFERENT for _, _, v in flags)
        recs = d.records(parsed, right)
    k = np.zeros((d.categories, sources), dtype=int)
    np.add.at(k, (d.cat, d.src), right)
    clustered = stats.chance_flags_clustered([{s: (int(k[c, s]), 24) for s in range(sources)}
                                              for c in range(d.categories)], draws=draws, seed=int(rng.integers(2**31)))
    out["chance flags over the 9 categories, clustered sign-flip max-T: family-wise error"] = (
        None if clustered is None else any(v != stats.NOT_DIFFERENT for _, _, v in clustered))
    ci = cluster_interval(recs, "acc", macro_by="category")
    v = stats.chance_verdict(ci)
    out["overall verdict, clustered interval excludes 50 %"] = None if v == "n/a" else v != stats.NOT_DIFFERENT
    return out


def chance_flag_errors(rng, *, sources: int, sd: float, draws: int) -> dict[str, bool | None]:
    """The chance flags over the 9 categories alone (a fast check of Holm and of the max-T flags): does a
    true null get any flag?"""
    d = Design(sources)
    u = rng.normal(0.0, sd, sources) if sd > 0 else np.zeros(sources)
    _, right = d.answers(rng, logistic(u[d.src]), unparsed=0.0)
    k = np.zeros((d.categories, sources), dtype=int)
    np.add.at(k, (d.cat, d.src), right)
    out = {}
    if sd == 0:
        flags = stats.chance_flags([(int(k[c].sum()), 24 * sources) for c in range(d.categories)])
        out["exact binomial + Holm"] = any(v != stats.NOT_DIFFERENT for _, _, v in flags)
    clustered = stats.chance_flags_clustered([{s: (int(k[c, s]), 24) for s in range(sources)}
                                              for c in range(d.categories)], draws=draws, seed=int(rng.integers(2**31)))
    out["clustered max-T"] = None if clustered is None else any(v != stats.NOT_DIFFERENT for _, _, v in clustered)
    return out


def paired_tests(rng, *, sources: int, sd: float, draws: int) -> dict[str, bool | None]:
    """Two equally accurate observers (the same answer probabilities per clip, answers drawn apart): does
    the McNemar test reject, overall and in one category?"""
    d = Design(sources)
    u = rng.normal(0.0, sd, sources) if sd > 0 else np.zeros(sources)
    p = logistic(d.eta() + u[d.src])
    _, ra = d.answers(rng, p)
    _, rb = d.answers(rng, p)
    m = d.cat == 0
    alpha = STATS.alpha

    def mc(x, y, test):
        return test(int((x & ~y).sum()), int((y & ~x).sum())) < alpha

    return {"McNemar mid-p (printed), all clips": mc(ra, rb, stats.mcnemar_midp),
            "McNemar mid-p (printed), one category": mc(ra[m], rb[m], stats.mcnemar_midp),
            "McNemar exact (report.json mcnemar_p_exact), all clips": mc(ra, rb, stats.mcnemar_exact),
            "McNemar exact (report.json mcnemar_p_exact), one category": mc(ra[m], rb[m], stats.mcnemar_exact)}


def annotator_tests(rng, *, sources: int, sd: float, draws: int) -> dict[str, bool | None]:
    """A human row (3 annotators per clip) against a model as accurate as each annotator, on one category's
    clips; a clip effect (sd 1 on the logit scale) is shared by the annotators and the model. Rejected?"""
    n = 24 * sources
    v = rng.normal(0.0, 1.0, n)
    p = logistic(0.8 + v)
    ann = rng.random((n, 3)) < p[:, None]
    model = rng.random(n) < p
    disc = ann.sum(axis=1) - 3 * model.astype(int)
    return {"clustered McNemar mid-p (printed, 3 annotators per clip)":
            stats.mcnemar_clustered(disc.tolist(), mid=True) < STATS.alpha,
            "clustered McNemar exact (3 annotators per clip)": stats.mcnemar_clustered(disc.tolist()) < STATS.alpha}


def _cell(name, design, kind, sims, run) -> dict:
    return {"name": name, "design": design, "kind": kind, "sims": sims, "run": run,
            "nominal": STATS.level if kind == "coverage" else STATS.alpha}


def cells(quick: bool = False, draws: int = 2000, sources: tuple[int, ...] | None = None) -> list:
    """The calibration cells of this module (see ``benchmarks/calibration.py`` for the interface);
    ``sources``: only these designs (default: 2, 5, 20 and 100; quick: 2, 5 and 20)."""
    cov, size = (80, 160) if quick else (500, 1000)
    sources = sources or (SOURCES[:3] if quick else SOURCES)
    out = []
    for s in sources:  # small designs first: a stopped run leaves them
        out.append(_cell("annotator tests", f"{24 * s} clips x 3 annotators", "size", size,
                         partial(annotator_tests, sources=s, sd=0.0, draws=draws)))
        for sd in (0.0, SOURCE_SD):
            design = f"{s} sources, {'alike' if sd == 0 else f'differ (sd {sd})'}"
            kw = {"sources": s, "sd": sd, "draws": draws}
            for name, fn, kind in (("accuracy intervals", accuracy_intervals, "coverage"),
                                   ("paired intervals", paired_intervals, "coverage"),
                                   ("chance tests", chance_tests, "size"), ("paired tests", paired_tests, "size")):
                out.append(_cell(name, design, kind, cov if kind == "coverage" else size, partial(fn, **kw)))
    return out
