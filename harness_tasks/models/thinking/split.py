"""Reasoning blocks in model replies: the delimiters and the one split rule of every route (hf,
worker, openai-compatible).

A thinking model writes its reasoning before the answer, between two delimiters
(``<think>`` ... ``</think>`` for Qwen3 / Qwen3-Omni Thinking, Nemotron and most servers run
without a reasoning parser; ``<|channel>thought`` ... ``<channel|>`` for Gemma 4's thought
channel). The answer parser (benchmark.md §7) must read only what follows the block: the
reasoning names both directions while it weighs them. :func:`split_reasoning` separates the two;
the adapters' base class (:meth:`harness_tasks.models.base.VocalGradLM.generate_until`, through
:class:`.route.ReasoningRoute`) and the task hooks call it, so the raw reply (reasoning included) stays in the answer log and in lm-eval's
sample log, and the parser sees the answer alone.

Rules (``delimiters``: one ``(open, close)`` pair or several):

- a reply that starts (after white space) with an ``open`` delimiter: the reasoning runs to the
  first matching ``close``; the answer is the text after it. No ``close``: the reply ended inside
  the reasoning (the token budget ran out), the answer is empty and ``cut_off`` is True;
- a reply with a ``close`` delimiter and no ``open`` before it (the chat template opened the block
  in the prompt, as Qwen3 Thinking templates do with ``<think>\\n``): the reasoning is the text
  before ``close``;
- ``opened=True`` (the family's template always opens the block) and no ``close``: the whole reply
  is reasoning, cut off;
- anything else: no reasoning; the reply is the answer.

Examples
--------
>>> split_reasoning("<think>rises? falls?</think>\\n\\nincrease")
('rises? falls?', 'increase', False)
>>> split_reasoning("<think>it rises, or does it decrease")
('it rises, or does it decrease', '', True)
>>> split_reasoning("increase")
('', 'increase', False)
>>> split_reasoning("<|channel>thought\\nhmm<channel|>decrease", GEMMA4_CHANNEL)
('hmm', 'decrease', False)
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["GEMMA4_CHANNEL", "KNOWN_DELIMITERS", "THINK", "answer_text", "as_pairs", "join_reasoning", "split_reasoning"]

#: ``<think>`` ... ``</think>``: Qwen3 / Qwen3-Omni Thinking, Nemotron, DeepSeek-R1-style servers.
THINK: tuple[str, str] = ("<think>", "</think>")
#: Gemma 4's thought channel (the delimiters transformers' own server parses for ``gemma4``).
GEMMA4_CHANNEL: tuple[str, str] = ("<|channel>thought", "<channel|>")
#: Every delimiter pair the toolkit knows; a reply opening with any of them is read after the block.
KNOWN_DELIMITERS: tuple[tuple[str, str], ...] = (THINK, GEMMA4_CHANNEL)


def as_pairs(delimiters: Sequence[str] | Sequence[Sequence[str]] | None) -> tuple[tuple[str, str], ...]:
    """``delimiters`` as a tuple of ``(open, close)`` pairs (one pair or several; None: none)."""
    if not delimiters:
        return ()
    if len(delimiters) == 2 and all(isinstance(d, str) for d in delimiters):
        pairs = [tuple(delimiters)]
    else:
        pairs = [tuple(p) for p in delimiters]
    for p in pairs:
        if len(p) != 2 or not all(isinstance(d, str) and d for d in p):
            raise ValueError(f"reasoning delimiters must be (open, close) pairs of non-empty strings, got {p!r}")
    return tuple(pairs)  # type: ignore[return-value]


def split_reasoning(text: object, delimiters: Sequence[str] | Sequence[Sequence[str]] | None = KNOWN_DELIMITERS,
                    *, opened: bool = False) -> tuple[str, str, bool]:
    """Split a reply into ``(reasoning, answer, cut_off)`` (rules in the module docstring).

    Parameters
    ----------
    text : str
        The raw reply (special tokens that delimit the reasoning kept). A non-string (no reply)
        gives ``("", text, False)`` unchanged.
    delimiters : (open, close) or sequence of (open, close)
        The reasoning delimiters of the model (default: :data:`KNOWN_DELIMITERS`).
    opened : bool
        The prompt itself opened the reasoning block (so a reply without ``close`` is all reasoning).

    Returns
    -------
    reasoning : str
        The reasoning without its delimiters, stripped of surrounding white space ("" if none).
    answer : str
        What the parser reads: the text after the block, leading white space removed.
    cut_off : bool
        The reply ended inside the reasoning (no closing delimiter).
    """
    if not isinstance(text, str):
        return "", text, False  # type: ignore[return-value]
    pairs = as_pairs(delimiters)
    body = text.lstrip()
    for open_, close in pairs:
        if body.startswith(open_):
            rest = body[len(open_):]
            if close in rest:
                reasoning, answer = rest.split(close, 1)
                return reasoning.strip(), answer.lstrip(), False
            return rest.strip(), "", True
    closes = [(body.find(close), close) for _, close in pairs if close in body]
    if closes:
        at, close = min(closes)
        return body[:at].strip(), body[at + len(close):].lstrip(), False
    if opened and pairs:
        return body.strip(), "", True
    return "", text, False


def answer_text(text: object, delimiters: Sequence[str] | Sequence[Sequence[str]] | None = KNOWN_DELIMITERS) -> object:
    """The part of a reply the parser reads (:func:`split_reasoning`'s ``answer``)."""
    return split_reasoning(text, delimiters)[1]


def join_reasoning(reasoning: str, answer: str, delimiters: Sequence[str] | Sequence[Sequence[str]] | None = THINK,
                   *, cut_off: bool = False) -> str:
    """The reply :func:`split_reasoning` splits back into ``(reasoning, answer, cut_off)``: a server's
    reasoning parser returns the two apart (vLLM's ``reasoning``, SGLang's ``reasoning_content``), the
    logs keep them as the model wrote them. No reasoning: ``answer`` unchanged; ``cut_off``: the block
    is left open (the reply ended inside it).

    >>> join_reasoning("up or down?", "increase")
    '<think>\\nup or down?</think>increase'
    >>> split_reasoning(join_reasoning("up or down?", "", cut_off=True))
    ('up or down?', '', True)
    """
    if not reasoning:
        return answer
    open_, close = (as_pairs(delimiters) or (THINK,))[0]
    return f"{open_}\n{reasoning}" + ("" if cut_off else f"{close}{answer}")
