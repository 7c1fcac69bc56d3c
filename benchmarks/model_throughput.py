"""Clips per second of a tiny audio LM at batch 1/8/32, and the harness overhead per clip.

Builds a tiny random Qwen2-Audio (the tests' fixture, a few MB) and ``--clips`` synthetic clips
(``--seconds`` at ``--sr``, FLAC bytes as the Hub stores them), then

1. runs ``vocalgrad-hf``'s full ``generate_until`` path (lazy decoding, resampling, chat
   template, padded batches, greedy decoding of ``--tokens`` new tokens) at each batch size and
   reports clips/s; time spent inside the adapter's ``answer()`` is measured separately, so
   ``overhead`` = the rest (request unpacking, answer-log keys and fsync-ed writes, ordering);
2. times the base class alone with a zero-cost answerer, with and without the answer log:
   the fixed cost per clip that every adapter pays.

A tiny model says nothing about a 7B model's speed (that is GPU-bound: not run here); the point
is the shape (batching gain) and that the harness adds milliseconds, not seconds, per clip.

Usage::

    python benchmarks/model_throughput.py [--clips 64] [--batches 1,8,32] [--tokens 8]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def make_clips(n: int, seconds: float, sr: int):
    import soundfile as sf

    import vocalgrad
    from harness_tasks.clip_audio import ClipAudio

    rng = np.random.default_rng(0)
    t = np.arange(int(seconds * sr)) / sr
    clips = []
    for i in range(n):
        d = vocalgrad.DIRECTIONS[i % 2]
        g = t / t[-1] if d == "increase" else 1 - t / t[-1]
        y = 0.2 * np.sin(2 * np.pi * (120 + i % 50) * t) * (0.3 + 0.7 * g) + 0.01 * rng.standard_normal(t.size)
        buf = io.BytesIO()
        sf.write(buf, y.astype(np.float32), sr, format="FLAC", subtype="PCM_16")
        clips.append(ClipAudio(f"clip{i:04d}", {"bytes": buf.getvalue(), "path": None}))
    return clips


def requests(clips, tokens: int):
    import vocalgrad

    prompt = vocalgrad.default_prompt("volume")
    return [(prompt, {"until": [], "max_gen_toks": tokens, "do_sample": False}, {"audio": [c]}) for c in clips]


def time_model(model_dir: Path, reqs, batch: int) -> dict:
    from harness_tasks.models.hf import HFAudioLM

    lm = HFAudioLM(pretrained=str(model_dir), dtype="float32", device="cpu", batch_size=batch,
                   retry_unparsed=False, answer_log="none")
    inner = {"s": 0.0}
    answer = lm.answer

    def timed(queries):
        t0 = time.perf_counter()
        try:
            return answer(queries)
        finally:
            inner["s"] += time.perf_counter() - t0

    lm.answer = timed
    lm.generate_until(reqs[: max(1, batch)], disable_tqdm=True)  # warm-up (first-call costs)
    inner["s"] = 0.0
    t0 = time.perf_counter()
    lm.generate_until(reqs, disable_tqdm=True)
    total = time.perf_counter() - t0
    n = len(reqs)
    return {"batch": batch, "clips_per_s": n / total, "ms_per_clip": 1e3 * total / n,
            "overhead_ms_per_clip": 1e3 * (total - inner["s"]) / n}


def time_base(reqs, log_dir: str | None) -> float:
    from harness_tasks.models.base import VocalGradLM

    class Instant(VocalGradLM):
        def answer(self, queries):
            return ["increase"] * len(queries)

    lm = Instant(answer_log=log_dir or "none", batch_size=8)
    t0 = time.perf_counter()
    lm.generate_until(reqs, disable_tqdm=True)
    return 1e3 * (time.perf_counter() - t0) / len(reqs)


def main(argv: list[str] | None = None) -> dict:
    from generation.option_types import positive_float, positive_int, positive_ints, sample_rate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clips", type=positive_int, default=64)
    ap.add_argument("--batches", type=positive_ints, default="1,8,32")
    ap.add_argument("--tokens", type=positive_int, default=8, help="new tokens per answer")
    ap.add_argument("--seconds", type=positive_float, default=4.0)
    ap.add_argument("--sr", type=sample_rate, default=48000)
    args = ap.parse_args(argv)

    import torch

    torch.manual_seed(0)
    from _harness_helpers import build_tiny_qwen2_audio

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_tiny_qwen2_audio(Path(tmp) / "tiny")
        clips = make_clips(args.clips, args.seconds, args.sr)
        reqs = requests(clips, args.tokens)
        rows = []
        for b in (int(x) for x in args.batches.split(",")):
            row = time_model(model_dir, reqs, b)
            rows.append(row)
            print(f"batch {b:3d}: {row['clips_per_s']:7.1f} clips/s  ({row['ms_per_clip']:.1f} ms/clip, "
                  f"harness overhead {row['overhead_ms_per_clip']:.2f} ms/clip)")
        no_log = time_base(reqs, None)
        with_log = time_base(reqs, str(Path(tmp) / "log"))
        print(f"base class alone (zero-cost model): {no_log:.3f} ms/clip without the answer log, "
              f"{with_log:.3f} ms/clip with it (sha256 keys + one fsync-ed line per clip)")
    summary = {"clips": args.clips, "seconds": args.seconds, "sr": args.sr, "tokens": args.tokens,
               "torch_threads": torch.get_num_threads(), "model": rows,
               "base_ms_per_clip": {"no_log": no_log, "with_log": with_log}}
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
