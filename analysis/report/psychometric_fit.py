"""The psychometric model of the magnitude sweeps: sensitivity, criterion and lapse, fitted to both directions.

An observer hears a change of magnitude ``x`` (> 0) and answers "increase" or "decrease". Its
**sensitivity** is ``d'(x) = (x / alpha) ** beta`` (signal detection's transducer: no sensitivity at
no change, rising as a power of the magnitude); its **criterion** ``c`` is where it puts the line
between the two answers (``c < 0``: it says "increase" more often); with probability ``lapse`` it
answers at random (a coin, whatever it heard)::

    P("increase" | increase clip, x) = lapse / 2 + (1 - lapse) * Phi(+d'(x) / 2 - c)
    P("increase" | decrease clip, x) = lapse / 2 + (1 - lapse) * Phi(-d'(x) / 2 - c)

The **threshold** is the magnitude at which the sensitivity alone gives 75 % correct
(``Phi(d' / 2) = 0.75``, i.e. ``d' = 1.349``): free of the criterion (a biased observer's
threshold is its sensitivity's, not its pooled share correct) and of lapses (it is the midpoint of
the function scaled between its guess rate and its asymptote, Wichmann & Hill's definition). The
**pooled 75 % point** (the old definition: where the share correct, both directions counted alike,
bias and lapses included, reaches 75 %) is kept as a secondary number.

Fitting: maximum a posteriori with a weak prior on the lapse of one side, ``lapse / 2`` (psignifit 4's
lambda, the function's distance from 1 at the top): Beta(1, :data:`LAPSE_PRIOR_B`), weaker than psignifit's
Beta(1, 10), which still read a volume-like observer lapsing 20 % as 11 % less sensitive at 10 sources
(docs/statistics.md); the lapse is bounded to [0, 0.5]. Flat priors within wide bounds on the rest
(:data:`BOUNDS`). The fit starts from the best point of a coarse grid, refined by L-BFGS-B with an
analytic gradient. A fit that ends at a bound (other than no lapse) is flagged. Counts are per level
and direction: ``k1`` "increase" answers of ``n1`` parsed increase clips, ``k0`` of ``n0`` parsed
decrease clips (unparsed answers are missing, their share is reported apart).

Tests (Monte-Carlo p-values, :data:`MC_DRAWS` simulated sets of answers, each refitted, all at once
by a batched Levenberg-Marquardt fit):

* **chance**: likelihood ratio of the model against "the answers do not depend on the direction"
  (one share of "increase" answers everywhere), its reference distribution from the answers shuffled
  among the clips (a permutation test, exact whatever that share; refitted every draw), because the
  null lies on the boundary of the parameter space where the chi-square reference is wrong;
* **goodness of fit**: the deviance against the saturated model (one share per level and
  direction), its reference simulated from the fitted model (refitted every draw).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

__all__ = ["ALPHA", "BOUNDS", "D_TARGET", "LAPSE_PRIOR_B", "LAPSE_SIDE", "MC_DRAWS", "Counts", "Fit", "bootstrap",
           "chance_test", "deviance", "fit", "fit_batch", "gof_test", "interval_tail", "lapse_prior_nll",
           "lr_statistic", "p_increase", "pooled_correct", "pooled_threshold", "sensitivity_threshold", "thresholds_of"]

#: d' at which the sensitivity alone gives 75 % correct: 2 * Phi^-1(0.75).
D_TARGET = float(2.0 * ndtri(0.75))
#: Level of the chance test and of the goodness-of-fit flag.
ALPHA = 0.05
#: Beta(1, b) prior on the lapse of one side, ``lapse * LAPSE_SIDE`` (psignifit 4's lambda, the function's
#: distance from 1 at the top, half our lapse: a lapse guesses right half the time). psignifit's b = 10 biased
#: thresholds of lapsing observers on shallow sweeps (docs/statistics.md); b = 2 keeps them within 5 %.
LAPSE_PRIOR_B = 2.0
#: One side's share of the lapse (psignifit's lambda = ``lapse * LAPSE_SIDE``).
LAPSE_SIDE = 0.5
MAX_LAPSE = 0.5
#: Monte-Carlo draws of a test's reference distribution (each a refit).
MC_DRAWS = 199
#: Bounds of (log alpha relative to the sweep, log beta, criterion, lapse); alpha within [smallest/10, largest*10].
BOUNDS = {"alpha_factor": 10.0, "beta": (0.3, 10.0), "criterion": (-3.0, 3.0), "lapse": (0.0, MAX_LAPSE)}
_EPS = 1e-9


@dataclass
class Counts:
    """Answers per magnitude: ``k1`` "increase" of ``n1`` increase clips, ``k0`` "increase" of ``n0`` decrease clips."""

    x: np.ndarray
    k1: np.ndarray
    n1: np.ndarray
    k0: np.ndarray
    n0: np.ndarray

    def __post_init__(self):
        self.x, self.k1, self.n1, self.k0, self.n0 = (np.asarray(v, float) for v in
                                                      (self.x, self.k1, self.n1, self.k0, self.n0))

    @property
    def n(self) -> float:
        return float(self.n1.sum() + self.n0.sum())


@dataclass
class Fit:
    """A fit: parameters, the sensitivity ``threshold`` (``alpha * 1.349 ** (1 / beta)``), ``nll`` (with the
    prior), ``loglik`` (without), ``at_bound`` (names of parameters at a bound; a lapse of 0 is not one)."""

    alpha: float
    beta: float
    criterion: float
    lapse: float
    nll: float
    loglik: float
    threshold: float
    at_bound: list[str] = field(default_factory=list)
    converged: bool = True


def p_increase(x, alpha, beta, criterion, lapse):
    """(P("increase" | increase clip), P("increase" | decrease clip)) at magnitudes ``x``."""
    d = np.power(np.maximum(np.asarray(x, float), 0.0) / alpha, beta)
    return (lapse / 2 + (1 - lapse) * ndtr(d / 2 - criterion), lapse / 2 + (1 - lapse) * ndtr(-d / 2 - criterion))


def pooled_correct(x, alpha, beta, criterion, lapse):
    """Share correct with both directions counted alike (bias and lapses included)."""
    p1, p0 = p_increase(x, alpha, beta, criterion, lapse)
    return 0.5 * (p1 + 1.0 - p0)


def sensitivity_threshold(alpha: float, beta: float) -> float:
    """The magnitude where ``d' = 1.349`` (75 % correct from the sensitivity alone)."""
    return float(alpha * D_TARGET ** (1.0 / beta))


