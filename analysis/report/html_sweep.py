"""The magnitude sweeps on the HTML report page: every sweep run's thresholds in a sortable table (in the
Leaderboard section), and clips at the levels around each run's threshold (in the Listen section).

The numbers come from report.json's ``psychometric`` block (:mod:`.psychometric`; the same texts as the
Thresholds section and report.md). The clips are those of the ``--data`` folder that the sweep runs
answered, at the two levels on either side of an observer's threshold: the largest level at or below it
and the smallest at or above it; "< smallest" gives the smallest level, "> largest" (not reached) the
largest. Per attribute, level and direction one clip is drawn with the report's seed, among the clips
every sweep run answered where there are such, so that observers with a threshold between the same
levels share their clips.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from generation.sweep_plan import magnitude_of

from .html_clips import ClipCard, answer_card
from .html_tables import Table, esc, td
from .psychometric import interval_text, threshold_text

__all__ = ["SweepClips", "levels_around", "select_sweep_clips", "sweep_answer_runs", "sweep_leaderboard"]

DIRECTIONS = ("increase", "decrease")


@dataclass
class SweepRun:
    """A sweep observer's answers in the shape the page's clip code reads: label, flat records, and the
    records by attribute."""

    label: str
    by_attribute: dict[str, list[dict]]
    has_samples: bool = True

    @property
    def records(self) -> list[dict]:
        return [r for recs in self.by_attribute.values() for r in recs]


def sweep_answer_runs(observers) -> list[SweepRun]:
    """The sweep observers (:class:`.psychometric.Observer`) as runs, for the answers shown under a clip and
    the check that the data folder holds the audio each run heard."""
    return [SweepRun(o.label, dict(o.records)) for o in observers if o.records]


def _observers(block: dict) -> list[str]:
    seen: dict[str, None] = {}
    for e in block["attributes"].values():
        for o in e["observers"]:
            seen.setdefault(o["label"], None)
    return list(seen)


def _cell(o: dict | None, e: dict) -> str:
    if o is None:
        return td(None, "–", title="no sweep run of this attribute")
    if o.get("problem"):
        return ('<td class="text wrap" data-v="">no threshold: ' + esc(o["problem"]) + "</td>")
    big, small = e["largest"], e.get("smallest")
    shown = f"{threshold_text(o['threshold'], big, small)} {interval_text(o, big, small)}"
    key = o["threshold"] if o["threshold"] is not None else 2 * big  # "> largest" after every number
    return td(key, shown, cls="wrap", title=f"threshold (d' 1.35) {shown}; {e['unit']}")


def sweep_leaderboard(report: dict[str, Any]) -> str:
    """One row per sweep run (and human observer), one column per attribute: the threshold with its 95 %
    interval, or why there is none; sortable. "" without sweeps."""
    block = report.get("psychometric") or {}
    if not block.get("attributes"):
        return ""
    atts = block["attributes"]
    t = Table([("observer", "text")] + [(f"{cat} ({e['unit']})", "num") for cat, e in atts.items()],
              caption="Sweep runs: thresholds", cls="sweep-runs")
    for label in _observers(block):
        by = {cat: next((o for o in e["observers"] if o["label"] == label), None) for cat, e in atts.items()}
        kind = next(o["kind"] for o in by.values() if o is not None)
        tag = "" if kind == "model" else f' <span class="tag">{esc(kind)}</span>'
        t.add(esc(label) + tag, [_cell(by[cat], atts[cat]) for cat in atts])
    return ('<h3 id="leaderboard-sweeps">Sweep runs: thresholds</h3>' + t.html()
            + '<p class="note">Per attribute, the magnitude of change where the observer\'s sensitivity alone gives '
            "75 % correct, with its 95 % interval (or why it has none); \"&gt; X\": not reached within the sweep, "
            '"&lt; Y": already passed at its smallest level. Lower is better. The fits and their checks are in '
            '<a href="#thresholds">Psychometric thresholds</a>; clips near each threshold in '
            '<a href="#listen-sweeps">Listen</a>. Click a column header to sort.</p>')


def levels_around(o: dict, e: dict) -> list[float]:
    """The non-zero levels of the sweep on either side of the observer's threshold (one level when the
    threshold lies on a level, below the smallest or beyond the largest); [] when it has none."""
    if o.get("problem"):
        return []
    levels = sorted(m for m in e["magnitudes"] if m > 0)
    t = o.get("threshold")
    if t is None or t > levels[-1]:
        return [levels[-1]]
    if t <= levels[0]:
        return [levels[0]]
    below = max(m for m in levels if m <= t)
    above = min(m for m in levels if m >= t)
    return sorted({below, above})


@dataclass
class SweepClips:
    """The Listen section's sweep clips: attribute -> ``(observer label, what the clips are, cards)``."""

    by_attribute: dict[str, list[tuple[str, str, list[ClipCard]]]] = field(default_factory=dict)

    def cards(self) -> list[ClipCard]:
        return [c for rows in self.by_attribute.values() for _, _, cards in rows for c in cards]


