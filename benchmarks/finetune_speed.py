"""Speed of ``vocalgrad finetune``: optimizer steps/s, clips/s and peak memory, per LoRA scope.

Usage::

    python benchmarks/finetune_speed.py                           # tiny random Qwen2-Audio, synthetic volume clips, CPU
    python benchmarks/finetune_speed.py --model PATH --hub HUB --device cuda --clips 160

Prints one table from one run. Each scope is trained for one epoch on ``--clips`` training clips
with batch 1 x gradient accumulation ``--grad-accum`` (the paper's 16 by default) in a fresh
output folder; the time is the training loop only (``train_seconds`` of ``finetune.json``: no
model loading, no validation). Peak memory: the process's peak resident set (CPU) and, on CUDA,
``torch.cuda.max_memory_allocated`` per scope.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main(argv=None) -> int:
    from generation.option_types import positive_int, comma_list

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="model folder / id (default: the tests' tiny Qwen2-Audio)")
    ap.add_argument("--hub", help="Hub folder with a train config (default: synthetic volume clips)")
    ap.add_argument("--category", default="volume")
    ap.add_argument("--clips", type=positive_int, default=64, help="training clips per scope (default %(default)d)")
    ap.add_argument("--grad-accum", type=positive_int, default=16)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--scopes", type=comma_list, default="lm_head_only,all_linear")
    args = ap.parse_args(argv)

    import torch

    from analysis.finetune.config import FinetuneConfig
    from analysis.finetune.train import run_finetune

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = args.model
        if model is None:
            import _probe_helpers as ph

            model = str(ph.build_tiny("qwen2_audio", tmp / "tiny"))
        hub = args.hub
        if hub is None:
            import _finetune_helpers as fh

            n_sources = -(-args.clips * 10 // 36) + 1               # 4 clips per source, 10 % validation
            hub = str(fh.make_volume_hub(tmp / "hub", train_sources=n_sources))
        print(f"model {model}; data {hub} ({args.category}); device {args.device}; "
              f"batch 1 x grad-accum {args.grad_accum}")
        print(f"{'scope':<14}{'clips':>7}{'steps':>7}{'trainable':>11}{'s':>8}{'clips/s':>9}{'steps/s':>9}"
              f"{'peak RSS MB':>13}{'peak CUDA MB':>14}")
        for scope in args.scopes:
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()
            cfg = FinetuneConfig(model=model, data=hub, category=args.category, scope=scope, device=args.device,
                                 dtype=args.dtype, grad_accum=args.grad_accum, max_train=args.clips, max_val=8,
                                 save_every=10 ** 9)
            res = run_finetune(cfg, tmp / f"run_{scope}", progress=False)
            secs = res["train_seconds"]
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            cuda = torch.cuda.max_memory_allocated() / 2 ** 20 if torch.cuda.is_available() else float("nan")
            n = res["data"]["n_train"]
            print(f"{scope:<14}{n:>7}{res['steps']:>7}{res['trainable_parameters']:>11,}{secs:>8.2f}"
                  f"{n / secs:>9.1f}{res['steps'] / secs:>9.2f}{rss:>13.0f}{cuda:>14.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
