"""Psychometric functions and thresholds from the magnitude sweeps (``vocalgrad_sweep``, docs/sweep.md).

For every observer (a model's ``vocalgrad_sweep_<attribute>`` sample log, or the listening test's
sweep answers) and attribute, the share of correct increase/decrease answers is modelled as a
Weibull function of the magnitude ``x`` of the change, with the guess rate fixed at 0.5 (two
answers) and a lapse rate ``lam`` in [0, :data:`MAX_LAPSE`]::

    P(x) = 0.5 + (0.5 - lam) * (1 - exp(-(x / alpha) ** beta))

fitted by maximum likelihood (binomial counts per magnitude; ``scipy.optimize.minimize``, SLSQP
within bounds, analytic gradient, from a few starts). The **threshold** is the magnitude answered
correctly 75 % of the time; the **slope** is ``beta`` (the steepness of the rise: 1 gentle, 4 steep). An
unparsed answer counts as wrong, as in the paper's accuracy.

* When the fitted function does not reach 75 % within the sweep, or the answers cannot be told
  from a coin's (likelihood ratio against 50 % everywhere, p >= :data:`ALPHA_CHANCE`), the
  threshold is reported as "> largest magnitude" (``None`` in report.json with ``reached:
  false``), never extrapolated. With few sources a lucky coin would otherwise cross 75 %.
* Intervals: percentile bootstrap over **sources** (all clips of a source are drawn together, as
  the report's clustered intervals): :data:`BOOT_DRAWS` refits; a draw that reaches no threshold
  counts as +infinity, so an interval's upper end can be "> largest magnitude".
* The zero-change control (magnitude 0) has no right answer (its two directions are the same
  audio): every observer's expected score there is 50 % and the fixed guess rate already says so,
  so it carries no information about the threshold and is left out of the fit. It is reported
  apart: accuracy (should be near 50 %) and the share of "increase" answers (the response bias).
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

__all__ = ["ALPHA_CHANCE", "BOOT_DRAWS", "GUESS", "MAX_LAPSE", "TARGET", "Fit", "Observer", "analyse_sweeps", "bootstrap",
           "fit_weibull", "load_sweep_observers", "sweep_html", "sweep_markdown", "plot_sweeps",
           "threshold_of", "weibull"]

#: Guess rate (two answers) and the largest lapse rate the fit may use (Wichmann & Hill 2001: 0-0.06).
GUESS, MAX_LAPSE = 0.5, 0.06
#: Share correct that defines the threshold.
TARGET = 0.75
#: A threshold is reported only when a coin is rejected at this level (:func:`chance_p`).
ALPHA_CHANCE = 0.05
#: Bootstrap refits per observer x attribute (the report's ``--draws`` caps it).
BOOT_DRAWS = 400
SWEEP_TASK = re.compile(r"^vocalgrad_sweep_([a-z][a-z0-9]{1,31})$")


def weibull(x, alpha: float, beta: float, lapse: float):
    """P(correct) at magnitude ``x`` (array-like, >= 0) of the two-answer Weibull (guess rate 0.5)."""
    x = np.asarray(x, dtype=float)
    return GUESS + (1.0 - GUESS - lapse) * (1.0 - np.exp(-np.power(np.maximum(x, 0.0) / alpha, beta)))


def threshold_of(alpha: float, beta: float, lapse: float, target: float = TARGET) -> float:
    """Magnitude where :func:`weibull` equals ``target`` (inf when it never does)."""
    f = (target - GUESS) / (1.0 - GUESS - lapse)
    if not 0 < f < 1:
        return math.inf
    return float(alpha * (-math.log1p(-f)) ** (1.0 / beta))


@dataclass
class Fit:
    """A maximum-likelihood fit: ``alpha, beta, lapse``, the 75 % ``threshold`` (inf when beyond reach)."""

    alpha: float
    beta: float
    lapse: float
    nll: float
    threshold: float
    converged: bool
    p_chance: float = 0.0


def _nll(theta, x, k, n):
    """Negative log-likelihood of binomial counts and its gradient in ``(log alpha, log beta, lapse)``."""
    la, lb, lam = theta
    alpha, beta = math.exp(la), math.exp(lb)
    r = x / alpha
    u = r ** beta
    e = np.exp(-u)
    scale = 1.0 - GUESS - lam
    p = GUESS + scale * (1.0 - e)
    p = np.clip(p, 1e-9, 1 - 1e-9)
    nll = -float(np.sum(k * np.log(p) + (n - k) * np.log1p(-p)))
    dp = -(k / p - (n - k) / (1.0 - p))  # d nll / d p
    grad = np.array([np.sum(dp * scale * e * (-beta * u)),
                     np.sum(dp * scale * e * u * beta * np.log(r)),
                     np.sum(dp * -(1.0 - e))])
    return nll, grad


def fit_weibull(x, k, n, *, starts=None) -> Fit:
    """Fit :func:`weibull` to ``k`` correct of ``n`` answers at magnitudes ``x`` (> 0) by maximum likelihood.

    Parameters
    ----------
    x, k, n : array-like, shape (levels,)
    starts : list of (alpha, beta, lapse), optional
        Starting points (default: a grid over the sweep).

    Returns
    -------
    Fit
        ``threshold`` is inf when the fitted function stays below 75 % up to the largest magnitude.
    """
    from scipy.optimize import minimize

    x, k, n = (np.asarray(v, dtype=float) for v in (x, k, n))
    keep = n > 0
    x, k, n = x[keep], k[keep], n[keep]
    lo, hi = float(x.min()), float(x.max())
    bounds = [(math.log(lo / 20), math.log(hi * 20)), (math.log(0.5), math.log(12.0)), (0.0, MAX_LAPSE)]
    if starts is None:
        starts = [(a, b, 0.02) for a in np.geomspace(lo, hi * 2, 4) for b in (1.5, 4.0)]
    best = None
    for a, b, lam in starts:
        theta0 = np.clip([math.log(a), math.log(b), lam], [b_[0] for b_ in bounds], [b_[1] for b_ in bounds])
        res = minimize(_nll, theta0, args=(x, k, n), method="SLSQP", jac=True, bounds=bounds)
        if best is None or res.fun < best.fun:
            best = res
    alpha, beta, lapse = math.exp(best.x[0]), math.exp(best.x[1]), float(best.x[2])
    t = threshold_of(alpha, beta, lapse)
    p_chance = chance_p(float(best.fun), k, n)
    reached = t <= hi * (1 + 1e-9) and p_chance < ALPHA_CHANCE
    return Fit(alpha, beta, lapse, float(best.fun), t if reached else math.inf, bool(best.success), p_chance)


def chance_p(nll: float, k, n) -> float:
    """p-value of the answers under a coin (50 % at every magnitude) against the fitted function:
    likelihood ratio, chi-square with 3 degrees of freedom (alpha, beta, lapse)."""
    from scipy.stats import chi2

    nll0 = -float(np.sum(np.asarray(n, float) * math.log(0.5)))
    return float(chi2.sf(max(0.0, 2.0 * (nll0 - nll)), 3))


def bootstrap(x, k_by_source, n_by_source, *, draws: int = BOOT_DRAWS, seed: int = 1234, fit: Fit | None = None):
    """Percentile bootstrap over sources of the threshold and the slope.

    Parameters
    ----------
    x : array, shape (levels,)
    k_by_source, n_by_source : array, shape (sources, levels)
    fit : Fit, optional
        The full-data fit (a start of every refit).

    Returns
    -------
    dict
        ``threshold_ci`` (inf as the upper end when draws reach no threshold), ``beta_ci``,
        ``p_reached`` (share of draws with a threshold within the sweep), ``draws``.
    """
    k_by_source, n_by_source = np.asarray(k_by_source, float), np.asarray(n_by_source, float)
    s = k_by_source.shape[0]
    rng = np.random.default_rng(seed)
    fit = fit or fit_weibull(x, k_by_source.sum(0), n_by_source.sum(0))
    lo, hi = float(np.min(x)), float(np.max(x))
    starts = [(fit.alpha, fit.beta, min(fit.lapse, MAX_LAPSE)), (math.sqrt(lo * hi), 2.5, 0.02), (hi * 2, 1.5, 0.02)]
    ts, bs = [], []
    for _ in range(draws):
        idx = rng.integers(0, s, s)
        f = fit_weibull(x, k_by_source[idx].sum(0), n_by_source[idx].sum(0), starts=starts)
        ts.append(f.threshold)
        bs.append(f.beta)
    ts, bs = np.array(ts), np.array(bs)
    big = np.where(np.isfinite(ts), ts, 1e300)  # a draw without a threshold sorts last (+inf)
    ci = [float(v) if v < 1e299 else math.inf for v in np.quantile(big, [0.025, 0.975], method="inverted_cdf")]
    return {"threshold_ci": ci,
            "beta_ci": [float(np.quantile(bs, 0.025)), float(np.quantile(bs, 0.975))],
            "p_reached": float(np.mean(np.isfinite(ts))), "draws": int(draws)}


# ---- observers --------------------------------------------------------------------------------
@dataclass
class Observer:
    """One observer's sweep answers: label, kind (``model``/``oracle``/``human``) and records by attribute."""

    label: str
    kind: str = "model"
    records: dict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))


