"""Psychometric thresholds from the magnitude sweeps (``vocalgrad_sweep``, docs/sweep.md): observers, fits, tables.

For every observer (a model's ``vocalgrad_sweep_<attribute>`` sample log, or the listening test's
sweep answers) and attribute, the answers on increase and decrease clips at each non-zero
magnitude are counted and fitted together by :mod:`.psychometric_fit`: a sensitivity ``d'(x) = (x /
alpha) ** beta``, a criterion (the response bias) and a lapse rate. The **threshold** is the
magnitude where the sensitivity alone gives 75 % correct (free of bias and lapses); the pooled 75 %
point (bias and lapses included) is reported beside it.

* Unparsed answers are missing (not wrong): they carry no direction; their share is reported.
* "> largest magnitude" (``None`` in report.json with ``reached: false``): the threshold lies beyond
  the sweep, or the answers cannot be told from answers that ignore the direction (Monte-Carlo
  likelihood-ratio test, p > :data:`ALPHA`). Never extrapolated.
* Intervals: expanded percentile bootstrap over **sources** (:func:`.psychometric_fit.bootstrap`),
  withheld below :data:`MIN_SOURCES_CI` sources, where the calibration shows they undercover.
* Goodness of fit: deviance with a Monte-Carlo p-value; p <= :data:`ALPHA` flags a poor fit. A
  parameter at a bound of the fit is flagged too.
* Levels as heard (:mod:`.sweep_levels`): where a level's clips realised a magnitude (measured on the
  clips as heard) that differs from the declared one by more than its tolerance, the fit places the
  level where it was heard; levels whose clips clipped or changed overall level are named with the
  share of clips affected, under the table.
* The zero-change control (magnitude 0) has no right answer and is left out of the fit; its
  accuracy and share of "increase" answers are reported apart. A clip whose record says
  ``level_null`` (a level that cannot change its source) is left out of the fit like it.
* An observer whose answers cannot give a threshold (no sample log or an empty one, no parsed answer,
  one non-zero magnitude, only zero-change clips, answers on one direction's clips only, one answer
  to every clip) gets a row saying so.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import vocalgrad

from .psychometric_fit import ALPHA, MC_DRAWS, Counts, bootstrap, chance_test, fit, gof_test, pooled_correct, \
    pooled_threshold
from .sweep_levels import level_rows, levels_note

__all__ = ["ALPHA", "BOOT_DRAWS", "MIN_SOURCES_CI", "TARGET", "Observer", "analyse_sweeps", "load_sweep_observers",
           "interval_text", "sweep_html", "sweep_markdown", "plot_sweeps", "threshold_text"]

#: Share correct that defines the threshold (from the sensitivity alone).
TARGET = 0.75
#: Bootstrap refits per observer x attribute (the report's ``--draws`` caps it).
BOOT_DRAWS = 400
#: Fewest sources for a threshold interval (docs/statistics.md: fewer undercover).
MIN_SOURCES_CI = 10
SWEEP_TASK = re.compile(r"^vocalgrad_sweep_([a-z][a-z0-9]{1,31})$")


# ---- observers --------------------------------------------------------------------------------
@dataclass
class Observer:
    """One observer's sweep answers: label, kind (``model``/``oracle``/``human``), records by attribute, and
    ``missing``: attribute -> why a run of it gave no answers (no or an empty sample log)."""

    label: str
    kind: str = "model"
    records: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    missing: dict[str, str] = field(default_factory=dict)


def _kind(label: str, model: str) -> str:
    return "oracle" if "oracle" in model or "oracle" in label else "model"


def load_sweep_observers(specs) -> list[Observer]:
    """The models' ``vocalgrad_sweep_<attribute>`` sample logs under the result ``specs`` (a later run of
    the same model and attribute replaces an earlier one). Results without sweep tasks give none; a sweep
    task without answers (no sample log, or an empty one) is kept in :attr:`Observer.missing`, so that the
    report says so."""
    from .loading import RESULTS_FILE, labelled_results, read_samples, samples_file, split_spec

    out: dict[str, Observer] = {}
    for spec in specs:
        label_override, path = split_spec(spec)
        if not path.exists() or (path.is_file() and not RESULTS_FILE.match(path.name)):
            continue
        try:
            runs = list(labelled_results(path, label_override))
        except Exception:  # no results here: the rest of the report says so
            continue
        for rfile, data, model, _margs, label in runs:
            for task in data.get("results", {}):
                m = SWEEP_TASK.match(task)
                if m is None:
                    continue
                cat, sfile = m.group(1), samples_file(rfile, task)
                obs = out.setdefault(label, Observer(label, _kind(label, model)))
                recs = read_samples(sfile, cat) if sfile.is_file() else []
                if recs:
                    obs.records[cat] = recs
                    obs.missing.pop(cat, None)
                elif not obs.records.get(cat):
                    obs.missing[cat] = (f"its {task} run ({rfile.name}) has no answers: the sample log {sfile.name} "
                                        + ("is empty" if sfile.is_file() else "is missing (run with --log_samples)"))
    return list(out.values())


def human_sweep_observer(paths, label: str = "human") -> Observer | None:
    """The listening test's answers on sweep clips (their tier is a level token) as one observer."""
    from analysis.listen.answers import human_records

    obs = Observer(label, "human")
    for r in human_records(paths):
        if r.get("tier") not in vocalgrad.TIERS and r.get("tier"):
            obs.records[r["category"]].append(r)
    return obs if obs.records else None


