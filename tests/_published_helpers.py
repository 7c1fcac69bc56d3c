"""A local replica of the authors' published layout, written from a render folder.

Written independently of ``generation.published`` (the code under test): the authors'
conventions are spelled out here as they appear in their ``prepare_vocalgrad_public.py`` and
generator scripts — flat ``audio/<internal category>__<benchmark_clip_id>.wav`` (16-bit WAV),
a root ``metadata.csv`` with their 17 columns, tiers ``low/mid/high``, directions ``up/down``,
labels ``increase/decrease``, the prompt joined with one space, and a README whose YAML header
has the ``default`` config with ``drop_labels: true``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow.parquet as pq
import soundfile as sf

import vocalgrad

COLUMNS = ["file_name", "category", "benchmark_clip_id", "source_text", "attribute", "prompt", "label",
           "direction", "curve", "tier", "source_clip_id", "speaker_id", "sentence_id", "duration_sec",
           "onset_sec", "offset_sec", "split"]
THEIR_TIER = {"low": "low", "medium": "mid", "high": "high"}
THEIR_DIRECTION = {"increase": "up", "decrease": "down"}
README = """---
license: cc-by-4.0
configs:
  - config_name: default
    drop_labels: true
---

# VocalGrad (test replica)
"""


def their_source_clip(row: dict) -> str:
    """The corpus clip id the replica gives a rendered source (VCTK-like ``<speaker>_<sentence>``)."""
    return f"{row['speaker_id']}_{row['sentence_id']}"


def make_published_copy(render_dir, root) -> Path:
    """Write the published layout of every clip of a test render into ``root``; return ``root``."""
    render_dir, root = Path(render_dir), Path(root)
    (root / "audio").mkdir(parents=True, exist_ok=True)
    manifest = sorted(pq.read_table(render_dir / "manifest.parquet").to_pylist(), key=lambda r: r["clip_id"])
    out = []
    for r in manifest:
        cat = vocalgrad.category(r["category"])
        clip = their_source_clip(r)
        bid = f"{r['source_id']}__{clip}__{r['trajectory']}__{THEIR_TIER[r['tier']]}__{THEIR_DIRECTION[r['direction']]}"
        name = f"audio/{cat.id}__{bid}.wav"
        pcm, sr = sf.read(render_dir / r["path"], dtype="int16")
        buf = io.BytesIO()
        sf.write(buf, pcm, sr, format="WAV", subtype="PCM_16")
        (root / name).write_bytes(buf.getvalue())
        out.append({
            "file_name": name, "category": cat.id, "benchmark_clip_id": bid, "source_text": r["text"],
            "attribute": cat.attribute,
            "prompt": f"Does the {cat.attribute} increase or decrease over time? "
                      'Answer with only one word: "increase" or "decrease".',
            "label": r["direction"], "direction": THEIR_DIRECTION[r["direction"]], "curve": r["trajectory"],
            "tier": THEIR_TIER[r["tier"]], "source_clip_id": clip, "speaker_id": r["speaker_id"],
            "sentence_id": r["sentence_id"], "duration_sec": f"{r['duration_sec']:.6f}",
            "onset_sec": f"{r['source_onset_sec']:.6f}", "offset_sec": f"{r['source_offset_sec']:.6f}",
            "split": "test",
        })
    with open(root / "metadata.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(out)
    (root / "README.md").write_text(README, encoding="utf-8")
    return root


def read_copy_rows(root) -> list[dict]:
    """The replica's metadata rows as written (strings), sorted by file name."""
    with open(Path(root) / "metadata.csv", newline="", encoding="utf-8") as fh:
        return sorted(csv.DictReader(fh), key=lambda r: r["file_name"])
