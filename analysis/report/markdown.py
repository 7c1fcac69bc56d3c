"""Render the analysed numbers (:func:`analysis.report.analysis.analyse`) as ``report.md``."""

from __future__ import annotations

import math
from typing import Any

import vocalgrad
from harness_tasks.metrics import MIN_CLUSTERS
from harness_tasks.variants import EXT_VARIANT

from .verdicts import THESE_VOICES, few_sources, headline_text, no_claim_reason
from .content import NOT_PAPER_MARK, NOT_PAPER_NOTE, data_lines, not_paired_lines, not_paper
from .extras import extras_markdown
from .formats import formats_markdown
from .trajectory import trajectory_markdown
from .stats import MAX_ERROR_RATE, MIN_CLIPS, NOT_DIFFERENT, TOO_FEW

__all__ = ["render_markdown", "slug"]


def slug(label: str) -> str:
    """File-name-safe form of a model label (``"Qwen/Qwen2-Audio [swap]"`` -> ``qwen-qwen2-audio-swap``)."""
    out = "".join(ch.lower() if ch.isalnum() else "-" for ch in label)
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-") or "model"


def _nan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def pct(v, digits: int = 1) -> str:
    """``0.512 -> "51.2"``; undefined -> ``"–"``."""
    return "–" if _nan(v) else f"{100 * v:.{digits}f}"


def ci(pair) -> str:
    if pair is None or any(_nan(v) for v in pair):
        return "–"
    return f"[{100 * pair[0]:.1f}, {100 * pair[1]:.1f}]"


def ci_clustered(pair, n_sources: int | None) -> str:
    """The clustered interval's cell: ``n/a (k sources)`` when there were too few sources to compute it."""
    if n_sources is not None and n_sources < MIN_CLUSTERS:
        return few_sources(n_sources)
    return ci(pair)


def _pval(p) -> str:
    if _nan(p):
        return "–"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out + [""]


def _mark(g: dict) -> str:
    """Headline verdict cell (:func:`~analysis.report.verdicts.headline_text`), the verdict in bold when it is
    no claim (``**not different from chance** over voices``)."""
    h = g["headline"]
    text = headline_text(h)
    if h["verdict"] in (NOT_DIFFERENT, TOO_FEW):
        return text.replace(h["verdict"], f"**{h['verdict']}**", 1)
    return text


def _clip_mark(g: dict) -> str:
    """The verdict on these voices (the clip bootstrap's, or the exact test's on few clips)."""
    return g.get("verdict", "n/a")


#: The two questions, in two sentences (report.md, the page's help text, docs/statistics.md).
QUESTIONS = ("*Over voices* (the headline): would the model beat chance on voices in general, not just the ones "
             "drawn? *These voices* (the paper's clip bootstrap): how much would the figure move if the model "
             "answered these same clips again?")

#: Headers of a row's headline and its clip-level figures (report.md and the page).
HEADLINE_HEAD = ["95 % CI", "vs chance"]
CLIP_HEAD = ["95 % CI these voices", "vs chance, these voices"]


def headline_cells(g: dict) -> list[str]:
    """A row's headline interval and verdict, then its clip-level interval and verdict (these voices)."""
    return [ci(g["headline"]["ci"]), _mark(g), ci(g["ci"]["acc"]["binomial"]), _clip_mark(g)]


def headline_line(ov: dict) -> str:
    """The terminal line's figures of a row: ``[lo, hi] above chance over voices (these voices, clip bootstrap:
    [lo, hi] above chance)``; below MIN_CLUSTERS sources ``[lo, hi] above chance on these voices; no claim over
    voices (4 sources; ...)``; a human row's clip interval is ``clips as units``."""
    h = ov["headline"]
    text = f"{ci(h['ci'])} {headline_text(h, why=True)}"
    if h["over"] != THESE_VOICES:
        how = "clips as units" if ov.get("n_clips", 0) < ov.get("n", 0) else "clip bootstrap"
        text += f" (these voices, {how}: {ci(ov['ci']['acc']['binomial'])} {ov['verdict']})"
    return text