def is_sweep_record(r: dict) -> bool:
    """A record of a sweep clip (its tier is a level token, not low/medium/high)."""
    return bool(r.get("tier")) and r["tier"] not in vocalgrad.TIERS


# ---- analysis ---------------------------------------------------------------------------------
def _counts(records: list[dict], category: str):
    """Magnitudes (> 0), per-source counts (sources, 4, levels) of ``k1, n1, k0, n0``, and a summary of the
    rest: zero-change control, unparsed answers, null levels, records without a known magnitude."""
    from generation.sweep_plan import magnitude_of

    mags: dict[str, float | None] = {}
    for r in records:
        if r.get("tier") not in mags:
            mags[r.get("tier")] = magnitude_of(category, r["tier"]) if isinstance(r.get("tier"), str) else None
    rest = {"zero_n": 0, "zero_correct": 0, "zero_increase": 0, "zero_parsed": 0, "unparsed": 0, "answers": 0,
            "null_level": 0, "unknown": 0}
    use = []
    for r in records:
        m = mags.get(r.get("tier"))
        if m is None or not math.isfinite(m) or r.get("direction") not in ("increase", "decrease"):
            rest["unknown"] += 1
        elif m == 0:
            rest["zero_n"] += 1
            rest["zero_correct"] += bool(r.get("correct"))
            rest["zero_parsed"] += r.get("pred") in ("increase", "decrease")
            rest["zero_increase"] += r.get("pred") == "increase"
        elif r.get("level_null") is True:  # a level that cannot change this source (docs/sweep.md)
            rest["null_level"] += 1
        else:
            rest["answers"] += 1
            if r.get("pred") in ("increase", "decrease"):
                use.append((r, m))
            else:
                rest["unparsed"] += 1
    levels = sorted({m for _, m in use})
    sources = sorted({str(r.get("source_id")) for r, _ in use})
    si, li = {s: i for i, s in enumerate(sources)}, {m: j for j, m in enumerate(levels)}
    per = np.zeros((len(sources), 4, len(levels)))
    for r, m in use:
        inc = r["direction"] == "increase"
        row = per[si[str(r.get("source_id"))]]
        row[0 if inc else 2, li[m]] += r["pred"] == "increase"
        row[1 if inc else 3, li[m]] += 1
    return np.array(levels), per, rest


def _problem(x, per, rest) -> str | None:
    """Why no threshold can be fitted to these answers (None when one can)."""
    if rest["answers"] == 0:
        if rest["null_level"]:
            return (f"all {rest['null_level']} clips at non-zero magnitudes are null levels (level_null: the level "
                    "cannot change their source), so no threshold can be fitted")
        if rest["zero_n"]:
            return (f"only zero-change clips ({rest['zero_n']}): no change to hear, so no threshold can be fitted; "
                    "sweep clips with non-zero magnitudes are needed")
        return f"no clips with a known magnitude ({rest['unknown']} records): no threshold can be fitted"
    if x.size == 0:
        return (f"all {rest['answers']} answers at non-zero magnitudes are unparsed (no direction): "
                "no threshold can be fitted")
    if x.size < 2:
        return (f"answers at one non-zero magnitude only ({x[0]:g}): a threshold needs at least two magnitudes "
                "(a function's rise cannot be placed from one point)")
    t = per.sum(0)
    if t[1].sum() == 0 or t[3].sum() == 0:
        which = "decrease" if t[1].sum() else "increase"
        return f"no parsed answers on {which} clips: bias and sensitivity cannot be told apart, no threshold fitted"
    said, n = t[0].sum() + t[2].sum(), t[1].sum() + t[3].sum()
    if said in (0, n):
        word = "increase" if said else "decrease"
        return (f'all {int(n)} parsed answers are "{word}", on increase and decrease clips alike: they do not '
                "depend on the direction, so no threshold can be fitted")
    return None


