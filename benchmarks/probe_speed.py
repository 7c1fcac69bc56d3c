"""Speed of ``vocalgrad probe``: feature extraction clips/s and probe training time.

Usage::

    python benchmarks/probe_speed.py                          # demo render (volume, 4 sources), tiny model, CPU
    python benchmarks/probe_speed.py --hub HUB --model PATH --device cuda --batch-size 16
    python benchmarks/probe_speed.py --dims 2048,4096,65536 --n-train 1200 --n-test 2400

Prints one table from one run:

* ``mel``: decode + 16 kHz resample + log-mel + pooling, clips/s (one process);
* ``model``: one forward pass with all hidden states + pooling for all probe stages and layers,
  clips/s (the tiny random Qwen2-Audio of the tests unless ``--model`` is given);
* ``probe``: seconds to train and score one probe (one category, one layer) on random
  features of each size in ``--dims`` with the benchmark.md §10 settings (200 epochs, batch 512).
  The paper-scale sizes are 2,048 (log-mel), 4,096 (``lm_text`` of a 7B model) and 65,536
  (``lm_audio``/``pre_lm``: 16 segments x 4,096), with 1,200 train clips per category (50
  sources x 24) and 2,400 test clips.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402


def demo_hub(root: Path, n_sources: int) -> Path:
    from generation.hub import build_hub
    from generation.render import render

    for split in ("test", "train"):
        render("demo", root / split, split=split, categories=["volume"], n_sources=n_sources, jobs=1,
               progress=False)
    build_hub([root / "test", root / "train"], root / "hub", allow_partial=True)
    return root / "hub"


def time_mel(clips) -> float:
    from analysis.probe.mel import mel_feature

    mel_feature(*clips.audio(0))                 # warm-up: librosa import, filter bank
    t0 = time.perf_counter()
    for i in range(len(clips)):
        mel_feature(*clips.audio(i))
    return len(clips) / (time.perf_counter() - t0)


def time_model(clips, model: str, *, device: str, batch_size: int, layers: str) -> tuple[float, int]:
    from analysis.probe.model_features import ModelFeatures
    from analysis.probe.run import parse_layers

    mf = ModelFeatures(model, device=device)
    wanted = [("pre_lm", None)] + [(s, layer) for s in ("lm_audio", "lm_text")
                                   for layer in parse_layers(layers, mf.n_layers)]
    n = len(clips)
    batches = [list(range(s, min(n, s + batch_size))) for s in range(0, n, batch_size)]
    mf.features([clips.prompt], [clips.audio(0)], wanted=wanted)          # warm-up
    t0 = time.perf_counter()
    for idx in batches:
        mf.features([clips.prompt] * len(idx), [clips.audio(i) for i in idx], wanted=wanted)
    if str(mf.device).startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return n / (time.perf_counter() - t0), mf.n_layers


def time_probe(dim: int, n_train: int, n_test: int, device: str) -> tuple[float, float]:
    from analysis.probe.trainer import train_probe

    rng = np.random.default_rng(0)
    train_probe(rng.standard_normal((8, 4)), [0, 1] * 4, rng.standard_normal((4, 4)), [0, 1] * 2,
                epochs=1, device=device)        # warm-up: torch/AdamW first-call costs
    ytr, yte = rng.integers(0, 2, n_train), rng.integers(0, 2, n_test)
    w = rng.standard_normal(dim).astype(np.float32)
    xtr = (rng.standard_normal((n_train, dim), dtype=np.float32) + np.outer(2 * ytr - 1, w) * 0.05)
    xte = (rng.standard_normal((n_test, dim), dtype=np.float32) + np.outer(2 * yte - 1, w) * 0.05)
    res = train_probe(xtr.astype(np.float16), ytr, xte.astype(np.float16), yte, device=device)
    return res.seconds, res.accuracy


def main(argv=None) -> int:
    from generation.option_types import comma_text, positive_int, positive_ints

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hub", help="Hub folder with a volume config and train (default: a demo render)")
    ap.add_argument("--sources", type=positive_int, default=4, help="demo sources per split (default %(default)d)")
    ap.add_argument("--model", help="model folder / id (default: tiny random Qwen2-Audio)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-size", type=positive_int, default=8)
    ap.add_argument("--layers", type=comma_text, default="all")
    ap.add_argument("--dims", type=positive_ints, default="2048,4096,16384", help="probe feature sizes (default %(default)s)")
    ap.add_argument("--n-train", type=positive_int, default=1200)
    ap.add_argument("--n-test", type=positive_int, default=2400)
    args = ap.parse_args(argv)

    from analysis.probe.data import load_clips

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        hub = Path(args.hub) if args.hub else demo_hub(tmp, args.sources)
        clips = load_clips(str(hub), "test", "volume")
        y, sr = clips.audio(0)
        print(f"clips: {len(clips)} ({len(y) / sr:.1f} s each, {sr} Hz) from {hub}")
        rows = [("mel", f"{time_mel(clips):.1f} clips/s", "1 process")]
        model = args.model
        if model is None:
            sys.path.insert(0, str(ROOT / "tests"))
            from _probe_helpers import build_tiny

            model = str(build_tiny("qwen2_audio", tmp / "tiny"))
        rate, n_layers = time_model(clips, model, device=args.device, batch_size=args.batch_size, layers=args.layers)
        name = "tiny qwen2_audio" if args.model is None else args.model
        rows.append(("model", f"{rate:.1f} clips/s",
                     f"{name}, {args.device}, batch {args.batch_size}, {n_layers} layers, all stages"))
        for dim in (int(d) for d in args.dims.split(",")):
            sec, _ = time_probe(dim, args.n_train, args.n_test, args.device)
            rows.append((f"probe dim {dim}", f"{sec:.2f} s / probe",
                         f"{args.n_train} train, {args.n_test} test, 200 epochs, {args.device}"))
    w = max(len(r[0]) for r in rows)
    for r in rows:
        print(f"{r[0]:<{w}}  {r[1]:>18}  {r[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
