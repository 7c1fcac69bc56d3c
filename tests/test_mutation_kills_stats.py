"""Report statistics (analysis/report/stats.py) on small inputs with hand-computed results: what mutation
testing found unchecked (docs/testing.md): the boundaries of the verdicts and of the error share, the cap and
the missing values of Holm's adjustment, the refusals of bad input, the mid-p value, discordances larger than
one, and the max-T sign flips of the clustered chance flags computed again by a plain loop."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from analysis.report import stats


def test_chance_verdict_boundaries_and_missing_bounds():
    assert stats.chance_verdict((0.5, 0.7)) == stats.NOT_DIFFERENT      # lo == chance: not above
    assert stats.chance_verdict((0.3, 0.5)) == stats.NOT_DIFFERENT      # hi == chance: not below
    assert stats.chance_verdict((0.2, 0.3), chance=0.25) == stats.NOT_DIFFERENT
    assert stats.chance_verdict((0.26, 0.3), chance=0.25) == "above chance"
    assert stats.chance_verdict((0.1, 0.2), chance=0.25) == "below chance"
    assert stats.chance_verdict((None, 0.7)) == "n/a"
    assert stats.chance_verdict((0.6, None)) == "n/a"
    assert stats.chance_verdict((0.6, math.nan)) == "n/a"
    assert stats.chance_verdict((math.nan, 0.4)) == "n/a"


def test_binomial_p_hand_computed():
    assert math.isnan(stats.binomial_p(0, 0))
    assert stats.binomial_p(10, 10) == pytest.approx(2 / 1024, rel=1e-12)
    assert stats.binomial_p(0, 4) == pytest.approx(2 / 16, rel=1e-12)
    assert stats.binomial_p(1, 1) == 1.0
    # one-sided mass at chance 0.2: P(X = 3) for n = 3 is 0.008, and no lower outcome is as unlikely
    assert stats.binomial_p(3, 3, chance=0.2) == pytest.approx(0.008, rel=1e-9)


def test_holm_caps_at_one_keeps_missing_values_and_is_monotone():
    assert stats.holm([0.6, 0.7]) == [1.0, 1.0]
    assert stats.holm([0.3, 0.2]) == pytest.approx([0.4, 0.4])            # monotone: 2*0.2 = 0.4 >= 0.3
    got = stats.holm([None, 0.02, math.nan, 0.01])
    assert math.isnan(got[0]) and math.isnan(got[2])
    assert got[1] == pytest.approx(0.02) and got[3] == pytest.approx(0.02)  # m = 2, not 4
    assert stats.holm([]) == []
    assert stats.holm([0.25]) == [0.25]
    assert stats.holm([0.01, 0.02, 0.5]) == pytest.approx([0.03, 0.04, 0.5])


def test_chance_flags_empty_row_and_exact_alpha():
    (p, q, v), = stats.chance_flags([(0, 0)])
    assert math.isnan(p) and math.isnan(q) and v == "n/a"
    rows = [(0, 0), (10, 10)]
    got = stats.chance_flags(rows)
    assert got[0][2] == "n/a"
    assert got[1][1] == pytest.approx(2 / 1024) and got[1][2] == "above chance"   # the empty row is not counted
    p10 = stats.binomial_p(10, 10)
    assert stats.chance_flags([(10, 10)], alpha=p10)[0][2] == stats.NOT_DIFFERENT  # q == alpha: not flagged
    assert stats.chance_flags([(10, 10)], alpha=p10 * 1.01)[0][2] == "above chance"
    assert stats.chance_flags([(0, 10)])[0][2] == "below chance"
    assert stats.chance_flags([(1, 10), (5, 10)])[0] == pytest.approx((22 / 1024, 44 / 1024, "below chance"))


def _flags_by_loop(rows, *, draws, seed, alpha=stats.ALPHA):
    """The max-T sign-flip p-values written out one draw and one source at a time."""
    keys = sorted({k for r in rows for k in r}, key=str)
    d = [[2 * r[k][0] - r[k][1] if k in r else 0 for r in rows] for k in keys]
    rng = np.random.default_rng(seed)
    flips = rng.integers(0, 2, size=(draws, len(keys)), dtype=np.int8) * 2 - 1
    scale = [math.sqrt(sum(d[i][j] ** 2 for i in range(len(keys)))) for j in range(len(rows))]
    t_obs = [abs(sum(d[i][j] for i in range(len(keys)))) / scale[j] if scale[j] else 0.0
             for j in range(len(rows))]
    t_max = []
    for f in flips:
        t_max.append(max((abs(sum(int(f[i]) * d[i][j] for i in range(len(keys)))) / scale[j]
                          for j in range(len(rows)) if scale[j]), default=0.0))
    out = []
    for j, r in enumerate(rows):
        k = sum(c for c, _ in r.values())
        n = sum(m for _, m in r.values())
        q = 1.0 if not scale[j] else (1 + sum(t >= t_obs[j] - 1e-9 for t in t_max)) / (draws + 1)
        verdict = stats.NOT_DIFFERENT if q >= alpha else ("above chance" if k / n > 0.5 else "below chance")
        out.append((q, verdict))
    return out


def test_clustered_chance_flags_against_a_plain_loop():
    rng = np.random.default_rng(11)
    good = {f"s{i}": (int(rng.binomial(6, 0.8)), 6) for i in range(5)}
    bad = {f"s{i}": (int(rng.binomial(6, 0.2)), 6) for i in range(5)}
    mixed = {f"s{i}": (3 + (i % 3) - 1, 6) for i in range(5)}
    flat = {f"s{i}": (3, 6) for i in range(5)}
    partial = {"s0": (4, 4), "s3": (0, 2)}
    rows = [good, bad, mixed, flat, partial]
    got = stats.chance_flags_clustered(rows, min_clusters=5, draws=199, seed=5)
    want = _flags_by_loop(rows, draws=199, seed=5)
    assert [q for _, q, _ in got] == pytest.approx([q for q, _ in want], abs=1e-12)
    assert [v for _, _, v in got] == [v for _, v in want]
    for (p, _, _), r in zip(got, rows):       # the row's own p: the exact sign-flip test of its d_s
        assert p == pytest.approx(stats.mcnemar_clustered([2 * k - n for k, n in r.values()]), rel=1e-9)
    assert got[3][1] == 1.0 and got[3][0] == 1.0   # no source off balance: nothing to flip
    # the same with a looser alpha names the directions
    loose = stats.chance_flags_clustered(rows, min_clusters=5, draws=199, seed=5, alpha=0.5)
    assert [v for _, _, v in loose] == [v for _, v in _flags_by_loop(rows, draws=199, seed=5, alpha=0.5)]
    assert loose[0][2] == "above chance" and loose[1][2] == "below chance"
    # min_clusters: exactly that many sources give flags, one fewer none
    assert stats.chance_flags_clustered(rows, min_clusters=6) is None
    assert stats.chance_flags_clustered([good], min_clusters=5, draws=9) is not None
    # an empty row
    (p, q, v), = stats.chance_flags_clustered([{f"s{i}": (0, 0) for i in range(5)}], min_clusters=5, draws=9)
    assert math.isnan(p) and math.isnan(q) and v == "n/a"


def test_clustered_chance_flags_all_sources_balanced():
    rows = [{f"s{i}": (2, 4) for i in range(4)}]
    assert stats.chance_flags_clustered(rows, min_clusters=4, draws=19) == [(1.0, 1.0, stats.NOT_DIFFERENT)]


def test_mcnemar_refuses_negative_counts():
    for f in (stats.mcnemar_exact, stats.mcnemar_midp):
        with pytest.raises(ValueError, match="b=2, c=-1"):
            f(2, -1)
        with pytest.raises(ValueError, match="b=-1, c=2"):
            f(-1, 2)
    assert stats.mcnemar_exact(1, 0) == 1.0
    assert stats.mcnemar_midp(0, 0) == 1.0


def _signflip_p(d, mid=False):
    """Exact sign-flip p-value by enumerating every assignment of signs (as fractions)."""
    d = [int(x) for x in d if int(x) != 0]
    obs = abs(sum(d))
    more = same = Fraction(0)
    for signs in product((1, -1), repeat=len(d)):
        s = abs(sum(x * y for x, y in zip(signs, d)))
        more += s > obs
        same += s == obs
    total = 2 ** len(d)
    return float((more + (same / 2 if mid else same)) / total)


@pytest.mark.parametrize("d", [[1, 2, -2, 1], [3, 1, 1, 0, 2], [-4, 1, 1, 1, 1], [2, 2, 2, -1, 3, 1],
                               [1, 1, 1, 1, 1, 1, 1, -1], [5], [0, 0, 1, -1]])
def test_mcnemar_clustered_is_the_enumerated_sign_flip_test(d):
    for mid in (False, True):
        want = _signflip_p(d, mid=mid)
        assert stats.mcnemar_clustered(d, mid=mid) == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert stats.mcnemar_clustered(d, mid=mid, _fast=True) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_mcnemar_midp_hand_computed():
    # 2 * P(X <= 1) + P(X = 2) for X ~ Bin(12, 1/2): (2 * 13 + 66) / 4096
    assert stats.mcnemar_midp(10, 2) == pytest.approx(92 / 4096, rel=1e-12)
    assert stats.mcnemar_midp(2, 10) == pytest.approx(92 / 4096, rel=1e-12)
    assert stats.mcnemar_midp(3, 3) == pytest.approx(1 - 20 / 64 / 2, rel=1e-12)
    assert stats.mcnemar_clustered([0, 0]) == 1.0 and stats.mcnemar_clustered([]) == 1.0


def _bootstrap_by_loop(a, b, clusters, draws, seed, level):
    rng = np.random.default_rng(seed)
    keys = sorted(set(clusters), key=str)
    k = len(keys)
    dsum = [sum(x - y for x, y, c in zip(a, b, clusters) if c == key) for key in keys]
    nsum = [sum(1 for c in clusters if c == key) for key in keys]
    mult = rng.multinomial(k, [1.0 / k] * k, size=draws)
    vals = [sum(m * s for m, s in zip(row, dsum)) / sum(m * s for m, s in zip(row, nsum)) for row in mult]
    alpha = (1 - level) / 2
    return tuple(float(v) for v in np.quantile(vals, [alpha, 1 - alpha]))


def test_paired_bootstrap_diff_clustered_against_a_plain_loop():
    rng = np.random.default_rng(3)
    sizes = [3, 1, 4, 2, 5, 2]
    clusters = [f"k{i}" for i, s in enumerate(sizes) for _ in range(s)]
    a = [bool(x) for x in rng.random(len(clusters)) < 0.7]
    b = [bool(x) for x in rng.random(len(clusters)) < 0.4]
    for level in (0.95, 0.6):
        got = stats.paired_bootstrap_diff(a, b, clusters=clusters, draws=300, seed=9, level=level,
                                          min_clusters=6)
        assert got == pytest.approx(_bootstrap_by_loop(a, b, clusters, 300, 9, level), abs=1e-12)
    assert all(math.isnan(v) for v in stats.paired_bootstrap_diff(a, b, clusters=clusters, min_clusters=7))
    with pytest.raises(ValueError, match="clusters has 3 keys for 2 clips"):
        stats.paired_bootstrap_diff([True, False], [False, False], clusters=["a", "b", "c"])


def test_paired_bootstrap_diff_level_and_shape_checks():
    a, b = [True, False, True, True], [False, False, True, False]
    for level in (0.0, 1.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="level must be in"):
            stats.paired_bootstrap_diff(a, b, level=level)
    with pytest.raises(ValueError, match="aligned"):
        stats.paired_bootstrap_diff([[True]], [[True]])
    wide = stats.paired_bootstrap_diff(a * 25, b * 25, draws=500)
    narrow = stats.paired_bootstrap_diff(a * 25, b * 25, draws=500, level=0.5)
    assert wide[0] < narrow[0] <= 0.5 <= narrow[1] < wide[1]
    # clip-level draws: the difference is (right only for A - right only for B) / n of a multinomial draw
    a2, b2 = [True, False, True, True, False], [False, False, True, False, True]   # d = +1, 0, 0, +1, -1
    rng = np.random.default_rng(4)
    sims = rng.multinomial(125, [0.2, 0.4, 0.4], size=200)                      # shares of -1, 0, +1
    vals = (sims[:, 2] - sims[:, 0]) / 125
    assert stats.paired_bootstrap_diff(a2 * 25, b2 * 25, draws=200, seed=4, level=0.8) == pytest.approx(
        tuple(np.quantile(vals, [0.1, 0.9])), abs=1e-12)


def test_paired_clustered_diff_small_case():
    # 3 clusters: differences per cluster (sum, n): k0 (1, 2), k1 (0, 1), k2 (-1, 3) -> estimate 0 / 6
    a = [True, True, True, False, False, True]
    b = [False, True, True, True, False, True]
    keys = ["k0", "k0", "k1", "k2", "k2", "k2"]
    lo, hi = stats.paired_clustered_diff(a, b, keys, min_clusters=3)
    from scipy import stats as sps

    est = 0.0
    loo = np.array([(0 - 1) / 4, (0 - 0) / 5, (0 + 1) / 3])
    se = math.sqrt((3 - 1) / 3 * ((loo - loo.mean()) ** 2).sum())
    half = sps.t.ppf(0.975, 2) * se
    assert (lo, hi) == pytest.approx((max(-1.0, est - half), min(1.0, est + half)), abs=1e-12)
    assert all(math.isnan(v) for v in stats.paired_clustered_diff(a, b, keys, min_clusters=4))
    assert all(math.isnan(v) for v in stats.paired_clustered_diff([], [], [], min_clusters=1))
    with pytest.raises(ValueError, match="aligned"):
        stats.paired_clustered_diff(a, b, keys[:-1])
    with pytest.raises(ValueError, match="aligned"):
        stats.paired_clustered_diff(a, b[:-1], keys)


def test_error_verdict_boundary():
    assert stats.error_verdict(1, 10) is None                  # 10 % is not over the limit
    assert stats.error_verdict(2, 10) == "n/a: 20 % error answers"
    assert stats.error_verdict(0, 0) is None
    assert stats.error_verdict(0, 5) is None
    assert stats.error_verdict(3, 10, limit=0.3) is None
    assert stats.error_verdict(3, 8) == "n/a: 38 % error answers"
    assert stats.error_verdict(n_error=2, n=10) == "n/a: 20 % error answers"   # the counts by name
    with pytest.raises(TypeError):
        stats.error_verdict(3, 10, 0.3)                        # the limit only by name
