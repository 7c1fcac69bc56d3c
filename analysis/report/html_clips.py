"""The clips of the HTML report's *Listen* section: which clips, their audio and pictures, the answers.

Three lists, filled in this order until ``max_clips`` clips or the size budget is reached:

1. the gallery: for each category, one clip per direction x tier, drawn with a fixed seed among
   the clips the models answered (any clip of that cell when none was answered); the first clip of
   every category is placed before the second of any, so a small budget still covers every category;
2. *missed by every model*: clips every model row answered and every answer (listeners' included) is
   wrong (seeded draw);
3. per model, *wrong with high confidence*: with logit tags (``scoring=logits|both``), the wrong
   logit choices with the largest log-probability margin; otherwise wrong parsed answers (seeded draw,
   no confidence is known).

Each clip's audio is copied byte for byte from the data folder (the bytes the models heard) next
to the page, with the picture of ``vocalgrad show``'s content (:func:`analysis.show.figure_data`, drawn
by :mod:`.clip_picture`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import vocalgrad
from generation.audio import atomic_write_bytes
from harness_tasks.logit_answers import split_logit_answer

from . import html_pictures
from .html_pictures import PICTURE_COLOURS, PICTURE_DPI, small_png  # noqa: F401 (re-exported)

__all__ = ["ClipCard", "ClipLists", "answer_card", "answer_index", "audio_kind", "cards_without_files", "clip_summary",
           "select_clips",
           "small_png", "write_clips"]

#: Clips listed as missed by every model, and per model as wrong with high confidence.
MISSED_MAX = 6
CONFIDENT_MAX = 3
#: Folder of the clip files, next to ``index.html``.
CLIP_DIR = "clips"


@dataclass
class ClipCard:
    """One clip on the page: where its files are and what every model answered."""

    clip_id: str
    category: str
    direction: str
    tier: str
    trajectory: str
    source_id: str
    #: ``(label, answer text, parsed answer or None, correct, logit margin or None)`` per answer.
    answers: list[tuple[str, str, str | None, bool, float | None]] = field(default_factory=list)
    audio: str | None = None  # path relative to the page
    audio_type: str = "audio/flac"
    picture: str | None = None
    picture_error: str = ""


@dataclass
class ClipLists:
    """The Listen section's clips: gallery by category, missed by all, confident errors by model."""

    gallery: dict[str, list[ClipCard]] = field(default_factory=dict)
    missed: list[ClipCard] = field(default_factory=list)
    confident: dict[str, list[ClipCard]] = field(default_factory=dict)
    #: Label -> how its confident errors were chosen ("logit margin" or "seeded draw").
    confident_rule: dict[str, str] = field(default_factory=dict)
    n_missed_total: int = 0
    n_answered: int = 0  # clips of the data folder some run answered
    #: Clips near each sweep run's threshold (:mod:`.html_sweep`), shown when their audio was written.
    sweep: list[ClipCard] = field(default_factory=list)
    skipped: int = 0  # clips left out by --max-clips or the size budget
    bytes_written: int = 0


def audio_kind(data: bytes) -> tuple[str, str]:
    """``(file extension, MIME type)`` of encoded audio from its first bytes (FLAC, WAV, Ogg, MP3)."""
    if data[:4] == b"fLaC":
        return ".flac", "audio/flac"
    if data[:4] == b"RIFF":
        return ".wav", "audio/wav"
    if data[:4] == b"OggS":
        return ".ogg", "audio/ogg"
    return ".mp3", "audio/mpeg"


def _answer(label: str, rec: dict) -> tuple[str, str, str | None, bool, float | None]:
    text, choice, scores = split_logit_answer(rec.get("raw"))
    margin = None
    if choice is not None and len(scores) >= 2:
        vals = sorted(scores.values(), reverse=True)
        margin = vals[0] - vals[1]
    who = f"{label} ({rec['annotator']})" if rec.get("annotator") else label
    shown = "" if text is None else str(text).strip()
    if choice is not None:
        shown = f"{shown} [logits: {choice}]".strip()
    return who, shown, rec.get("pred"), bool(rec.get("correct")), margin


def answer_index(evaluations) -> dict[str, list[tuple[str, dict]]]:
    """Clip id -> ``(model label, record)`` for every logged answer, in input order."""
    out: dict[str, list[tuple[str, dict]]] = {}
    for ev in evaluations:
        if not ev.has_samples:
            continue
        for r in ev.records:
            out.setdefault(r["id"], []).append((ev.label, r))
    return out


def answer_card(info, answers: list[tuple[str, dict]]) -> ClipCard:
    return ClipCard(info.clip_id, info.category, info.direction, info.tier, info.trajectory, info.source_id,
                    answers=[_answer(label, r) for label, r in answers])


def _draw(rng: random.Random, ids: list[str], k: int) -> list[str]:
    return sorted(ids) if len(ids) <= k else sorted(rng.sample(sorted(ids), k))


def _logit_correct(rec: dict) -> tuple[bool | None, float]:
    _, choice, scores = split_logit_answer(rec.get("raw"))
    if choice is None:
        return None, 0.0
    vals = sorted(scores.values(), reverse=True)
    return choice == rec["direction"], (vals[0] - vals[1]) if len(vals) >= 2 else 0.0


