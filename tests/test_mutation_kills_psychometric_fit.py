"""The psychometric fit's pieces (analysis/report/psychometric_fit.py) on small inputs, against the formulas
written out directly: the posterior and its gradient (finite differences), the batched terms and their
Fisher information, the grid start, the Monte-Carlo p-value, the null and saturated likelihoods, the
expanded bootstrap tail, the bound flags and the pooled 75 % point (docs/testing.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.optimize import brentq

from analysis.report import psychometric_fit as pf

X = np.array([1.0, 2.0, 4.0, 8.0])
C = pf.Counts(X, k1=[5, 7, 11, 12], n1=[12, 12, 12, 12], k0=[6, 4, 2, 1], n0=[12, 12, 12, 12])


def _loglik(theta, c):
    """Binomial log-likelihood without the binomial coefficients, term by term."""
    la, lb, crit, lam = theta
    p1, p0 = pf.p_increase(c.x, math.exp(la), math.exp(lb), crit, lam)
    return float(sum(k * math.log(p) + (n - k) * math.log(1 - p)
                     for ks, ns, ps in ((c.k1, c.n1, p1), (c.k0, c.n0, p0)) for k, n, p in zip(ks, ns, ps)))


THETAS = [np.array([math.log(3.0), math.log(2.0), 0.3, 0.05]), np.array([math.log(1.5), math.log(0.8), -0.6, 0.2])]


def test_p_increase_and_pooled_correct_hand_computed():
    p1, p0 = pf.p_increase(np.array([0.0, 2.0, -1.0]), 2.0, 1.0, 0.0, 0.0)
    assert p1 == pytest.approx([0.5, sps.norm.cdf(0.5), 0.5]) and p0 == pytest.approx([0.5, sps.norm.cdf(-0.5), 0.5])
    p1, p0 = pf.p_increase(4.0, 2.0, 2.0, 0.5, 0.2)          # d' = 4
    assert p1 == pytest.approx(0.1 + 0.8 * sps.norm.cdf(1.5)) and p0 == pytest.approx(0.1 + 0.8 * sps.norm.cdf(-2.5))
    assert pf.pooled_correct(4.0, 2.0, 2.0, 0.5, 0.2) == pytest.approx(0.5 * (p1 + 1 - p0))
    assert pf.sensitivity_threshold(2.0, 2.0) == pytest.approx(2.0 * math.sqrt(2 * sps.norm.ppf(0.75)))
    assert pf.D_TARGET == pytest.approx(1.3489795, abs=1e-6)
    th = pf.thresholds_of(np.array([[math.log(2.0), math.log(2.0), 0, 0], [0.0, 0.0, 1, 0.1]]))
    assert th == pytest.approx([2.0 * pf.D_TARGET ** 0.5, pf.D_TARGET])


def test_the_posterior_is_the_binomial_likelihood_with_the_lapse_prior():
    for theta in THETAS:
        nll, _ = pf._nll(theta, C)
        ll = _loglik(theta, C)
        assert -pf._nll(theta, C, prior=False)[0] == pytest.approx(ll, rel=1e-10)
        # Beta(1, 2) on psignifit's lambda = lapse / 2: density 2 * (1 - lapse / 2)
        assert nll == pytest.approx(-ll - 1.0 * math.log(1 - theta[3] / 2), rel=1e-10)


@pytest.mark.parametrize("theta", THETAS)
def test_the_gradients_are_those_of_the_posterior(theta):
    _, grad = pf._nll(theta, C)
    num = np.zeros(4)
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-6
        num[i] = (pf._nll(theta + e, C)[0] - pf._nll(theta - e, C)[0]) / 2e-6
    assert grad == pytest.approx(num, rel=1e-5, abs=1e-6)
    # the batched terms: the same posterior and gradient, and the expected (Fisher) information
    nll_b, grad_b, info = pf._terms(theta[None], X, C.k1[None], C.n1[None], C.k0[None], C.n0[None], True)
    assert nll_b[0] == pytest.approx(pf._nll(theta, C)[0], rel=1e-10)
    assert pf._terms(theta[None], X, C.k1[None], C.n1[None], C.k0[None], C.n0[None], False)[0] == \
        pytest.approx(nll_b[0], rel=1e-12)
    assert grad_b[0] == pytest.approx(grad, rel=1e-8, abs=1e-10)

    def probs(t):
        return np.concatenate(pf.p_increase(X, math.exp(t[0]), math.exp(t[1]), t[2], t[3]))

    jac = np.zeros((8, 4))
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-6
        jac[:, i] = (probs(theta + e) - probs(theta - e)) / 2e-6
    p = probs(theta)
    n = np.concatenate([C.n1, C.n0])
    want = jac.T @ np.diag(n / (p * (1 - p))) @ jac
    want[3, 3] += 1.0 / (2 - theta[3]) ** 2  # d2/dlapse2 of -log(1 - lapse / 2)
    assert info[0] == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_the_grid_start_is_the_best_grid_point():
    k1, n1, k0, n0 = (np.atleast_2d(v) for v in (C.k1, C.n1, C.k0, C.n0))
    k1b, k0b = np.vstack([k1, k1[:, ::-1]]), np.vstack([k0, n0 - k0])
    n1b, n0b = np.vstack([n1, n1]), np.vstack([n0, n0])
    bounds = pf._bounds(X)
    assert bounds[0] == pytest.approx((math.log(0.1), math.log(80.0)))
    assert bounds[1] == pytest.approx((math.log(0.3), math.log(10.0)))
    assert list(bounds[2]) == [-3.0, 3.0] and list(bounds[3]) == [0.0, 0.5]
    got = pf._grid_starts(X, k1b, n1b, k0b, n0b, bounds)
    las = np.linspace(math.log(0.1) + 0.3, math.log(80.0) - 0.3, 24)
    for row in range(2):
        h = (k1b[row].sum() + 0.5) / (n1b[row].sum() + 1)
        fa = (k0b[row].sum() + 0.5) / (n0b[row].sum() + 1)
        crit = float(np.clip(-(sps.norm.ppf(h) + sps.norm.ppf(fa)) / 2, -3, 3))
        best, arg = -math.inf, None
        for lb in np.log([0.7, 1.5, 3.0, 6.0]):
            for la in las:
                p1, p0 = pf.p_increase(X, math.exp(la), math.exp(lb), crit, 0.02)
                ll = (sps.binom.logpmf(k1b[row], n1b[row], p1) + sps.binom.logpmf(k0b[row], n0b[row], p0)).sum()
                if ll > best:
                    best, arg = ll, (la, lb)
        assert got[row] == pytest.approx([arg[0], arg[1], crit, 0.02], abs=1e-9)


def test_the_fit_is_the_maximum_of_the_posterior():
    f = pf.fit(C)
    theta = np.array([math.log(f.alpha), math.log(f.beta), f.criterion, f.lapse])
    assert f.nll == pytest.approx(pf._nll(theta, C)[0], rel=1e-12)
    assert f.loglik == pytest.approx(_loglik(theta, C), rel=1e-9)
    assert f.threshold == pytest.approx(f.alpha * pf.D_TARGET ** (1 / f.beta), rel=1e-12)
    assert f.at_bound == [] and f.converged is True
    for i in range(3):   # an interior optimum of the free parameters (the lapse may sit at 0)
        for step in (-1e-3, 1e-3):
            e = np.zeros(4)
            e[i] = step
            assert pf._nll(theta + e, C)[0] >= f.nll - 1e-9
    theta_b, nll_b = pf.fit_batch(X, C.k1, C.n1, C.k0, C.n0)
    assert nll_b[0] == pytest.approx(f.nll, abs=1e-9) and theta_b[0] == pytest.approx(theta, abs=1e-5)  # LM alone
    # an extra start that is the optimum itself is kept (never worse than the grid start)
    theta_s, nll_s = pf.fit_batch(X, C.k1, C.n1, C.k0, C.n0, start=(f.alpha, f.beta, f.criterion, f.lapse))
    assert nll_s[0] <= nll_b[0] + 1e-12 and nll_s[0] == pytest.approx(f.nll, abs=1e-6)


def test_bound_flags_name_the_parameter_at_its_bound():
    # every answer "increase": the criterion runs to its lower bound (-3)
    all_inc = pf.Counts(X, k1=[12] * 4, n1=[12] * 4, k0=[12] * 4, n0=[12] * 4)
    assert "criterion" in pf.fit(all_inc).at_bound
    all_dec = pf.Counts(X, k1=[0] * 4, n1=[12] * 4, k0=[0] * 4, n0=[12] * 4)
    assert "criterion" in pf.fit(all_dec).at_bound
    # a clean observer with no lapses: a lapse of 0 is not a bound
    clean = pf.Counts(X, k1=[7, 10, 12, 12], n1=[12] * 4, k0=[5, 2, 0, 0], n0=[12] * 4)
    f = pf.fit(clean)
    assert f.lapse < 1e-3 and "lapse" not in f.at_bound


def test_monte_carlo_p_value():
    assert pf._mc_p(2.0, np.array([1.0, 2.0, 3.0])) == 0.75
    assert pf._mc_p(5.0, np.array([1.0, 2.0, 3.0])) == 0.25
    assert pf._mc_p(2.0, np.array([2.0 - 5e-10])) == 1.0       # ties within 1e-9 count as reaching it
    assert pf._mc_p(2.0, np.array([2.0 - 5e-9])) == 0.5


def test_null_likelihood_lr_and_deviance_hand_computed():
    k, n = np.array([0.0, 3.0, 4.0, 0.0]), np.array([4.0, 4.0, 4.0, 0.0])
    got = pf._loglik_null(k, n)
    assert got == pytest.approx([0.0, 3 * math.log(0.75) + math.log(0.25), 0.0, 0.0])
    # lr: twice (fit - one share everywhere); never negative
    f = pf.fit(C)
    kk, nn = C.k1.sum() + C.k0.sum(), C.n
    q = kk / nn
    ll_null = kk * math.log(q) + (nn - kk) * math.log(1 - q)
    assert pf.lr_statistic(C, f) == pytest.approx(2 * (f.loglik - ll_null), rel=1e-10)
    bad = pf.Fit(alpha=1.0, beta=1.0, criterion=0.0, lapse=0.0, nll=0.0, loglik=-1e6, threshold=1.0)
    assert pf.lr_statistic(C, bad) == 0.0
    # deviance: zero cells and full cells contribute their one defined term
    c = pf.Counts([1.0, 2.0], k1=[0, 3], n1=[3, 3], k0=[1, 2], n0=[3, 3])
    g = pf.Fit(alpha=1.5, beta=1.2, criterion=0.1, lapse=0.05, nll=0.0, loglik=0.0, threshold=1.0)
    p1, p0 = pf.p_increase(c.x, g.alpha, g.beta, g.criterion, g.lapse)
    want = 0.0
    for ks, ns, ps in ((c.k1, c.n1, p1), (c.k0, c.n0, p0)):
        for k_, n_, p_ in zip(ks, ns, ps):
            want += 2 * (sps.binom.logpmf(k_, n_, k_ / n_) - sps.binom.logpmf(k_, n_, p_))
    assert pf.deviance(c, g) == pytest.approx(want, rel=1e-10)
    assert c.n == 12.0


@pytest.mark.parametrize("s,level", [(20, 0.95), (5, 0.95), (5, 0.9), (2, 0.95)])
def test_interval_tail_is_the_expanded_percentile(s, level):
    want = sps.norm.cdf(-math.sqrt(s / (s - 1)) * sps.t.ppf((1 + level) / 2, s - 1))
    assert pf.interval_tail(s, level) == pytest.approx(want, rel=1e-12)
    assert pf.interval_tail(1) == pf.interval_tail(2)
    assert pf.interval_tail(1000) == pytest.approx(0.025, abs=2e-4)


def test_bootstrap_quantiles_and_the_share_reached():
    rng = np.random.default_rng(0)
    per = np.zeros((5, 4, X.size))
    per[:, 1], per[:, 3] = 6, 6
    for s in range(5):
        per[s, 0] = rng.binomial(6, [0.55, 0.7, 0.9, 0.97])
        per[s, 2] = rng.binomial(6, [0.45, 0.3, 0.1, 0.03])
    out = pf.bootstrap(X, per, draws=30, seed=4)
    idx = np.random.default_rng(4).integers(0, 5, (30, 5))
    tot = per[idx].sum(1)
    theta, _ = pf.fit_batch(X, tot[:, 0], tot[:, 1], tot[:, 2], tot[:, 3])
    ts = pf.thresholds_of(theta)
    tail = pf.interval_tail(5)
    assert out["tail"] == tail and out["draws"] == 30
    q = lambda v, t: [float(u) for u in np.quantile(v, [t, 1 - t], method="inverted_cdf")]  # noqa: E731
    assert out["threshold_ci"] == q(ts, tail) and out["percentile_ci"] == q(ts, 0.025)
    assert out["beta_ci"] == q(np.exp(theta[:, 1]), tail) and out["criterion_ci"] == q(theta[:, 2], tail)
    assert out["p_reached"] == float(np.mean(ts <= 8.0 * (1 + 1e-9)))
    assert out["threshold_ci"][0] <= out["percentile_ci"][0] <= out["percentile_ci"][1] <= out["threshold_ci"][1]


def test_the_pooled_point_is_where_the_share_correct_crosses_75_percent():
    f = pf.Fit(alpha=2.0, beta=1.5, criterion=0.4, lapse=0.05, nll=0, loglik=0, threshold=0)
    want = brentq(lambda x: pf.pooled_correct(x, 2.0, 1.5, 0.4, 0.05) - 0.75, 0.01, 20.0)
    assert pf.pooled_threshold(f, 20.0) == pytest.approx(want, rel=1e-4)
    assert pf.pooled_threshold(f, 0.5 * want) == math.inf
    unbiased = pf.Fit(alpha=2.0, beta=1.5, criterion=0.0, lapse=0.0, nll=0, loglik=0, threshold=0)
    assert pf.pooled_threshold(unbiased, 10.0) == pytest.approx(pf.sensitivity_threshold(2.0, 1.5), rel=1e-4)


def test_chance_and_gof_tests_report_their_statistics():
    f = pf.fit(C)
    ch = pf.chance_test(C, f, draws=9, seed=1)
    assert ch["lr"] == pf.lr_statistic(C, f) and ch["draws"] == 9
    assert ch["p"] == 0.1                         # a clear observer: none of 9 null draws reaches its lr
    gof = pf.gof_test(C, f, draws=9, seed=1)
    assert gof["deviance"] == pf.deviance(C, f) and gof["draws"] == 9
    assert gof["p"] in {i / 10 for i in range(1, 11)} and gof["p"] > 0.1


def test_batched_likelihood_and_probabilities_are_the_single_ones():
    thetas = np.array(THETAS)
    k1, n1, k0, n0 = (np.tile(v, (2, 1)) for v in (C.k1, C.n1, C.k0, C.n0))
    got = pf._loglik_batch(thetas, X, k1, n1, k0, n0)
    assert got == pytest.approx([_loglik(t, C) for t in THETAS], rel=1e-10)
    q1, q0 = pf._p_batch(thetas, X)
    for i, t in enumerate(THETAS):
        p1, p0 = pf.p_increase(X, math.exp(t[0]), math.exp(t[1]), t[2], t[3])
        assert q1[i] == pytest.approx(p1, rel=1e-12) and q0[i] == pytest.approx(p0, rel=1e-12)


def test_the_batched_fit_converges_well_within_its_iteration_budget():
    """From the grid start, 40 Levenberg-Marquardt steps reach the optimum to 1e-7 (it needs about 40 to reach
    1e-8; the budget is 60): a damping that slows it (e.g. a negative floor) leaves it short."""
    f = pf.fit(C)
    counts = [np.atleast_2d(v) for v in (C.k1, C.n1, C.k0, C.n0)]
    bounds = pf._bounds(X)
    _, nll = pf._lm(pf._grid_starts(X, *counts, bounds), X, *counts, bounds, iters=40)
    assert nll[0] - f.nll < 1e-7
