"""Clips of one (split, category) from a VocalGrad Hub folder or repo id.

The test split comes from the category's own config (``<category>/test-*.parquet``) and the
train split from the ``train`` config (all categories, filtered), exactly as the harness
reads them (:func:`harness_tasks.utils.load_split`). Audio stays encoded until a clip is used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import vocalgrad

__all__ = ["ClipSet", "PROBE_SPLITS", "load_clips"]

#: Probe splits: ``train`` fits the probe, ``test`` scores it (benchmark.md §10).
PROBE_SPLITS: tuple[str, ...] = ("train", "test")


@dataclass
class ClipSet:
    """The clips of one split and category, sorted by clip id.

    Attributes
    ----------
    split, category : str
    ids : list of str
    labels : np.ndarray of int8
        1 for ``increase``, 0 for ``decrease``.
    prompt : str
        The harness prompt for the category (default variant, benchmark.md §7).
    source : str
        Hub folder or repo id the clips come from.
    """

    split: str
    category: str
    ids: list[str]
    labels: np.ndarray
    prompt: str
    source: str
    _dataset: Any = field(default=None, repr=False)
    _rows: list[int] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def ids_digest(self) -> str:
        """SHA-1 of the clip ids (identifies the clip list in the feature cache)."""
        return hashlib.sha1("\n".join(self.ids).encode()).hexdigest()

    def audio_bytes(self, i: int) -> bytes | None:
        """The encoded file of clip ``i`` as stored in the dataset (``None`` when it holds a path only)."""
        audio = self._dataset[self._rows[i]]["audio"]
        return audio.get("bytes") if isinstance(audio, dict) else None

    def audio(self, i: int) -> tuple[np.ndarray, int]:
        """Decode clip ``i``: mono float32 samples and the sample rate."""
        from harness_tasks.clip_audio import decode_audio

        return decode_audio(self._dataset[self._rows[i]]["audio"], name=f"{self.source}:{self.ids[i]}")


def load_clips(source: str, split: str, category: str) -> ClipSet:
    """Load the clips of one split (``train`` or ``test``) and category.

    Parameters
    ----------
    source : str
        Hub folder made by ``vocalgrad hub`` (with the ``train`` config for ``split="train"``)
        or a Hub repo id.
    split : {"train", "test"}
    category : str
        Category config name.

    Raises
    ------
    ValueError
        If the split is unknown, the data has no rows for the category, or a label is not
        ``increase``/``decrease``.
    """
    from harness_tasks.utils import doc_to_text, load_split

    if split not in PROBE_SPLITS:
        raise ValueError(f"probe split must be one of {', '.join(PROBE_SPLITS)}, got {split!r}")
    cat = vocalgrad.category(category).name
    try:
        if split == "train":
            ds = load_split("train", split="train", source=source, category=cat)
        else:
            ds = load_split(cat, split="test", source=source)
    except FileNotFoundError as exc:
        hint = (" The probe needs the `train` config: build the folder with "
                "`vocalgrad hub TEST_RENDER TRAIN_RENDER --out HUB`." if split == "train" else "")
        raise FileNotFoundError(f"{exc}.{hint}") from exc
    for col in ("id", "label", "category"):
        if col not in ds.column_names:
            raise ValueError(f"{source} [{split}/{cat}]: no {col!r} column (columns: {ds.column_names})")
    ids = list(ds["id"])
    labels = list(ds["label"])
    if not ids:
        raise ValueError(f"{source} [{split}]: no clips of category {cat!r}")
    bad = sorted({lab for lab in labels if lab not in vocalgrad.DIRECTIONS})
    if bad:
        raise ValueError(f"{source} [{split}/{cat}]: column 'label' holds {bad}; expected "
                         f"{' or '.join(vocalgrad.DIRECTIONS)}")
    if len(set(ids)) != len(ids):
        raise ValueError(f"{source} [{split}/{cat}]: duplicate clip ids in column 'id'")
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return ClipSet(
        split=split, category=cat, ids=[ids[i] for i in order],
        labels=np.array([labels[i] == "increase" for i in order], dtype=np.int8),
        prompt=doc_to_text({"category": cat}), source=str(source), _dataset=ds, _rows=order,
    )