def pooled_threshold(f: Fit, largest: float) -> float:
    """Where :func:`pooled_correct` of ``f`` reaches 75 % (inf when it does not within ``largest``)."""
    xs = np.linspace(0.0, largest, 801)
    pc = pooled_correct(xs, f.alpha, f.beta, f.criterion, f.lapse)
    i = int(np.argmax(pc >= 0.75)) if np.any(pc >= 0.75) else -1
    if i <= 0:
        return math.inf if i < 0 else 0.0
    x0, x1, y0, y1 = xs[i - 1], xs[i], pc[i - 1], pc[i]
    return float(x0 + (0.75 - y0) * (x1 - x0) / (y1 - y0))


def _bounds(x):
    lo, hi = float(np.min(x)), float(np.max(x))
    a = BOUNDS["alpha_factor"]
    return [(math.log(lo / a), math.log(hi * a)), tuple(math.log(b) for b in BOUNDS["beta"]),
            BOUNDS["criterion"], BOUNDS["lapse"]]


def lapse_prior_nll(lapse):
    """The lapse prior's negative log density (up to a constant) and its first and second derivatives in
    ``lapse``: Beta(1, :data:`LAPSE_PRIOR_B`) on ``lapse * LAPSE_SIDE`` (psignifit 4's prior on its lambda)."""
    b = LAPSE_PRIOR_B - 1.0
    room = np.maximum(1.0 - np.asarray(lapse, float) * LAPSE_SIDE, 1e-12)
    return -b * np.log(room), b * LAPSE_SIDE / room, b * LAPSE_SIDE ** 2 / room ** 2