def _observer_entry(obs: Observer, category: str, *, draws: int, seed: int, mc_draws: int,
                    heard: dict | None = None) -> dict[str, Any] | None:
    x, per, rest = _counts(obs.records.get(category) or [], category)
    declared = x
    if heard and x.size:  # the levels as heard where they differ from the declared ones (.sweep_levels)
        x = np.array([heard.get(float(m), float(m)) for m in declared])
    if not obs.records.get(category) and category not in obs.missing:
        return None
    zero_n = rest["zero_n"]
    entry: dict[str, Any] = {
        "label": obs.label, "kind": obs.kind, "n_sources": int(per.shape[0]),
        "n_clips": int(rest["answers"] + zero_n + rest["null_level"]),
        "unparsed_share": rest["unparsed"] / rest["answers"] if rest["answers"] else None,
        "null_level_clips": rest["null_level"], "unknown_records": rest["unknown"],
        "zero": {"n": zero_n, "acc": rest["zero_correct"] / zero_n if zero_n else None,
                 "increase_share": rest["zero_increase"] / rest["zero_parsed"] if rest["zero_parsed"] else None},
        "threshold": None, "reached": False, "below_sweep": False, "threshold_ci": None, "problem": None,
    }
    problem = obs.missing.get(category) if not obs.records.get(category) else _problem(x, per, rest)
    if problem:
        entry["problem"] = problem
        return entry
    t = per.sum(0)
    c = Counts(x, t[0], t[1], t[2], t[3])
    f = fit(c)
    chance = chance_test(c, f, draws=mc_draws, seed=seed)
    gof = gof_test(c, f, draws=mc_draws, seed=seed + 1)
    n_src = per.shape[0]
    boot = bootstrap(x, per, draws=draws, seed=seed, f=f) if n_src >= MIN_SOURCES_CI and draws > 0 else None
    largest = float(x.max())
    reached = f.threshold <= largest * (1 + 1e-9) and chance["p"] <= ALPHA
    pooled = pooled_threshold(f, largest)
    entry.update({
        "threshold": f.threshold if reached else None, "reached": reached,
        "below_sweep": reached and f.threshold < float(x.min()),
        "threshold_ci": boot["threshold_ci"] if boot else None,
        "ci_note": None if boot else (f"withheld: {n_src} source{'s' * (n_src != 1)} (an interval needs "
                                      f"{MIN_SOURCES_CI} or more to hold its 95 %, docs/statistics.md)"),
        "p_reached": boot["p_reached"] if boot else None,
        "pooled_threshold": pooled if reached and math.isfinite(pooled) else None,
        "criterion": f.criterion, "criterion_ci": boot["criterion_ci"] if boot else None,
        "beta": f.beta, "beta_ci": boot["beta_ci"] if boot else None, "lapse": f.lapse, "alpha": f.alpha,
        "at_bound": f.at_bound, "converged": f.converged,
        "p_chance": chance["p"], "chance_lr": chance["lr"],
        "gof": {"deviance": gof["deviance"], "p": gof["p"], "poor": gof["p"] <= ALPHA, "draws": gof["draws"]},
        "points": [{"magnitude": float(declared[j]), "fit_magnitude": float(m), "n": int(t[1, j] + t[3, j]),
                    "correct": int(t[0, j] + t[3, j] - t[2, j]),
                    "n_increase": int(t[1, j]), "said_increase_on_increase": int(t[0, j]),
                    "n_decrease": int(t[3, j]), "said_increase_on_decrease": int(t[2, j])}
                   for j, m in enumerate(x)],
    })
    return entry


