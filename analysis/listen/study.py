"""Which clips a listening test asks, and in what order.

* The **study set** is the same for every annotator (so that their answers can be compared):
  ``per_category`` clips per category, half per direction, spread evenly over the 12
  tier x trajectory conditions, drawn with ``seed``. Practice clips are reserved first and are
  never in the study set.
* ``subset="paper"`` makes the study set the paper's 50 annotated clips per category (one condition
  per ``_01`` test item, the same for every category; ``generation.frozen.annotation_subset``), so that
  a human row is comparable with the paper's; practice clips then come from the other clips.
* A **sweep study** (a ``vocalgrad render --sweep`` folder, or a Hub folder with ``--config
  sweep_<attribute>``) is the method of constant stimuli: the study set cycles through every
  (level, trajectory) condition, so each magnitude is asked equally often (exactly so when
  ``per_category`` is a multiple of levels x trajectories), in random order; practice clips are
  never the zero-change control, whose feedback would have no right answer (docs/sweep.md).
* The **order** differs per annotator (seeded from the annotator's name): rounds that hold one
  clip of every category in shuffled order, with the directions of each category balanced in
  consecutive pairs, and never the same category twice in a row at a round boundary.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict

import vocalgrad

from .catalog import ClipInfo

__all__ = ["SUBSETS", "select_study", "annotator_order", "annotator_seed", "paper_subset"]

#: Named study sets (``--subset``).
SUBSETS = ("paper",)


def _zero_change(clip: ClipInfo) -> bool:
    """A sweep's zero-change control (level token ``m0``): no right answer, so never a practice clip."""
    from generation.attributes.sweep import token_magnitude

    return token_magnitude(clip.tier) == 0.0


