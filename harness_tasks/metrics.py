"""VocalGrad metrics (benchmark.md §8) as pure functions, shared by the lm-eval tasks and the report.

A *record* is one scored answer: a mapping with at least ``direction`` (the gold label) and
either ``raw`` (the model output, parsed here) or the pre-parsed fields ``pred``, ``status``
and ``exact`` (as made by :func:`score_answer`), or the compact string of :func:`record_code`
(what lm-eval's per-sample logs hold). Extra keys (``category``, ``tier``,
``trajectory``, ``source_id``, ...) are used by :func:`breakdown` and the clustered interval.

Internally records are tabulated into a count table of shape ``(2, 8)``: gold direction
(increase, decrease) x answer cell (:data:`ANSWER_CELLS`). Every metric is a function of that
table, which makes the bootstrap intervals exact and cheap (a multinomial draw per resample).

Conventions
-----------
- Unparsed answers (no match, ambiguous, adapter error, blocked by the provider) count as wrong in ``acc``,
  ``balanced_acc`` and the per-direction accuracies; they are left out of ``acc_parsed``
  and ``increase_ratio`` (parsed), and count as "not increase" in ``increase_ratio_all``.
- A rate with an empty denominator is ``nan``.

Examples
--------
>>> recs = [score_answer("increase", "increase"), score_answer("Decrease", "increase"),
...         score_answer("no idea", "decrease")]
>>> round(accuracy(recs), 3), accuracy_parsed(recs), increase_ratio(recs)
(0.333, 0.5, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import vocalgrad

from .models.thinking import answer_text
from .parsing import classify_answer, is_exact_match
from .stat_settings import STATS

__all__ = [
    "ANSWER_CELLS",
    "METRICS",
    "MIN_CLUSTERS",
    "accuracy",
    "accuracy_parsed",
    "balanced_accuracy",
    "bootstrap_ci",
    "breakdown",
    "cluster_keys",
    "counts",
    "direction_accuracy",
    "blocked_rate",
    "error_rate",
    "exact_match_rate",
    "increase_ratio",
    "macro_summary",
    "OVERALL_RULE",
    "metric_from_table",
    "parse_record_code",
    "record_code",
    "score_answer",
    "summarize",
    "tabulate",
    "unparsed_rate",
]

#: Columns of the count table: parsed answers split by exact match, then the unparsed kinds.
ANSWER_CELLS: tuple[str, ...] = (
    "increase_exact", "increase_other", "decrease_exact", "decrease_other",
    "unparsed", "ambiguous", "error", "blocked",
)
_GOLD = {d: i for i, d in enumerate(vocalgrad.DIRECTIONS)}  # increase 0, decrease 1
_INC = (0, 1)  # answer cells that say increase
_DEC = (2, 3)
_PARSED = (0, 1, 2, 3)
_EXACT = (0, 2)

#: Fewest clusters (source utterances) from which a clustered interval is computed (:data:`STATS`).
#: Few clusters give no honest interval (docs/statistics.md: the percentile bootstrap over 2 sources
#: has 3 possible draws); below this count the interval is ``(nan, nan)``, never evidence (docs/report.md).
MIN_CLUSTERS = STATS.min_clusters


def score_answer(raw: str | None, direction: str, **extra: Any) -> dict[str, Any]:
    """Score one raw answer against its gold direction.

    Parameters
    ----------
    raw : str or None
        Model output (``None`` = no output; adapter errors are marked, see :mod:`.parsing`); a
        leading reasoning block is read past (:mod:`.models.thinking`).
    direction : {"increase", "decrease"}
        Gold label.
    **extra
        Copied into the record (clip id, tier, trajectory, ...).

    Returns
    -------
    dict
        ``direction``, ``pred`` (parsed label or None), ``status`` (parsed / unparsed /
        ambiguous / error / blocked), ``exact`` (bool), ``correct`` (bool) and the extra keys.
    """
    if direction not in _GOLD:
        raise ValueError(f"gold direction must be one of {vocalgrad.DIRECTIONS}, got {direction!r}")
    text = answer_text(raw)                      # a leading reasoning block is not the answer
    pred, status = classify_answer(text)
    return {
        **extra,
        "direction": direction,
        "pred": pred,
        "status": status,
        "exact": is_exact_match(text),
        "correct": pred == direction,
    }


def record_code(rec: Mapping[str, Any]) -> str:
    """Compact text form of a scored record: ``gold:pred:status:exact|other[:retried]``.

    Used as the per-sample value of lm-eval's metrics (cheap to log). ``pred`` is ``none``
    when unparsed. Example: ``"increase:decrease:parsed:exact"``.
    """
    parts = [rec["direction"], rec.get("pred") or "none", rec["status"],
             "exact" if rec.get("exact") else "other"]
    if rec.get("retried"):
        parts.append("retried")
    return ":".join(parts)


def parse_record_code(code: str) -> dict[str, Any]:
    """Inverse of :func:`record_code`."""
    parts = code.split(":")
    if len(parts) not in (4, 5) or parts[3] not in ("exact", "other"):
        raise ValueError(f"not a VocalGrad record code: {code!r} (expected gold:pred:status:exact|other)")
    return {"direction": parts[0], "pred": None if parts[1] == "none" else parts[1], "status": parts[2],
            "exact": parts[3] == "exact", "retried": len(parts) == 5 and parts[4] == "retried"}


def _cell(rec: Mapping[str, Any] | str) -> tuple[int, int]:
    if isinstance(rec, str):
        rec = parse_record_code(rec)
    try:
        gold = _GOLD[rec["direction"]]
    except KeyError:
        raise ValueError(
            f"record needs 'direction' in {vocalgrad.DIRECTIONS}, got {rec.get('direction')!r}"
        ) from None
    if "status" in rec:
        pred, status, exact = rec.get("pred"), rec["status"], bool(rec.get("exact", False))
    elif "raw" in rec:
        pred, status = classify_answer(answer_text(rec["raw"]))
        exact = is_exact_match(answer_text(rec["raw"]))
    else:
        raise ValueError("record needs either 'raw' or 'status' (and 'pred'); see score_answer")
    if status == "parsed":
        if pred not in _GOLD:
            raise ValueError(f"parsed record has pred={pred!r}")
        return gold, 2 * _GOLD[pred] + (0 if exact else 1)
    try:
        return gold, 4 + ("unparsed", "ambiguous", "error", "blocked").index(status)
    except ValueError:
        raise ValueError(f"unknown answer status {status!r}") from None


def tabulate(records: Iterable[Mapping[str, Any] | str]) -> np.ndarray:
    """Count table of shape ``(2, 8)`` (gold direction x :data:`ANSWER_CELLS`)."""
    table = np.zeros((2, len(ANSWER_CELLS)), dtype=np.int64)
    for rec in records:
        table[_cell(rec)] += 1
    return table


def div_or_nan(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` element-wise in float64, nan where ``den`` is 0 (no warning)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _sum(t: np.ndarray, gold: int | slice, cells: Sequence[int]) -> np.ndarray:
    return t[..., gold, list(cells)].sum(axis=-1)


def _n(t):
    return t.sum(axis=(-2, -1))


def _correct(t):
    return _sum(t, 0, _INC) + _sum(t, 1, _DEC)


def _parsed(t):
    return _sum(t, 0, _PARSED) + _sum(t, 1, _PARSED)


def _dir_acc(t, d):
    g = _GOLD[d]
    return div_or_nan(_sum(t, g, _INC if g == 0 else _DEC), t[..., g, :].sum(axis=-1))


def _balanced(t):
    a = np.stack([_dir_acc(t, d) for d in vocalgrad.DIRECTIONS], axis=-1)
    with np.errstate(invalid="ignore"):
        ok = ~np.isnan(a)
        return div_or_nan(np.where(ok, a, 0.0).sum(axis=-1), ok.sum(axis=-1))


def _inc_answers(t):
    return _sum(t, 0, _INC) + _sum(t, 1, _INC)


def _status(t, cell):
    return t[..., :, cell].sum(axis=-1)


#: Metric name -> function of a count table (any leading batch shape) -> float array.
METRICS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "acc": lambda t: div_or_nan(_correct(t), _n(t)),
    "acc_parsed": lambda t: div_or_nan(_correct(t), _parsed(t)),
    "balanced_acc": _balanced,
    "acc_increase": lambda t: _dir_acc(t, "increase"),
    "acc_decrease": lambda t: _dir_acc(t, "decrease"),
    "increase_ratio": lambda t: div_or_nan(_inc_answers(t), _parsed(t)),
    "increase_ratio_all": lambda t: div_or_nan(_inc_answers(t), _n(t)),
    "unparsed_rate": lambda t: div_or_nan(_n(t) - _parsed(t), _n(t)),
    "ambiguous_rate": lambda t: div_or_nan(_status(t, 5), _n(t)),
    "error_rate": lambda t: div_or_nan(_status(t, 6), _n(t)),
    "blocked_rate": lambda t: div_or_nan(_status(t, 7), _n(t)),
    "exact_match_rate": lambda t: div_or_nan(_sum(t, 0, _EXACT) + _sum(t, 1, _EXACT), _n(t)),
}


def metric_from_table(name: str, table: np.ndarray) -> float | np.ndarray:
    """Evaluate metric ``name`` (a key of :data:`METRICS`) on a count table."""
    try:
        fn = METRICS[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; choose from {', '.join(METRICS)}") from None
    out = fn(np.asarray(table))
    return float(out) if np.ndim(out) == 0 else out


def _records_metric(name: str, doc: str) -> Callable[[Iterable[Mapping[str, Any]]], float]:
    def fn(records: Iterable[Mapping[str, Any]]) -> float:
        return metric_from_table(name, tabulate(records))

    fn.__name__, fn.__doc__ = name, doc
    return fn


accuracy = _records_metric("acc", "Share of all clips answered correctly (unparsed = wrong).")
accuracy_parsed = _records_metric("acc_parsed", "Accuracy over parsed answers only.")
balanced_accuracy = _records_metric("balanced_acc", "Mean of the per-direction accuracies (unparsed = wrong).")
exact_match_rate = _records_metric(
    "exact_match_rate", "Share of raw answers that are exactly one direction word (benchmark.md §8).")
unparsed_rate = _records_metric(
    "unparsed_rate", "Share of answers that are not parsed (no match, ambiguous, error or blocked).")
error_rate = _records_metric("error_rate", "Share of answers that the model adapter marked as failed requests.")
blocked_rate = _records_metric("blocked_rate", "Share of replies the provider blocked (safety or recitation filter).")


def direction_accuracy(records: Iterable[Mapping[str, Any]], direction: str) -> float:
    """Accuracy over the clips whose gold label is ``direction`` (unparsed = wrong)."""
    if direction not in _GOLD:
        raise ValueError(f"direction must be one of {vocalgrad.DIRECTIONS}, got {direction!r}")
    return metric_from_table(f"acc_{direction}", tabulate(records))


def increase_ratio(records: Iterable[Mapping[str, Any]], *, over: str = "parsed") -> float:
    """Share of answers that say ``increase`` (response bias; 0.5 = unbiased).

    Parameters
    ----------
    over : {"parsed", "all"}
        Denominator: parsed answers, or all clips (unparsed answers then count as "not
        increase").
    """
    if over not in ("parsed", "all"):
        raise ValueError(f"over must be 'parsed' or 'all', got {over!r}")
    return metric_from_table("increase_ratio" if over == "parsed" else "increase_ratio_all",
                             tabulate(records))


def counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Numbers of clips, parsed, unparsed (no match), ambiguous, errored, blocked and exact answers."""
    t = tabulate(records)
    return {
        "n": int(_n(t)),
        "n_parsed": int(_parsed(t)),
        "n_unparsed": int(_status(t, 4)),
        "n_ambiguous": int(_status(t, 5)),
        "n_error": int(_status(t, 6)),
        "n_blocked": int(_status(t, 7)),
        "n_exact": int(_sum(t, 0, _EXACT) + _sum(t, 1, _EXACT)),
    }


def summarize(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Every metric of :data:`METRICS` plus :func:`counts` for a list of records."""
    records = list(records)
    t = tabulate(records)
    out: dict[str, float] = {name: metric_from_table(name, t) for name in METRICS}
    out.update(counts(records))
    return out


#: The one definition of every overall figure (lm-eval's group rows, the report, ``evaluate``).
OVERALL_RULE = (
    "overall = unweighted mean over categories of each category's value (the paper's avg); "
    "inside a category accuracy counts every clip (unparsed = wrong) and the increase ratio and "
    "acc_parsed use parsed answers as the denominator; an undefined category value makes the "
    "overall undefined; counts (n, n_parsed, ...) are sums")


def strata_tables(records, by: str, cluster: str | None = None):
    """Count tables per stratum ``(G, 2, 8)``, or per cluster and stratum ``(K, G, 2, 8)``.

    Strata and clusters are indexed in sorted order of their keys, so a seeded resample does not
    depend on the order of the records.
    """
    keyed = []
    memo: dict[tuple, tuple[int, int]] = {}  # parsed records: the cell depends on these four fields only
    for rec in records:
        if isinstance(rec, str):
            raise ValueError(f"macro figures need records with a {by!r} key, not record codes")
        try:
            key = ((rec["direction"], rec.get("pred"), rec["status"], bool(rec.get("exact")))
                   if "status" in rec else None)
            cell = (memo.get(key) or memo.setdefault(key, _cell(rec))) if key else _cell(rec)
            keyed.append((rec[by], rec[cluster] if cluster else 0, cell))
        except KeyError as exc:
            raise KeyError(f"record has no key {exc.args[0]!r} (needed for the macro figure)") from None
    strata = {g: i for i, g in enumerate(sorted({k[0] for k in keyed}, key=str))}
    clusters = {c: i for i, c in enumerate(sorted({k[1] for k in keyed}, key=str))}
    t = np.zeros((max(len(clusters), 1), len(strata), 2, len(ANSWER_CELLS)), dtype=np.int64)
    if keyed:
        np.add.at(t, tuple(np.array([(clusters[c], strata[g], i, j) for g, c, (i, j) in keyed], dtype=np.intp).T), 1)
    return t if cluster else t[0]


def macro_summary(records: Iterable[Mapping[str, Any]], by: str = "category") -> dict[str, float]:
    """Overall figures by :data:`OVERALL_RULE`: every :data:`METRICS` entry as the unweighted
    mean over the values of ``by`` (categories), plus pooled :func:`counts` and ``n_groups``.

    With a single category this equals :func:`summarize`.
    """
    records = list(records)
    out: dict[str, float] = {}
    if not records:
        out.update({name: math.nan for name in METRICS})
    else:
        tables = strata_tables(records, by)
        for name, fn in METRICS.items():
            out[name] = float(np.mean(fn(tables)))
    out.update(counts(records))
    out["n_groups"] = len({r[by] for r in records})
    return out


def breakdown(records: Iterable[Mapping[str, Any]], by: str | Sequence[str]) -> dict[Any, dict[str, float]]:
    """:func:`summarize` per value of one key (``"tier"``) or a tuple of keys.

    Groups appear in the order of first appearance; a missing key raises ``KeyError`` naming it.
    """
    keys = (by,) if isinstance(by, str) else tuple(by)
    groups: dict[Any, list] = {}
    for rec in records:
        try:
            k = tuple(rec[key] for key in keys)
        except KeyError as exc:
            raise KeyError(f"record has no key {exc.args[0]!r} to break down by") from None
        groups.setdefault(k[0] if len(keys) == 1 else k, []).append(rec)
    return {k: summarize(v) for k, v in groups.items()}


def bootstrap_ci(
    records: Sequence[Mapping[str, Any]],
    metric: str = "acc",
    *,
    draws: int = STATS.draws,
    seed: int = STATS.seed,
    level: float = STATS.level,
    cluster: str | None = None,
    macro_by: str | None = None,
    min_clusters: int = MIN_CLUSTERS,
) -> tuple[float, float]:
    """Percentile bootstrap interval of a metric (benchmark.md §8).

    Parameters
    ----------
    records : sequence of mappings
    metric : str
        Key of :data:`METRICS`.
    draws, seed, level
        Number of resamples, seed of ``numpy.random.default_rng``, coverage.
    cluster : str, optional
        Record key to resample by (e.g. ``"source_id"``: the 24 conditions of a source share
        it). ``None`` resamples clips independently (the paper's binomial bootstrap). The report's
        clustered interval is :func:`harness_tasks.cluster_ci.cluster_interval` (docs/statistics.md).
    macro_by : str, optional
        Interval of the macro figure (:data:`OVERALL_RULE`) over this key (``"category"``): each
        category is resampled on its own (clips) or sources are resampled with all their
        categories (clustered), and every draw averages the categories' values.
    min_clusters : int
        With ``cluster``: fewer distinct cluster keys than this give ``(nan, nan)``
        (:data:`MIN_CLUSTERS`; the percentile bootstrap over a handful of clusters is not an interval).

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` for an empty input, and for a clustered interval from too few clusters.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    records = list(records)
    if not records:
        return math.nan, math.nan
    if cluster is not None and len(cluster_keys(records, cluster)) < min_clusters:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    if macro_by is not None:
        sims = _macro_draws(records, macro_by, cluster, rng, draws)
        fn = METRICS[metric]
        vals = np.mean(fn(sims), axis=-1)
        return percentile_interval(vals, level)
    if cluster is None:
        t = tabulate(records)
        n = int(t.sum())
        sims = rng.multinomial(n, (t / n).ravel(), size=draws).reshape(draws, *t.shape)
    else:
        per: dict[Any, np.ndarray] = {}
        for rec in records:
            try:
                key = rec[cluster]
            except KeyError:
                raise KeyError(f"record has no cluster key {cluster!r}") from None
            per.setdefault(key, np.zeros((2, len(ANSWER_CELLS)), dtype=np.int64))[_cell(rec)] += 1
        tables = np.stack(list(per.values()))  # (k, 2, 8)
        k = len(tables)
        mult = rng.multinomial(k, np.full(k, 1.0 / k), size=draws)  # (draws, k)
        sims = np.tensordot(mult, tables, axes=(1, 0))
    vals = METRICS[metric](sims) if metric in METRICS else metric_from_table(metric, sims)
    return percentile_interval(vals, level)


def cluster_keys(records: Iterable[Mapping[str, Any]], cluster: str) -> set:
    """The distinct values of key ``cluster`` in ``records`` (KeyError naming the key when one lacks it)."""
    try:
        return {rec[cluster] for rec in records}
    except KeyError:
        raise KeyError(f"record has no cluster key {cluster!r}") from None


def percentile_interval(vals: np.ndarray, level: float) -> tuple[float, float]:
    """Central ``level`` percentile interval of ``vals`` ignoring nans; ``(nan, nan)`` when none is left."""
    vals = vals[~np.isnan(vals)]
    if vals.size == 0:
        return math.nan, math.nan
    alpha = (1 - level) / 2
    lo, hi = np.quantile(vals, [alpha, 1 - alpha])
    return float(lo), float(hi)


def _macro_draws(records, by: str, cluster: str | None, rng, draws: int) -> np.ndarray:
    """Resampled count tables ``(draws, G, 2, 8)`` for a macro figure."""
    if cluster is None:
        tables = strata_tables(records, by)           # (G, 2, 8)
        out = np.empty((draws, *tables.shape), dtype=np.int64)
        for g, t in enumerate(tables):
            n = int(t.sum())
            out[:, g] = rng.multinomial(n, (t / n).ravel(), size=draws).reshape(draws, *t.shape)
        return out
    tables = strata_tables(records, by, cluster)       # (K, G, 2, 8)
    k = len(tables)
    mult = rng.multinomial(k, np.full(k, 1.0 / k), size=draws)
    return np.tensordot(mult, tables, axes=(1, 0))

