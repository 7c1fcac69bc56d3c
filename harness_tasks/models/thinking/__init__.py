"""Thinking models, in one place: the reasoning delimiters, the split of a reply into reasoning and
answer, the reasoning budget, and what a checkpoint's tokenizer and chat template say about them.

===============================  =============================================================
:mod:`.split`                    delimiters (:data:`THINK`, :data:`GEMMA4_CHANNEL`,
                                 :data:`KNOWN_DELIMITERS`), :func:`split_reasoning`,
                                 :func:`answer_text`, :func:`join_reasoning` (torch-free; the scorer and the report
                                 read answers through it)
:mod:`.route`                    :class:`ReasoningRoute` (mixed into every adapter: budget,
                                 parser text, counts, the results file's ``reasoning`` card),
                                 :func:`parse_budget`, :data:`DEFAULT_REASONING_BUDGET`,
                                 :func:`parse_thinking` (``thinking=auto|on|off``)
:mod:`.tokens`                   :func:`delimiter_token_ids` (special tokens decoding keeps),
                                 :func:`template_opens_reasoning` (the generation prompt opens
                                 the block), :func:`special_token_ids`
===============================  =============================================================

Import from this package (``from harness_tasks.models.thinking import split_reasoning``); the
submodules are its parts.
"""

from __future__ import annotations

from .route import DEFAULT_REASONING_BUDGET, THINKING_MODES, ReasoningRoute, parse_budget, parse_thinking
from .split import GEMMA4_CHANNEL, KNOWN_DELIMITERS, THINK, answer_text, as_pairs, join_reasoning, split_reasoning
from .tokens import delimiter_token_ids, special_token_ids, template_opens_reasoning

__all__ = ["DEFAULT_REASONING_BUDGET", "GEMMA4_CHANNEL", "KNOWN_DELIMITERS", "THINK", "THINKING_MODES",
           "ReasoningRoute", "answer_text", "as_pairs", "delimiter_token_ids", "join_reasoning", "parse_budget", "parse_thinking",
           "special_token_ids", "split_reasoning", "template_opens_reasoning"]
