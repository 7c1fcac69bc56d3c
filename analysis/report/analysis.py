"""Turn loaded evaluations into the report's numbers (the content of ``report.json``).

Every point metric comes from :mod:`harness_tasks.metrics` (one definition of each metric);
intervals from :func:`analysis.report.stats.intervals`. Values are fractions (0.51), not
percent; an undefined value is ``nan`` (``null`` in the JSON).
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations
from typing import Any

import vocalgrad
from harness_tasks.metrics import MIN_CLUSTERS, OVERALL_RULE, macro_summary

from generation.identity import short
from generation.paper_results import PAPER_CATEGORY_ACC, PAPER_SOURCE, PAPER_TRAJECTORY_ACC

from .content import MixedBuildsError, build_clash
from .loading import Evaluation
from .logits import logit_section
from .trajectory import trajectory_accuracy
from harness_tasks.stat_settings import STATS

from .stats import (ALPHA, DRAWS, SEED, binomial_p, chance_flags, chance_flags_clustered, intervals,
                    mcnemar_clustered, mcnemar_exact, mcnemar_midp, paired_bootstrap_diff, paired_clustered_diff)
from .stats import MAX_ERROR_RATE, MIN_CLIPS, clip_key, error_verdict
from .verdicts import clip_verdict, clips_of, exact_p, few_sources, headline, voices_verdict

__all__ = ["analyse", "analyse_evaluation", "compare", "few_sources", "top_outputs"]

#: Metrics that get both intervals in every breakdown.
CI_METRICS = ("acc",)
#: Group keys of the breakdowns and the order of their values.
BREAKDOWNS = {
    "category": vocalgrad.CATEGORY_NAMES,
    "tier": vocalgrad.TIERS,
    "trajectory": vocalgrad.TRAJECTORIES,
    "direction": vocalgrad.DIRECTIONS,
}


def top_outputs(records, k: int = 20) -> list[dict[str, Any]]:
    """The ``k`` most frequent raw outputs with their count and share (ties: first seen first)."""
    cnt = Counter("" if r.get("raw") is None else r["raw"] for r in records)
    n = sum(cnt.values())
    return [{"output": out, "count": c, "share": c / n} for out, c in cnt.most_common(k)]


def _group(records, *, draws: int, seed: int) -> dict[str, Any]:
    """Figures of one row: macro over the categories it holds (:data:`OVERALL_RULE`), intervals
    of that macro figure, and the one-comparison verdicts of its intervals."""
    out: dict[str, Any] = dict(macro_summary(records, by="category"))
    out["parse_rate"] = out["n_parsed"] / out["n"] if out["n"] else math.nan
    out["n_correct"] = sum(bool(r["correct"]) for r in records)
    out["n_sources"] = len({r["source_id"] for r in records})
    ci = {m: intervals(records, m, draws=draws, seed=seed, macro_by="category") for m in CI_METRICS}
    out["ci"] = ci
    out["n_clips"] = clips_of(records)
    out["verdict"], p = clip_verdict(records, ci["acc"]["binomial"])  # the exact test where no interval can tell
    if p is not None:
        out["p_exact"] = p
    out["verdict_clustered"] = voices_verdict(records, ci["acc"]["clustered"], out["n_sources"])
    _settle(out)
    return out


def _lone_categories(recs, overall: dict) -> list[str]:
    """The warning for categories answered on one source (from MIN_CLUSTERS sources) or, in a human row, on
    one clip: the intervals of figures that average the categories are withheld there
    (:func:`harness_tasks.cluster_ci.cluster_interval`)."""
    human = overall["n_clips"] < overall["n"]
    if not human and overall["n_sources"] < MIN_CLUSTERS:
        return []
    units: dict[str, set] = {}
    for r in recs:
        units.setdefault(r["category"], set()).add(clip_key(r) if human else r["source_id"])
    lone = sorted(c for c, u in units.items() if len(u) == 1)
    if not lone or len(units) < 2:
        return []
    unit = "clip" if human else "source"
    which = "95 % CI these voices" if human else "interval over voices"
    return [f"{', '.join(lone)} answered on 1 {unit} only: one {unit} tells nothing of a category's spread, so the "
            f"overall {which} is withheld (n/a), as in every row that averages categories one of which holds one "
            f"{unit}; the category rows and the exact tests stand. Answer each category on 2 {unit}s or more"]


def _settle(g: dict) -> None:
    """Last step of every row: a row whose answers are mostly error answers
    (:data:`~analysis.report.stats.MAX_ERROR_RATE`) gets its error share and no verdict against chance
    (``n/a: 100 % error answers``); then its headline (:func:`~analysis.report.verdicts.headline`)."""
    g["error_rate"] = g["n_error"] / g["n"] if g.get("n") else math.nan
    g["blocked_rate"] = g.get("n_blocked", 0) / g["n"] if g.get("n") else math.nan   # pooled, as error_rate
    instead = error_verdict(g.get("n_error", 0), g.get("n", 0))
    if instead:
        g.update(verdict=instead, verdict_clustered=instead)
    g["headline"] = headline(g)


def _flag_rows(groups: dict[Any, dict], split: dict[Any, list], *, draws: int, seed: int) -> None:
    """Replace the rows' verdicts by flags adjusted over the table: Holm-adjusted exact tests over clips
    (:func:`~analysis.report.verdicts.exact_p`; "too few clips" under MIN_CLIPS clips), and max-T sign-flip
    tests over the sources (clustered; withheld from rows of fewer than MIN_CLUSTERS sources)."""
    several = {v for v, g in groups.items() if g["n_clips"] < g["n"]}  # a human row: answers per clip
    flags = chance_flags([(g["n_correct"], g["n"]) for g in groups.values()], alpha=ALPHA,
                         pvalues=[exact_p(split[v]) if v in several else binomial_p(g["n_correct"], g["n"])
                                  for v, g in groups.items()],
                         clips=[g["n_clips"] for g in groups.values()])
    per_source = []
    for value in groups:
        counts: dict[Any, list[int]] = {}
        for r in split[value]:
            c = counts.setdefault(r["source_id"], [0, 0])
            c[0] += bool(r["correct"])
            c[1] += 1
        per_source.append({k: tuple(c) for k, c in counts.items()})
    clustered = chance_flags_clustered(per_source, alpha=ALPHA, draws=draws, seed=seed)
    for i, (g, (p, q, verdict)) in enumerate(zip(groups.values(), flags)):
        g.update(p_chance=p, p_holm=q, verdict=verdict)
        if clustered is None or g["n_sources"] < MIN_CLUSTERS:
            g["verdict_clustered"] = few_sources(g["n_sources"])
        else:
            g.update(p_chance_clustered=clustered[i][0], p_adjusted_clustered=clustered[i][1],
                     verdict_clustered=clustered[i][2])
        g.pop("p_exact", None)  # the table's flag replaced the row's own verdict
        _settle(g)


def _ordered(groups: dict, order) -> dict:
    known = [k for k in order if k in groups]
    rest = sorted((k for k in groups if k not in order), key=str)
    return {k: groups[k] for k in known + rest}


def analyse_evaluation(ev: Evaluation, *, draws: int = DRAWS, seed: int = SEED, top: int = 20) -> dict[str, Any]:
    """Numbers of one model: overall, breakdowns with intervals, bias table, parsing, top outputs."""
    out: dict[str, Any] = {
        "label": ev.label, "model": ev.model, "model_args": ev.model_args, "variant": ev.variant,
        "categories": ev.categories, "has_samples": ev.has_samples,
        "files": [str(p) for p in ev.files], "warnings": list(ev.warnings),
    }
    if ev.data:
        out["data"] = dict(ev.data)  # what the row was computed on (analysis.report.content.row_data)
    if not ev.has_samples:
        # only lm-eval's aggregated point metrics are available
        out["by_category"] = {c: dict(ev.task_metrics[c], n=ev.n_samples.get(c))
                              for c in ev.categories}
        accs = [ev.task_metrics[c].get("acc", math.nan) for c in ev.categories]
        out["overall"] = {"category_mean_acc": _mean(accs)}
        return out
    recs = ev.records
    logged = {r["category"] for r in recs}
    sampled = [c for c in ev.categories if c in logged]
    unlogged = [c for c in ev.categories if c not in logged]
    if unlogged:  # some categories' sample logs are missing (loading warned, naming each file)
        accs = ", ".join(f"{c} {100 * ev.task_metrics[c]['acc']:.1f} %" if "acc" in ev.task_metrics.get(c, {})
                         else c for c in unlogged)
        out["warnings"].append(
            f"no sample log for {', '.join(unlogged)}: the overall figures, intervals, breakdowns and bias table "
            f"cover the {len(sampled)} categories with one (lm-eval's accuracy: {accs})")
    out["categories_sampled"] = sampled
    overall = _group(recs, draws=draws, seed=seed)
    # the interval of the figure shown (the mean over categories), each category resampled on its own
    overall["ci"]["balanced_acc"] = intervals(recs, "balanced_acc", draws=draws, seed=seed, macro_by="category")
    overall["n_retried"] = sum(bool(r.get("retried")) for r in recs)
    if overall["n_sources"] < MIN_CLUSTERS:
        out["warnings"].append(
            f"only {overall['n_sources']} source utterance(s): no clustered intervals (resampling fewer than "
            f"{MIN_CLUSTERS} sources does not give one); the binomial intervals and exact tests stand")
    out["warnings"] += _lone_categories(recs, overall)
    out["overall"] = overall
    if overall["error_rate"] > MAX_ERROR_RATE:
        out["warnings"].append(
            f"{overall['n_error']} of {overall['n']} answers ({100 * overall['error_rate']:.0f} %) are error answers "
            f"(failed requests: see the sample logs), above the {100 * MAX_ERROR_RATE:.0f} % limit: the accuracy is "
            "not a measurement of the model and gets no verdict against chance; fix the model or server and rerun")
    for key, order in BREAKDOWNS.items():
        split: dict[Any, list] = {}
        for r in recs:
            split.setdefault(r[key], []).append(r)
        groups = {value: _group(sub, draws=draws, seed=seed) for value, sub in split.items()}
        _flag_rows(groups, split, draws=draws, seed=seed)
        out[f"by_{key}"] = _ordered(groups, order)
    if len(out["by_category"]) == 1:  # the overall row is its one category's row: one verdict in every place
        (only,) = out["by_category"].values()
        overall.pop("p_exact", None)
        overall.update({k: only[k] for k in ("verdict", "verdict_clustered", "p_chance", "p_holm", "p_chance_clustered",
                                             "p_adjusted_clustered") if k in only})
        _settle(overall)
    overall["category_mean_acc"] = overall["acc"]  # the overall figure is the category mean
    overall["pooled_acc"] = overall["n_correct"] / overall["n"] if overall["n"] else math.nan
    # response bias per category: increase ratio over parsed / all, with an interval
    bias = {}
    for cat in sampled:
        sub = [r for r in recs if r["category"] == cat]
        g = out["by_category"][cat]
        bias[cat] = {
            "increase_ratio": g["increase_ratio"],
            "increase_ratio_ci": intervals(sub, "increase_ratio", draws=draws, seed=seed)["binomial"],
            "increase_ratio_all": g["increase_ratio_all"],
            "acc_increase": g["acc_increase"],
            "acc_decrease": g["acc_decrease"],
        }
    bias["all"] = {
        "increase_ratio": overall["increase_ratio"],
        "increase_ratio_ci": intervals(recs, "increase_ratio", draws=draws, seed=seed,
                                       macro_by="category")["binomial"],
        "increase_ratio_all": overall["increase_ratio_all"],
        "acc_increase": overall["acc_increase"],
        "acc_decrease": overall["acc_decrease"],
    }
    out["bias"] = bias
    out["trajectory_table"] = trajectory_accuracy(recs)  # paper Table 5 rule (annotators first)
    out["logits"] = logit_section(recs, sampled, draws=draws, seed=seed)  # None without scoring=logits
    out["top_outputs"] = top_outputs(recs, top)
    return out


def _mean(vals) -> float:
    vals = [v for v in vals if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def _paired(ra: list[dict], rb: list[dict], *, draws: int, seed: int) -> dict[str, Any]:
    """Figures of aligned answer pairs (``ra[i]`` and ``rb[i]`` answer the same clip).

    A clip may hold several pairs (one per annotator of a human row): the figures are over the
    pairs, the clip-level interval resamples clips with all their pairs and the test is
    :func:`~analysis.report.stats.mcnemar_clustered` over the clips; with one pair per clip they
    are the plain paired bootstrap and :func:`~analysis.report.stats.mcnemar_exact`.
    """
    a = [bool(r["correct"]) for r in ra]
    b = [bool(r["correct"]) for r in rb]
    n = len(a)
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    acc_a = sum(a) / n if n else math.nan
    acc_b = sum(b) / n if n else math.nan
    clip = [(r["category"], r["id"]) for r in ra]
    discordance: dict[tuple, int] = {}
    for key, x, y in zip(clip, a, b):
        discordance[key] = discordance.get(key, 0) + int(x) - int(y)
    several = len(discordance) < n
    return {
        "n": n, "n_clips": len(discordance), "acc_a": acc_a, "acc_b": acc_b, "diff": acc_a - acc_b,
        "only_a": only_a, "only_b": only_b,
        "mcnemar_p": (mcnemar_clustered(list(discordance.values()), mid=True) if several
                      else mcnemar_midp(only_a, only_b)),
        "mcnemar_p_exact": (mcnemar_clustered(list(discordance.values())) if several
                            else mcnemar_exact(only_a, only_b)),
        "n_sources": len({r["source_id"] for r in ra}),
        "ci": {
            "binomial": list(paired_bootstrap_diff(a, b, clusters=clip if several else None, min_clusters=1,
                                                   draws=draws, seed=seed)),
            "clustered": list(paired_clustered_diff(a, b, [r["source_id"] for r in ra])),
        },
    }


def _pairs(ev_a: Evaluation, ev_b: Evaluation) -> list[tuple[dict, dict]]:
    """Every answer of A with every answer of B on the same clip (category, clip id), in an order
    that does not depend on the order of the records (a human row has one answer per annotator)."""
    def key(r):
        return (r["category"], r["id"])

    def rank(r):
        return str(r.get("annotator", ""))

    by_b: dict[tuple, list[dict]] = {}
    for r in ev_b.records:
        by_b.setdefault(key(r), []).append(r)
    pairs = [(r, s) for r in ev_a.records for s in by_b.get(key(r), ())]
    return sorted(pairs, key=lambda p: (*key(p[0]), rank(p[0]), rank(p[1])))


def compare(ev_a: Evaluation, ev_b: Evaluation, *, draws: int = DRAWS, seed: int = SEED) -> dict[str, Any] | None:
    """Paired comparison of two models on the clips both answered (matched by category and clip id,
    and by the sha256 of the audio where both sample logs record it: the same id with other audio is
    no pair, see :func:`analysis.report.content.build_clash`).

    Returns ``None`` when they share no clip. Per category and overall: both accuracies, the
    difference A - B with its paired bootstrap intervals (clips / source utterances resampled),
    the discordant counts and the exact McNemar p-value.

    A human row (records with an ``annotator``, from ``--human``) is compared per annotator: each
    annotator's answer is paired with the model's answer on the same clip, so a clip answered by
    ``k`` annotators gives ``k`` pairs; the figures are over the pairs (``n`` pairs on ``n_clips``
    clips), the intervals resample clips (or source utterances) with all their pairs, and the test
    is :func:`~analysis.report.stats.mcnemar_clustered` (clips as units). ``by_annotator`` holds the
    comparison with each annotator alone (one pair per clip). The result does not depend on the
    order of the answers.
    """
    pairs = _pairs(ev_a, ev_b)
    # only clips whose audio is the same on both sides (sha256 where both logged it; mixed builds are refused earlier)
    pairs = [(a, b) for a, b in pairs if not (a.get("sha256") and b.get("sha256") and a["sha256"] != b["sha256"])]
    if not pairs:
        return None
    ra, rb = [p[0] for p in pairs], [p[1] for p in pairs]
    out = {"a": ev_a.label, "b": ev_b.label, "overall": _paired(ra, rb, draws=draws, seed=seed),
           "by_category": {}}
    for side, recs in (("a", ra), ("b", rb)):
        names = sorted({str(r["annotator"]) for r in recs if "annotator" in r})
        if names:
            out["by_annotator"] = {}
            for name in names:
                idx = [i for i, r in enumerate(recs) if str(r.get("annotator")) == name]
                out["by_annotator"][name] = _paired([ra[i] for i in idx], [rb[i] for i in idx],
                                                    draws=draws, seed=seed)
            break
    for cat in vocalgrad.CATEGORY_NAMES:
        idx = [i for i, r in enumerate(ra) if r["category"] == cat]
        if idx:
            out["by_category"][cat] = _paired([ra[i] for i in idx], [rb[i] for i in idx],
                                              draws=draws, seed=seed)
    return out


def analyse(evaluations: list[Evaluation], *, draws: int = DRAWS, seed: int = SEED, top: int = 20,
            max_pairs: int = 28, allow_mixed: bool = False) -> dict[str, Any]:
    """The whole report: settings, one entry per model, paired comparisons, the paper's rows.

    Pairs are formed between models of the same task variant that both logged samples (all
    pairs, in input order, up to ``max_pairs``). Two models whose sample logs hold different audio
    under one clip id were evaluated on different builds: an error naming both, or with
    ``allow_mixed`` no pairing, listed under ``"not_paired"``.

    Raises
    ------
    MixedBuildsError
        Two rows of one variant come from different builds and ``allow_mixed`` is off.
    """
    models = [analyse_evaluation(ev, draws=draws, seed=seed, top=top) for ev in evaluations]
    comparisons, not_paired = [], []
    for ea, eb in combinations([e for e in evaluations if e.has_samples], 2):
        if ea.variant != eb.variant or len(comparisons) >= max_pairs:
            continue
        clash = build_clash(ea, eb)
        if clash is not None:
            reason = _different_builds(ea, eb, clash)
            if not allow_mixed:
                raise MixedBuildsError(f"{reason}; a paired comparison needs the same clips: report them separately, "
                                   f"or pass --allow-mixed to report them without pairing")
            not_paired.append({"a": ea.label, "b": eb.label, "reason": reason})
            continue
        c = compare(ea, eb, draws=draws, seed=seed)
        if c is not None:
            comparisons.append(c)
    extra = {"not_paired": not_paired} if not_paired else {}
    return {
        "toolkit": "vocalgrad",
        "settings": {"bootstrap_draws": draws, "seed": seed, "level": STATS.level,
                     "cluster": "source_id", "chance": 0.5, "overall_rule": OVERALL_RULE,
                     "chance_flags": f"{STATS.chance_flags}, alpha {ALPHA}",
                     "chance_flags_clustered": "sign flips of whole sources, max-T adjusted over the rows of each "
                                               f"table (Westfall-Young), alpha {ALPHA}, from {MIN_CLUSTERS} sources",
                     "binomial": STATS.binomial, "clustered": STATS.clustered, "paired_test": STATS.paired_test,
                     "min_clusters": MIN_CLUSTERS, "min_clips": MIN_CLIPS,
                     "headline": f"over voices (clustered) from {MIN_CLUSTERS} sources, else these voices (binomial) "
                                 f"and no claim over voices; under {MIN_CLIPS} clips or all one answer the exact test",
                     "calibration": "docs/statistics.md"},
        "models": models,
        "comparisons": comparisons,
        "paper": {"source": PAPER_SOURCE, "unit": "percent", "category_acc": PAPER_CATEGORY_ACC,
                  "trajectory_acc": PAPER_TRAJECTORY_ACC},
        **extra,
    }


def _different_builds(ea: Evaluation, eb: Evaluation, clash: tuple[str, str, str]) -> str:
    """The sentence naming two rows of different builds: labels, results files, fingerprints, one clip."""
    def side(ev):
        rfile = next((str(p) for p in ev.files if p.name.startswith("results_")), "?")
        return f"{ev.label} ({rfile}, build {(ev.data or {}).get('fingerprint') or 'unknown'})"

    cid, sha_a, sha_b = clash
    return (f"{side(ea)} and {side(eb)} were evaluated on different builds: clip {cid} is {short(sha_a)} in one "
            f"and {short(sha_b)} in the other")