def _nll(theta, c: Counts, prior: bool = True):
    """Negative log-posterior (flat priors but the lapse's) and its gradient in (log alpha, log beta, c, lapse)."""
    la, lb, crit, lam = theta
    beta = math.exp(lb)
    lu = beta * (np.log(c.x) - la)
    u = np.exp(np.minimum(lu, 30.0))
    z1, z0 = u / 2 - crit, -u / 2 - crit
    f1, f0 = ndtr(z1), ndtr(z0)
    g1, g0 = np.exp(-0.5 * z1 * z1) / math.sqrt(2 * math.pi), np.exp(-0.5 * z0 * z0) / math.sqrt(2 * math.pi)
    p1 = np.clip(lam / 2 + (1 - lam) * f1, _EPS, 1 - _EPS)
    p0 = np.clip(lam / 2 + (1 - lam) * f0, _EPS, 1 - _EPS)
    ll = np.sum(c.k1 * np.log(p1) + (c.n1 - c.k1) * np.log1p(-p1) + c.k0 * np.log(p0) + (c.n0 - c.k0) * np.log1p(-p0))
    d1 = -(c.k1 / p1 - (c.n1 - c.k1) / (1 - p1))  # d nll / d p1
    d0 = -(c.k0 / p0 - (c.n0 - c.k0) / (1 - p0))
    dd = d1 * (1 - lam) * g1 / 2 - d0 * (1 - lam) * g0 / 2  # d nll / d d'
    grad = np.array([np.sum(dd * -beta * u), np.sum(dd * u * lu),
                     np.sum(-(d1 * (1 - lam) * g1 + d0 * (1 - lam) * g0)),
                     np.sum(d1 * (0.5 - f1) + d0 * (0.5 - f0))])
    nll = -float(ll)
    if prior:
        pn, pg, _ = lapse_prior_nll(lam)
        nll += float(pn)
        grad[3] += float(pg)
    return nll, grad


def _terms(theta, x, k1, n1, k0, n0, jac: bool):
    """Batched model terms: theta (B, 4), counts (B, L). Returns nll (B,) [, grad (B, 4), Fisher info (B, 4, 4)]."""
    la, lb, crit, lam = (theta[:, i:i + 1] for i in range(4))
    beta = np.exp(lb)
    lu = beta * (np.log(x)[None, :] - la)
    u = np.exp(np.minimum(lu, 30.0))
    z1, z0 = u / 2 - crit, -u / 2 - crit
    f1, f0 = ndtr(z1), ndtr(z0)
    p1 = np.clip(lam / 2 + (1 - lam) * f1, _EPS, 1 - _EPS)
    p0 = np.clip(lam / 2 + (1 - lam) * f0, _EPS, 1 - _EPS)
    pn, pg, ph = lapse_prior_nll(lam[:, 0])
    nll = -np.sum(k1 * np.log(p1) + (n1 - k1) * np.log1p(-p1) + k0 * np.log(p0) + (n0 - k0) * np.log1p(-p0), 1) + pn
    if not jac:
        return nll
    g1 = (1 - lam) * np.exp(-0.5 * z1 * z1) / math.sqrt(2 * math.pi)
    g0 = (1 - lam) * np.exp(-0.5 * z0 * z0) / math.sqrt(2 * math.pi)
    du = np.stack([-beta * u, u * lu], -1)  # d d' / d (log alpha, log beta)
    j1 = np.concatenate([(g1 / 2)[..., None] * du, -g1[..., None], (0.5 - f1)[..., None]], -1)  # (B, L, 4)
    j0 = np.concatenate([(-g0 / 2)[..., None] * du, -g0[..., None], (0.5 - f0)[..., None]], -1)
    d1 = -(k1 / p1 - (n1 - k1) / (1 - p1))
    d0 = -(k0 / p0 - (n0 - k0) / (1 - p0))
    grad = np.einsum("bl,blj->bj", d1, j1) + np.einsum("bl,blj->bj", d0, j0)
    grad[:, 3] += pg
    w1, w0 = n1 / (p1 * (1 - p1)), n0 / (p0 * (1 - p0))
    info = np.einsum("bl,bli,blj->bij", w1, j1, j1) + np.einsum("bl,bli,blj->bij", w0, j0, j0)
    info[:, 3, 3] += ph
    return nll, grad, info


