"""Cost of ``vocalgrad probe --encoder``: seconds per 1,000 clips for each encoder's features.

Usage::

    python benchmarks/encoder_cost.py --hub HUB                      # all built-in encoders, 24 test clips
    python benchmarks/encoder_cost.py --hub HUB --encoders pesto,fcpe --clips 48 --category volume

For each encoder: the clips of one (test, category) are decoded once, then every clip goes through
``Encoder.features`` for all layers (resample to the encoder's rate, the network, pooling into 16
segments), one clip at a time on the CPU. Prints CPU seconds (``time.process_time``, all threads of
the process) and wall seconds per 1,000 clips, the mean clip length, and torch's thread count. CPU
time is the figure to compare on a shared machine (other jobs stretch the wall time, not it);
loading the weights is left out (once per run).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hub", required=True, help="Hub folder (vocalgrad hub) with a test config")
    ap.add_argument("--encoders", default="pesto,torchcrepe:tiny,torchcrepe:full,fcpe,resemblyzer,silero-vad")
    ap.add_argument("--category", default="pitch")
    ap.add_argument("--clips", type=int, default=24)
    args = ap.parse_args(argv)

    import torch

    from analysis.probe.data import load_clips
    from analysis.probe.encoders import get_encoder

    clips = load_clips(args.hub, "test", args.category)
    audio = [clips.audio(i) for i in range(min(args.clips, len(clips)))]
    seconds = sum(len(y) / sr for y, sr in audio) / len(audio)
    print(f"{len(audio)} clips of {args.hub} [test/{args.category}], mean {seconds:.2f} s; "
          f"torch threads {torch.get_num_threads()}")
    print(f"{'encoder':<18}{'layers':>7}{'CPU s / 1k clips':>18}{'wall s / 1k clips':>19}")
    for name in [n.strip() for n in args.encoders.split(",") if n.strip()]:
        enc = get_encoder(name).load("cpu")
        layers = list(range(1, enc.n_layers + 1))
        enc.features(*audio[0], layers)                        # warm-up (kernels, caches)
        c0, w0 = time.process_time(), time.perf_counter()
        for y, sr in audio:
            enc.features(y, sr, layers)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        k = 1000 / len(audio)
        print(f"{name:<18}{len(layers):>7}{cpu * k:>18.0f}{wall * k:>19.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