def no_claim_line(models: list[dict[str, Any]]) -> list[str]:
    """One line naming the runs of fewer than MIN_CLUSTERS sources: no claim over voices, and why."""
    few = [m for m in models if m.get("has_samples") and m["overall"]["headline"]["over"] == THESE_VOICES]
    if not few:
        return []
    names = "; ".join(f"{m['label']}: {no_claim_reason(m['overall']['n_sources'])}" for m in few)
    return [f"> **No claim over voices** ({names}). With fewer sources the voices drawn decide the figure: "
            "the intervals and verdicts shown are about these voices only.", ""]


def _escape(text: str, limit: int = 80) -> str:
    t = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("|", "\\|")
    t = t.replace("`", "'")
    if len(t) > limit:
        t = t[: limit - 1] + "…"
    return f"`{t}`" if t else "*(empty)*"


def _breakdown_table(groups: dict, first: str) -> list[str]:
    rows = []
    for name, g in groups.items():
        rows.append([name, g["n"], pct(g["acc"])] + headline_cells(g)
                    + [pct(g["acc_parsed"]), pct(g["balanced_acc"]), pct(g["parse_rate"])])
    return _table([first, "clips", "acc %"] + HEADLINE_HEAD + CLIP_HEAD
                  + ["acc parsed %", "balanced acc %", "parsed %"], rows)


def _model_section(m: dict, plot: str | None) -> list[str]:
    lines = [f"## {m['label']}", ""]
    args = f" `--model_args {m['model_args']}`" if m["model_args"] else ""
    lines += [f"lm-eval model `{m['model']}`{args}, task variant `{m['variant']}`, "
              f"categories: {', '.join(m['categories'])}.", ""]
    for w in m.get("warnings", []):
        lines.append(f"> warning: {w}")
    if m.get("warnings"):
        lines.append("")
    if plot:
        lines += [f"![{m['label']}]({plot})", ""]
    if not m["has_samples"]:
        lines += ["No per-sample log (`--log_samples`) was found: only lm-eval's aggregated accuracy "
                  "is shown; intervals, breakdowns and the bias table need the sample log.", ""]
        rows = [[c, g.get("n") or "–", pct(g.get("acc")), pct(g.get("balanced_acc")),
                 pct(g.get("increase_ratio"))] for c, g in m["by_category"].items()]
        return lines + _table(["category", "clips", "acc %", "balanced acc %", "increase ratio %"], rows)
    ov = m["overall"]
    lines += ["### Overall", ""]
    lines += _table(["clips", "sources", "acc %"] + HEADLINE_HEAD + CLIP_HEAD
                    + ["acc parsed %", "balanced acc %", "95 % CI these voices (balanced)"],
                    [[ov["n"], ov["n_sources"], pct(ov["acc"])] + headline_cells(ov)
                     + [pct(ov["acc_parsed"]), pct(ov["balanced_acc"]), ci(ov["ci"]["balanced_acc"]["binomial"])]])
    lines += no_claim_line([m])
    for key, title in (("category", "By category"), ("tier", "By tier"), ("trajectory", "By trajectory"),
                       ("direction", "By direction (gold label)")):
        lines += [f"### {title}", ""] + _breakdown_table(m[f"by_{key}"], key)
    lines += ["### Response bias (increase ratio)", "",
              "Share of answers that say *increase*: over parsed answers and over all clips (unparsed "
              "= not increase). 50 % = no bias; a constant answer gives 0 % or 100 %.", ""]
    rows = [[c, pct(b["increase_ratio"]), ci(b["increase_ratio_ci"]), pct(b["increase_ratio_all"]),
             pct(b["acc_increase"]), pct(b["acc_decrease"])] for c, b in m["bias"].items()]
    lines += _table(["category", "increase ratio (parsed) %", "95 % CI binomial", "increase ratio (all) %",
                     "acc on increase clips %", "acc on decrease clips %"], rows)
    if m.get("logits"):
        lines += ["### Answers by logits", "",
                  "The answer word with the higher next-token log-probability after the prompt "
                  "(`scoring=logits|both`): never unparsed. Above the generated answers' accuracy = "
                  "the model perceives more than it says; overall = mean over categories.", ""]
        rows = [[c, g["n"], pct(g["acc_logit"]), ci(g["acc_logit_ci"]), pct(g["increase_ratio_logit"]),
                 pct(g["acc_generated"])] for c, g in m["logits"].items()]
        lines += _table(["category", "clips", "acc_logit %", "95 % CI binomial", "increase ratio (logit) %",
                         "acc (generated) %"], rows)
    lines += ["### Answer parsing", ""]
    lines += _table(["clips", "parsed", "unparsed (no direction)", "ambiguous (both)", "adapter errors",
                     "blocked by the provider", "retried", "exact match %", "rule-based parse %"],
                    [[ov["n"], ov["n_parsed"], ov["n_unparsed"], ov["n_ambiguous"], ov["n_error"],
                      ov.get("n_blocked", 0), ov["n_retried"], pct(ov["exact_match_rate"]), pct(ov["parse_rate"])]])
    lines += [f"### {_top_heading(len(m['top_outputs']))}", ""]
    rows = [[i, _escape(t["output"]), t["count"], pct(t["share"])] for i, t in enumerate(m["top_outputs"], 1)]
    lines += _table(["#", "output", "count", "share %"], rows)
    return lines