def _kind(label: str, model: str) -> str:
    return "oracle" if "oracle" in model or "oracle" in label else "model"


def load_sweep_observers(specs) -> list[Observer]:
    """The models' ``vocalgrad_sweep_<attribute>`` sample logs under the result ``specs`` (a later run of
    the same model and attribute replaces an earlier one). Results without sweep tasks give none."""
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
                sfile = samples_file(rfile, task)
                if m is None or not sfile.is_file():
                    continue
                obs = out.setdefault(label, Observer(label, _kind(label, model)))
                obs.records[m.group(1)] = read_samples(sfile, m.group(1))
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
    """Magnitudes (> 0), per-source correct/total counts, and the zero-control summary."""
    from generation.sweep_plan import magnitude_of

    mags: dict[str, float] = {}
    for r in records:
        if r["tier"] not in mags:
            mags[r["tier"]] = magnitude_of(category, r["tier"])
    levels = sorted({m for m in mags.values() if m is not None and m > 0})
    sources = sorted({r["source_id"] for r in records})
    si, li = {s: i for i, s in enumerate(sources)}, {m: j for j, m in enumerate(levels)}
    k = np.zeros((len(sources), len(levels)))
    n = np.zeros_like(k)
    zero = {"n": 0, "correct": 0, "increase": 0}
    for r in records:
        m = mags.get(r["tier"])
        if m is None:
            continue
        if m == 0:
            zero["n"] += 1
            zero["correct"] += bool(r["correct"])
            zero["increase"] += r.get("pred") == "increase"
            continue
        k[si[r["source_id"]], li[m]] += bool(r["correct"])
        n[si[r["source_id"]], li[m]] += 1
    return np.array(levels), k, n, zero


