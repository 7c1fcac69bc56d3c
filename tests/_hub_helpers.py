"""Fixtures for the Hub tests: small render directories that follow the render contract.

``make_render_dir`` writes what ``vocalgrad render`` writes (clips, manifest.parquet with every
``vocalgrad.MANIFEST_COLUMNS`` column, render.json) from synthetic tones, fast enough for tests.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import soundfile as sf

import vocalgrad

_ARROW = {"string": pa.string(), "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_()}


def manifest_schema() -> pa.Schema:
    """Arrow schema of manifest.parquet (column order of ``vocalgrad.MANIFEST_COLUMNS``)."""
    return pa.schema([(name, _ARROW[dtype]) for name, dtype, _ in vocalgrad.MANIFEST_COLUMNS])


def _clip(seed: int, n: int, sr: int, rising: bool) -> np.ndarray:
    t = np.arange(n) / sr
    f0 = 180.0 + 7.0 * (seed % 40)
    env = np.linspace(0.1, 0.6, n) if rising else np.linspace(0.6, 0.1, n)
    y = env * np.sin(2 * np.pi * f0 * t)
    return np.round(y * 20000).astype(np.int16)


def make_render_dir(
    root,
    *,
    split: str = "test",
    categories=vocalgrad.CATEGORY_NAMES,
    n_sources: int = 1,
    seconds: float = 0.25,
    sample_rate: int = 48000,
) -> Path:
    """Write a complete tiny render of ``n_sources`` tone sources into ``root``.

    Returns
    -------
    pathlib.Path
        ``root``, holding ``clips/<category>/<clip_id>.flac``, ``manifest.parquet`` and
        ``render.json``.
    """
    root = Path(root)
    rows = []
    n = int(seconds * sample_rate)
    seed = 0
    for s in range(n_sources):
        source_id = f"tone{s:02d}"
        for cat in categories:
            c = vocalgrad.category(cat)
            for tier in vocalgrad.TIERS:
                for traj in vocalgrad.TRAJECTORIES:
                    for direction in vocalgrad.DIRECTIONS:
                        seed += 1
                        cid = vocalgrad.clip_id(source_id, cat, traj, tier, direction)
                        rel = f"clips/{cat}/{cid}.flac"
                        buf = io.BytesIO()
                        sf.write(buf, _clip(seed, n, sample_rate, direction == "increase"), sample_rate,
                                 format="FLAC", subtype="PCM_16")
                        data = buf.getvalue()
                        (root / rel).parent.mkdir(parents=True, exist_ok=True)
                        (root / rel).write_bytes(data)
                        rows.append({
                            "clip_id": cid, "path": rel, "split": split, "category": cat,
                            "attribute": c.attribute, "direction": direction, "tier": tier,
                            "trajectory": traj, "source_id": source_id, "speaker_id": "tone",
                            "sentence_id": source_id, "gender": "", "accent": "",
                            "text": "" if s % 2 else "a tone",
                            "sample_rate": sample_rate, "duration_sec": n / sample_rate,
                            "onset_sec": 0.01, "offset_sec": n / sample_rate - 0.01,
                            "source_onset_sec": 0.01, "source_offset_sec": n / sample_rate - 0.01,
                            "speech_found": True, "value_start": -1.0 * seed, "value_end": 1.0 * seed,
                            "value_unit": "dB", "clipped_ratio": 0.0,
                            "sha256": hashlib.sha256(data).hexdigest(), "recipe": "faithful-v1",
                        })
    write_manifest(root, rows)
    (root / "render.json").write_text(json.dumps({
        "recipe": "faithful-v1", "split": split, "sample_rate": sample_rate, "source": "tones",
        "toolkit_version": "test",
    }))
    return root


def write_manifest(root, rows: list[dict]) -> None:
    """Write ``rows`` as ``root/manifest.parquet`` with the manifest schema."""
    pq.write_table(pa.Table.from_pylist(rows, schema=manifest_schema()), Path(root) / "manifest.parquet")


def read_manifest(root) -> list[dict]:
    """Rows of ``root/manifest.parquet`` sorted by clip id."""
    return sorted(pq.read_table(Path(root) / "manifest.parquet").to_pylist(), key=lambda r: r["clip_id"])


def run_cli(argv: list[str]) -> int:
    """Run ``vocalgrad ARGV`` in-process through ``vocalgrad_commands.cli`` and return the exit code.

    Until every module in ``COMMAND_MODULES`` exists (the render engine lands separately), the
    parser is built from the importable modules only, so the hub/publish commands stay testable.
    """
    import argparse
    import importlib

    from vocalgrad_commands import cli

    parser = argparse.ArgumentParser(prog="vocalgrad")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in cli.COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register_cli(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


_RENDERS: dict = {}


def real_render(tmp_path_factory, *, split: str = "test", categories=None, n_sources: int = 1) -> Path:
    """A real render of the ``tones`` sources by ``generation.render`` (cached for the session).

    One source and all nine categories (216 clips of ~4 s) take ~15 s on one core; callers must
    treat the folder as read-only (copy it before breaking it).
    """
    from generation.render import render

    key = (split, tuple(categories) if categories else None, n_sources)
    if key not in _RENDERS:
        out = tmp_path_factory.mktemp(f"render_{split}") / "render"
        render("tones", out, split=split, categories=list(categories) if categories else None,
               n_sources=n_sources, jobs=1, progress=False)
        _RENDERS[key] = out
    return _RENDERS[key]
