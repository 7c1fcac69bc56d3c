"""The report's verdicts against chance: which question each interval answers, and honest small samples.

Two intervals answer two questions (docs/statistics.md):

- **over voices** (*clustered*: source utterances are the units): would the model beat chance on voices in
  general? That is the claim a reader takes away, so from :data:`MIN_CLUSTERS` sources it is the *headline*
  of every row (the terminal line, report.md, the page, the leaderboard).
- **these voices** (*binomial*: the paper's clip bootstrap): how much would the figure move if the model
  answered these same clips again? It stays beside the headline; below :data:`MIN_CLUSTERS` sources it is
  the headline's only figure, labelled so, and the headline says that no claim over voices can be made.

No verdict comes from an interval that cannot be computed (fewer than :data:`MIN_CLIPS` clips, every answer
right or every answer wrong, a bootstrap with one value): the exact test decides there (:func:`exact_p`),
and ``"too few clips"`` stands where it does not reject. Every function here reads or writes one row of
``report.json`` (a dict of :func:`analysis.report.analysis.analyse_evaluation`); the renderers only format.

Examples
--------
>>> recs = [{"category": "pitch", "id": f"c{i}", "source_id": "s", "correct": True} for i in range(3)]
>>> clip_verdict(recs, (1.0, 1.0))   # 3 clips, all right: exact p = 0.25
('too few clips', 0.25)
>>> headline_text({"over": "voices", "verdict": "above chance", "ci": [0.6, 0.7], "why": None})
'above chance over voices'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from harness_tasks.metrics import MIN_CLUSTERS

from .stats import ALPHA, MIN_CLIPS, NOT_DIFFERENT, TOO_FEW, chance_verdict, clip_key, clips_of, mcnemar_clustered

__all__ = ["OVER_VOICES", "THESE_VOICES", "clip_verdict", "clips_of", "exact_p", "few_sources", "headline",
           "headline_text", "no_claim_reason", "short_verdict", "voices_verdict"]

#: Scope of a headline from :data:`MIN_CLUSTERS` sources: the model over voices in general (clustered).
OVER_VOICES = "voices"
#: Scope of a headline from fewer sources: the voices drawn only (the paper's clip bootstrap).
THESE_VOICES = "these voices"
#: Short forms of the verdicts in the leaderboards (the full words are the cell's title).
_SHORT = {"above chance": "above", "below chance": "below", NOT_DIFFERENT: "≈ chance"}


def few_sources(n_sources: int) -> str:
    """What stands instead of a clustered interval or verdict from fewer than
    :data:`~harness_tasks.metrics.MIN_CLUSTERS` sources: ``"n/a (4 sources)"``."""
    return f"n/a ({n_sources} source{'' if n_sources == 1 else 's'})"


def no_claim_reason(n_sources: int) -> str:
    """Why a row makes no claim over voices: ``"4 sources; a claim about voices in general needs at least 20"``."""
    return (f"{n_sources} source{'' if n_sources == 1 else 's'}; a claim about voices in general needs at least "
            f"{MIN_CLUSTERS}")


def _surplus(records: Sequence[Mapping[str, Any]], unit) -> list[int]:
    """Right minus wrong answers per unit (``unit(record)`` is its key), in sorted key order."""
    d: dict[Any, int] = {}
    for r in records:
        k = unit(r)
        d[k] = d.get(k, 0) + (1 if r["correct"] else -1)
    return [d[k] for k in sorted(d, key=str)]


def exact_p(records: Sequence[Mapping[str, Any]], *, by: str = "clip") -> float:
    """Exact two-sided p-value of "right as often as wrong", with clips (``by="clip"``) or source utterances
    (``by="source"``) as the units: the sign-flip test of the units' right-minus-wrong counts
    (:func:`~analysis.report.stats.mcnemar_clustered`). With one answer per clip it is the exact binomial
    test of the right answers against 50 %; a clip answered by several annotators counts once. ``nan`` for
    no records."""
    if not records:
        return math.nan
    unit = clip_key if by == "clip" else (lambda r: r["source_id"])
    return mcnemar_clustered(_surplus(records, unit))


def _exact_verdict(records, p: float, n_units: int, *, alpha: float) -> str:
    if math.isnan(p):
        return "n/a"
    if p < alpha:
        right = sum(bool(r["correct"]) for r in records)
        return "above chance" if 2 * right > len(records) else "below chance"
    return TOO_FEW if n_units < MIN_CLIPS else NOT_DIFFERENT


def _degenerate(interval) -> bool:
    lo, hi = interval
    return lo is None or hi is None or math.isnan(lo) or math.isnan(hi) or lo == hi


def clip_verdict(records: Sequence[Mapping[str, Any]], interval, *,
                 alpha: float = ALPHA) -> tuple[str, float | None]:
    """The verdict on these voices of one row, and the exact p-value where it decided (else ``None``).

    From the clip-level interval (:func:`~analysis.report.stats.chance_verdict`), except where that interval
    cannot be computed: fewer than :data:`MIN_CLIPS` distinct clips, every answer right or every answer wrong,
    or a degenerate interval. There the exact test over clips (:func:`exact_p`) decides, and a row of fewer
    than :data:`MIN_CLIPS` clips it does not reject reads ``"too few clips"``. So it does for a row whose clips
    hold several answers (a human row): five annotators agreeing on a clip are one clip, not five, and the
    sign-flip test over clips is exact where its interval (clustered by clip,
    :func:`~analysis.report.stats.intervals`) is a large-sample one (the table's rows use the same test).
    """
    if not records:
        return "n/a", None
    right = sum(bool(r["correct"]) for r in records)
    n_clips = clips_of(records)
    if n_clips < MIN_CLIPS or n_clips < len(records) or right in (0, len(records)) or _degenerate(interval):
        p = exact_p(records)
        return _exact_verdict(records, p, n_clips, alpha=alpha), p
    return chance_verdict(interval), None


def voices_verdict(records: Sequence[Mapping[str, Any]], interval, n_sources: int, *,
                   alpha: float = ALPHA) -> str:
    """The verdict over voices of one row: from its clustered interval from :data:`MIN_CLUSTERS` sources
    (``n/a (k sources)`` below); where that interval is degenerate (every source equally right), the exact
    sign-flip test over sources decides."""
    if n_sources < MIN_CLUSTERS:
        return few_sources(n_sources)
    if _degenerate(interval):
        return _exact_verdict(records, exact_p(records, by="source"), n_sources, alpha=alpha)
    return chance_verdict(interval)


def headline(g: Mapping[str, Any]) -> dict[str, Any]:
    """The headline of one row (``report.json``'s ``headline``): its scope, interval, verdict and, without a
    claim over voices, why.

    From :data:`MIN_CLUSTERS` sources: ``{"over": "voices", "ci": clustered interval, "verdict":
    verdict_clustered, "why": None}``; below: ``{"over": "these voices", "ci": binomial interval, "verdict":
    verdict, "why": no_claim_reason(k)}``. The verdicts are the row's own (interval, exact test or the table's
    adjusted flags, and ``n/a: k % error answers`` above the error limit), so the headline never disagrees
    with a table.
    """
    n_src = int(g.get("n_sources") or 0)
    ci = g["ci"]["acc"]
    if n_src >= MIN_CLUSTERS:
        return {"over": OVER_VOICES, "ci": list(ci["clustered"]), "verdict": g["verdict_clustered"], "why": None}
    return {"over": THESE_VOICES, "ci": list(ci["binomial"]), "verdict": g["verdict"],
            "why": no_claim_reason(n_src)}


def headline_text(h: Mapping[str, Any], *, why: bool = False) -> str:
    """The headline's verdict in words: ``"above chance over voices"``, ``"above chance on these voices"``
    (with ``why``: ``"...; no claim over voices: 4 sources; a claim ... needs at least 20"``); ``"too few
    clips"`` and ``"n/a ..."`` as they are."""
    v = h["verdict"]
    if v == TOO_FEW or v.startswith("n/a"):
        text = v
    else:
        text = f"{v} {'over voices' if h['over'] == OVER_VOICES else 'on these voices'}"
    if why and h.get("why"):
        text += f"; no claim over voices ({h['why']})"
    return text


def short_verdict(verdict: str, over: str | None = None) -> str:
    """A verdict's short form for a leaderboard cell: ``"above (voices)"``, ``"≈ chance (these voices)"``."""
    short = _SHORT.get(verdict, verdict)
    return short if over is None or verdict not in _SHORT else f"{short} ({over})"
