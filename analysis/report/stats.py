"""Statistics the report adds on top of :mod:`harness_tasks.metrics` (benchmark.md §8).

The point metrics and the (binomial or source-clustered) bootstrap interval of one model are
:func:`harness_tasks.metrics.bootstrap_ci`; this module only adds what compares a model with
chance or with another model on the same clips.

Examples
--------
>>> chance_verdict((0.45, 0.58))
'not different from chance'
>>> [round(p, 3) for p in holm([0.01, 0.04, 0.03])]
[0.03, 0.06, 0.06]
>>> round(mcnemar_exact(10, 2), 4)
0.0386
>>> mcnemar_clustered([1, 2, -2, 1])
0.75
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness_tasks.cluster_ci import cluster_interval, jackknife_t
from harness_tasks.metrics import MIN_CLUSTERS, bootstrap_ci
from harness_tasks.stat_settings import STATS

__all__ = [
    "ALPHA",
    "DRAWS",
    "MIN_CLIPS",
    "NOT_DIFFERENT",
    "TOO_FEW",
    "SEED",
    "binomial_p",
    "chance_flags",
    "chance_flags_clustered",
    "chance_verdict",
    "clip_key",
    "clips_of",
    "holm",
    "intervals",
    "mcnemar_clustered",
    "mcnemar_exact",
    "mcnemar_midp",
    "paired_bootstrap_diff",
    "paired_clustered_diff",
]

#: Bootstrap settings of the paper (benchmark.md §8), from the one settings object.
DRAWS = STATS.draws
SEED = STATS.seed
CHANCE = 0.5
#: Family-wise error rate of the per-row chance flags (Holm).
ALPHA = STATS.alpha
#: Verdict of a row (or interval) that is not shown to differ from chance.
NOT_DIFFERENT = "not different from chance"
#: Fewest clips from which an interval gives a verdict (below: the exact test, and :data:`TOO_FEW`).
MIN_CLIPS = STATS.min_clips
#: Verdict of a row of fewer than :data:`MIN_CLIPS` clips whose exact test does not reject.
TOO_FEW = "too few clips"


def clip_key(record: Mapping[str, Any]) -> tuple:
    """A clip's key, (category, clip id): the unit of a row whose clips hold several answers (a human row)."""
    return (record.get("category"), record.get("id"))


def clips_of(records: Sequence[Mapping[str, Any]]) -> int:
    """Distinct clips (:func:`clip_key`) of the records: a human row holds several answers per clip."""
    return len({clip_key(r) for r in records})


#: Record key under which :func:`intervals` groups a human row's answers by clip (on copies of the records).
_CLIP = "_clip"


def intervals(records: Sequence[dict[str, Any]], metric: str = "acc", *, draws: int = DRAWS,
              seed: int = SEED, cluster: str = "source_id",
              macro_by: str | None = None) -> dict[str, list[float]]:
    """Both 95 % intervals of a metric: ``{"binomial": [lo, hi], "clustered": [lo, hi]}``.

    ``binomial`` resamples clips independently (the paper's bootstrap: the uncertainty of the answers on
    these sources); ``clustered`` treats whole source utterances (``cluster`` key) as the independent units
    (:func:`harness_tasks.cluster_ci.cluster_interval`: jackknife over sources with a t quantile), which
    accounts for the 24 conditions of a source being correlated, and is ``[nan, nan]`` from fewer than
    :data:`~harness_tasks.metrics.MIN_CLUSTERS` sources. ``macro_by``: interval of the unweighted
    mean over that key's values (:data:`harness_tasks.metrics.OVERALL_RULE`).

    Records whose clips (their ``id``) hold several answers (a human row: one per annotator) get as
    ``binomial`` the clustered interval with the clips (:func:`clip_key`) as the units, from 2 clips in each
    category: five annotators answering one clip are one clip, not five independent answers (resampling
    the answers gave 60 answers on 12 clips an interval as narrow as 60 clips'; docs/statistics.md).
    """
    records = list(records)
    if all("id" in r for r in records) and clips_of(records) < len(records):
        binomial = cluster_interval([{**r, _CLIP: clip_key(r)} for r in records], metric, cluster=_CLIP,
                                    macro_by=macro_by, min_clusters=2)
    else:
        binomial = bootstrap_ci(records, metric, draws=draws, seed=seed, macro_by=macro_by)
    return {
        "binomial": list(binomial),
        "clustered": list(cluster_interval(records, metric, cluster=cluster, macro_by=macro_by)),
    }