def _entry_task(obs: Observer, category: str, draws: int, seed: int, mc_draws: int,
                heard: dict | None = None) -> dict[str, Any] | None:
    """:func:`_observer_entry` as a task of :func:`.parallel.run_tasks`."""
    return _observer_entry(obs, category, draws=draws, seed=seed, mc_draws=mc_draws, heard=heard)


def analyse_sweeps(observers: list[Observer], *, draws: int = BOOT_DRAWS, seed: int = 1234,
                   mc_draws: int = MC_DRAWS, jobs: int | None = None) -> dict[str, Any]:
    """``report.json``'s ``psychometric`` block: per attribute its sweep and every observer's fit.

    ``draws`` bootstrap refits per interval (0: none); ``mc_draws`` refits per Monte-Carlo test. The
    observer x attribute fits run in ``jobs`` worker processes (default: one per CPU); every fit draws
    from its own seeds, so the numbers do not depend on the number of workers.

    Returns ``{}`` when no observer has sweep answers.
    """
    from generation import attributes
    from generation.sweep_plan import magnitude_of, sweep_levels

    from .parallel import run_tasks

    cats = sorted({c for o in observers for c in [*o.records, *o.missing]},
                  key=lambda c: (c not in vocalgrad.CATEGORY_NAMES,
                                 vocalgrad.CATEGORY_NAMES.index(c) if c in vocalgrad.CATEGORY_NAMES else 0, c))
    order = {"model": 0, "oracle": 1, "human": 2}
    cells = [(cat, o) for cat in cats for o in sorted(observers, key=lambda o: order.get(o.kind, 0))
             if o.records.get(cat) or cat in o.missing]
    heard_rows = {cat: level_rows([r for o in observers for r in o.records.get(cat) or []], cat, magnitude_of)
                  for cat in cats}
    heard = {cat: {m: row["fit_magnitude"] for m, row in rows.items()} for cat, rows in heard_rows.items()}
    done = run_tasks([(_entry_task, (o, cat, draws, seed, mc_draws, heard[cat])) for cat, o in cells], jobs=jobs)
    by_cat: dict[str, list[dict]] = defaultdict(list)
    for (cat, _), e in zip(cells, done):
        if e is not None:
            by_cat[cat].append(e)
    out: dict[str, Any] = {}
    for cat in cats:
        entries = by_cat.get(cat)
        if not entries:
            continue
        try:
            levels = sweep_levels(cat)
            unit = attributes.get(cat).sweep.unit
        except ValueError:
            levels, unit = [], "?"
        pts = [p["fit_magnitude"] for e in entries for p in e.get("points", [])]
        out[cat] = {"unit": unit, "magnitudes": [lv.magnitude for lv in levels],
                    "tiers": {lv.tier: lv.magnitude for lv in levels if lv.tier},
                    "largest": max(pts, default=None), "smallest": min(pts, default=None),
                    "levels": [{"magnitude": m, **row} for m, row in heard_rows[cat].items()],
                    "levels_note": levels_note(heard_rows[cat], unit), "observers": entries}
    if not out:
        return {}
    return {"form": ("two directions fitted together: sensitivity d' = (x / alpha) ^ beta, a criterion "
                     "(response bias) and a lapse rate (prior Beta(1, 2) on the lapse of one side, lapse / 2, as "
                     "psignifit parameterises it); maximum a posteriori"),
            "target": TARGET,
            "threshold": "the magnitude where the sensitivity alone gives 75 % correct (d' = 1.349)",
            "bootstrap": (f"expanded percentile, over sources, {draws} draws, seed {seed}; "
                          f"withheld below {MIN_SOURCES_CI} sources"),
            "tests": f"chance and goodness of fit: Monte-Carlo p-values, {mc_draws} refitted draws, level {ALPHA}",
            "attributes": out}


# ---- writing ----------------------------------------------------------------------------------
def _num(v) -> str:
    return "" if v is None else f"{v:.3g}"


def threshold_text(value, largest, smallest=None) -> str:
    """A threshold for a table: the number; "> LARGEST" when not reached within the sweep; "< SMALLEST"
    when already passed at the smallest non-zero magnitude (the sweep cannot tell where below it)."""
    if value is None or not math.isfinite(value):
        return f"> {largest:.3g}" if largest is not None else "not reached"
    if smallest is not None and value < smallest:
        return f"< {smallest:.3g}"
    return f"{value:.3g}"