def _grid_starts(x, k1, n1, k0, n0, bounds):
    """Per dataset (rows of the counts), the best point of a coarse grid over (log alpha, log beta), with the
    criterion from the answers and lapse 0.02."""
    h = (k1.sum(1) + 0.5) / (n1.sum(1) + 1)
    fa = (k0.sum(1) + 0.5) / (n0.sum(1) + 1)
    crit = np.clip(-(ndtri(h) + ndtri(fa)) / 2, *bounds[2])
    las = np.linspace(bounds[0][0] + 0.3, bounds[0][1] - 0.3, 24)
    grid = np.array([(la, lb) for lb in np.log([0.7, 1.5, 3.0, 6.0]) for la in las])  # (G, 2)
    u = np.exp(np.minimum(np.exp(grid[:, 1:2]) * (np.log(x)[None, :] - grid[:, 0:1]), 30.0))  # (G, L)
    best = np.full(len(h), -np.inf)
    out = np.zeros((len(h), 4))
    out[:, 2], out[:, 3] = crit, 0.02
    for g in range(len(grid)):
        p1 = np.clip(0.01 + 0.98 * ndtr(u[g] / 2 - crit[:, None]), _EPS, 1 - _EPS)
        p0 = np.clip(0.01 + 0.98 * ndtr(-u[g] / 2 - crit[:, None]), _EPS, 1 - _EPS)
        ll = (k1 * np.log(p1) + (n1 - k1) * np.log1p(-p1) + k0 * np.log(p0) + (n0 - k0) * np.log1p(-p0)).sum(1)
        better = ll > best
        best = np.where(better, ll, best)
        out[better, :2] = grid[g]
    return out


def _lm(theta, x, k1, n1, k0, n0, bounds, iters: int = 60):
    """Batched Levenberg-Marquardt (Fisher scoring, projected onto the bounds) from ``theta`` (B, 4)."""
    lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
    theta = np.clip(theta, lo, hi)
    mu = np.full(len(theta), 1e-2)
    nll, grad, info = _terms(theta, x, k1, n1, k0, n0, True)
    for _ in range(iters):
        h = info + (mu[:, None, None] + 1e-9) * np.eye(4) * (np.einsum("bii->bi", info)[:, None, :] + 1e-6)
        step = -np.linalg.solve(h, grad[..., None])[..., 0]
        new = np.clip(theta + step, lo, hi)
        nll_new = _terms(new, x, k1, n1, k0, n0, False)
        ok = nll_new < nll - 1e-12
        if not ok.any() and (mu > 1e6).all():
            break
        theta = np.where(ok[:, None], new, theta)
        mu = np.where(ok, mu / 4, mu * 5)
        if ok.any():
            nll2, grad2, info2 = _terms(theta, x, k1, n1, k0, n0, True)
            nll, grad, info = np.where(ok, nll2, nll), np.where(ok[:, None], grad2, grad), \
                np.where(ok[:, None, None], info2, info)
        if (mu > 1e6).all():
            break
    return theta, nll


def fit_batch(x, k1, n1, k0, n0, start=None):
    """Fit every row of the counts (B, L) at once; ``start`` (alpha, beta, criterion, lapse) is an extra start.

    Returns
    -------
    (theta, nll) : arrays (B, 4) in (log alpha, log beta, criterion, lapse) and (B,)
    """
    x = np.asarray(x, float)
    k1, n1, k0, n0 = (np.atleast_2d(np.asarray(v, float)) for v in (k1, n1, k0, n0))
    bounds = _bounds(x)
    theta, nll = _lm(_grid_starts(x, k1, n1, k0, n0, bounds), x, k1, n1, k0, n0, bounds)
    if start is not None:
        s = np.tile([math.log(start[0]), math.log(start[1]), start[2], start[3]], (len(k1), 1))
        t2, nll2 = _lm(s, x, k1, n1, k0, n0, bounds)
        better = nll2 < nll
        theta, nll = np.where(better[:, None], t2, theta), np.where(better, nll2, nll)
    return theta, nll


def thresholds_of(theta) -> np.ndarray:
    """Sensitivity thresholds of batched parameters (B, 4)."""
    return np.exp(theta[:, 0]) * D_TARGET ** (1.0 / np.exp(theta[:, 1]))


