"""Fixtures for the harness tests: a tiny local Hub folder in the `vocalgrad hub` layout.

Clips are short synthetic tones (16 kHz by default). volume, pitch and noise clips really
change in the labelled direction (gain ramp, frequency glide, noise ramp) so that the oracle
can be checked on them; the other categories carry a plain tone.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import soundfile as sf

import vocalgrad

CHANGING = ("volume", "pitch", "noise")


def synth_clip(category: str, direction: str, *, seed: int = 0, sr: int = 16000,
               dur: float = 1.2, lead: float = 0.2, f0: float = 220.0) -> np.ndarray:
    """A harmonic tone with silence around it; the attribute changes for CHANGING categories."""
    rng = np.random.default_rng(seed)
    n, a = int(dur * sr), int(lead * sr)
    m = n - 2 * a
    t = np.linspace(0.0, 1.0, m)
    g = t if direction == "increase" else 1.0 - t
    freq = np.full(m, f0 * (1 + 0.03 * seed))
    if category == "pitch":
        freq = freq * 2 ** ((-3 + 6 * g) / 12)
    phase = 2 * np.pi * np.cumsum(freq) / sr
    tone = sum(np.sin(k * phase) / k for k in range(1, 5)) * 0.2
    if category == "volume":
        tone = tone * 10 ** ((-12 + 24 * g) / 20)
    if category == "noise":
        tone = tone + rng.standard_normal(m) * 0.08 * g
    ramp = int(0.01 * sr)
    env = np.ones(m)
    env[:ramp] = np.linspace(0, 1, ramp)
    env[-ramp:] = np.linspace(1, 0, ramp)
    y = np.zeros(n)
    y[a:a + m] = tone * env
    return np.clip(y, -1, 1).astype(np.float32)


def flac_bytes(y: np.ndarray, sr: int) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, y, sr, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


def hub_rows(category: str, *, sources: int = 1, sr: int = 16000, config_split: str = "test",
             tiers=("low",), trajectories=("linear",)) -> list[dict]:
    rows = []
    for s in range(sources):
        sid = f"tone{s:02d}"
        for tier in tiers:
            for traj in trajectories:
                for direction in vocalgrad.DIRECTIONS:
                    y = synth_clip(category, direction, seed=s, sr=sr)
                    cid = vocalgrad.clip_id(sid, category, traj, tier, direction)
                    rows.append({
                        "audio": {"bytes": flac_bytes(y, sr), "path": f"{cid}.flac"},
                        "id": cid, "category": category,
                        "attribute": vocalgrad.category(category).attribute,
                        "direction": direction, "tier": tier, "trajectory": traj,
                        "source_id": sid, "speaker_id": "synth", "sentence_id": sid, "text": "",
                        "prompt": vocalgrad.build_prompt(category), "label": direction,
                        "duration_sec": len(y) / sr, "onset_sec": 0.2, "offset_sec": len(y) / sr - 0.2,
                        "split": config_split, "value_start": 0.0, "value_end": 1.0, "unit": "",
                    })
    return rows


def write_config(root: Path, config: str, rows: list[dict], *, split: str = "test", shards: int = 1) -> None:
    import datasets

    feats = datasets.Features({
        c: (datasets.Audio() if c == "audio" else
            datasets.Value("float64") if c in ("duration_sec", "onset_sec", "offset_sec", "value_start", "value_end")
            else datasets.Value("string"))
        for c in vocalgrad.HUB_COLUMNS
    })
    ds = datasets.Dataset.from_list(rows, features=feats)
    (root / config).mkdir(parents=True, exist_ok=True)
    for i in range(shards):
        ds.shard(shards, i, contiguous=True).to_parquet(
            str(root / config / f"{split}-{i:05d}-of-{shards:05d}.parquet"))


def make_hub_folder(root: Path, *, categories=vocalgrad.CATEGORY_NAMES, sources: int = 1,
                    sr: int = 16000, beep: bool = False, **kw) -> Path:
    """Write `<root>/<category>/test-00000-of-00001.parquet` (+ beep) and a README with configs."""
    root = Path(root)
    configs = []
    for cat in categories:
        write_config(root, cat, hub_rows(cat, sources=sources, sr=sr, **kw))
        configs.append(cat)
    if beep:
        rows = [r for cat in vocalgrad.BEEP_CATEGORIES for r in hub_rows(cat, sources=1, sr=sr, config_split="beep")]
        write_config(root, "beep", rows)
        configs.append("beep")
    lines = ["---", "configs:"]
    for c in configs:
        lines += [f"- config_name: {c}", "  data_files:", "  - split: test", f"    path: {c}/test-*.parquet"]
    lines += ["---", "", "# tiny VocalGrad fixture", ""]
    (root / "README.md").write_text("\n".join(lines))
    return root


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text())
