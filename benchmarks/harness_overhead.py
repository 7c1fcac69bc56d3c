"""Harness overhead per clip, and the oracle's speed.

Builds a synthetic local Hub folder (one category, N clips of ``--seconds`` at ``--sr``), then

1. times FLAC decoding alone (the floor every model pays),
2. times lm-eval's whole path (dataset load, docs, requests, lazy audio, scoring, aggregation)
   with a zero-cost model that decodes each clip and answers at once, at two sizes; the slope
   between the sizes is the per-clip cost (fixed start-up costs cancel),
3. times the oracle on decoded clips.

Prints one line per figure and a JSON summary. Target: <= 2 ms/clip beyond decoding.

With ``--render DIR`` (a folder made by ``vocalgrad render``) it instead scores the oracle on
those clips and prints its accuracy per category (and per tier), using the official metrics.

Usage::

    python benchmarks/harness_overhead.py [--clips 100,400] [--seconds 4] [--sr 48000]
    python benchmarks/harness_overhead.py --render DIR
"""

from __future__ import annotations

import argparse
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


def build_hub(folder: Path, n: int, seconds: float, sr: int, category: str = "volume") -> Path:
    import datasets
    import soundfile as sf
    import io

    import vocalgrad

    rng = np.random.default_rng(0)
    rows = []
    t = np.arange(int(seconds * sr)) / sr
    for i in range(n):
        d = vocalgrad.DIRECTIONS[i % 2]
        g = t / t[-1] if d == "increase" else 1 - t / t[-1]
        y = (0.2 * np.sin(2 * np.pi * (120 + i % 50) * t) * (0.3 + 0.7 * g) + 0.01 * rng.standard_normal(t.size))
        buf = io.BytesIO()
        sf.write(buf, y.astype(np.float32), sr, format="FLAC", subtype="PCM_16")
        cid = vocalgrad.clip_id(f"s{i:05d}", category, "linear", "low", d)
        row = {c: "" for c in vocalgrad.HUB_COLUMNS}
        row.update(audio={"bytes": buf.getvalue(), "path": cid + ".flac"}, id=cid, category=category,
                   direction=d, label=d, tier="low", trajectory="linear", source_id=f"s{i:05d}",
                   duration_sec=seconds, onset_sec=0.0, offset_sec=seconds, value_start=0.0, value_end=1.0)
        rows.append(row)
    feats = datasets.Features({c: datasets.Audio() if c == "audio" else
                               datasets.Value("float64") if c.endswith("_sec") or c.startswith("value_") else
                               datasets.Value("string") for c in vocalgrad.HUB_COLUMNS})
    (folder / category).mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=feats).to_parquet(str(folder / category / "test-00000-of-00001.parquet"))
    return folder


def oracle_on_render(folder: Path) -> int:
    """Oracle accuracy per category on a rendered set (manifest.parquet + clips/)."""
    from generation.render_dir import RenderDir
    from harness_tasks import metrics
    from harness_tasks.clip_audio import decode_audio
    from harness_tasks.models.oracle import oracle_direction

    rows = RenderDir(folder).rows()
    recs = []
    t0 = time.perf_counter()
    for r in rows:
        y, sr = decode_audio(str(folder / r["path"]))
        recs.append(metrics.score_answer(oracle_direction(r["category"], y, sr) or "unsure", r["direction"],
                                         category=r["category"], tier=r["tier"], trajectory=r["trajectory"],
                                         source_id=r["source_id"]))
    dt = time.perf_counter() - t0
    by_cat = metrics.breakdown(recs, "category")
    by_tier = metrics.breakdown(recs, ("category", "tier"))
    print(f"oracle on {folder}: {len(recs)} clips in {dt:.1f} s ({len(recs) / dt:.0f} clips/s incl. decoding)")
    print(f"{'category':<11} {'n':>4} {'acc':>6} {'low':>6} {'medium':>6} {'high':>6} {'inc_ratio':>9}")
    for cat, s in by_cat.items():
        tiers = [by_tier.get((cat, t), {}).get("acc", float("nan")) for t in ("low", "medium", "high")]
        print(f"{cat:<11} {s['n']:>4} {s['acc']:>6.3f} " + " ".join(f"{x:>6.3f}" for x in tiers)
              + f" {s['increase_ratio']:>9.3f}")
    overall = metrics.summarize(recs)
    mean = float(np.mean([s["acc"] for s in by_cat.values()]))
    print(f"{'mean':<11} {overall['n']:>4} {mean:>6.3f}")
    print(json.dumps({"oracle_acc_by_category": {k: v["acc"] for k, v in by_cat.items()}, "mean_acc": mean}))
    return 0