def fit(c: Counts, start=None) -> Fit:
    """Maximum a posteriori fit of the model to ``c`` (levels with no answers are ignored).

    Parameters
    ----------
    c : Counts
    start : sequence of (alpha, beta, criterion, lapse), optional
        An extra starting point (a bootstrap refit starts from the full fit).
    """
    bounds = _bounds(c.x)
    theta, _ = fit_batch(c.x, c.k1, c.n1, c.k0, c.n0, start)
    res = minimize(_nll, theta[0], args=(c,), jac=True, method="L-BFGS-B", bounds=bounds)  # polish
    best = res.x if res.fun <= _nll(theta[0], c)[0] else theta[0]
    la, lb, crit, lam = (float(v) for v in best)
    alpha, beta = math.exp(la), math.exp(lb)
    at = [name for name, v, (lo, hi), low_ok in zip(("alpha", "beta", "criterion", "lapse"), best, bounds,
                                                      (False, False, False, True))
          if v >= hi - 1e-4 * max(1.0, abs(hi)) or (not low_ok and v <= lo + 1e-4 * max(1.0, abs(lo)))]
    return Fit(alpha, beta, crit, lam, float(_nll(best, c)[0]), -_nll(best, c, prior=False)[0],
               sensitivity_threshold(alpha, beta), at, bool(res.success))


def _loglik_batch(theta, x, k1, n1, k0, n0) -> np.ndarray:
    """Log-likelihood (without the prior) of batched parameters."""
    return -(_terms(theta, x, k1, n1, k0, n0, False) - lapse_prior_nll(theta[:, 3])[0])


def _loglik_null(k, n) -> np.ndarray:
    """Log-likelihood of ``k`` "increase" answers of ``n`` (arrays) under one share of "increase" everywhere."""
    q = np.clip(k / np.maximum(n, 1), _EPS, 1 - _EPS)
    return np.where((k > 0) & (k < n), k * np.log(q) + (n - k) * np.log1p(-q), 0.0)


def lr_statistic(c: Counts, f: Fit) -> float:
    """Twice the log-likelihood ratio of the model against no sensitivity (>= 0)."""
    k = c.k1.sum() + c.k0.sum()
    return max(0.0, 2.0 * (f.loglik - float(_loglik_null(np.array(k), np.array(c.n)))))


def _deviance_batch(p1, p0, k1, n1, k0, n0) -> np.ndarray:
    out = 0.0
    for k, n, p in ((k1, n1, p1), (k0, n0, p0)):
        p = np.clip(p, _EPS, 1 - _EPS)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(k > 0, k * np.log(k / (n * p)), 0.0)
            b = np.where(n - k > 0, (n - k) * np.log((n - k) / (n * (1 - p))), 0.0)
        out = out + 2.0 * np.sum(a + b, -1)
    return out


def deviance(c: Counts, f: Fit) -> float:
    """Deviance of ``f`` against the saturated model (one share per level and direction)."""
    p1, p0 = p_increase(c.x, f.alpha, f.beta, f.criterion, f.lapse)
    return float(_deviance_batch(p1, p0, c.k1, c.n1, c.k0, c.n0))


def _mc_p(observed: float, simulated: np.ndarray) -> float:
    """Monte-Carlo p-value: (1 + draws at or above ``observed``) / (1 + draws). A test at level ``a`` rejects
    when ``p <= a`` (exact level when ``a * (1 + draws)`` is a whole number: 199 or 39 draws for 5 %)."""
    return float((1 + np.sum(simulated >= observed - 1e-9)) / (1 + simulated.size))


def _draw(rng, n, p, draws):
    shape = (draws, n.size)
    return rng.binomial(np.broadcast_to(n.astype(int), shape), np.broadcast_to(p, shape)).astype(float)


def _shuffled(rng, c: Counts, draws: int):
    """``draws`` sets of (k1, k0): the observed "increase" answers shuffled among all the clips (multivariate
    hypergeometric over the level x direction cells)."""
    cells = np.concatenate([c.n1, c.n0]).astype(np.int64)
    k = rng.multivariate_hypergeometric(cells, int(round(c.k1.sum() + c.k0.sum())), size=draws).astype(float)
    return k[:, :c.n1.size], k[:, c.n1.size:]


def chance_test(c: Counts, f: Fit, *, draws: int = MC_DRAWS, seed: int = 0) -> dict:
    """Monte-Carlo p-value of "the answers do not depend on the direction" (``p``, ``lr``, ``draws``).

    The reference: ``draws`` sets of answers with the observed "increase" answers shuffled among the
    clips (a permutation test: under the null, one share of "increase" answers everywhere, every
    arrangement of the observed answers is equally likely, whatever that share), each refitted; the
    statistic is twice the log-likelihood ratio. Drawing from the observed share instead (a parametric
    bootstrap) rejected a biased coin in 7.3 % of runs at 10 sources (docs/statistics.md).
    """
    rng = np.random.default_rng(seed)
    lr = lr_statistic(c, f)
    k1, k0 = _shuffled(rng, c, draws)
    n1, n0 = np.broadcast_to(c.n1, k1.shape), np.broadcast_to(c.n0, k0.shape)
    theta, _ = fit_batch(c.x, k1, n1, k0, n0)
    sim = 2.0 * (_loglik_batch(theta, c.x, k1, n1, k0, n0) - _loglik_null(k1.sum(1) + k0.sum(1), c.n))
    sim = np.maximum(sim, 0.0)  # as the observed statistic: a refit a rounding below the null is at the null
    return {"p": _mc_p(lr, sim), "lr": lr, "draws": int(draws)}