def chance_verdict(interval: Sequence[float], *, chance: float = CHANCE) -> str:
    """``"above chance"``, ``"not different from chance"`` (interval contains ``chance``) or
    ``"below chance"`` (one comparison; rows of a table use :func:`chance_flags`).

    An undefined interval (``nan``) gives ``"n/a"``.
    """
    lo, hi = interval
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return "n/a"
    if lo > chance:
        return "above chance"
    if hi < chance:
        return "below chance"
    return NOT_DIFFERENT


def binomial_p(correct: int, n: int, *, chance: float = CHANCE) -> float:
    """Two-sided exact binomial p-value of ``correct`` right answers out of ``n`` against ``chance``
    (``nan`` for ``n == 0``)."""
    if n <= 0:
        return math.nan
    from scipy import stats as _sps  # lazy: scipy.stats costs ~0.4 s of every `vocalgrad` start-up

    return float(_sps.binomtest(int(correct), int(n), chance).pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1; ``nan`` kept)."""
    idx = [i for i, p in enumerate(pvalues) if not (p is None or math.isnan(p))]
    order = sorted(idx, key=lambda i: pvalues[i])
    m = len(order)
    out = [math.nan] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def chance_flags(rows: Sequence[tuple[int, int]], *, alpha: float = ALPHA, chance: float = CHANCE,
                 pvalues: Sequence[float] | None = None,
                 clips: Sequence[int] | None = None) -> list[tuple[float, float, str]]:
    """Above/below-chance flags of the rows of one table, Holm-adjusted over the table.

    Parameters
    ----------
    rows : sequence of (correct, n)
        Correct answers (unparsed = wrong) and answers of each row (category, tier, ...).
    pvalues : sequence of float, optional
        Each row's exact p-value when it is not the binomial test of ``(correct, n)`` (a row whose clips hold
        several answers: the sign-flip test over clips, :func:`analysis.report.verdicts.exact_p`).
    clips : sequence of int, optional
        Distinct clips of each row (default ``n``): a row of fewer than :data:`MIN_CLIPS` that is not flagged
        reads :data:`TOO_FEW`.

    Returns
    -------
    list of (p, p_holm, verdict)
        Exact p-value, its Holm adjustment over the rows, and ``"above chance"`` / ``"below chance"`` when
        ``p_holm < alpha``, else ``"not different from chance"`` (``"too few clips"`` under
        :data:`MIN_CLIPS` clips; ``"n/a"`` for an empty row).
    """
    ps = list(pvalues) if pvalues is not None else [binomial_p(k, n, chance=chance) for k, n in rows]
    clips = list(clips) if clips is not None else [n for _, n in rows]
    adj = holm(ps)
    out = []
    for (k, n), m, p, q in zip(rows, clips, ps, adj):
        if n <= 0 or math.isnan(q):
            out.append((p, q, "n/a"))
        elif q < alpha:
            out.append((p, q, "above chance" if k / n > chance else "below chance"))
        else:
            out.append((p, q, TOO_FEW if m < MIN_CLIPS else NOT_DIFFERENT))
    return out


def chance_flags_clustered(rows: Sequence[Mapping[Any, tuple[int, int]]], *, alpha: float = ALPHA,
                           min_clusters: int = MIN_CLUSTERS, draws: int = DRAWS,
                           seed: int = SEED) -> list[tuple[float, float, str]] | None:
    """Above/below-chance flags with source utterances as the units, adjusted over the rows of a table.

    A row's statistic is ``T = sum_s d_s / sqrt(sum_s d_s^2)`` with ``d_s`` = its right minus wrong answers
    on source ``s``. Under "no better than chance for voices in general" each source's vector of ``d_s``
    over the rows is as likely negated as not, so the signs of whole sources are flipped at random
    (``draws`` times, seeded) and each row's adjusted p-value is the share of flips whose largest ``|T|``
    over the rows reaches the row's ``|T|`` (Westfall-Young max-T). Flipping whole sources keeps the
    dependence between the rows (a voice the model finds hard is hard in every row), where Holm's
    adjustment would be conservative (docs/statistics.md). Chance is 50 %.

    Parameters
    ----------
    rows : sequence of mappings
        Per row (category, tier, ...), ``{source: (correct, n)}``.
    alpha, min_clusters, draws, seed
        Family-wise error rate; fewer than ``min_clusters`` distinct sources give ``None``; flips and seed.

    Returns
    -------
    list of (p, p_adjusted, verdict) or None
        The row's own sign-flip p-value (exact, :func:`mcnemar_clustered`), its max-T adjusted p-value and
        the verdict as in :func:`chance_flags`; ``None`` (verdict withheld) from too few sources.
    """
    keys = sorted({k for r in rows for k in r}, key=str)
    if len(keys) < min_clusters:
        return None
    col = {k: i for i, k in enumerate(keys)}
    d = np.zeros((len(keys), len(rows)))
    for j, r in enumerate(rows):
        for key, (k, n) in r.items():
            d[col[key], j] = 2 * int(k) - int(n)
    scale = np.sqrt((d ** 2).sum(axis=0))
    live = scale > 0
    t_obs = np.zeros(len(rows))
    t_obs[live] = np.abs(d[:, live].sum(axis=0)) / scale[live]
    rng = np.random.default_rng(seed)
    flips = rng.integers(0, 2, size=(draws, len(keys)), dtype=np.int8) * 2 - 1
    t_max = (np.abs(flips @ d[:, live]) / scale[live]).max(axis=1) if live.any() else np.zeros(draws)
    out = []
    for j, r in enumerate(rows):
        k, n = sum(int(x) for x, _ in r.values()), sum(int(x) for _, x in r.values())
        if n <= 0:
            out.append((math.nan, math.nan, "n/a"))
            continue
        p = mcnemar_clustered(d[:, j].astype(int).tolist(), _fast=True)
        q = 1.0 if not live[j] else float((1 + np.sum(t_max >= t_obs[j] - 1e-9)) / (draws + 1))
        verdict = NOT_DIFFERENT if q >= alpha else ("above chance" if k / n > CHANCE else "below chance")
        out.append((p, q, verdict))
    return out


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test on the discordant pairs.

    Parameters
    ----------
    b, c : int
        Clips only model A answered correctly, clips only model B answered correctly.

    Returns
    -------
    float
        p-value of ``b ~ Binomial(b + c, 1/2)``; 1.0 when there are no discordant pairs.
    """
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    if b + c == 0:
        return 1.0
    from scipy import stats as _sps  # lazy: scipy.stats costs ~0.4 s of every `vocalgrad` start-up

    return float(_sps.binomtest(b, b + c, 0.5).pvalue)


