"""The numeric sections of the HTML report, from ``report.json`` (the numbers of ``report.md``).

Every figure is formatted by :func:`analysis.report.markdown.pct` / :func:`~analysis.report.markdown.ci`,
so the page and ``report.md`` print the same digits. The only figures not in ``report.json`` are the
cells of the category x tier and category x trajectory heat maps, computed here from the same
sample-log records by :func:`harness_tasks.metrics.summarize` (their margins come from ``report.json``).
"""

from __future__ import annotations

import html
import math
from typing import Any

import vocalgrad
from harness_tasks.metrics import MIN_CLUSTERS, summarize

from .content import DATA_NOTE, NOT_PAPER_MARK, NOT_PAPER_NOTE, builds_of, not_paper
from .markdown import (DAGGER, HUMAN_PAIRS_RULE, QUESTIONS, ci, ci_clustered, clips_cell, comparison_scopes, no_claim,
                       pct, slug)
from .verdicts import headline_text, short_verdict
from .trajectory import TABLE5_ORDER

__all__ = ["CATEGORY_ABBR", "Table", "category_head", "breakdown_sections", "data_section", "chance_colour",
           "comparisons_section", "extra_sections",
           "human_section", "leaderboard", "esc"]


def esc(text: Any) -> str:
    """HTML-escaped text of ``text``."""
    return html.escape(str(text), quote=True)


def _nan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def chance_colour(v) -> str:
    """Background of an accuracy cell: blue above 50 %, orange below, stronger with the distance."""
    if _nan(v):
        return ""
    d = max(-0.5, min(0.5, float(v) - 0.5)) / 0.5
    rgb = "33,102,172" if d >= 0 else "214,96,39"
    return f"background:rgba({rgb},{0.6 * abs(d):.2f})"


#: Short column heads of the categories in the leaderboards, so that the nine and the run's columns fit a
#: 1,400-pixel window; the full name is the head's hover text (``<abbr title>``).
CATEGORY_ABBR = {"volume": "vol.", "distortion": "dist.", "roughness": "rough.", "clarity": "clar.",
                 "vibration": "vib."}


def category_head(name: str) -> tuple[str, str, str]:
    """A sortable numeric column head for category ``name`` (abbreviated where :data:`CATEGORY_ABBR` says)."""
    return CATEGORY_ABBR.get(name, name), "num", name