def _top_heading(n: int) -> str:
    """"The most frequent raw output" / "The 2 most frequent raw outputs"."""
    return "The most frequent raw output" if n == 1 else f"The {n} most frequent raw outputs"


def _intro(s: dict[str, Any], n_models: int) -> list[str]:
    """How to read the figures: the two questions, the intervals, the overall figures and the chance flags."""
    return [f"{n_models} evaluation(s). Accuracy counts unparsed answers as wrong (toolkit docs/benchmark.md "
            "§7–§8).", "", "**Which question each figure answers.** " + QUESTIONS, "",
            f"The headline (*95 % CI*, *vs chance*) is over voices from {MIN_CLUSTERS} source utterances: the "
            "sources are the independent units (a jackknife over sources with a t quantile, *clustered*). With "
            "fewer sources no claim over voices can be made (too few voices to tell the model from the voices "
            "drawn), and the headline shows the clip-level figure, marked *on these voices*. *95 % CI these "
            f"voices* is a percentile bootstrap of clips with {s['bootstrap_draws']:,} draws, seed {s['seed']} (the "
            "paper's interval). Their coverage is measured by simulation in the toolkit's docs/statistics.md.", "",
            f"**Overall figures** (one definition, the same in lm-eval's group rows and the `evaluate` "
            f"metric): {s.get('overall_rule', '')}. Intervals of an overall figure resample each "
            "category (or each source with all its categories) and average the categories in every draw.", "",
            "**vs chance**: the overall row is *above/below chance* when its interval excludes 50 % (a run of one "
            "category: its category row's flag). The rows of a "
            "table (categories, tiers, ...) are flagged over voices by sign flips of whole sources (max-T adjusted "
            f"over the table's rows), on these voices by {s.get('chance_flags', 'exact binomial tests')} (Holm); "
            f"**not different from chance** otherwise. Where no interval can tell (under {MIN_CLIPS} clips, every "
            "answer right or every answer wrong) the exact test decides, and **too few clips** stands where it "
            f"does not reject. A row with more than {100 * MAX_ERROR_RATE:.0f} % error answers (failed requests) "
            "is not a measurement and gets none (*n/a: k % error answers*).", ""]


