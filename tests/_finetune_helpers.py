"""Fixtures for the fine-tuning tests: a Hub folder with volume clips in the train and test configs."""

from __future__ import annotations

from pathlib import Path

import _harness_helpers as hh

import vocalgrad


def volume_rows(split: str, *, sources: int, tiers=("low", "high"), trajectories=("linear",),
                category: str = "volume", offset: int = 0) -> list[dict]:
    """Rows of synthetic clips; every (source, tier, trajectory) has its own pitch, shared by the pair."""
    rows = []
    n = 0
    for s in range(sources):
        sid = f"{split[:2]}{s + offset:02d}"
        for tier in tiers:
            for traj in trajectories:
                n += 1
                seed = (s * len(tiers) * len(trajectories) + n) % 23
                for direction in vocalgrad.DIRECTIONS:
                    y = hh.synth_clip(category, direction, seed=seed, sr=16000)
                    cid = vocalgrad.clip_id(sid, category, traj, tier, direction)
                    rows.append({
                        "audio": {"bytes": hh.flac_bytes(y, 16000), "path": f"{cid}.flac"}, "id": cid,
                        "category": category, "attribute": vocalgrad.category(category).attribute,
                        "direction": direction, "tier": tier, "trajectory": traj, "source_id": sid,
                        "speaker_id": "synth", "sentence_id": sid, "text": "",
                        "prompt": vocalgrad.default_prompt(category), "label": direction,
                        "duration_sec": len(y) / 16000, "onset_sec": 0.2, "offset_sec": len(y) / 16000 - 0.2,
                        "split": split, "value_start": 0.0, "value_end": 1.0, "unit": "",
                    })
    return rows


def make_volume_hub(root: Path, *, train_sources: int = 10, test_categories=("volume",), test_sources: int = 2,
                    **kw) -> Path:
    """Hub folder: ``<category>/test-*`` for ``test_categories`` and a ``train`` config of volume clips."""
    root = Path(root)
    hh.make_hub_folder(root, categories=test_categories, sources=test_sources)
    hh.write_config(root, "train", volume_rows("train", sources=train_sources, **kw), split="train")
    return root