def _where(o: dict, e: dict, levels: list[float]) -> str:
    big, small = e["largest"], e.get("smallest")
    lv = " and ".join(f"{m:g}" for m in levels)
    return (f"threshold {threshold_text(o['threshold'], big, small)} {e['unit']}: clips at "
            f"{'level' if len(levels) == 1 else 'levels'} {lv} {e['unit']}")


def select_sweep_clips(catalog, report: dict[str, Any], runs: list[SweepRun], *, seed: int) -> SweepClips:
    """Per attribute and observer, one clip per direction at each level around its threshold (the clips of
    ``catalog`` the runs answered, not ``level_null``), with every run's answers on it."""
    block = report.get("psychometric") or {}
    answers: dict[str, list[tuple[str, dict]]] = {}
    for run in runs:
        for r in run.records:
            answers.setdefault(r["id"], []).append((run.label, r))
    out = SweepClips()
    chosen: dict[tuple, ClipCard | None] = {}
    for cat, e in (block.get("attributes") or {}).items():
        pools: dict[tuple[float, str], dict[str, set[str]]] = {}
        for run in runs:
            for r in run.by_attribute.get(cat, []):
                info = catalog.clips.get(r["id"])
                if info is None or info.category != cat or r.get("level_null") is True:
                    continue
                m = magnitude_of(cat, r["tier"]) if isinstance(r.get("tier"), str) else None
                if m is not None and r.get("direction") in DIRECTIONS:
                    pools.setdefault((m, r["direction"]), {}).setdefault(run.label, set()).add(r["id"])
        rows = []
        for o in e["observers"]:
            levels = levels_around(o, e)
            cards = []
            for m in levels:
                for d in DIRECTIONS:
                    key = (cat, m, d)
                    if key not in chosen:
                        by_run = pools.get((m, d), {})
                        every = set.intersection(*by_run.values()) if by_run else set()
                        pool = sorted(every or set().union(*by_run.values()))
                        cid = random.Random(f"{seed}:sweep:{cat}:{m:g}:{d}").choice(pool) if pool else None
                        chosen[key] = None if cid is None else answer_card(catalog.clips[cid], answers.get(cid, []))
                    if chosen[key] is not None:
                        cards.append(chosen[key])
            if levels:
                rows.append((o["label"], _where(o, e, levels), cards))
        if rows:
            out.by_attribute[cat] = rows
    return out


def sweep_listen_html(clips: SweepClips, render_card) -> str:
    """The Listen section's part for the sweeps ("" without); ``render_card`` draws one clip card."""
    if not clips.by_attribute:
        return ""
    out = ['<h3 id="listen-sweeps">Near each threshold (magnitude sweeps)</h3>'
           '<p class="note">For each sweep run, one increase and one decrease clip at the levels on either side of its '
           "threshold (the clips of the data folder the runs answered), with every run's answers.</p>"]
    for cat, rows in clips.by_attribute.items():
        out.append(f'<h4 id="listen-sweep-{esc(cat)}">{esc(cat)}</h4>')
        for label, where, cards in rows:
            cards = [c for c in cards if c.audio]
            out.append(f'<p><strong>{esc(label)}</strong>: {esc(where)}</p>')
            out.append('<div class="gallery">' + "".join(render_card(c) for c in cards) + "</div>" if cards
                       else '<p class="muted">No clip of the data folder at these levels (or over the size '
                       'budget).</p>')
    return "".join(out)