def _observer_entry(obs: Observer, category: str, *, draws: int, seed: int) -> dict[str, Any] | None:
    x, k, n, zero = _counts(obs.records[category], category)
    if x.size < 2 or n.sum() == 0:
        return None
    fit = fit_weibull(x, k.sum(0), n.sum(0))
    boot = bootstrap(x, k, n, draws=draws, seed=seed, fit=fit) if k.shape[0] > 1 and draws > 0 else None
    reached = math.isfinite(fit.threshold)
    return {
        "label": obs.label, "kind": obs.kind, "n_sources": int(k.shape[0]), "n_clips": int(n.sum() + zero["n"]),
        "threshold": fit.threshold if reached else None, "reached": reached,
        "below_sweep": reached and fit.threshold < float(x.min()),
        "threshold_ci": boot["threshold_ci"] if boot else None, "p_reached": boot["p_reached"] if boot else None,
        "beta": fit.beta, "beta_ci": boot["beta_ci"] if boot else None, "lapse": fit.lapse, "alpha": fit.alpha,
        "converged": fit.converged, "p_chance": fit.p_chance,
        "points": [{"magnitude": float(m), "n": int(n[:, j].sum()), "correct": int(k[:, j].sum())}
                   for j, m in enumerate(x)],
        "zero": {"n": zero["n"], "acc": zero["correct"] / zero["n"] if zero["n"] else None,
                 "increase_share": zero["increase"] / zero["n"] if zero["n"] else None},
    }