class Table:
    """An HTML table with sortable column headers (buttons) and row headers (``<th scope="row">``); a head
    ``(name, kind, full name)`` shows ``name`` with the full name as its hover text."""

    def __init__(self, head: list[tuple[str, ...]], *, caption: str = "", sortable: bool = True, cls: str = ""):
        self.head, self.caption, self.sortable, self.rows = head, caption, sortable, []
        self.cls = " ".join(c for c in ("sortable" if sortable else "", cls) if c)

    def add(self, label: str, cells: list[str], *, cls: str = "") -> None:
        """Add a row: ``label`` (HTML, escaped by the caller) as row header and ``cells`` (``<td>`` markup)."""
        self.rows.append((label, cells, cls))

    def html(self) -> str:
        heads = []
        for name, kind, *full in self.head:
            name = esc(name).replace(" %", "\u00a0%")  # "acc %" never breaks before its unit
            if full and full[0] != name:
                name = f'<abbr title="{esc(full[0])}">{name}</abbr>'
            inner = f'<button type="button" class="sort">{name}</button>' if self.sortable else name
            heads.append(f'<th scope="col" data-type="{kind}">{inner}</th>')
        body = []
        for label, cells, cls in self.rows:
            attr = f' class="{cls}"' if cls else ""
            body.append(f'<tr{attr}><th scope="row">{label}</th>{"".join(cells)}</tr>')
        cap = f'<caption class="visually-hidden">{esc(self.caption)}</caption>' if self.caption else ""
        cls = f' class="{self.cls}"' if self.cls else ""
        return (f'<div class="scroll"><table{cls}>{cap}'
                f'<thead><tr>{"".join(heads)}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def td(value=None, text: str | None = None, *, colour: bool = False, cls: str = "", title: str = "") -> str:
    """A cell: ``text`` (default: ``value`` as percent) with the sort key ``value`` (a fraction)."""
    shown = pct(value) if text is None else text
    attrs = ""
    if isinstance(value, (int, float)) and not _nan(value):
        attrs += f' data-v="{value:.6g}"'
    if colour:
        style = chance_colour(value)
        attrs += f' style="{style}"' if style else ""
    if cls:
        attrs += f' class="{cls}"'
    if title:
        attrs += f' title="{esc(title)}"'
    return f"<td{attrs}>{esc(shown)}</td>"


def _ci_cell(pair) -> str:
    lo = pair[0] if pair and not _nan(pair[0]) else None
    return td(lo, ci(pair))


def _clustered_cell(pair, n_sources) -> str:
    """A clustered interval, written as report.md writes it (``n/a (k sources)`` with too few sources)."""
    lo = pair[0] if pair and not _nan(pair[0]) else None
    return td(lo, ci_clustered(pair, n_sources if isinstance(n_sources, int) else None))


def _verdict_cell(g: dict) -> str:
    """The headline verdict, short (``above (voices)``, ``≈ chance (these voices)``); its full words, and why
    there is no claim over voices, are the cell's title; replies the provider blocked are named beside it, as on
    the terminal line and the leaderboard."""
    h = g["headline"]
    text, title = short_verdict(h["verdict"], h["over"]), headline_text(h, why=True)
    if g.get("n_blocked"):
        text += f" ({100 * g['blocked_rate']:.0f} % blocked)"
        title += f"; {100 * g['blocked_rate']:.1f} % blocked by the provider (counted wrong)"
    return td(None, text, cls="text", title=title)


def _clip_cells(g: dict) -> list[str]:
    """The clip-level interval (these voices; the paper's clip bootstrap), its verdict as the title."""
    pair = g["ci"]["acc"]["binomial"]
    return [td(pair[0] if pair and not _nan(pair[0]) else None, ci(pair), title=f"these voices: {g['verdict']}")]


def legend() -> str:
    """The colour key of the accuracy cells."""
    stops = [(0.0, "0 %"), (0.25, "25 %"), (0.5, "50 % = chance"), (0.75, "75 %"), (1.0, "100 %")]
    return ('<p class="legend">Cell colour = distance from chance:'
            + "".join(f'<span class="swatch" style="{chance_colour(v)}"></span>{esc(t)}' for v, t in stops)
            + "</p>")


def leaderboard(report: dict[str, Any]) -> str:
    """Every run, then the paper's rows (copied data); sortable by any column."""
    cats = list(vocalgrad.CATEGORY_NAMES)
    models = report.get("models", [])
    logits = any(m.get("logits") for m in models)  # the acc_logit column only where a run has it
    head = [("model", "text"), ("acc %", "num"), ("95 % CI", "num"),
            ("vs chance", "text"), ("95 % CI these voices", "num"), ("increase ratio %", "num")]
    head += [("acc_logit %", "num")] if logits else []
    head += [("parsed %", "num")] + [category_head(c) for c in cats]
    t = Table(head, caption="Leaderboard", cls="leaderboard")
    for m in models:
        ov = m["overall"]
        logit = (m.get("logits") or {}).get("all") or {}
        logit_cell = [td(logit.get("acc_logit"), pct(logit.get("acc_logit")) if logit else "")] if logits else []
        by = m.get("by_category", {})
        cat_cells = []
        for c in cats:
            g = by.get(c)
            mark = "†" if g and no_claim(g) else ""
            cat_cells.append(td(g.get("acc") if g else None, (pct(g.get("acc")) + mark) if g else "",
                                colour=True))
        label = f'<a href="#model-{slug(m["label"])}">{esc(m["label"])}</a>'
        if not_paper(m):  # not the paper's VCTK set: not comparable with the paper's rows (see Data)
            kind = esc(m["data"].get("source_kind_text", ""))
            label += f' <span class="tag" title="{esc(NOT_PAPER_NOTE)}">{NOT_PAPER_MARK} {kind}</span>'
        if m["has_samples"]:
            t.add(label, [td(ov["acc"], colour=True, title=f"{ov['n']} clips"), _ci_cell(ov["headline"]["ci"]),
                          _verdict_cell(ov)] + _clip_cells(ov) + [td(ov.get("increase_ratio"))] + logit_cell
                  + [td(ov.get("parse_rate"))] + cat_cells)
        else:
            t.add(label, [td(ov.get("category_mean_acc"), colour=True), td(None, "–"),
                          td(None, "n/a (no sample log)", cls="text wrap"), td(None, "–"), td(None, "–")]
                  + [td(None, "")] * logits + [td(None, "–")] + cat_cells)
    paper = report.get("paper") or {}
    for name, row in (paper.get("category_acc") or {}).items():
        cells = [td(row["avg"] / 100, f"{row['avg']:.1f}", colour=True), td(None, ""),
                 td(None, "copied", cls="text", title="copied from the paper"), td(None, ""), td(None, "")]
        cells += [td(None, "")] * logits
        cells += [td(None, "")]
        cells += [td(row[c] / 100, f"{row[c]:.1f}", colour=True) if c in row else td(None, "") for c in cats]
        t.add(f'{esc(name)} <span class="tag">paper</span>', cells, cls="paper")
    note = ("<p class=\"note\">acc = unweighted mean over categories (unparsed answers count as wrong). "
            + esc(QUESTIONS).replace("*", "") + " "
            f"<em>95 % CI</em> and <em>vs chance</em> are the headline: over voices (source utterances as "
            f"the units) from {MIN_CLUSTERS} sources; with fewer, no claim over voices can be made and they are the "
            "clip-level figures, marked <em>these voices</em>. <em>95 % CI these voices</em> is the paper's clip "
            "bootstrap. vs chance: <em>above</em> / <em>below</em> when the interval excludes 50 %, <em>≈ chance"
            "</em> otherwise, <em>too few clips</em> where the exact test cannot tell. "
            + esc(DAGGER).replace("*", "") + " Rows marked <em>paper</em> are the published results "
            f"({esc(paper.get('source', 'the paper'))}) copied as data, not computed from these results. "
            + (f"{esc(NOT_PAPER_NOTE)} " if any(not_paper(m) for m in models) else "") +
            "Click a column header to sort.</p>")
    return legend() + t.html() + note


def _cross(records: list[dict], key: str, order, margins_rows: dict, margins_cols: dict) -> str:
    cats = [c for c in vocalgrad.CATEGORY_NAMES if any(r["category"] == c for r in records)]
    cols = [v for v in order if any(r[key] == v for r in records)]
    cells: dict[tuple[str, str], list] = {}
    for r in records:
        cells.setdefault((r["category"], r[key]), []).append(r)
    t = Table([("category", "text")] + [(c, "num") for c in cols] + [("all", "num")],
              caption=f"Accuracy by category and {key}", sortable=False)
    for c in cats:
        row = []
        for v in cols:
            recs = cells.get((c, v), [])
            acc = summarize(recs)["acc"] if recs else None
            row.append(td(acc, colour=True, title=f"{len(recs)} clips"))
        g = margins_rows.get(c) or {}
        t.add(esc(c), row + [td(g.get("acc"), colour=True)])
    t.add("all (mean over categories)", [td((margins_cols.get(v) or {}).get("acc"), colour=True) for v in cols]
          + [td(None, "")])
    return t.html()


def _bias(m: dict) -> str:
    t = Table([("category", "text"), ("increase ratio (parsed) %", "num"), ("95 % CI (binomial)", "num"),
               ("increase ratio (all) %", "num"), ("acc on increase clips %", "num"),
               ("acc on decrease clips %", "num")], caption=f"Response bias of {m['label']}")
    for c, b in m["bias"].items():
        t.add(esc(c), [td(b["increase_ratio"]), _ci_cell(b["increase_ratio_ci"]), td(b["increase_ratio_all"]),
                       td(b["acc_increase"], colour=True), td(b["acc_decrease"], colour=True)])
    return t.html()


def _shared_warnings(models: list[dict[str, Any]]) -> list[str]:
    """Warnings every one of several models carries (the few-sources note of a small build): said once."""
    if len(models) < 2:
        return []
    rest = [set(m.get("warnings", [])) for m in models[1:]]
    return [w for w in models[0].get("warnings", []) if all(w in r for r in rest)]


def breakdown_sections(report: dict[str, Any], records_by_label: dict[str, list[dict]]) -> str:
    """Per model: the two heat maps, response bias, logit answers and the model's figure."""
    plots = report.get("plots") or {}
    models = report.get("models", [])
    shared = _shared_warnings(models)
    out = [f'<p class="warn">warning (every model): {esc(w)}</p>' for w in shared]
    for m in models:
        out.append(f'<section id="model-{slug(m["label"])}"><h3>{esc(m["label"])}</h3>')
        args = f" <code>--model_args {esc(m['model_args'])}</code>" if m.get("model_args") else ""
        out.append(f"<p>lm-eval model <code>{esc(m['model'])}</code>{args}, task variant "
                   f"<code>{esc(m['variant'])}</code>.</p>")
        out += [f'<p class="warn">warning: {esc(w)}</p>' for w in m.get("warnings", []) if w not in shared]
        recs = records_by_label.get(m["label"])
        if m["has_samples"] and recs:
            out.append('<div class="row"><div><h4>Accuracy by category × tier</h4>'
                       + _cross(recs, "tier", vocalgrad.TIERS, m["by_category"], m["by_tier"])
                       + "</div><div><h4>Accuracy by category × trajectory</h4>"
                       + _cross(recs, "trajectory", vocalgrad.TRAJECTORIES, m["by_category"], m["by_trajectory"])
                       + "</div></div>")
            out.append("<h4>Response bias</h4><p class=\"note\">Share of answers that say <em>increase</em> "
                       "(50 % = no bias; a constant answer gives 0 % or 100 %).</p>")
            out.append(_bias(m))
            if m.get("logits"):
                t = Table([("category", "text"), ("clips", "num"), ("acc_logit %", "num"),
                           ("95 % CI (binomial)", "num"), ("increase ratio (logit) %", "num"),
                           ("acc (generated) %", "num")], caption=f"Answers by logits of {m['label']}")
                for c, g in m["logits"].items():
                    t.add(esc(c), [td(g["n"], str(g["n"])), td(g["acc_logit"], colour=True),
                                   _ci_cell(g["acc_logit_ci"]), td(g["increase_ratio_logit"]),
                                   td(g["acc_generated"], colour=True)])
                out.append("<h4>Answers by logits</h4>" + t.html())
        elif not m["has_samples"]:
            out.append("<p>No per-sample log: only lm-eval's aggregated accuracy is known.</p>")
        if isinstance(plots.get(m["label"]), str):
            out.append(f'<details><summary>Figure of {esc(m["label"])}</summary><img class="figure" '
                       f'src="{esc(plots[m["label"]])}" alt="Figure of {esc(m["label"])}: accuracy by category, '
                       f'tier and trajectory with intervals, and response bias"></details>')
        out.append("</section>")
    return "".join(out)


def comparisons_section(report: dict[str, Any]) -> str:
    """Paired comparisons and the paper's Table 5 layout (trajectory accuracy)."""
    out = []
    comps = report.get("comparisons") or []
    if comps:
        t = Table([("A vs B", "text"), ("scope", "text"), ("clips", "num"), ("acc A %", "num"), ("acc B %", "num"),
                   ("A − B (pts)", "num"), ("95 % CI (binomial)", "num"), ("95 % CI (clustered)", "num"),
                   ("only A right", "num"), ("only B right", "num"), ("McNemar p (mid-p)", "num")],
                  caption="Paired comparisons")
        for c in comps:
            for scope, p in comparison_scopes(c):
                pv = p.get("mcnemar_p")
                ptxt = "–" if _nan(pv) else ("< 0.0001" if pv < 1e-4 else f"{pv:.4f}")
                t.add(f"{esc(c['a'])} vs {esc(c['b'])}",
                      [td(None, esc(scope), cls="text"), td(p["n"], clips_cell(p)), td(p["acc_a"]), td(p["acc_b"]),
                       td(p["diff"], "–" if _nan(p["diff"]) else f"{100 * p['diff']:+.1f}"),
                       _ci_cell(p["ci"]["binomial"]), _clustered_cell(p["ci"]["clustered"], p.get("n_sources")),
                       td(p["only_a"], str(p["only_a"])), td(p["only_b"], str(p["only_b"])), td(pv, ptxt)])
        out.append('<h2 id="comparisons">Paired comparisons (same clips)</h2><p class="note">Accuracy '
                   "difference A − B on the clips both answered, paired bootstrap intervals, exact McNemar "
                   "test." + (" " + esc(HUMAN_PAIRS_RULE).replace("*", "") if any(c.get("by_annotator") for c in comps)
                              else "") + "</p>" + t.html())
    rows = {m["label"]: m["trajectory_table"] for m in report.get("models", []) if m.get("trajectory_table")}
    if rows:
        t = Table([("system", "text")] + [(k, "num") for k in TABLE5_ORDER], caption="Accuracy by trajectory")
        for label, row in rows.items():
            t.add(esc(label), [td(row.get(k), "–" if _nan(row.get(k)) else f"{100 * row[k]:.2f}", colour=True)
                               for k in TABLE5_ORDER])
        for name, row in ((report.get("paper") or {}).get("trajectory_acc") or {}).items():
            t.add(f'{esc(name)} <span class="tag">paper</span>',
                  [td(row[k] / 100, f"{row[k]:.2f}", colour=True) for k in TABLE5_ORDER], cls="paper")
        out.append('<h2 id="trajectory">Accuracy by trajectory (paper Table 5 layout)</h2>' + t.html())
    return "".join(out)


def _matrix(entry: dict, key: str, colour: bool) -> str:
    t = Table([("actual \\ prompt", "text")] + [(p, "num") for p in entry["prompt"]],
              caption=f"{key} of {entry['label']}", sortable=False)
    for a in entry["actual"]:
        t.add(esc(a), [td(entry[key][a].get(p), colour=colour) for p in entry["prompt"]])
    return t.html()


def extra_sections(report: dict[str, Any]) -> str:
    """Formats, cross-attribute, source-clip bias, paraphrases and source domains (those present)."""
    out = []
    for fmt, entries in (report.get("formats") or {}).items():
        cats = [c for c in vocalgrad.CATEGORY_NAMES if any(c in e["by_category"] for e in entries)]
        t = Table([("model", "text"), ("metric", "text")] + [(c, "num") for c in cats] + [("mean", "num")],
                  caption=f"{fmt} format")
        for e in entries:
            for key, name in (("macro_f1", "macro-F1 %"), ("acc", "acc %")):
                t.add(esc(e["label"]), [td(None, name, cls="text")]
                      + [td(e["by_category"].get(c, {}).get(key)) for c in cats]
                      + [td(e["overall"].get(f"mean_{key}"))])
        out.append(f'<h2 id="format-{slug(fmt)}">Answer format: {esc(fmt)}</h2>' + t.html())
    extras = report.get("extras") or {}
    if extras.get("xattr"):
        out.append('<h2 id="xattr">Cross-attribute evaluation</h2><p class="note">Rows: the clip\'s actual '
                   "category; columns: the category asked about. Accurate on the diagonal, 50 % off it = the "
                   "model answers about the attribute it was asked.</p>")
        for e in extras["xattr"]:
            out.append(f"<h3>{esc(e['label'])}</h3><p>Diagonal mean accuracy {pct(e['diagonal_acc'])} %, "
                       f"off-diagonal {pct(e['off_diagonal_acc'])} %.</p><h4>accuracy %</h4>"
                       + _matrix(e, "acc", True) + "<h4>increase ratio %</h4>" + _matrix(e, "increase_ratio", False))
    if extras.get("sources"):
        entries = extras["sources"]
        cats = [c for c in vocalgrad.CATEGORY_NAMES if any(c in e["by_category"] for e in entries)]
        t = Table([("model", "text"), ("metric", "text")] + [(c, "num") for c in cats] + [("avg", "num")],
                  caption="Response bias on source clips")
        for e in entries:
            for key, name in (("increase_ratio", "increase ratio %"), ("unparsed_rate", "unparsed %")):
                t.add(esc(e["label"]), [td(None, name, cls="text")]
                      + [td(e["by_category"].get(c, {}).get(key)) for c in cats] + [td(e["overall"][key])])
        out.append('<h2 id="sources">Response bias on the unmodified source clips</h2>' + t.html())
    if extras.get("paraphrase"):
        entries = extras["paraphrase"]
        pats = [p for p in dict.fromkeys(p for e in entries for p in e["by_pattern"])]
        t = Table([("model", "text")] + [(p, "num") for p in pats] + [("mean", "num")],
                  caption="Question paraphrases, accuracy")
        for e in entries:
            t.add(esc(e["label"]), [td(e["by_pattern"][p]["acc"] if p in e["by_pattern"] else None, colour=True)
                                    for p in pats] + [td(e["overall"]["acc"], colour=True)])
        out.append('<h2 id="paraphrase">Question paraphrases (accuracy %)</h2>' + t.html())
    domains = report.get("domains") or {}
    if domains:
        cats = [c for c in vocalgrad.CATEGORY_NAMES if any(c in d for ds in domains.values() for d in ds.values())]
        t = Table([("model", "text"), ("domain", "text")] + [(c, "num") for c in cats] + [("mean", "num")],
                  caption="Source domains")
        for model, ds in domains.items():
            for dom, accs in ds.items():
                t.add(esc(model), [td(None, dom, cls="text")] + [td(accs.get(c), colour=True) for c in cats]
                      + [td(accs.get("mean"), colour=True)])
        out.append('<h2 id="domains">Source domains</h2>' + t.html())
    return "".join(out)


def human_section(report: dict[str, Any]) -> str:
    """Annotators' accuracy and agreement (``--human``), empty without it."""
    agr = report.get("human_agreement")
    if not agr:
        return ""
    t = Table([("annotator", "text"), ("answers", "num"), ("acc %", "num"), ("shared clips", "num"),
               ("agreement %", "num")], caption="Human annotators")
    for name, a in sorted((agr.get("per_annotator") or {}).items()):
        t.add(esc(name), [td(a.get("n"), str(a.get("n", ""))), td(a.get("acc"), colour=True),
                          td(a.get("shared"), str(a.get("shared", ""))), td(a.get("agreement"))])
    out = ['<h2 id="human">Human listeners</h2><p class="note">The annotators form the <em>human</em> row of the '
           "leaderboard. Agreement = share of shared clips where the annotator gave the majority answer of the "
           "others (ties count half).</p>", t.html()]
    if agr.get("pairwise"):
        p = Table([("pair", "text"), ("shared clips", "num"), ("agreement %", "num")], caption="Pairwise agreement")
        for pair, a in sorted(agr["pairwise"].items()):
            p.add(esc(pair), [td(a.get("n"), str(a.get("n", ""))), td(a.get("agreement"))])
        out.append(p.html())
    kappa = agr.get("fleiss_kappa")
    if not _nan(kappa):
        out.append(f"<p>Fleiss' kappa: {kappa:.3f}</p>")
    return "".join(out)


def data_section(report: dict[str, Any]) -> str:
    """The page's *Data* section (the table of :func:`analysis.report.content.data_lines`); empty without
    model rows."""
    models = report.get("models") or []
    if not models:
        return ""
    t = Table([("build", "text"), ("fingerprint", "text"), ("source", "text"), ("clips", "num"),
               ("sources", "num"), ("rows", "text")], caption="Data", sortable=False)
    for (build, fp, kind, n, ns), labels in builds_of(models).items():
        t.add(esc(build), [td(None, fp, cls="text"), td(None, kind, cls="text"),
                           td(n, "–" if n is None else str(n)), td(ns, "–" if ns is None else str(ns)),
                           td(None, ", ".join(labels), cls="text wrap")])
    note = DATA_NOTE + (" " + NOT_PAPER_NOTE if any(not_paper(m) for m in models) else "")
    skipped = "".join(f"<li>{esc(p['a'])} and {esc(p['b'])}: {esc(p['reason'])}</li>"
                      for p in report.get("not_paired") or [])
    return ('<h2 id="data">Data</h2>' + t.html() + f'<p class="note">{esc(note)}</p>'
            + (f'<p class="warn">Not paired (--allow-mixed):</p><ul>{skipped}</ul>' if skipped else ""))
