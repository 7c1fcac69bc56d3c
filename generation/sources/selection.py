"""Deterministic selection of test and train sources from a corpus (benchmark.md §6).

Test
    ``n_speakers`` speakers (default 50) balanced by gender, and within each gender by accent group,
    each contributing ``per_speaker`` utterances (default 2) of at least ``min_duration`` seconds
    (default 3 s). Test item ids are ``{speaker}_{NN}``; the corpus utterance id is kept as
    ``sentence_id``.
Train
    ``n_train`` utterances (default 500) from speakers disjoint from the test speakers, whose
    transcripts occur neither in the test selection nor twice in the train selection.

Every random choice is a ranking by ``sha256(f"{seed}:{key}")``, so the result depends only on the
seed and the corpus content (not on file-system order, Python or NumPy versions). Balancing fills
groups as evenly as their sizes allow ("water-filling"): a group with too few speakers gives its
share to the others.

A corpus without speaker ids is handled in *utterance mode*: every utterance counts as its own
speaker, the test takes ``n_speakers * per_speaker`` utterances (balanced by gender when known) and
the ids are kept.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from typing import Callable, Iterable, Sequence

from .base import SelectionPlan, SourceItem, SourceOptions, SourceSpecError, audio_duration, safe_id

__all__ = [
    "SelectionError",
    "SelectionPlan",
    "accent_group",
    "interleave",
    "normalise_text",
    "rank_key",
    "select",
    "select_sources",
    "select_test",
    "select_train",
    "water_fill",
]


class SelectionError(SourceSpecError):
    """The corpus cannot supply the requested selection; the message says what was found."""


#: Accent group of each VCTK accent label (benchmark.md §6 "accent group"); other labels map to "Other".
_ACCENT_GROUPS = {
    "english": "English",
    "scottish": "Scottish",
    "irish": "Irish",
    "northernirish": "Irish",
    "american": "NorthAmerican",
    "canadian": "NorthAmerican",
}


def accent_group(accent: str) -> str:
    """Map a corpus accent label to its balancing group.

    English, Scottish, Irish (with Northern Irish) and North American (American, Canadian) are
    groups of their own; every other label (Welsh, Indian, Australian, ...) is ``"Other"``, and an
    empty label is ``""``.
    """
    key = re.sub(r"[^a-z]", "", accent.lower())
    if not key:
        return ""
    return _ACCENT_GROUPS.get(key, "Other")


def normalise_text(text: str) -> str:
    """Lower-case ``text`` and keep only letters, digits and single spaces (transcript identity)."""
    return " ".join(re.sub(r"[^0-9a-z']+", " ", text.lower()).split())


def rank_key(seed: int, key: str) -> bytes:
    """Seeded, order-independent ranking key of ``key``."""
    return hashlib.sha256(f"{seed}:{key}".encode("utf-8")).digest()


def water_fill(capacity: dict[str, int], total: int, *, seed: int, salt: str = "") -> dict[str, int]:
    """Share ``total`` among groups as evenly as their capacities allow.

    Parameters
    ----------
    capacity : dict
        Group -> number of available members.
    total : int
        Number to allocate; at most ``sum(capacity.values())`` is allocated.
    seed : int
        Decides which groups get one more when the remainder does not divide evenly.
    salt : str
        Distinguishes independent fills with the same seed.

    Returns
    -------
    dict
        Group -> allocated count (every group of ``capacity`` present).
    """
    alloc = {g: 0 for g in capacity}
    left = min(total, sum(capacity.values()))
    while left > 0:
        open_ = sorted((g for g in capacity if alloc[g] < capacity[g]), key=lambda g: rank_key(seed, salt + g))
        share = left // len(open_)
        if share == 0:
            for g in open_[:left]:
                alloc[g] += 1
            break
        for g in open_:
            give = min(share, capacity[g] - alloc[g])
            alloc[g] += give
            left -= give
    return alloc


def interleave(queues: dict[str, list], *, seed: int, salt: str = "") -> list:
    """Merge ``queues`` so that every prefix is as balanced as the queue lengths allow.

    At each step the queue with the smallest ``(taken + 1) / length`` gives its next member
    (ties: seeded group order), so a prefix of any size holds each group in proportion to its
    share of the whole; two equal groups alternate.
    """
    order = sorted(queues, key=lambda g: rank_key(seed, salt + g))
    taken = {g: 0 for g in order}
    out = []
    total = sum(len(q) for q in queues.values())
    while len(out) < total:
        g = min((g for g in order if taken[g] < len(queues[g])), key=lambda g: (taken[g] + 1) / len(queues[g]))
        out.append(queues[g][taken[g]])
        taken[g] += 1
    return out


def _describe(groups: dict[str, int]) -> str:
    return ", ".join(f"{g or '?'}: {n}" for g, n in sorted(groups.items())) or "none"


def select_test(
    items: Sequence[SourceItem],
    *,
    plan: SelectionPlan,
    duration_of: Callable[[SourceItem], float],
    where: str,
) -> list[SourceItem]:
    """Choose the test sources.

    Parameters
    ----------
    items : sequence of SourceItem
        Every candidate utterance of the corpus.
    plan : SelectionPlan
    duration_of : callable
        Duration in seconds of an item (called lazily, on few items per speaker).
    where : str
        The corpus, named in error messages.

    Returns
    -------
    list of SourceItem
        Ordered by utterance number, then by speaker in an order that keeps gender, and within a
        gender the accent group, balanced at every prefix (:func:`interleave`), so that the first N
        items cover N speakers as balanced as the selection allows (``--sources N``). With speaker
        ids, items are renamed ``{speaker}_{NN}`` and the original id is kept in ``sentence_id`` and
        ``extra["corpus_id"]``.

    Raises
    ------
    SelectionError
        Fewer eligible speakers than asked and ``plan.allow_small`` is false.
    """
    if plan.n_speakers < 1 or plan.per_speaker < 1:
        raise SelectionError(f"{where}: n_speakers and per_speaker must be >= 1")
    utterance_mode = not any(it.speaker_id for it in items)
    by_speaker: dict[str, list[SourceItem]] = {}
    for it in items:
        key = it.source_id if utterance_mode else it.speaker_id
        by_speaker.setdefault(key, []).append(it)
    per = 1 if utterance_mode else plan.per_speaker
    wanted = plan.n_speakers * plan.per_speaker if utterance_mode else plan.n_speakers

    chosen_utts, groups = _eligible(by_speaker, plan, per, duration_of)
    if len(chosen_utts) < wanted and not plan.allow_small:
        unit = "utterances" if utterance_mode else "speakers"
        by_gender: dict[str, int] = {}
        for (g, _), spks in groups.items():
            by_gender[g] = by_gender.get(g, 0) + len(spks)
        need = (f"{wanted} utterances of >= {plan.min_duration:g} s" if utterance_mode else
                f"{wanted} speakers with {per} utterances of >= {plan.min_duration:g} s each")
        raise SelectionError(
            f"{where}: the test selection needs {need}; found {len(chosen_utts)} eligible {unit} "
            f"(by gender: {_describe(by_gender)}) among {len(by_speaker)} {unit} and {len(items)} utterances. "
            f"Use --allow-small to take a smaller balanced selection, or ask for fewer."
        )
    selected = _balanced_order(groups, wanted, plan.seed)
    return _by_utterance_number(selected, chosen_utts, utterance_mode)


def _eligible(by_speaker: dict[str, list[SourceItem]], plan: SelectionPlan, per: int,
              duration_of: Callable[[SourceItem], float]):
    """Walk the speakers in seeded order; a speaker is eligible when ``per`` of its utterances (in
    seeded order) are long enough. Returns speaker -> those utterances, and (gender, accent group)
    -> eligible speakers in walking order."""
    chosen_utts: dict[str, list[SourceItem]] = {}
    groups: dict[tuple[str, str], list[str]] = {}
    for spk in sorted(by_speaker, key=lambda s: rank_key(plan.seed, "spk:" + s)):
        utts = sorted(by_speaker[spk], key=lambda it: rank_key(plan.seed, "utt:" + it.source_id))
        picked = []
        for it in utts:
            if duration_of(it) >= plan.min_duration:
                picked.append(it)
                if len(picked) == per:
                    break
        if len(picked) < per:
            continue
        chosen_utts[spk] = picked
        first = by_speaker[spk][0]
        groups.setdefault((first.gender, accent_group(first.accent)), []).append(spk)
    return chosen_utts, groups


def _balanced_order(groups: dict[tuple[str, str], list[str]], wanted: int, seed: int) -> list[str]:
    """``wanted`` speakers shared out over genders, then accent groups (:func:`water_fill`), in an
    order balanced at every prefix (:func:`interleave`)."""
    genders = sorted({g for g, _ in groups})
    gender_cap = {g: sum(len(s) for (gg, _), s in groups.items() if gg == g) for g in genders}
    gender_alloc = water_fill(gender_cap, wanted, seed=seed, salt="gender:")
    per_gender: dict[str, list[str]] = {}
    for g in genders:
        accents = {a: len(s) for (gg, a), s in groups.items() if gg == g}
        accent_alloc = water_fill(accents, gender_alloc[g], seed=seed, salt=f"accent:{g}:")
        # groups keep the seeded speaker order; accents take turns in proportion to their shares
        per_gender[g] = interleave({a: groups[(g, a)][:n] for a, n in accent_alloc.items() if n},
                                   seed=seed, salt=f"order:{g}:")
    return interleave(per_gender, seed=seed, salt="order:gender:")


def _by_utterance_number(selected: list[str], chosen_utts: dict[str, list[SourceItem]],
                         utterance_mode: bool) -> list[SourceItem]:
    """The chosen utterances ordered by utterance number, then speaker rank; with speaker ids,
    renamed ``{speaker}_{NN}`` (the corpus id kept in ``sentence_id`` and ``extra["corpus_id"]``)."""
    rank = {spk: i for i, spk in enumerate(selected)}
    out: list[tuple[int, str, SourceItem]] = []
    for spk in selected:
        utts = sorted(chosen_utts[spk], key=lambda it: (it.sentence_id or it.source_id, it.source_id))
        for k, it in enumerate(utts, start=1):
            if utterance_mode:
                out.append((k, spk, it))
                continue
            extra = dict(it.extra, corpus_id=it.source_id)
            new = replace(it, source_id=f"{safe_id(spk)}_{k:02d}",
                          sentence_id=it.sentence_id or it.source_id, extra=extra)
            out.append((k, spk, new))
    out.sort(key=lambda t: (t[0], rank[t[1]]))
    return [it for _, _, it in out]


def select_train(
    items: Sequence[SourceItem],
    *,
    plan: SelectionPlan,
    test: Iterable[SourceItem],
    where: str,
) -> list[SourceItem]:
    """Choose the train sources: speakers disjoint from ``test``, no transcript shared.

    Speakers take turns (in seeded order, each speaker's utterances in seeded order), so the
    selection spreads over as many speakers as possible. Empty transcripts are not compared.

    Returns
    -------
    list of SourceItem
        In selection order (ids unchanged).

    Raises
    ------
    SelectionError
        Fewer than ``plan.n_train`` usable utterances and ``plan.allow_small`` is false.
    """
    test = list(test)
    test_speakers = {it.speaker_id for it in test if it.speaker_id}
    test_ids = {it.extra.get("corpus_id", it.source_id) for it in test}
    seen_text = {normalise_text(it.text) for it in test if normalise_text(it.text)}
    by_speaker: dict[str, list[SourceItem]] = {}
    for it in items:
        if it.source_id in test_ids or (it.speaker_id and it.speaker_id in test_speakers):
            continue
        key = it.speaker_id or it.source_id
        by_speaker.setdefault(key, []).append(it)
    queues = [
        sorted(by_speaker[s], key=lambda it: rank_key(plan.seed, "train:" + it.source_id))
        for s in sorted(by_speaker, key=lambda s: rank_key(plan.seed, "train-spk:" + s))
    ]
    picked: list[SourceItem] = []
    pos = [0] * len(queues)
    active = list(range(len(queues)))
    while active and len(picked) < plan.n_train:
        still = []
        for q in active:
            queue = queues[q]
            while pos[q] < len(queue):
                it = queue[pos[q]]
                pos[q] += 1
                norm = normalise_text(it.text)
                if norm and norm in seen_text:
                    continue
                if norm:
                    seen_text.add(norm)
                picked.append(it)
                break
            if pos[q] < len(queue):
                still.append(q)
            if len(picked) == plan.n_train:
                break
        active = still
    if len(picked) < plan.n_train and not plan.allow_small:
        raise SelectionError(
            f"{where}: the train selection needs {plan.n_train} utterances from speakers outside the test "
            f"selection with distinct transcripts; found {len(picked)} from {len(queues)} speakers. "
            f"Use --allow-small to take them all, or ask for fewer."
        )
    return picked


def select(
    items: Sequence[SourceItem],
    *,
    split: str,
    plan: SelectionPlan,
    duration_of: Callable[[SourceItem], float],
    where: str,
) -> list[SourceItem]:
    """Select the sources of ``split`` ("test" or "train") from every candidate utterance."""
    if not items:
        raise SelectionError(f"{where}: no utterances found")
    if split == "test":
        return select_test(items, plan=plan, duration_of=duration_of, where=where)
    if split == "train":
        test = select_test(items, plan=plan, duration_of=duration_of, where=where)
        return select_train(items, plan=plan, test=test, where=where)
    raise SelectionError(f"{where}: split {split!r} is not drawn from a corpus (the beep split uses --source tones)")


def select_sources(items: list[SourceItem], options: SourceOptions, where: str) -> list[SourceItem]:
    """:func:`select` with the split and counts of ``options``; durations read once per source.

    Raises
    ------
    SourceSpecError
        When ``options.split`` is not drawn from a corpus (``beep``).
    """
    if options.split not in ("test", "train"):
        raise SourceSpecError(f"{where}: split {options.split!r} is not drawn from a corpus; "
                              "the beep split uses --source tones")
    durations: dict[str, float] = {}

    def duration_of(item: SourceItem) -> float:
        if item.source_id not in durations:
            durations[item.source_id] = audio_duration(item)
        return durations[item.source_id]

    return select(items, split=options.split, plan=options.plan(), duration_of=duration_of, where=where)
