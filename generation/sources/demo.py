"""``demo``: the embedded synthetic demo set (``generation/demo_data``): 100 test and 50 train utterances.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .base import SourceItem, SourceOptions, SourceSpecError, register_source

__all__ = ["DEMO_DIR", "demo_items"]


#: Folder of the embedded demo set.
DEMO_DIR = Path(__file__).resolve().parent.parent / "demo_data"


def demo_items(split: str = "test", *, root: Path = DEMO_DIR) -> list[SourceItem]:
    """The demo set's fixed ``split`` (test: 100 utterances, 10 voices; train: 50, 5 other voices).

    Items are ordered by utterance number, then voice, so the first N cover N voices (N <= 10).
    """
    meta = root / "metadata.csv"
    if not meta.is_file():
        raise SourceSpecError(f"demo source: {meta} is missing; the package was installed without its demo data")
    with open(meta, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["split"] == split]
    items = [
        SourceItem(r["source_id"], str(root / r["file_name"]), speaker_id=r["speaker_id"],
                   sentence_id=r["sentence_id"], text=r["text"], gender=r["gender"], accent=r["accent"],
                   extra={"engine": r["engine"], "voice": r["voice"], "duration": float(r["duration"])})
        for r in rows
    ]
    items.sort(key=lambda it: (it.source_id.rsplit("_", 1)[1], it.speaker_id))
    return items


@register_source("demo")
def _demo(arg: str, options: SourceOptions) -> list[SourceItem]:
    """The embedded synthetic demo set; its test/train split is fixed (no selection)."""
    if arg:
        raise SourceSpecError(f"'demo' takes no argument, got {arg!r}")
    if options.split not in ("test", "train"):
        raise SourceSpecError(f"demo source: split {options.split!r} is not available "
                              "(test or train; the beep split uses --source tones)")
    return demo_items(options.split)
