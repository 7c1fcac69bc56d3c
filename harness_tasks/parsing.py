"""The official VocalGrad answer parser (benchmark.md §7).

An answer is *parsed* when its case-insensitive whole-word matches of ``increase``,
``increases``, ``decrease`` or ``decreases`` name exactly one direction (repeats allowed).
Everything else is *unparsed* and scores as wrong: empty or missing text, no match, both
directions (*ambiguous*), inflected forms such as ``increased`` or ``increasing``,
answers that a model adapter marked as errors, and replies the provider *blocked* (a safety or
recitation filter: :func:`blocked_answer`; never parsed, even when the provider sent text).
There is no negation handling (``"does not increase"`` parses as ``increase``) and an unparsed answer is never replaced
by a guess.

Examples
--------
>>> parse_direction("Increase.")
'increase'
>>> parse_direction("It decreases, then decreases again")
'decrease'
>>> parse_direction("increase or decrease") is None
True
>>> parse_direction("It increased") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

__all__ = [
    "BLOCKED_MARKER",
    "ERROR_MARKER",
    "STATUSES",
    "blocked_answer",
    "classify_answer",
    "error_answer",
    "is_blocked_answer",
    "is_error_answer",
    "is_marked_answer",
    "is_exact_match",
    "parse_direction",
    "parse_label",
]

#: Prefix that model adapters put in front of the text they return for a failed request
#: (API error, timeout, ...). Such an answer is unparsed with status ``"error"``.
ERROR_MARKER = "<<vocalgrad:error>> "

#: Prefix that model adapters put in front of a reply the provider blocked (Gemini's finish reason
#: SAFETY, RECITATION, PROHIBITED_CONTENT, BLOCKLIST, SPII or a blocked prompt; OpenAI's
#: ``content_filter`` or ``refusal``). Such an answer is unparsed with status ``"blocked"``: asked
#: once, never re-asked, never parsed (docs/models.md, "Blocked replies").
BLOCKED_MARKER = "<<vocalgrad:blocked>> "

#: Answer statuses: parsed, no direction word, both directions, adapter error, blocked by the provider.
STATUSES: tuple[str, ...] = ("parsed", "unparsed", "ambiguous", "error", "blocked")

_WORDS = re.compile(r"\b(increases?|decreases?)\b", re.IGNORECASE)
_EXACT = re.compile(r"(increase|decrease)\.?", re.IGNORECASE)


def error_answer(reason: str) -> str:
    """Text a model adapter returns for a request that failed (``reason`` is kept for logs)."""
    return ERROR_MARKER + " ".join(str(reason).split())


def is_error_answer(text: object) -> bool:
    """True when ``text`` was produced by :func:`error_answer`."""
    return isinstance(text, str) and text.startswith(ERROR_MARKER)


def blocked_answer(reason: str) -> str:
    """Text a model adapter returns for a reply the provider blocked (``reason``: its signal, e.g.
    ``finish_reason SAFETY``; any text the provider sent is not kept as an answer)."""
    return BLOCKED_MARKER + " ".join(str(reason).split())


def is_blocked_answer(text: object) -> bool:
    """True when ``text`` was produced by :func:`blocked_answer`."""
    return isinstance(text, str) and text.startswith(BLOCKED_MARKER)


def is_marked_answer(text: object) -> bool:
    """True for an adapter's error answer or blocked answer: no model text to read or parse."""
    return is_error_answer(text) or is_blocked_answer(text)


def classify_answer(text: object, words: Mapping[str, Sequence[str]] | None = None) -> tuple[str | None, str]:
    """Parse an answer and say why it is (un)parsed.

    Parameters
    ----------
    text : str or None
        Raw model output. ``None`` (no output) counts as unparsed.
    words : mapping of label -> sequence of str, optional
        Answer vocabulary of a prompt variant (:func:`harness_tasks.prompts.answer_words`), e.g.
        ``{"increase": ("rise", "rises"), "decrease": ("fall", "falls")}``. The same rule
        applies to it as to the default words (benchmark.md §7): case-insensitive whole-word matches
        must name exactly ONE label (repeats allowed). ``None``: the benchmark.md §7 words.

    Returns
    -------
    label : str or None
        The label named by the answer (``"increase"``/``"decrease"`` for the default
        words), ``None`` unless ``status == "parsed"``.
    status : {"parsed", "unparsed", "ambiguous", "error", "blocked"}
        ``"ambiguous"``: more than one label is named; ``"error"``: the adapter marked the
        request as failed; ``"blocked"``: the provider blocked the reply; ``"unparsed"``: anything
        else without a valid match.
    """
    if text is None:
        return None, "unparsed"
    if not isinstance(text, str):
        raise TypeError(f"answer must be a string or None, got {type(text).__name__}")
    if is_error_answer(text):
        return None, "error"
    if is_blocked_answer(text):
        return None, "blocked"
    if words is None:
        found = {m.group(1).lower().rstrip("s") for m in _WORDS.finditer(text)}
    else:
        pattern, label_of, _ = _compile(_freeze(words))
        found = {label_of[m.group(1).lower()] for m in pattern.finditer(text)}
    if len(found) == 1:
        return found.pop(), "parsed"
    return None, ("ambiguous" if found else "unparsed")


def _freeze(words: Mapping[str, Sequence[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if isinstance(words, tuple):
        return words
    try:
        return tuple((str(label), tuple(str(w) for w in ws)) for label, ws in words.items())
    except AttributeError:
        raise TypeError(f"answer words must map label -> list of words, got {type(words).__name__}") from None


@lru_cache(maxsize=256)
def _compile(frozen: tuple[tuple[str, tuple[str, ...]], ...]):
    label_of: dict[str, str] = {}
    for label, ws in frozen:
        if not ws:
            raise ValueError(f"answer label {label!r} has no words")
        for w in ws:
            key = w.lower()
            if not re.fullmatch(r"\w+", key):
                raise ValueError(f"answer word {w!r} of label {label!r} must be one word")
            if label_of.setdefault(key, label) != label:
                raise ValueError(f"answer word {w!r} names two labels ({label_of[key]!r} and {label!r})")
    alts = "|".join(re.escape(w) for w in sorted(label_of, key=len, reverse=True))
    pattern = re.compile(rf"\b({alts})\b", re.IGNORECASE)  # whole words, as benchmark.md §7
    exact = re.compile(rf"({'|'.join(re.escape(ws[0]) for _, ws in frozen)})\.?", re.IGNORECASE)
    return pattern, label_of, exact


def parse_label(text: object, words: Mapping[str, Sequence[str]]) -> str | None:
    """The label an answer names under ``words`` (see :func:`classify_answer`), else ``None``."""
    return classify_answer(text, words)[0]


def parse_direction(text: object) -> str | None:
    """Return ``"increase"``, ``"decrease"`` or ``None`` (unparsed) for a raw answer (benchmark.md §7)."""
    return classify_answer(text)[0]


def is_exact_match(text: object, words: Mapping[str, Sequence[str]] | None = None) -> bool:
    """True when the raw answer is exactly one answer word.

    Surrounding whitespace and one final period are ignored, and case is ignored
    (``" Increase.\\n"`` is an exact match; ``'"increase"'`` and ``"increases"`` are not).
    With ``words`` (see :func:`classify_answer`) the exact forms are the first word of each
    label (the word the prompt asks for).
    """
    if not isinstance(text, str) or is_marked_answer(text):
        return False
    exact = _EXACT if words is None else _compile(_freeze(words))[2]
    return exact.fullmatch(text.strip()) is not None