def gof_test(c: Counts, f: Fit, *, draws: int = MC_DRAWS, seed: int = 0) -> dict:
    """Deviance of ``f`` and its Monte-Carlo p-value under the fitted model (``p``, ``deviance``, ``draws``)."""
    rng = np.random.default_rng(seed)
    p1, p0 = p_increase(c.x, f.alpha, f.beta, f.criterion, f.lapse)
    k1, k0 = _draw(rng, c.n1, p1, draws), _draw(rng, c.n0, p0, draws)
    n1, n0 = np.broadcast_to(c.n1, k1.shape), np.broadcast_to(c.n0, k0.shape)
    theta, _ = fit_batch(c.x, k1, n1, k0, n0, start=(f.alpha, f.beta, f.criterion, f.lapse))
    q1, q0 = _p_batch(theta, c.x)
    sim = _deviance_batch(q1, q0, k1, n1, k0, n0)
    dev = deviance(c, f)
    return {"p": _mc_p(dev, sim), "deviance": dev, "draws": int(draws)}


def _p_batch(theta, x):
    d = np.exp(np.minimum(np.exp(theta[:, 1:2]) * (np.log(x)[None, :] - theta[:, 0:1]), 30.0))
    lam, crit = theta[:, 3:4], theta[:, 2:3]
    return lam / 2 + (1 - lam) * ndtr(d / 2 - crit), lam / 2 + (1 - lam) * ndtr(-d / 2 - crit)


def interval_tail(sources: int, level: float = 0.95) -> float:
    """Tail probability of the expanded percentile interval (Hesterberg 2015) over ``sources`` clusters: the
    percentile interval undercovers with few clusters, so its ends are taken at ``Phi(-sqrt(S / (S - 1)) *
    t_{S-1, (1 + level) / 2})`` instead of ``(1 - level) / 2``."""
    from scipy.stats import t as student

    s = max(int(sources), 2)
    return float(ndtr(-math.sqrt(s / (s - 1)) * student.ppf(0.5 + level / 2, s - 1)))


def bootstrap(x, per_source, *, draws: int, seed: int, f: Fit | None = None) -> dict:
    """Expanded percentile bootstrap over sources of the threshold, slope and criterion.

    Parameters
    ----------
    x : array (L,)
    per_source : array (S, 4, L)
        ``k1, n1, k0, n0`` of every source.
    f : Fit, optional
        The full-data fit (an extra start of every refit).

    Returns
    -------
    dict
        ``threshold_ci``, ``beta_ci``, ``criterion_ci`` ([low, high]), ``tail`` (the quantile used),
        ``percentile_ci`` (the plain 2.5-97.5 % percentile interval of the threshold, for comparison),
        ``p_reached`` (share of draws whose threshold lies within the sweep), ``draws``.
    """
    per_source = np.asarray(per_source, float)
    s = per_source.shape[0]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, s, (draws, s))
    tot = per_source[idx].sum(1)  # (draws, 4, L)
    start = None if f is None else (f.alpha, f.beta, f.criterion, f.lapse)
    theta, _ = fit_batch(x, tot[:, 0], tot[:, 1], tot[:, 2], tot[:, 3], start)
    ts = thresholds_of(theta)
    tail = interval_tail(s)

    def ci(v, t=tail):
        return [float(u) for u in np.quantile(v, [t, 1 - t], method="inverted_cdf")]

    return {"threshold_ci": ci(ts), "percentile_ci": ci(ts, 0.025), "beta_ci": ci(np.exp(theta[:, 1])),
            "criterion_ci": ci(theta[:, 2]),
            "tail": tail, "p_reached": float(np.mean(ts <= float(np.max(x)) * (1 + 1e-9))),
            "draws": int(draws)}