def interval_text(o: dict, largest, smallest=None) -> str:
    """An observer's threshold interval for a table ("[a, b]" with "< "/"> " ends), or why it has none."""
    ci = o.get("threshold_ci")
    if not ci:
        return "n/a (1 source)" if o.get("n_sources") == 1 else "withheld (< %d sources)" % MIN_SOURCES_CI
    return f"[{threshold_text(ci[0], largest, smallest)}, {threshold_text(ci[1], largest, smallest)}]"


def _fit_text(o: dict) -> str:
    """The fit's flags: poor fit, parameters at a bound; "ok" without."""
    flags = []
    if o["gof"]["poor"]:
        flags.append(f"poor fit (p {o['gof']['p']:.3f})")
    if o["at_bound"]:
        flags.append("at bound: " + ", ".join(o["at_bound"]))
    return "; ".join(flags) or f"ok (p {o['gof']['p']:.2f})"


def table_rows(entry: dict) -> list[list[str]]:
    """Rows of one attribute's threshold table (what report.md and the page show)."""
    rows = []
    big, small = entry["largest"], entry.get("smallest")
    for o in entry["observers"]:
        z = o["zero"]
        zero = "" if z["acc"] is None else \
            f"{100 * z['acc']:.0f} / " + ("" if z["increase_share"] is None else f"{100 * z['increase_share']:.0f}")
        name = o["label"] + ("" if o["kind"] in ("model", o["label"]) else f" ({o['kind']})")
        unparsed = "" if o.get("unparsed_share") is None else f"{100 * o['unparsed_share']:.0f}"
        if o.get("problem"):
            rows.append([name, "no threshold: " + o["problem"]] + [""] * 7 + [zero, unparsed, str(o["n_sources"]),
                                                                              str(o["n_clips"])])
            continue
        crit = f"{o['criterion']:+.2f}" + (f" [{o['criterion_ci'][0]:+.2f}, {o['criterion_ci'][1]:+.2f}]"
                                            if o.get("criterion_ci") else "")
        rows.append([name, threshold_text(o["threshold"], big, small), interval_text(o, big, small), crit,
                     threshold_text(o.get("pooled_threshold"), big, small),
                     f"{o['beta']:.2g}" + (f" [{o['beta_ci'][0]:.2g}, {o['beta_ci'][1]:.2g}]" if o["beta_ci"] else ""),
                     f"{100 * o['lapse']:.1f}", _fit_text(o), f"{o['p_chance']:.3f}", zero, unparsed,
                     str(o["n_sources"]), str(o["n_clips"])])
    return rows


HEAD = ["observer", "threshold (d' 1.35)", "95 % interval", "criterion c", "pooled 75 %", "slope β", "lapse %",
        "fit", "chance p", "zero change: acc / increase %", "unparsed %", "sources", "clips"]


