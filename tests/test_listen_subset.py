"""`vocalgrad listen --subset paper`: the paper's 50 annotated clips per category."""

from __future__ import annotations

import pytest

import vocalgrad as vg
from analysis.listen.catalog import ClipInfo
from analysis.listen.study import select_study
from generation.frozen import frozen_rows


def _all_clips(categories):
    """Every condition of the 100 frozen test items, as a catalog would list them."""
    return [ClipInfo(vg.clip_id(r.item_id, cat, traj, tier, d), cat, d, tier, traj, r.item_id, {})
            for r in frozen_rows("vctk") for cat in categories
            for traj in vg.TRAJECTORIES for tier in vg.TIERS for d in vg.DIRECTIONS]


def test_paper_subset_is_the_annotated_clips():
    clips = _all_clips(("volume", "echo"))
    practice, study = select_study(clips, subset="paper", practice=4, seed=3)
    assert len(study) == 100 and {c.category for c in study} == {"volume", "echo"}
    ids = {c.clip_id for c in study}
    assert "p374_01__volume__linear__low__increase" in ids  # first row of the authors' volume manifest
    assert "p230_01__echo__quad_first_flat__medium__decrease" in ids
    assert {c.source_id for c in study} == {r.item_id for r in frozen_rows("vctk") if r.item_id.endswith("_01")}
    assert sum(c.direction == "increase" for c in study if c.category == "volume") == 25
    assert len(practice) == 4 and not ids & {c.clip_id for c in practice}
    again = select_study(clips, subset="paper", practice=4, seed=99)[1]
    assert {c.clip_id for c in again} == ids  # fixed, whatever the seed


def test_paper_subset_needs_the_frozen_test_set():
    clips = [c for c in _all_clips(("pitch",)) if not c.clip_id.startswith("p226_01__")]
    with pytest.raises(ValueError, match=r"1 are not in the data \(first: p226_01__pitch__linear__low__increase\)"):
        select_study(clips, subset="paper")
    with pytest.raises(ValueError, match="drop --per-category"):
        select_study(_all_clips(("pitch",)), subset="paper", per_category=10)