def main(argv: list[str] | None = None) -> int:
    from generation.option_types import positive_float, positive_int, positive_ints, sample_rate

    def two_sizes(text: str) -> str:
        sizes = positive_ints(text).split(",")
        if len(sizes) != 2:
            raise argparse.ArgumentTypeError(f"must be two different sizes, comma-separated (e.g. 100,400), got {text!r}")
        return ",".join(sizes)

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", type=two_sizes, default="100,400", help="two sizes, comma-separated")
    ap.add_argument("--seconds", type=positive_float, default=4.0)
    ap.add_argument("--sr", type=sample_rate, default=48000)
    ap.add_argument("--oracle-clips", type=positive_int, default=100)
    ap.add_argument("--render", help="score the oracle on a `vocalgrad render` folder instead")
    args = ap.parse_args(argv)
    if args.render:
        return oracle_on_render(Path(args.render))
    n1, n2 = (int(x) for x in args.clips.split(","))

    import datasets
    import lm_eval
    import lm_eval.evaluator
    from lm_eval.tasks import TaskManager

    import harness_tasks
    from harness_tasks import utils
    from harness_tasks.models.base import VocalGradLM

    datasets.disable_progress_bars()
    lm_eval.evaluator.add_env_info = lambda results: None   # shells out to pip; not per clip

    class ZeroCost(VocalGradLM):
        """Decodes each clip (like any real model) and answers at once."""

        def answer(self, queries):
            for q in queries:
                q.audios[0]["array"]
            return ["increase"] * len(queries)

    class NoDecode(VocalGradLM):
        """Answers without touching the audio: the harness path alone."""

        def answer(self, queries):
            return ["increase"] * len(queries)

    def run(model_cls, tm, repeats=3):
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = lm_eval.simple_evaluate(model=model_cls(), tasks=["vocalgrad_volume"], task_manager=tm,
                                         bootstrap_iters=0, log_samples=True)
            best = min(best, time.perf_counter() - t0)
            assert res["results"]["vocalgrad_volume"]["acc,none"] == 0.5
        return best

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        timings = {}
        for n in (n1, n2):
            hub = build_hub(Path(tmp) / f"hub{n}", n, args.seconds, args.sr)
            os.environ[utils.DATASET_ENV] = str(hub)
            ds = utils.load_split("volume")            # also warms the arrow cache
            from harness_tasks.clip_audio import decode_audio
            t_dec = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                for i in range(len(ds)):
                    decode_audio(ds[i]["audio"])
                t_dec = min(t_dec, time.perf_counter() - t0)
            tm = TaskManager(include_path=harness_tasks.TASK_DIR, include_defaults=False)
            lm_eval.simple_evaluate(model=ZeroCost(), tasks=["vocalgrad_volume"], task_manager=tm,
                                   bootstrap_iters=0, limit=2)   # warm-up (imports, caches)
            t_all, t_bare = run(ZeroCost, tm), run(NoDecode, tm)
            timings[n] = (t_dec, t_all, t_bare)
            print(f"{n} clips: decode alone {1e3 * t_dec / n:.2f} ms/clip; lm-eval run {t_all:.2f} s with decoding, "
                  f"{t_bare:.2f} s without (fixed costs included)")
        (d1, a1, b1), (d2, a2, b2) = timings[n1], timings[n2]
        slope = lambda x1, x2: (x2 - x1) / (n2 - n1)  # noqa: E731
        decode, per_clip, bare = slope(d1, d2), slope(a1, a2), slope(b1, b2)
        out.update(decode_ms_per_clip=1e3 * decode, harness_with_decode_ms_per_clip=1e3 * per_clip,
                   overhead_beyond_decode_ms_per_clip=1e3 * bare, fixed_cost_s=b1 - bare * n1)
        print(f"per clip (slope {n1}->{n2} clips): decode {1e3 * decode:.2f} ms; whole path with decode "
              f"{1e3 * per_clip:.2f} ms; harness overhead beyond decode {1e3 * bare:.2f} ms (target <= 2)")

        # oracle speed on decoded clips
        ds = utils.load_split("volume")
        clips = [decode_audio(ds[i]["audio"]) for i in range(min(args.oracle_clips, len(ds)))]
        from harness_tasks.models.oracle import oracle_direction
        import vocalgrad
        oracle_direction("pitch", *clips[0])        # warm-up
        per_cat = {}
        for cat in vocalgrad.CATEGORY_NAMES:
            t0 = time.perf_counter()
            for y, sr in clips:
                oracle_direction(cat, y, sr)
            per_cat[cat] = len(clips) / (time.perf_counter() - t0)
        total = len(clips) * len(per_cat) / sum(len(clips) / v for v in per_cat.values())
        out.update(oracle_clips_per_s=total, oracle_clips_per_s_by_category=per_cat)
        print("oracle clips/s (decoded audio, one core): " + ", ".join(f"{k} {v:.0f}" for k, v in per_cat.items())
              + f"; all categories {total:.0f}")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
