"""Render speed of the engine vs the straightforward reference implementation, per category.

Prints, from one run on the same source(s): clips/s of both (CPU time of this process, so other
load on the machine disturbs the ratio little), their ratio, the worst signal-to-difference ratio
and the largest 16-bit sample difference between the two outputs, the cost of the label-validity
measurement per clip (``label ms``: generation.label_validity), and peak RSS.

    python benchmarks/render_speed.py [--seconds 4.0] [--sources 1] [--categories pitch,speed]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import reference_impl as ref  # noqa: E402

import vocalgrad as vg  # noqa: E402
from generation.audio import to_int16  # noqa: E402
from generation import label_validity as lv  # noqa: E402
from generation.recipe import load_recipe  # noqa: E402
from generation.render import prepare_source, render_clip  # noqa: E402
from generation.sources import SourceItem  # noqa: E402


class Sig:
    def __init__(self, y):
        self.y = y

    def read(self):
        return self.y, 48000


def speechlike(seconds: float, seed: int) -> np.ndarray:
    """A 4-s-like utterance: gliding harmonic voice, syllable envelope, breath noise, silence around."""
    rng = np.random.default_rng(seed)
    sr = 48000
    t = np.arange(int(seconds * sr)) / sr
    f0 = 120 + 80 * rng.random()
    inst = f0 * (1 + 0.1 * np.sin(2 * np.pi * 0.7 * t))
    phase = 2 * np.pi * np.cumsum(inst) / sr
    voiced = sum(np.sin(k * phase) / k for k in range(1, 25))
    env = np.clip(np.sin(2 * np.pi * 3.5 * t + rng.uniform(0, 6)), 0, None) ** 0.5
    y = 0.08 * voiced * env + 0.005 * rng.standard_normal(len(t))
    pad = 1e-4 * rng.standard_normal(int(0.3 * sr))
    y = np.concatenate([pad, y, pad[: int(0.2 * sr)]])
    return (np.round(y * 32768) / 32768).astype(np.float32)


def main(argv=None) -> int:
    from generation.option_types import comma_list, positive_float, positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=positive_float, default=3.5, help="speech length of each source (s)")
    ap.add_argument("--sources", type=positive_int, default=1)
    ap.add_argument("--categories", type=comma_list, default=",".join(vg.CATEGORY_NAMES))
    args = ap.parse_args(argv)
    rec = load_recipe()
    cats = args.categories
    srcs = []
    for k in range(args.sources):
        item = SourceItem(f"bench{k}", Sig(speechlike(args.seconds, k)))
        srcs.append((item, *prepare_source(item, rec)))
    # warm up both paths (numba compilation, FFT plans) outside the timings
    item, x, span = srcs[0]
    render_clip(x, item, rec, span, category="pitch", tier="low", trajectory="linear", direction="increase")
    ref.render_reference(x, "pitch", "low", "linear", "increase", noise_ids=("a", "a"))

    print(f"{'category':11s} {'ours clip/s':>11s} {'ref clip/s':>10s} {'speed-up':>8s} "
          f"{'ours ms':>8s} {'ref ms':>8s} {'min SDR dB':>10s} {'max |d| LSB':>11s} {'label ms':>8s}")
    tot_ours = tot_ref = 0.0
    n_clips = 0
    for cat in cats:
        t_ours = t_ref = t_label = 0.0
        worst_sdr, worst_lsb, n = np.inf, 0, 0
        for item, x, span in srcs:
            cache: dict = {}
            t0 = time.process_time()
            lv.source_warnings(x, span, rec.sample_rate, cat, rec.category(cat))
            t_label += time.process_time() - t0
            for tier in vg.TIERS:
                for traj in vg.TRAJECTORIES:
                    for d in vg.DIRECTIONS:
                        t0 = time.process_time()
                        res, sched = render_clip(x, item, rec, span, category=cat, tier=tier, trajectory=traj,
                                                 direction=d, cache=cache)
                        ours = to_int16(res.y)[0]
                        t1 = time.process_time()
                        lv.measure_effect(cat, x, span, res.y, res.onset, res.offset, rec.sample_rate, sched,
                                          rec.crossfade)
                        t_label += time.process_time() - t1
                        t1 = time.process_time()
                        y, _, _ = ref.render_reference(x, cat, tier, traj, d, noise_ids=(item.source_id,) * 2)
                        theirs = to_int16(y)[0]
                        t2 = time.process_time()
                        t_ours += t1 - t0
                        t_ref += t2 - t1
                        n += 1
                        a, b = np.asarray(res.y, float), np.asarray(y, float)
                        err = np.sum((a - b) ** 2)
                        sdr = np.inf if err == 0 else 10 * np.log10(np.sum(b**2) / err)
                        worst_sdr = min(worst_sdr, sdr)
                        worst_lsb = max(worst_lsb, int(np.max(np.abs(ours.astype(int) - theirs))))
        tot_ours += t_ours
        tot_ref += t_ref
        n_clips += n
        sdr_txt = "exact" if worst_sdr == np.inf else f"{worst_sdr:.1f}"
        print(f"{cat:11s} {n / t_ours:11.1f} {n / t_ref:10.1f} {t_ref / t_ours:7.2f}x "
              f"{1000 * t_ours / n:8.1f} {1000 * t_ref / n:8.1f} {sdr_txt:>10s} {worst_lsb:11d} "
              f"{1000 * t_label / n:8.2f}", flush=True)
    print(f"{'all':11s} {n_clips / tot_ours:11.1f} {n_clips / tot_ref:10.1f} {tot_ref / tot_ours:7.2f}x "
          f"{1000 * tot_ours / n_clips:8.1f} {1000 * tot_ref / n_clips:8.1f}")
    full = 21600 * tot_ours / n_clips
    print(f"projected full test set (21,600 clips of this length): {full / 60:.1f} core-min ours, "
          f"{21600 * tot_ref / n_clips / 60:.1f} core-min reference; {full / 120:.1f} min on 2 cores")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