def sweep_markdown(block: dict, plots: dict | None = None) -> str:
    """The report.md section: one threshold table (and figure) per attribute; "" without sweeps."""
    if not block:
        return ""
    lines = ["", "## Psychometric thresholds (magnitude sweeps; not part of the paper's benchmark)", "",
             f"Increase and decrease answers fitted together ({block['form']}). Threshold = "
             f"{block['threshold']}: free of the observer's response bias (criterion c; c < 0 says "
             "\"increase\" more often) and of its lapses; \"pooled 75 %\" is where its share correct, bias and "
             "lapses included, reaches 75 %. \"> X\": not reached within the sweep (X = its largest magnitude) or "
             f"the answers do not depend on the direction (chance p > {ALPHA}); \"< Y\": passed already at the "
             f"smallest non-zero magnitude Y. Intervals: {block['bootstrap']}. Tests: {block['tests']}; \"fit\" "
             "flags a poor fit (the function does not describe the answers) and parameters at a bound. Unparsed "
             "answers are left out (their share is shown); the zero-change control has no right answer and is "
             "shown apart. See docs/sweep.md and docs/statistics.md.", ""]
    for cat, e in block["attributes"].items():
        tiers = ", ".join(f"{t} {m:.3g}" for t, m in e["tiers"].items())
        lines += [f"### {cat} (magnitude in {e['unit']}; paper tiers: {tiers or 'n/a'})", "",
                  "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(r) + " |" for r in table_rows(e)]
        if e.get("levels_note"):
            lines += ["", e["levels_note"]]
        if plots and plots.get(cat):
            lines += ["", f"![{cat} psychometric functions]({plots[cat]})"]
        lines.append("")
    return "\n".join(lines)


def sweep_html(report: dict) -> str:
    """The HTML page's section (from report.json's ``psychometric`` block); "" without sweeps."""
    from .html_tables import esc

    block = report.get("psychometric") or {}
    if not block:
        return ""
    plots = (report.get("plots") or {}).get("sweep") or {}
    parts = ['<h2 id="thresholds">Psychometric thresholds (magnitude sweeps)</h2>',
             f'<p class="note">{esc(block["form"])}; threshold = {esc(block.get("threshold", ""))}; '
             '"&gt; X": not reached within the sweep. '
             f'Intervals: {esc(block["bootstrap"])}. '
             "Not part of the paper's benchmark (docs/sweep.md).</p>"]
    for cat, e in block["attributes"].items():
        parts.append(f"<h3>{esc(cat)} <small>({esc(e['unit'])})</small></h3><table><thead><tr>"
                     + "".join(f"<th>{esc(h)}</th>" for h in HEAD) + "</tr></thead><tbody>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in table_rows(e)]
        parts.append("</tbody></table>")
        if e.get("levels_note"):
            parts.append(f'<p class="note">{esc(e["levels_note"])}</p>')
        if plots.get(cat):
            parts.append(f'<figure><img src="{esc(plots[cat])}" alt="{esc(cat)} psychometric functions" '
                         'loading="lazy"></figure>')
    return "".join(parts)


def plot_sweeps(block: dict, out: Path, *, jobs: int | None = None) -> dict[str, str]:
    """One PNG per attribute (``plots/sweep-<attribute>.png``): every observer's fitted curve and its
    observed shares; human observers as points with their curve dashed. Returns attribute -> relative path.
    The figures are drawn by ``jobs`` worker processes (default: one per CPU)."""
    import matplotlib

    matplotlib.use("Agg")
    from .parallel import run_tasks

    cats = [cat for cat, e in (block.get("attributes") or {}).items()
            if not all(o.get("problem") for o in e["observers"])]  # nothing fitted: the table says why
    return dict(zip(cats, run_tasks([(_plot_sweep, (cat, block["attributes"][cat], out)) for cat in cats],
                                    jobs=jobs)))


def _plot_sweep(cat: str, e: dict, out: Path) -> str:
    """Draw one attribute's figure into ``out``; its path relative to ``out``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    big = e["largest"] or 1.0
    xs = np.linspace(0.0, big, 200)
    for i, o in enumerate(o for o in e["observers"] if not o.get("problem")):
        colour = f"C{i % 10}"
        human = o["kind"] == "human"
        px = [p.get("fit_magnitude", p["magnitude"]) for p in o["points"]]
        py = [p["correct"] / p["n"] if p["n"] else np.nan for p in o["points"]]
        ax.plot(xs, pooled_correct(xs, o["alpha"], o["beta"], o["criterion"], o["lapse"]), "--" if human else "-",
                color=colour, label=o["label"])
        ax.plot(px, py, "s" if human else "o", color=colour, ms=6 if human else 4)
        if o["zero"]["acc"] is not None:  # the zero-change control: not fitted, 50 % expected
            ax.plot([0.0], [o["zero"]["acc"]], "x", color=colour, ms=6)
        if o["threshold"] is not None:
            ax.axvline(o["threshold"], color=colour, lw=0.6, ls=":")
    for t, m in e["tiers"].items():
        ax.annotate(t, (m, 0.4), ha="center", fontsize=7, color="grey")
    ax.axhline(TARGET, color="grey", lw=0.5)
    ax.axhline(0.5, color="grey", lw=0.5, ls="--")
    ax.set_ylim(0.35, 1.02)
    ax.set_xlim(0, big * 1.03)
    ax.set_xlabel(f"magnitude of change ({e['unit']})")
    ax.set_ylabel("share correct")
    ax.set_title(f"{cat}: psychometric functions")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    rel = f"plots/sweep-{cat}.png"
    (out / "plots").mkdir(parents=True, exist_ok=True)
    fig.savefig(out / rel, dpi=110)
    plt.close(fig)
    return rel
