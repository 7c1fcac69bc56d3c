"""How many answers the model adapters of this process gave, and how many were error answers.

``vocalgrad-eval`` ends with one line and exit status 2 when every request of a run got an error
answer (a server answering HTTP 500 to all): :func:`harness_tasks.cli.every_request_failed`.
"""

from __future__ import annotations

__all__ = ["answer_tally", "count_answers"]

_TALLY: dict = {"answers": 0, "errors": 0, "first": ""}


def count_answers(n: int, errors: list[tuple[str, str]]) -> None:
    """Add ``n`` answers of one ``generate_until`` call, ``errors`` the (clip id, error answer) among them."""
    _TALLY["answers"] += n
    _TALLY["errors"] += len(errors)
    if errors and not _TALLY["first"]:
        _TALLY["first"] = " ".join(f"{errors[0][0]}: {errors[0][1][:200]}".split())


def answer_tally(*, reset: bool = False) -> dict:
    """``{"answers": N, "errors": K, "first": TEXT}`` so far in this process (``reset``: from zero)."""
    if reset:
        _TALLY.update(answers=0, errors=0, first="")
    return dict(_TALLY)
