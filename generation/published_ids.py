"""The authors' clip ids and spellings (``ynklab/vocalgrad``) <-> this toolkit's vocabulary.

Their clip id is ``{test_item}__{source_clip}__{curve}__{low|mid|high}__{up|down}`` (no category);
ours is :func:`vocalgrad.clip_id`. :mod:`.published` re-exports every name here.
"""

from __future__ import annotations

import vocalgrad

__all__ = ["DIRECTION_TO_PUBLISHED", "TIER_TO_PUBLISHED", "benchmark_clip_id_of", "parse_benchmark_clip_id",
           "source_clip_of", "to_benchmark_clip_id", "to_clip_id"]

#: Our tier / direction -> the authors' spelling (their clip ids, ``tier`` and ``direction``).
TIER_TO_PUBLISHED: dict[str, str] = {"low": "low", "medium": "mid", "high": "high"}
DIRECTION_TO_PUBLISHED: dict[str, str] = {"increase": "up", "decrease": "down"}
_TIER_FROM = {v: k for k, v in TIER_TO_PUBLISHED.items()}
_DIRECTION_FROM = {v: k for k, v in DIRECTION_TO_PUBLISHED.items()}


def parse_benchmark_clip_id(bid: str, *, source_clip_id: str | None = None) -> dict[str, str]:
    """Split the authors' clip id ``{test_item}__{source_clip}__{curve}__{low|mid|high}__{up|down}``.

    Parameters
    ----------
    bid : str
        E.g. ``"p226_01__p226_106__linear__mid__up"`` (no category: ids repeat across categories).
    source_clip_id : str, optional
        The row's ``source_clip_id``; needed only when an id part itself contains ``__``.

    Returns
    -------
    dict
        ``source_id`` (the test item), ``source_clip_id``, ``trajectory``, and ``tier`` and
        ``direction`` in this toolkit's vocabulary (``medium``, ``increase``).
    """
    parts = str(bid).rsplit("__", 3)
    if len(parts) != 4 or parts[2] not in _TIER_FROM or parts[3] not in _DIRECTION_FROM \
            or parts[1] not in vocalgrad.TRAJECTORIES:
        raise ValueError(f"not a published VocalGrad clip id: {bid!r} (expected "
                         "{test_item}__{source_clip}__{curve}__{low|mid|high}__{up|down})")
    head = parts[0]
    if source_clip_id and head.endswith("__" + source_clip_id):
        item, clip = head[: -len(source_clip_id) - 2], source_clip_id
    else:
        item, sep, clip = head.partition("__")
        if not sep or not item or not clip or "__" in clip:
            raise ValueError(f"published clip id {bid!r}: cannot tell the test item from the source clip; "
                             "pass source_clip_id")
    return {"source_id": item, "source_clip_id": clip, "trajectory": parts[1],
            "tier": _TIER_FROM[parts[2]], "direction": _DIRECTION_FROM[parts[3]]}


def to_clip_id(bid: str, category_name: str, *, source_clip_id: str | None = None) -> str:
    """Our clip id for the authors' id of a clip of ``category_name`` (config name or internal id).

    >>> to_clip_id("p226_01__p226_106__linear__mid__up", "voice_pitch")
    'p226_01__pitch__linear__medium__increase'
    """
    f = parse_benchmark_clip_id(bid, source_clip_id=source_clip_id)
    return vocalgrad.clip_id(f["source_id"], vocalgrad.category(category_name).name, f["trajectory"],
                             f["tier"], f["direction"])


def to_benchmark_clip_id(cid: str, *, source_clip_id: str | None = None) -> str:
    """The authors' id of one of our clip ids (inverse of :func:`to_clip_id`).

    ``source_clip_id`` is the corpus utterance (VCTK ``p226_106``); it defaults to the source id,
    the rule the reference uses for corpora other than VCTK (benchmark.md §4a).

    >>> to_benchmark_clip_id("p226_01__pitch__linear__medium__increase", source_clip_id="p226_106")
    'p226_01__p226_106__linear__mid__up'
    """
    f = vocalgrad.parse_clip_id(cid)
    return "__".join((f["source_id"], source_clip_id or f["source_id"], f["trajectory"],
                      TIER_TO_PUBLISHED[f["tier"]], DIRECTION_TO_PUBLISHED[f["direction"]]))


def source_clip_of(row: dict) -> str:
    """The corpus utterance id of one of our rows (Hub or manifest columns).

    ``source_clip_id`` when the row has it (rows read from published data); else the
    ``sentence_id`` when it is a VCTK utterance id of the row's speaker (``p226`` -> ``p226_106``,
    what ``vocalgrad render --source vctk:`` writes); else the source id (benchmark.md §4a).
    """
    if row.get("source_clip_id"):
        return str(row["source_clip_id"])
    sent, spk = str(row.get("sentence_id") or ""), str(row.get("speaker_id") or "")
    if spk and sent.startswith(spk + "_"):
        return sent
    return str(row["source_id"])


def benchmark_clip_id_of(row: dict) -> str:
    """The authors' clip id of one of our rows (its ``benchmark_clip_id`` when it has one)."""
    if row.get("benchmark_clip_id"):
        return str(row["benchmark_clip_id"])
    return to_benchmark_clip_id(row.get("id") or row["clip_id"], source_clip_id=source_clip_of(row))