def _summary(models: list[dict[str, Any]]) -> list[str]:
    """The summary table: one row per model."""
    rows = []
    for m in models:
        ov = m["overall"]
        if m["has_samples"]:
            rows.append([m["label"], ov["n"], ov["n_sources"], pct(ov["acc"])] + headline_cells(ov)
                        + [pct(ov["balanced_acc"]), pct(ov["acc_parsed"]), pct(ov["parse_rate"]),
                           pct(ov["exact_match_rate"]), pct(ov["increase_ratio"])])
        else:
            rows.append([m["label"], "–", "–", pct(ov["category_mean_acc"]), "–", "n/a (no sample log)"]
                        + ["–"] * 7)
    header = (["model", "clips", "sources", "acc %"] + HEADLINE_HEAD + CLIP_HEAD
              + ["balanced acc %", "acc parsed %", "parsed %", "exact match %", "increase ratio %"])
    return ["## Summary", ""] + _table(header, rows) + no_claim_line(models)


def _category_table(models: list[dict[str, Any]], paper: dict[str, Any]) -> list[str]:
    """Accuracy by category, the paper's rows below the models'."""
    cats = list(vocalgrad.CATEGORY_NAMES)
    lines = ["## Accuracy by category, with the paper's numbers", "",
              "Rows marked *(paper)* are the published results of the paper on its VCTK test set "
              f"({paper['source']}), copied as data for comparison — they were not computed from "
              "these results. *avg* is the unweighted mean over categories (the overall figure); " + DAGGER + "", ""]
    rows = [_accuracy_row(m, cats) for m in models]
    for row, m in zip(rows, models):
        row[0] += f" {NOT_PAPER_MARK}" if not_paper(m) else ""  # not the paper's VCTK set (## Data)
    if any(not_paper(m) for m in models):
        lines[-2] += " " + NOT_PAPER_NOTE
    for name, row in paper["category_acc"].items():
        rows.append([f"{name} (paper)"] + [f"{row[c]:.1f}" for c in cats] + [f"{row['avg']:.1f}"])
    lines += _table(["model"] + cats + ["avg"], rows)
    return lines


def _extension_table(models: list[dict[str, Any]]) -> list[str]:
    """Accuracy on the extension attributes (task group ``vocalgrad_ext``; nothing when none was run)."""
    if not models:
        return []
    cats = sorted({c for m in models for c in m["by_category"]})
    lines = ["## Extension attributes (not part of the paper's benchmark)", "",
             "Attributes the paper does not have (`vocalgrad attributes`, task group `vocalgrad_ext`): they are "
             "not part of the paper's benchmark, have no published numbers and are left out of the tables above "
             "that compare with the paper. *avg* is the unweighted mean over these attributes; " + DAGGER, ""]
    rows = [_accuracy_row(m, cats) for m in models]
    return lines + _table(["model"] + cats + ["avg"], rows) + [""]


#: What † after a category's accuracy means (report.md and the page).
DAGGER = (f"† = no claim against chance for that category: its headline flag (over voices from {MIN_CLUSTERS} "
          "sources, else on these voices; adjusted over the categories) is *not different from chance* or *too few "
          "clips*.")


def no_claim(g: dict) -> bool:
    """The row's headline is no claim against chance (not different, or too few clips): marked † in tables."""
    return (g.get("headline") or {}).get("verdict", g.get("verdict")) in (NOT_DIFFERENT, TOO_FEW)


def _accuracy_row(m: dict[str, Any], cats: list[str]) -> list[str]:
    """A model's accuracy per category (:data:`DAGGER`; empty where not run) and its mean."""
    cells = []
    for c in cats:
        g = m["by_category"].get(c)
        mark = "†" if g is not None and no_claim(g) else ""
        cells.append("" if g is None else pct(g.get("acc")) + mark)
    return [m["label"]] + cells + [pct(m["overall"].get("category_mean_acc"))]


#: How a human row (several annotators) enters a paired comparison; report.md and the page say it.
HUMAN_PAIRS_RULE = ("A human row is compared per annotator: each annotator's answer is paired with the model's "
                    "answer on the same clip (a clip answered by k annotators gives k pairs, *clips* then reads "
                    "\"clips (pairs)\"); the intervals resample clips or sources with all their pairs and the "
                    "test is the sign-flip McNemar test over clips (mid-p); rows *annotator X* compare the model "
                    "with one annotator.")


