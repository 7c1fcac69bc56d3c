"""A checkpoint's reasoning delimiters at the token level: which special tokens decoding keeps,
and whether the chat template opens the reasoning block in the generation prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["delimiter_token_ids", "special_token_ids", "template_opens_reasoning"]


def special_token_ids(tokenizer: Any) -> set[int]:
    """Ids of the tokenizer's special tokens: ``all_special_ids`` and the added tokens marked special
    (tokenizers without an ``added_tokens_decoder`` mapping, e.g. mistral-common's, add none)."""
    special = {int(i) for i in getattr(tokenizer, "all_special_ids", []) or []}
    added = getattr(tokenizer, "added_tokens_decoder", None)
    if isinstance(added, dict):
        special |= {int(i) for i, t in added.items() if getattr(t, "special", False)}
    return special


def delimiter_token_ids(tokenizer: Any, pairs: Sequence[Sequence[str]]) -> list[int]:
    """Ids of the special tokens inside the delimiters (kept by
    :func:`harness_tasks.models.families.decoding.decode_answers`)."""
    if not pairs:
        return []
    special = special_token_ids(tokenizer)
    out: list[int] = []
    for pair in pairs:
        for text in pair:
            for tid in tokenizer(text, add_special_tokens=False)["input_ids"]:
                if int(tid) in special and int(tid) not in out:
                    out.append(int(tid))
    return out


def template_opens_reasoning(lm: Any, family: Any, item: Any) -> bool:
    """True when the generation prompt rendered for ``item`` (a short text-only item) ends with an
    opening delimiter (a template that prefills ``<think>\\n``): the reply then starts inside the block."""
    try:
        conv = family.conversation(item, [], lm.sampling_rate)
        text = family.render(lm, [conv])[0]
    except Exception:          # a template that cannot render a text-only turn: nothing known
        return False
    tail = str(text).rstrip()
    return any(tail.endswith(open_.rstrip()) for open_, _ in family.reasoning)
