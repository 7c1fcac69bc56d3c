"""Answers scored by logits (``vocalgrad-hf`` model argument ``scoring=logits`` / ``both``).

The adapter compares the next-token log-probabilities of the first token of each label's
answer word after the prompt (:meth:`harness_tasks.models.families.LoadedModel.answer_logprobs`)
and writes the choice into the answer text itself, as a tag after the text::

    increase
    <<vocalgrad:logit_increase lp_increase=-1.2034 lp_decrease=-2.5180>>

so that it survives lm-eval's sample log, ``--use_cache`` and the answer log. Every label
inside the tag is glued to ``_``, so the answer parser (whole words) never reads the tag: the
text before it is parsed as usual. With ``scoring=logits`` that text is the chosen label's
word (no generation); with ``scoring=both`` it is the generated answer.

The task scores the tag as ``acc_logit`` and ``increase_ratio_logit`` (see
:func:`harness_tasks.utils.process_results`); answers without a tag leave those metrics ``nan``.

Examples
--------
>>> raw = logit_answer("increase", {"increase": -1.2, "decrease": -2.5}, text="increase")
>>> split_logit_answer(raw)
('increase', 'increase', {'increase': -1.2, 'decrease': -2.5})
>>> split_logit_answer("it rises")
('it rises', None, {})
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["LOGIT_TAG", "logit_answer", "split_logit_answer"]

#: Start of the tag; the chosen label follows, glued.
LOGIT_TAG = "<<vocalgrad:logit_"
_TAG = re.compile(r"\n?<<vocalgrad:logit_(\w+?)((?: lp_\w+=[^\s>]+)*)>>\s*$")
_SCORE = re.compile(r"lp_(\w+?)=(\S+)")


def logit_answer(label: str, scores: Mapping[str, float], *, text: str = "") -> str:
    """``text`` followed by the logit tag of ``label`` and every label's log-probability."""
    if label not in scores:
        raise ValueError(f"chosen label {label!r} is not among the scored labels {list(scores)}")
    for name in scores:
        if not re.fullmatch(r"\w+", str(name)):
            raise ValueError(f"label {name!r} must be one word for the logit tag")
    body = " ".join(f"lp_{k}={float(v):.4f}" for k, v in scores.items())
    return f"{text}\n{LOGIT_TAG}{label} {body}>>"


def split_logit_answer(raw: object) -> tuple[object, str | None, dict[str, float]]:
    """``(text, chosen label or None, {label: log-prob})`` of an answer (no tag: ``(raw, None, {})``)."""
    if not isinstance(raw, str) or LOGIT_TAG not in raw:
        return raw, None, {}
    m = _TAG.search(raw)
    if m is None:
        raise ValueError(f"malformed logit tag in answer {raw[-200:]!r}")
    scores = {k: float(v) for k, v in _SCORE.findall(m.group(2))}
    return raw[:m.start()], m.group(1), scores
