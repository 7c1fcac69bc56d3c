"""The official VocalGrad answer parser (SPEC §7).

An answer is *parsed* when its case-insensitive whole-word matches of ``increase``,
``increases``, ``decrease`` or ``decreases`` name exactly one direction (repeats allowed).
Everything else is *unparsed* and scores as wrong: empty or missing text, no match, both
directions (*ambiguous*), inflected forms such as ``increased`` or ``increasing``, and
answers that a model adapter marked as errors. There is no negation handling
(``"does not increase"`` parses as ``increase``) and an unparsed answer is never replaced
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

__all__ = [
    "ERROR_MARKER",
    "STATUSES",
    "classify_answer",
    "error_answer",
    "is_error_answer",
    "is_exact_match",
    "parse_direction",
]

#: Prefix that model adapters put in front of the text they return for a failed request
#: (API error, timeout, ...). Such an answer is unparsed with status ``"error"``.
ERROR_MARKER = "<<vocalgrad:error>> "

#: Answer statuses: parsed, no direction word, both directions, adapter error.
STATUSES: tuple[str, ...] = ("parsed", "unparsed", "ambiguous", "error")

_WORDS = re.compile(r"\b(increases?|decreases?)\b", re.IGNORECASE)
_EXACT = re.compile(r"(increase|decrease)\.?", re.IGNORECASE)


def error_answer(reason: str) -> str:
    """Text a model adapter returns for a request that failed (``reason`` is kept for logs)."""
    return ERROR_MARKER + " ".join(str(reason).split())


def is_error_answer(text: object) -> bool:
    """True when ``text`` was produced by :func:`error_answer`."""
    return isinstance(text, str) and text.startswith(ERROR_MARKER)


def classify_answer(text: object) -> tuple[str | None, str]:
    """Parse an answer and say why it is (un)parsed.

    Parameters
    ----------
    text : str or None
        Raw model output. ``None`` (no output) counts as unparsed.

    Returns
    -------
    label : {"increase", "decrease"} or None
        The direction named by the answer, ``None`` unless ``status == "parsed"``.
    status : {"parsed", "unparsed", "ambiguous", "error"}
        ``"ambiguous"``: both directions are named; ``"error"``: the adapter marked the
        request as failed; ``"unparsed"``: anything else without a valid match.
    """
    if text is None:
        return None, "unparsed"
    if not isinstance(text, str):
        raise TypeError(f"answer must be a string or None, got {type(text).__name__}")
    if is_error_answer(text):
        return None, "error"
    found = {m.group(1).lower().rstrip("s") for m in _WORDS.finditer(text)}
    if len(found) == 1:
        return found.pop(), "parsed"
    return None, ("ambiguous" if found else "unparsed")


def parse_direction(text: object) -> str | None:
    """Return ``"increase"``, ``"decrease"`` or ``None`` (unparsed) for a raw answer (SPEC §7)."""
    return classify_answer(text)[0]


def is_exact_match(text: object) -> bool:
    """True when the raw answer is exactly one direction word.

    Surrounding whitespace and one final period are ignored, and case is ignored
    (``" Increase.\\n"`` is an exact match; ``'"increase"'`` and ``"increases"`` are not).
    """
    if not isinstance(text, str) or is_error_answer(text):
        return False
    return _EXACT.fullmatch(text.strip()) is not None
