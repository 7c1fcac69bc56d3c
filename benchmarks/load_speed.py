"""Clips per second: ``load_dataset(HUB, "pitch")`` + decoding every clip vs soundfile on the FLACs.

Usage::

    python benchmarks/load_speed.py                       # synthetic 4-s clips, 10 sources (240 clips)
    python benchmarks/load_speed.py --render build/ [--hub hub/]   # a real render (and its Hub folder)

Prints one table from one run. The Hub path is timed end to end from a cold ``datasets`` cache
(parquet -> Arrow cache, then every clip decoded through ``datasets.Audio``/torchcodec), and again
warm (cache prepared, decode only). The target is the cold Hub path within 2x of decoding the same
FLAC files directly with soundfile.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import soundfile as sf  # noqa: E402

import vocalgrad  # noqa: E402
from generation.render_dir import RenderDir  # noqa: E402

_ARROW = {"string": pa.string(), "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_()}


def synthetic_render(root: Path, *, n_sources: int, seconds: float = 4.0, sr: int = 48000) -> Path:
    """A complete pitch-only render of speech-like 4-s clips (noisy harmonic bursts), partial on purpose."""
    rng = np.random.default_rng(0)
    rows = []
    n = int(seconds * sr)
    t = np.arange(n) / sr
    for s in range(n_sources):
        source_id = f"syn{s:02d}"
        for tier in vocalgrad.TIERS:
            for traj in vocalgrad.TRAJECTORIES:
                for direction in vocalgrad.DIRECTIONS:
                    f0 = 110 + 40 * rng.random() + 30 * t * (1 if direction == "increase" else -1)
                    phase = 2 * np.pi * np.cumsum(f0) / sr
                    y = sum(np.sin(k * phase) / k for k in range(1, 8))
                    y *= 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2  # syllable-like envelope
                    y += 0.02 * rng.standard_normal(n)
                    pcm = np.clip(y / np.abs(y).max() * 0.7 * 32768, -32768, 32767).astype(np.int16)
                    cid = vocalgrad.clip_id(source_id, "pitch", traj, tier, direction)
                    rel = f"clips/pitch/{cid}.flac"
                    buf = io.BytesIO()
                    sf.write(buf, pcm, sr, format="FLAC", subtype="PCM_16")
                    (root / rel).parent.mkdir(parents=True, exist_ok=True)
                    (root / rel).write_bytes(buf.getvalue())
                    rows.append(dict(
                        clip_id=cid, path=rel, split="test", category="pitch", attribute="voice pitch",
                        direction=direction, tier=tier, trajectory=traj, source_id=source_id, speaker_id="syn",
                        sentence_id=source_id, gender="", accent="", text="", sample_rate=sr, duration_sec=seconds,
                        onset_sec=0.0, offset_sec=seconds, source_onset_sec=0.0, source_offset_sec=seconds,
                        speech_found=True, value_start=-1.0, value_end=1.0, value_unit="semitones",
                        clipped_ratio=0.0, sha256=hashlib.sha256(buf.getvalue()).hexdigest(), recipe="synthetic",
                    ))
    schema = pa.schema([(name, _ARROW[dtype]) for name, dtype, _ in vocalgrad.MANIFEST_COLUMNS])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / "manifest.parquet")
    (root / "render.json").write_text(json.dumps({"recipe": "synthetic", "split": "test", "sample_rate": sr,
                                                  "source": "synthetic", "toolkit_version": "bench"}))
    return root


def main(argv=None) -> int:
    from generation.option_types import positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--render", type=Path, help="render folder (default: a synthetic pitch render)")
    ap.add_argument("--hub", type=Path, help="its Hub folder (default: built into a temp folder)")
    ap.add_argument("--config", default="pitch", help="category config to load (default pitch; synthetic: pitch)")
    ap.add_argument("--sources", type=positive_int, default=10, help="synthetic sources (24 pitch clips each)")
    ap.add_argument("--repeats", type=positive_int, default=5, help="timed repeats; the best is reported")
    args = ap.parse_args(argv)

    import datasets

    from generation.hub import build_hub

    datasets.disable_progress_bars()
    tmp = Path(tempfile.mkdtemp(prefix="vocalgrad-bench-"))
    render = args.render or synthetic_render(tmp / "render", n_sources=args.sources)
    hub = args.hub
    if hub is None:
        hub = tmp / "hub"
        build_hub(render, hub, allow_partial=True)
    cfg = args.config if args.render else "pitch"
    rows = RenderDir(render).rows((cfg,))
    paths = [render / r["path"] for r in rows]
    n = len(paths)
    audio_s = sum(sf.info(str(p)).frames / sf.info(str(p)).samplerate for p in paths)

    def direct():
        total = 0
        for p in paths:
            y, _ = sf.read(str(p), dtype="float32")
            total += y.shape[0]
        return total

    def hub_cold(i=[0]):
        i[0] += 1
        ds = datasets.load_dataset(str(hub), cfg, split="test", cache_dir=str(tmp / f"cache{i[0]}"))
        return sum(row["audio"].get_all_samples().data.shape[-1] for row in ds)

    warm_ds = datasets.load_dataset(str(hub), cfg, split="test", cache_dir=str(tmp / "cache_warm"))

    def hub_warm():
        return sum(row["audio"].get_all_samples().data.shape[-1] for row in warm_ds)

    raw_ds = warm_ds.cast_column("audio", datasets.Audio(decode=False))

    def hub_bytes_soundfile():
        return sum(sf.read(io.BytesIO(row["audio"]["bytes"]), dtype="float32")[0].shape[0] for row in raw_ds)

    def hub_streaming():
        ds = datasets.load_dataset(str(hub), cfg, split="test", streaming=True)
        return sum(row["audio"].get_all_samples().data.shape[-1] for row in ds)

    cases = [
        ("soundfile on the FLAC files (reference)", direct),
        (f"load_dataset(HUB,{cfg!r}) cold cache + decode all", hub_cold),
        ("same, warm cache (decode only)", hub_warm),
        ("load_dataset streaming=True + decode all", hub_streaming),
        ("Hub rows, Audio(decode=False) + soundfile", hub_bytes_soundfile),
    ]
    samples = direct()
    results = []
    for name, fn in cases:
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            got = fn()
            best = min(best, time.perf_counter() - t0)
            assert got == samples, f"{name}: decoded {got} samples, expected {samples}"
        results.append((name, n / best))
    ref = results[0][1]
    print(f"{n} {cfg} clips ({'render ' + str(render) if args.render else 'synthetic speech-like'}), "
          f"{audio_s / n:.2f} s each on average, {audio_s / 60:.1f} min of audio; best of {args.repeats}")
    print(f"{'path':<52} {'clips/s':>9} {'x slower than soundfile':>24}")
    for name, rate in results:
        print(f"{name:<52} {rate:9.1f} {ref / rate:24.2f}")
    ratio = ref / results[1][1]
    print(f"target: cold Hub path within 2x of soundfile -> {'MET' if ratio <= 2 else 'NOT MET'} ({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