def mcnemar_midp(b: int, c: int) -> float:
    """Two-sided mid-p McNemar test: :func:`mcnemar_exact` less half the probability of the observed split's
    tail class (the report's printed p-value; the exact test rejects 3 % instead of 5 % at 48 clips, the mid-p
    test 4.3-6.1 % at 2 to 20 sources, docs/statistics.md).

    >>> round(mcnemar_midp(10, 2), 4)
    0.0225
    """
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    return mcnemar_clustered([1] * b + [-1] * c, mid=True)


def mcnemar_clustered(discordance: Sequence[int], *, mid: bool = False, _fast: bool = False) -> float:
    """Two-sided exact McNemar test when a clip holds several answer pairs (several annotators).

    The clips are the independent units: clip ``k`` contributes ``d_k = b_k - c_k``, its pairs only
    A got right minus its pairs only B got right. Under the null hypothesis (A and B equally
    accurate) each ``d_k`` is as likely to be negative as positive, so the test is the exact
    sign-flip (permutation) test of ``S = sum(d_k)``: the p-value is the share of the ``2^m`` sign
    assignments with ``|sum(+-d_k)| >= |S|``, computed by convolution rather than enumeration. With one
    pair per clip (``d_k`` in -1, 0, +1) it is exactly :func:`mcnemar_exact`.

    Parameters
    ----------
    discordance : sequence of int
        ``b_k - c_k`` per clip (zeros may be left in or out).

    mid : bool
        The mid-p value: sign assignments with ``|sum| == |S|`` count one half (the report's printed value).

    Returns
    -------
    float
        The p-value; 1.0 when no clip is discordant.
    """
    d = [abs(int(x)) for x in discordance if int(x) != 0]
    if not d:
        return 1.0
    observed = abs(sum(int(x) for x in discordance))
    # T = sum of |d_k| over the clips whose sign is +; S = 2 T - sum|d_k|. For each distinct |d| = v
    # shared by n clips, v * Binomial(n, 1/2); the distribution of T is their convolution.
    from scipy import stats as _sps
    from scipy.special import gammaln

    pmf = np.ones(1)
    for v in sorted(set(d)):
        n = d.count(v)
        part = np.zeros(v * n + 1)
        j = np.arange(n + 1)
        # Binomial(n, 1/2); _fast (the clustered chance flags): by log-gamma, equal to 1e-15 and 20x faster
        part[::v] = (np.exp(gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1) - n * math.log(2.0)) if _fast
                     else _sps.binom.pmf(j, n, 0.5))
        pmf = np.convolve(pmf, part)
    total = sum(d)
    s = np.abs(2 * np.arange(pmf.size) - total)
    if mid:
        return float(min(1.0, pmf[s > observed].sum() + 0.5 * pmf[s == observed].sum()))
    return float(min(1.0, pmf[s >= observed].sum()))