def select_clips(catalog, evaluations, *, seed: int) -> tuple[ClipLists, list[ClipCard]]:
    """Choose the clips of the three lists (files not written yet).

    Returns the lists and every distinct card in the order files should be written (the priority
    order of the module docstring).
    """
    index = answer_index(evaluations)
    lists = ClipLists(n_answered=sum(cid in index for cid in catalog.clips))
    cells: dict[tuple[str, str, str], list[str]] = {}
    for cid, info in catalog.clips.items():
        cells.setdefault((info.category, info.direction, info.tier), []).append(cid)
    rounds: list[list[ClipCard]] = []
    extension = sorted({info.category for info in catalog.clips.values()} - set(vocalgrad.CATEGORY_NAMES))
    for cat in [*vocalgrad.CATEGORY_NAMES, *extension]:  # the paper's nine, then extension attributes
        picks = []
        for direction in vocalgrad.DIRECTIONS:
            for tier in vocalgrad.TIERS:
                ids = cells.get((cat, direction, tier), [])
                answered = [c for c in ids if c in index]
                pool = answered or ids
                if pool:
                    rng = random.Random(f"{seed}:{cat}:{direction}:{tier}")
                    picks.append(rng.choice(sorted(pool)))
        if picks:
            lists.gallery[cat] = [answer_card(catalog.clips[c], index.get(c, [])) for c in picks]
            for k, card in enumerate(lists.gallery[cat]):
                while len(rounds) <= k:
                    rounds.append([])
                rounds[k].append(card)
    order = [card for r in rounds for card in r]
    # listeners answer a subset: a clip counts when every model row answered it and every answer is wrong
    models = {ev.label for ev in evaluations if ev.has_samples and not any("annotator" in r for r in ev.records[:1])}
    missed = [cid for cid, ans in index.items() if cid in catalog
              and models <= {lab for lab, _ in ans} and not any(r["correct"] for _, r in ans)]
    lists.n_missed_total = len(missed)
    lists.missed = [answer_card(catalog.clips[c], index[c]) for c in _draw(random.Random(f"{seed}:missed"), missed,
                                                                       MISSED_MAX)]
    order += lists.missed
    for ev in evaluations:
        if not ev.has_samples:
            continue
        scored = [(r, *_logit_correct(r)) for r in ev.records if r["id"] in catalog]
        if any(ok is not None for _, ok, _ in scored):
            wrong = sorted(((r, m) for r, ok, m in scored if ok is False), key=lambda x: (-x[1], x[0]["id"]))
            ids = [r["id"] for r, _ in wrong[:CONFIDENT_MAX]]
            lists.confident_rule[ev.label] = "largest logit margin among the wrong logit choices"
        else:
            wrong = [r["id"] for r, _, _ in scored if not r["correct"] and r.get("status") == "parsed"]
            ids = _draw(random.Random(f"{seed}:confident:{ev.label}"), wrong, CONFIDENT_MAX)
            lists.confident_rule[ev.label] = ("no logits logged, so no confidence is known: wrong parsed answers "
                                              "drawn with the report's seed")
        lists.confident[ev.label] = [answer_card(catalog.clips[c], index.get(c, [])) for c in ids]
        order += lists.confident[ev.label]
    return lists, order


def _file_stem(clip_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", clip_id)


def write_clips(catalog, order: list[ClipCard], out: Path, *, max_clips: int, max_bytes: int,
                pictures: bool = True) -> tuple[int, int]:
    """Write audio and picture of the cards in ``order`` under ``out/clips`` until ``max_clips``
    distinct clips or ``max_bytes`` are reached; set each written card's paths (the same clip in
    several lists shares its files). Returns ``(bytes written, clips skipped)``.

    The pictures of the first ``max_clips`` distinct clips are drawn first, in parallel and only where
    the picture cache lacks them (:func:`analysis.report.html_pictures.pictures`)."""
    first = list(dict.fromkeys(card.clip_id for card in order))[:max_clips]
    drawn = html_pictures.pictures(catalog, first, dpi=PICTURE_DPI, colours=PICTURE_COLOURS) if pictures else {}
    done: dict[str, ClipCard] = {}
    skipped: set[str] = set()
    total = 0
    for card in order:
        if card.clip_id in done:
            first = done[card.clip_id]
            card.audio, card.audio_type, card.picture = first.audio, first.audio_type, first.picture
            card.picture_error = first.picture_error
            continue
        if card.clip_id in skipped:
            continue
        if len(done) >= max_clips:
            skipped.add(card.clip_id)
            continue
        audio = catalog.audio_bytes(card.clip_id)
        png, error = drawn.get(card.clip_id, (b"", ""))
        if total + len(audio) + len(png) > max_bytes:
            skipped.add(card.clip_id)
            continue
        ext, mime = audio_kind(audio)
        stem = f"{CLIP_DIR}/{_file_stem(card.clip_id)}"
        atomic_write_bytes(out / f"{stem}{ext}", audio)
        card.audio, card.audio_type = f"{stem}{ext}", mime
        if png:
            atomic_write_bytes(out / f"{stem}.png", png)
            card.picture = f"{stem}.png"
        card.picture_error = error
        total += len(audio) + len(png)
        done[card.clip_id] = card
    return total, len(skipped)


def cards_without_files(lists: ClipLists) -> None:
    """Drop the cards whose audio was not written (over the budget) from every list."""
    lists.gallery = {c: [k for k in cards if k.audio] for c, cards in lists.gallery.items()}
    lists.missed = [k for k in lists.missed if k.audio]
    lists.confident = {m: [k for k in cards if k.audio] for m, cards in lists.confident.items()}
    lists.sweep = [k for k in lists.sweep if k.audio]


def clip_summary(lists: ClipLists) -> dict[str, Any]:
    """Counts for the page's note on the Listen section."""
    ids = {k.clip_id for cards in lists.gallery.values() for k in cards}
    ids |= {k.clip_id for k in lists.missed} | {k.clip_id for cards in lists.confident.values() for k in cards}
    ids |= {k.clip_id for k in lists.sweep}
    return {"clips": len(ids), "skipped": lists.skipped, "bytes": lists.bytes_written}
