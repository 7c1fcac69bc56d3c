"""Answers scored by logits beside generated answers (``vocalgrad-hf`` ``scoring=logits|both``).

An answer that carries a logit tag (:mod:`harness_tasks.logit_answers`) also names the direction
whose answer word had the higher next-token log-probability after the prompt. Scored on its own,
that choice is never unparsed, so it separates "cannot perceive" (logit accuracy at chance too)
from "cannot say it" (logit accuracy above the generated answers' accuracy).
"""

from __future__ import annotations

from typing import Any

from harness_tasks.logit_answers import split_logit_answer
from harness_tasks.metrics import macro_summary, summarize

from .stats import DRAWS, SEED, intervals

__all__ = ["logit_records", "logit_section"]


def logit_records(records: list[dict]) -> list[dict]:
    """The logit-scored records of ``records`` (those whose raw answer carries a tag)."""
    out = []
    for r in records:
        _, choice, _ = split_logit_answer(r.get("raw"))
        if choice is not None:
            out.append({**r, "pred": choice, "status": "parsed", "correct": choice == r["direction"]})
    return out


def logit_section(records: list[dict], categories: list[str], *, draws: int = DRAWS,
                  seed: int = SEED) -> dict[str, Any] | None:
    """``acc_logit`` and ``increase_ratio_logit`` per category and overall (mean over categories,
    as every overall figure), with the generated answers' accuracy beside them; None without tags."""
    logit = logit_records(records)
    if not logit:
        return None
    rows = {}
    for cat in categories:
        sub = [r for r in logit if r["category"] == cat]
        if not sub:
            continue
        gen = summarize([r for r in records if r["category"] == cat])
        s = summarize(sub)
        rows[cat] = {"n": len(sub), "acc_logit": s["acc"], "increase_ratio_logit": s["increase_ratio"],
                     "acc_logit_ci": intervals(sub, "acc", draws=draws, seed=seed)["binomial"],
                     "acc_generated": gen["acc"]}
    ov, gen = macro_summary(logit), macro_summary(records)
    rows["all"] = {"n": len(logit), "acc_logit": ov["acc"], "increase_ratio_logit": ov["increase_ratio"],
                   "acc_logit_ci": intervals(logit, "acc", draws=draws, seed=seed,
                                             macro_by="category")["binomial"],
                   "acc_generated": gen["acc"]}
    return rows