def paired_bootstrap_diff(correct_a: Sequence[bool], correct_b: Sequence[bool], *,
                          clusters: Sequence[Any] | None = None, draws: int = DRAWS,
                          seed: int = SEED, level: float = 0.95,
                          min_clusters: int = MIN_CLUSTERS) -> tuple[float, float]:
    """Percentile bootstrap interval of ``acc(A) - acc(B)`` on the same clips.

    Parameters
    ----------
    correct_a, correct_b : sequence of bool
        Per-clip correctness of the two models, aligned (same clip at the same index).
    clusters : sequence, optional
        Per-clip cluster key (source utterance, or clip id when a clip holds several pairs); whole
        clusters are resampled when given, indexed in sorted key order so that the seeded draws do
        not depend on the order of the pairs.
    draws, seed, level, min_clusters
        As in :func:`harness_tasks.metrics.bootstrap_ci`.

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` for no clips, and with ``clusters`` of fewer than ``min_clusters`` keys.
    """
    a = np.asarray(correct_a, dtype=np.int64)
    b = np.asarray(correct_b, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"correct_a and correct_b must be aligned 1-d sequences, got {a.shape} and {b.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = a.size
    if n == 0:
        return math.nan, math.nan
    d = a - b  # -1, 0, +1
    rng = np.random.default_rng(seed)
    if clusters is None:
        # a clip-level resample only needs the counts of -1, 0, +1
        cnt = np.array([(d == v).sum() for v in (-1, 0, 1)], dtype=np.float64)
        sims = rng.multinomial(n, cnt / n, size=draws)
        vals = (sims[:, 2] - sims[:, 0]) / n
    else:
        if len(clusters) != n:
            raise ValueError(f"clusters has {len(clusters)} keys for {n} clips")
        keys = {c: i for i, c in enumerate(sorted(set(clusters), key=str))}
        idx = np.array([keys[c] for c in clusters])
        k = len(keys)
        if k < min_clusters:
            return math.nan, math.nan
        dsum = np.bincount(idx, weights=d, minlength=k)
        nsum = np.bincount(idx, minlength=k).astype(np.float64)
        mult = rng.multinomial(k, np.full(k, 1.0 / k), size=draws)
        vals = (mult @ dsum) / (mult @ nsum)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(vals, [alpha, 1 - alpha])
    return float(lo), float(hi)


def paired_clustered_diff(correct_a: Sequence[bool], correct_b: Sequence[bool], clusters: Sequence[Any], *,
                          level: float = STATS.level, min_clusters: int = MIN_CLUSTERS) -> tuple[float, float]:
    """Source-clustered interval of ``acc(A) - acc(B)`` on the same clips: jackknife over the clusters
    with a t quantile (:func:`harness_tasks.cluster_ci.jackknife_t`).

    Returns ``(nan, nan)`` for no clips and from fewer than ``min_clusters`` clusters.
    """
    a = np.asarray(correct_a, dtype=np.float64)
    b = np.asarray(correct_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(clusters) != a.size:
        raise ValueError(f"correct_a, correct_b and clusters must be aligned 1-d sequences, got {a.shape}, "
                         f"{b.shape} and {len(clusters)} keys")
    keys = {c: i for i, c in enumerate(sorted(set(clusters), key=str))}
    if a.size == 0 or len(keys) < min_clusters:
        return math.nan, math.nan
    idx = np.array([keys[c] for c in clusters])
    dsum = np.bincount(idx, weights=a - b, minlength=len(keys))
    nsum = np.bincount(idx, minlength=len(keys)).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = (dsum.sum() - dsum) / (nsum.sum() - nsum)
    return jackknife_t(float(dsum.sum() / nsum.sum()), loo, level=level, bounds=(-1.0, 1.0))


# ------------------------------------------------------------------------------ error answers
#: Above this share of error answers (requests the model adapter marked as failed: HTTP 500, a
#: timeout, an undecodable clip) a row is not a measurement of the model: its accuracy is shown
#: with its error share, never a verdict against chance (docs/reliability.md).
MAX_ERROR_RATE = 0.10


def error_verdict(n_error: int, n: int, *, limit: float = MAX_ERROR_RATE) -> str | None:
    """What stands instead of a verdict against chance when more than ``limit`` of the ``n``
    answers are error answers (``"n/a: 100 % error answers"``); ``None`` when the verdict stands.

    >>> error_verdict(24, 24)
    'n/a: 100 % error answers'
    >>> error_verdict(1, 24) is None
    True
    """
    if not n or n_error / n <= limit:
        return None
    return f"n/a: {100 * n_error / n:.0f} % error answers"
