"""``vocalgrad-oracle``: a signal-processing listener that answers from the clip alone.

It never sees the source utterance or the labels. For a clip it (1) finds the speech span
with the renderer's detector (:func:`generation.span.detect_span`, benchmark.md §5), (2) takes
the first and the last :data:`EDGE` share of the span, (3) computes one measurement per
attribute in both windows (:data:`generation.measures.MEASURES`, which tabulates them; an
extension attribute's own reference-free ``measure``, :mod:`generation.attributes`) and
(4) answers ``increase`` when the measurement is larger at the end. The category is read from the
prompt (its attribute phrase). It is the "what a simple listener gets" reference: a model
that cannot beat it is not using the acoustic evidence well.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import vocalgrad
from generation import attributes
from generation.measures import MEASURES
from generation.span import detect_span

from .. import prompts
from ..parsing import error_answer
from .base import Query, VocalGradLM

__all__ = ["EDGE", "OracleLM", "category_from_prompt", "measure", "oracle_direction"]

#: Share of the speech span used at each end.
EDGE = 0.3


def measure(category: str, y: np.ndarray, sr: int, *, edge: float = EDGE) -> tuple[float, float]:
    """The category's measurement in the first and last ``edge`` share of the speech span."""
    cat = vocalgrad.category(category).name
    y = np.asarray(y, dtype=np.float32)
    span = detect_span(y, sr)
    span = y[span.onset:span.offset]
    k = max(1, int(round(edge * span.size)))
    fn = MEASURES[cat] if cat in MEASURES else attributes.get(cat).measure  # extensions declare theirs
    return fn(span[:k], sr), fn(span[-k:], sr)


def oracle_direction(category: str, y: np.ndarray, sr: int) -> str | None:
    """``increase`` if the measurement is larger at the end, ``decrease`` if smaller, else None."""
    a, b = measure(category, y, sr)
    if not (np.isfinite(a) and np.isfinite(b)) or a == b:
        return None
    return "increase" if b > a else "decrease"


def _phrases() -> list[tuple[str, str]]:
    """(prompt phrase, name) of every installed attribute, longest phrase first."""
    return sorted(((a.phrase, a.name) for a in attributes.installed().values()), key=lambda p: -len(p[0]))


def category_from_prompt(prompt: str) -> str | None:
    """Category whose attribute phrase (or paraphrased question) appears in the prompt.

    The phrases are those of every installed attribute (the nine and the extensions).
    """
    low = prompt.lower()
    for name, question, _ in prompts.PARAPHRASES.values():
        if question.lower() in low:
            return name
    for name, (question, _, _) in prompts.REWORDINGS.items():
        if question.lower() in low:
            return name
    for phrase, name in _phrases():
        if f"the {phrase}" in low:
            return name
    return None


class OracleLM(VocalGradLM):
    """lm-eval adapter around :func:`oracle_direction` (no retry: answers always parse).

    A clip where the two measurements tie (or cannot be computed) gets the answer ``"unsure"``,
    which is unparsed and counts as wrong.
    """

    name = "vocalgrad-oracle"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def answer(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            cat = category_from_prompt(q.prompt)
            if cat is None:
                out.append(error_answer(f"oracle: no VocalGrad attribute in prompt {q.prompt[:60]!r}"))
                continue
            if not q.audios:
                out.append(error_answer(f"oracle: no audio for {q.clip_id}"))
                continue
            y, sr = q.audios[-1]["array"], q.audios[-1]["sampling_rate"]  # few-shot examples come first
            out.append(_in_task_words(oracle_direction(cat, y, sr), q.answer_words))
        return out


def _in_task_words(direction: str | None, words: dict | None) -> str:
    """The oracle's direction said in the task's answer words (paraphrase, yes/no, ternary)."""
    if direction is None:
        return "unsure"
    if not words:
        return direction
    if direction in words:
        return words[direction][0]
    if set(words) == set(prompts.ANSWER_WORDS["yesno"]):
        return words["yes" if direction == "increase" else "no"][0]
    return direction