def comparison_scopes(c: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The rows of one comparison: ``all``, one per annotator (human row), then one per category."""
    return ([("all", c["overall"])] + [(f"annotator {a}", p) for a, p in (c.get("by_annotator") or {}).items()]
            + list(c["by_category"].items()))


def clips_cell(p: dict[str, Any]) -> str:
    """``"48"``, or ``"48 (96 pairs)"`` when clips hold several answer pairs."""
    n_clips = p.get("n_clips", p["n"])
    return str(p["n"]) if n_clips == p["n"] else f"{n_clips} ({p['n']} pairs)"


def _comparisons(comparisons: list[dict[str, Any]]) -> list[str]:
    """Paired comparisons on the same clips (nothing when there are none)."""
    lines: list[str] = []
    if comparisons:
        lines = ["## Paired comparisons (same clips)", "",
                  "Difference of accuracy A − B on the clips both models answered, with its binomial (paired "
                  "bootstrap of clips) and clustered (jackknife over source utterances) intervals and the McNemar "
                  "test on the clips only one of them got right (mid-p; the exact p-value, conservative on few "
                  "clips, is `mcnemar_p_exact` in report.json)."
                 + (" " + HUMAN_PAIRS_RULE if any(c.get("by_annotator") for c in comparisons) else ""), ""]
        rows = []
        for c in comparisons:
            for scope, p in comparison_scopes(c):
                rows.append([c["a"], c["b"], scope, clips_cell(p), pct(p["acc_a"]), pct(p["acc_b"]),
                             f"{100 * p['diff']:+.1f}", ci(p["ci"]["binomial"]),
                             ci_clustered(p["ci"]["clustered"], p.get("n_sources")),
                             p["only_a"], p["only_b"], _pval(p["mcnemar_p"])])
        lines += _table(["A", "B", "scope", "clips", "acc A %", "acc B %", "A − B (pts)", "95 % CI binomial",
                         "95 % CI clustered", "only A right", "only B right", "McNemar p (mid-p)"], rows)
    return lines


def render_markdown(report: dict[str, Any], *, plots: dict[str, str] | None = None) -> str:
    """The Markdown text of ``report.md``.

    Parameters
    ----------
    report : dict
        Output of :func:`analysis.report.analysis.analyse`.
    plots : dict, optional
        Model label (or ``"comparison"``) -> relative path of its PNG.
    """
    plots = plots or {}
    s = report["settings"]
    models = report["models"]
    lines = ["# VocalGrad report", ""]
    if not models:  # only yes/no, ternary or the appendix analyses
        lines += formats_markdown(report.get("formats") or {}) + extras_markdown(report.get("extras") or {}, plots)
        return "\n".join(lines).rstrip() + "\n"
    paper_models = [m for m in models if m["variant"] != EXT_VARIANT]  # the extension set is not the paper's
    lines += _intro(s, len(models)) + _summary(models) + data_lines(models)
    if paper_models:
        lines += _category_table(paper_models, report["paper"])
    if any(m["has_samples"] for m in paper_models):
        lines += trajectory_markdown({m["label"]: m["trajectory_table"] for m in paper_models if m["has_samples"]},
                                     report["paper"].get("trajectory_acc", {}))
    lines += _extension_table([m for m in models if m["variant"] == EXT_VARIANT])
    lines += _comparisons(report["comparisons"]) + not_paired_lines(report)
    if "comparison" in plots:
        lines += ["## All models", "", f"![comparison]({plots['comparison']})", ""]
    lines += formats_markdown(report.get("formats") or {})
    lines += extras_markdown(report.get("extras") or {}, plots)
    for m in models:
        lines += _model_section(m, plots.get(m["label"]))
    return "\n".join(lines).rstrip() + "\n"