def annotator_seed(annotator: str, seed: int = 0) -> int:
    """Integer seed of an annotator's order: sha256 of ``"{seed}:{annotator}"``, first 8 bytes."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{annotator}".encode()).digest()[:8], "big")


def _balanced(clips: list[ClipInfo], n: int | None, rng: random.Random) -> list[ClipInfo]:
    """``n`` clips of one category: directions alternate, conditions (tier x trajectory) cycle.

    Slots run through the shuffled conditions again and again, the direction alternating from
    slot to slot (and shifting by one each pass), so both directions and all conditions are
    covered as evenly as ``n`` allows.
    """
    pools: dict = defaultdict(list)
    for c in clips:
        pools[(c.tier, c.trajectory, c.direction)].append(c)
    for pool in pools.values():
        rng.shuffle(pool)
    conds = sorted({(c.tier, c.trajectory) for c in clips})
    rng.shuffle(conds)
    n = len(clips) if n is None else min(n, len(clips))
    flip = rng.randrange(2)
    out: list[ClipInfo] = []
    passes = 0
    while len(out) < n:
        for i, cond in enumerate(conds):
            if len(out) == n:
                break
            first = vocalgrad.DIRECTIONS[(i + passes + flip) % 2]
            for direction in (first, *[d for d in vocalgrad.DIRECTIONS if d != first]):
                pool = pools.get((*cond, direction))
                if pool:
                    out.append(pool.pop())
                    break
        passes += 1
    return out


def paper_subset(clips, categories) -> list[ClipInfo]:
    """The paper's annotated clips of ``categories`` among ``clips``.

    Raises
    ------
    ValueError
        When the data lack some of them (it is not the frozen VCTK test render), naming them.
    """
    from generation.frozen import annotation_subset

    by_id = {c.clip_id: c for c in clips}
    out, missing = [], []
    for cat in categories:
        for item, trajectory, tier, direction in annotation_subset(cat):
            cid = vocalgrad.clip_id(item, cat, trajectory, tier, direction)
            (out.append(by_id[cid]) if cid in by_id else missing.append(cid))
    if missing:
        raise ValueError(f"--subset paper needs the paper's annotated clips; {len(missing)} are not in the data "
                         f"(first: {', '.join(missing[:3])}); use a render of the frozen VCTK test selection "
                         "(vocalgrad render --source vctk:PATH) or its Hub folder")
    return out


def select_study(clips, *, per_category: int | None = None, practice: int = 0, seed: int = 0,
                 categories=None, subset: str | None = None) -> tuple[list[ClipInfo], list[ClipInfo]]:
    """Choose the practice clips and the study set.

    Parameters
    ----------
    clips : iterable of ClipInfo
    per_category : int, optional
        Clips per category in the study set (default: every clip not used for practice).
    practice : int
        Practice clips in all, spread over the categories (a different category each).
    seed : int
        Seed of the draw (same for every annotator).
    categories : iterable of str, optional
        Restrict to these categories.
    subset : {"paper"}, optional
        A named study set instead of the seeded draw (``per_category`` must then be None).

    Returns
    -------
    (practice, study) : tuple of lists of ClipInfo
        Both sorted by clip id; disjoint.
    """
    if per_category is not None and per_category < 1:
        raise ValueError(f"per_category must be >= 1, got {per_category}")
    if practice < 0:
        raise ValueError(f"practice must be >= 0, got {practice}")
    if subset is not None and subset not in SUBSETS:
        raise ValueError(f"unknown subset {subset!r}; choose from {', '.join(SUBSETS)}")
    if subset and per_category is not None:
        raise ValueError("--subset paper fixes the clips per category (50); drop --per-category")
    wanted = set(categories) if categories else None
    by_cat: dict[str, list[ClipInfo]] = defaultdict(list)
    for c in clips:
        if wanted is None or c.category in wanted:
            by_cat[c.category].append(c)
    if not by_cat:
        raise ValueError("no clips to ask" + (f" in categories {sorted(wanted)}" if wanted else ""))
    rng = random.Random(seed)
    cats = [c for c in vocalgrad.CATEGORY_NAMES if c in by_cat] + sorted(set(by_cat) - set(vocalgrad.CATEGORY_NAMES))
    for cat in cats:
        by_cat[cat].sort(key=lambda c: c.clip_id)
    fixed = None
    if subset == "paper":
        fixed = paper_subset([c for cat in cats for c in by_cat[cat]], cats)
        taken = {c.clip_id for c in fixed}
        for cat in cats:
            by_cat[cat] = [c for c in by_cat[cat] if c.clip_id not in taken]
    chosen_practice: list[ClipInfo] = []
    order = cats[:]
    rng.shuffle(order)
    for i in range(practice):  # one clip from the next category in turn, alternating directions
        cat = order[i % len(order)]
        usable = [c for c in by_cat[cat] if not _zero_change(c)] or by_cat[cat]  # feedback needs a right answer
        pool = [c for c in usable if c.direction == vocalgrad.DIRECTIONS[i % 2]] or usable
        if not pool:
            continue
        pick = rng.choice(pool)
        by_cat[cat].remove(pick)
        chosen_practice.append(pick)
    study = fixed if fixed is not None else [c for cat in cats for c in _balanced(by_cat[cat], per_category, rng)]
    return sorted(chosen_practice, key=lambda c: c.clip_id), sorted(study, key=lambda c: c.clip_id)


def annotator_order(clips, annotator: str, *, seed: int = 0) -> list[ClipInfo]:
    """Balanced random order of ``clips`` for one annotator (see the module docstring)."""
    rng = random.Random(annotator_seed(annotator, seed))
    by_cat: dict[str, list[ClipInfo]] = defaultdict(list)
    for c in sorted(clips, key=lambda c: c.clip_id):
        by_cat[c.category].append(c)
    queues = {}
    for cat, items in by_cat.items():
        inc = [c for c in items if c.direction == "increase"]
        dec = [c for c in items if c.direction != "increase"]
        rng.shuffle(inc)
        rng.shuffle(dec)
        seq = []
        while inc or dec:  # consecutive pairs hold one of each direction, in random order
            pair = [x.pop() for x in (inc, dec) if x]
            rng.shuffle(pair)
            seq += pair
        queues[cat] = seq
    out: list[ClipInfo] = []
    while any(queues.values()):
        cats = [cat for cat in sorted(queues) if queues[cat]]
        rng.shuffle(cats)
        if out and len(cats) > 1 and cats[0] == out[-1].category:
            cats.append(cats.pop(0))
        out += [queues[cat].pop(0) for cat in cats]
    return out
