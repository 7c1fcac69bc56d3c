"""Stratified train/validation split of one category and the data fingerprint (benchmark.md §11).

Torch-free. The split follows the paper's protocol: the clips are grouped by label (``increase``
first, then ``decrease``), each group is shuffled with one ``random.Random(seed)`` shared by the
groups, the first ``max(1, round(n * val_fraction))`` clips of each group go to validation, and
both parts are sorted by clip id. With 12,000 clips and ``val_fraction=0.1`` this gives
10,800 / 1,200 clips, 600 of each label in validation.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

import vocalgrad

__all__ = ["Split", "data_fingerprint", "stratified_split"]


@dataclass(frozen=True)
class Split:
    """Clip ids of the two parts (each sorted)."""

    train: tuple[str, ...]
    val: tuple[str, ...]

    def counts(self, labels: dict[str, str]) -> dict[str, dict[str, int]]:
        """Label counts per part: ``{"train": {"increase": n, ...}, "val": {...}}``."""
        out = {}
        for part in ("train", "val"):
            c: dict[str, int] = {}
            for cid in getattr(self, part):
                c[labels[cid]] = c.get(labels[cid], 0) + 1
            out[part] = c
        return out


def stratified_split(ids, labels, *, val_fraction: float = 0.1, seed: int = 1234) -> Split:
    """Split clip ids into train and validation, stratified by label.

    Parameters
    ----------
    ids : sequence of str
        Clip ids (unique).
    labels : sequence of str
        ``increase`` / ``decrease`` per id (other labels are kept as further groups, sorted).
    val_fraction : float
        Fraction in [0, 1) of each label group that goes to validation.
    seed : int
        Seed of the shared shuffler.

    Returns
    -------
    Split

    Raises
    ------
    ValueError
        If the fraction is out of range, the lengths differ or an id repeats.
    """
    ids, labels = list(ids), list(labels)
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} clip ids but {len(labels)} labels")
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate clip ids")
    order = list(vocalgrad.DIRECTIONS) + sorted(set(labels) - set(vocalgrad.DIRECTIONS))
    groups = {lab: sorted(i for i, l in zip(ids, labels) if l == lab) for lab in order}
    rng = random.Random(seed)
    train, val = [], []
    for lab in order:
        group = list(groups[lab])
        if not group:
            continue
        rng.shuffle(group)
        if val_fraction == 0.0 or len(group) == 1:
            train.extend(group)
            continue
        n_val = min(max(1, int(round(len(group) * val_fraction))), len(group) - 1)
        val.extend(group[:n_val])
        train.extend(group[n_val:])
    return Split(train=tuple(sorted(train)), val=tuple(sorted(val)))


def data_fingerprint(ids, labels, audio_digests=None) -> str:
    """SHA-256 over the sorted (clip id, label[, audio digest]) lines: identifies the training data.

    ``audio_digests`` (optional, same order as ``ids``) adds the audio content, e.g. the
    ``sha256`` column of the render manifest or a hash of the FLAC bytes.
    """
    rows = list(zip(ids, labels, audio_digests if audio_digests is not None else [""] * len(ids)))
    h = hashlib.sha256()
    for cid, lab, dig in sorted(rows):
        h.update(f"{cid}\t{lab}\t{dig}\n".encode())
    return h.hexdigest()