def analyse_sweeps(observers: list[Observer], *, draws: int = BOOT_DRAWS, seed: int = 1234) -> dict[str, Any]:
    """``report.json``'s ``psychometric`` block: per attribute its sweep and every observer's fit.

    Returns ``{}`` when no observer has sweep answers.
    """
    from generation import attributes
    from generation.sweep_plan import sweep_levels

    cats = sorted({c for o in observers for c in o.records},
                  key=lambda c: (c not in vocalgrad.CATEGORY_NAMES,
                                 vocalgrad.CATEGORY_NAMES.index(c) if c in vocalgrad.CATEGORY_NAMES else 0, c))
    out: dict[str, Any] = {}
    order = {"model": 0, "oracle": 1, "human": 2}
    for cat in cats:
        try:
            levels = sweep_levels(cat)
            unit = attributes.get(cat).sweep.unit
        except ValueError:
            levels, unit = [], "?"
        entries = [e for o in sorted(observers, key=lambda o: order.get(o.kind, 0)) if o.records.get(cat)
                   for e in [_observer_entry(o, cat, draws=draws, seed=seed)] if e is not None]
        if not entries:
            continue
        out[cat] = {"unit": unit, "magnitudes": [lv.magnitude for lv in levels],
                    "tiers": {lv.tier: lv.magnitude for lv in levels if lv.tier},
                    "largest": max((p["magnitude"] for e in entries for p in e["points"]), default=None),
                    "smallest": min((p["magnitude"] for e in entries for p in e["points"]), default=None),
                    "observers": entries}
    if not out:
        return {}
    return {"form": "Weibull, guess rate 0.5, lapse rate in [0, %g], maximum likelihood (scipy SLSQP)" % MAX_LAPSE,
            "target": TARGET, "bootstrap": f"percentile, over sources, {draws} draws, seed {seed}",
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


def _ci_text(ci, largest, smallest=None) -> str:
    if not ci:
        return "n/a (1 source)"
    return f"[{threshold_text(ci[0], largest, smallest)}, {threshold_text(ci[1], largest, smallest)}]"


def table_rows(entry: dict) -> list[list[str]]:
    """Rows of one attribute's threshold table (what report.md and the page show)."""
    rows = []
    big, small = entry["largest"], entry.get("smallest")
    for o in entry["observers"]:
        z = o["zero"]
        zero = "" if z["acc"] is None else f"{100 * z['acc']:.0f} / {100 * z['increase_share']:.0f}"
        rows.append([o["label"] + ("" if o["kind"] in ("model", o["label"]) else f" ({o['kind']})"),
                     threshold_text(o["threshold"], big, small), _ci_text(o["threshold_ci"], big, small),
                     f"{o['beta']:.2g}" + (f" [{o['beta_ci'][0]:.2g}, {o['beta_ci'][1]:.2g}]" if o["beta_ci"] else ""),
                     f"{100 * o['lapse']:.1f}", zero, str(o["n_sources"]), str(o["n_clips"])])
    return rows


HEAD = ["observer", "threshold (75 %)", "95 % interval", "slope β", "lapse %", "zero change: acc / increase %",
        "sources", "clips"]


def sweep_markdown(block: dict, plots: dict | None = None) -> str:
    """The report.md section: one threshold table (and figure) per attribute; "" without sweeps."""
    if not block:
        return ""
    lines = ["", "## Psychometric thresholds (magnitude sweeps; not part of the paper's benchmark)", "",
             f"Share correct as a function of the size of the change, {block['form']}; threshold = the "
             f"magnitude answered correctly {100 * block['target']:.0f} % of the time, \"> X\" when it is not "
             f"reached within the sweep (X = its largest magnitude), \"< Y\" when it is passed already at the "
             f"smallest non-zero magnitude Y (the sweep cannot place it lower). Intervals: {block['bootstrap']}. The zero-change "
             "control has no right answer and is left out of the fit; its accuracy (about 50 % expected) and "
             "share of \"increase\" answers are shown apart. See docs/sweep.md.", ""]
    for cat, e in block["attributes"].items():
        tiers = ", ".join(f"{t} {m:.3g}" for t, m in e["tiers"].items())
        lines += [f"### {cat} (magnitude in {e['unit']}; paper tiers: {tiers or 'n/a'})", "",
                  "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(r) + " |" for r in table_rows(e)]
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
             f'<p class="note">{esc(block["form"])}; threshold = {100 * block["target"]:.0f} % correct; '
             f'"&gt; X": not reached within the sweep. Intervals: {esc(block["bootstrap"])}. '
             "Not part of the paper's benchmark (docs/sweep.md).</p>"]
    for cat, e in block["attributes"].items():
        parts.append(f"<h3>{esc(cat)} <small>({esc(e['unit'])})</small></h3><table><thead><tr>"
                     + "".join(f"<th>{esc(h)}</th>" for h in HEAD) + "</tr></thead><tbody>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in table_rows(e)]
        parts.append("</tbody></table>")
        if plots.get(cat):
            parts.append(f'<figure><img src="{esc(plots[cat])}" alt="{esc(cat)} psychometric functions" '
                         'loading="lazy"></figure>')
    return "".join(parts)


def plot_sweeps(block: dict, out: Path) -> dict[str, str]:
    """One PNG per attribute (``plots/sweep-<attribute>.png``): every observer's fitted curve and its
    observed shares; human observers as points with their curve dashed. Returns attribute -> relative path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = {}
    for cat, e in (block.get("attributes") or {}).items():
        fig, ax = plt.subplots(figsize=(6.0, 3.8))
        big = e["largest"] or 1.0
        xs = np.linspace(0.0, big, 200)
        for i, o in enumerate(e["observers"]):
            colour = f"C{i % 10}"
            human = o["kind"] == "human"
            px = [p["magnitude"] for p in o["points"]]
            py = [p["correct"] / p["n"] if p["n"] else np.nan for p in o["points"]]
            ax.plot(xs, weibull(xs, o["alpha"], o["beta"], o["lapse"]), "--" if human else "-", color=colour,
                    label=o["label"])
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
        paths[cat] = rel
    return paths
