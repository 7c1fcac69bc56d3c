"""Trivial reference answerers: ``vocalgrad-chance`` and ``vocalgrad-constant``.

Neither looks at the audio. ``chance`` draws each answer from a generator seeded by
``seed`` and the clip id, so an answer never depends on request order, batch size or
``--limit``. ``constant`` always answers the same direction (response-bias extremes:
accuracy 0.5 on a balanced set, increase ratio 1 or 0).

Tasks with their own answer words (paraphrase, yes/no, ternary: the request's
``answer_words``) get answers in those words: ``chance`` draws a label (``p_increase`` for
``increase`` when the labels are the two directions, else uniformly) and says its first
word; ``constant`` says the first word of its label when the task has that label.
"""

from __future__ import annotations

import hashlib
from typing import Any

import vocalgrad

from .. import prompts
from .base import ModelArgumentError, Query, VocalGradLM, float_arg, int_arg

__all__ = ["ChanceLM", "ConstantLM"]


class ChanceLM(VocalGradLM):
    """Answer ``increase`` or ``decrease`` at random.

    Parameters
    ----------
    seed : int
        Seed; the answer for a clip is a function of ``(seed, clip id, prompt)``.
    p_increase : float
        Probability of answering ``increase`` (0.5 = unbiased).
    """

    name = "vocalgrad-chance"

    def __init__(self, *, seed: Any = 1234, p_increase: Any = 0.5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed = int_arg(seed, "seed")
        self.p_increase = float_arg(p_increase, "p_increase")
        if not 0.0 <= self.p_increase <= 1.0:
            raise ModelArgumentError(f"p_increase must be in [0, 1], got {p_increase!r}")

    def answer(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            h = hashlib.sha256(f"{self.seed}\x00{q.clip_id}\x00{q.prompt}".encode()).digest()
            u = int.from_bytes(h[:8], "big") / 2**64
            words = q.answer_words
            if words is None or set(words) == set(vocalgrad.DIRECTIONS):
                label = "increase" if u < self.p_increase else "decrease"
                out.append(label if words is None else words[label][0])
            else:
                labels = list(words)
                out.append(words[labels[min(int(u * len(labels)), len(labels) - 1)]][0])
        return out


class ConstantLM(VocalGradLM):
    """Always answer the same direction.

    Parameters
    ----------
    direction : {"increase", "decrease", "constant", "yes", "no"}
        The label to give; in a task with its own answer words, said as that label's first
        word (``increase`` -> ``rise`` for the volume paraphrase).
    """

    name = "vocalgrad-constant"

    LABELS: tuple[str, ...] = (*vocalgrad.DIRECTIONS, vocalgrad.CONSTANT, *prompts.ANSWER_WORDS["yesno"])

    def __init__(self, *, direction: str = "increase", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if direction not in self.LABELS:
            raise ModelArgumentError(f"direction must be one of {self.LABELS}, got {direction!r}")
        self.direction = direction

    def answer(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            words = q.answer_words or {}
            out.append(words[self.direction][0] if self.direction in words else self.direction)
        return out
