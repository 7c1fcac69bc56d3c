"""``vocalgrad-hf`` beside lmms-eval's own ``qwen2_audio`` adapter: clips per second and answers, one run.

Builds the tests' tiny random Qwen2-Audio with Qwen2-Audio-7B-Instruct's generation config (sampling
with a repetition penalty of 1.1; token ids from the tiny tokenizer) and a 48 kHz Hub folder of
``--sources`` x 2 clips per category, then on CPU runs

1. lmms-eval 0.7.3 (``simple_evaluate``, its ``qwen2_audio`` class, our ``vocalgrad_<category>`` tasks),
2. ``vocalgrad-hf`` in lm-eval on ``vocalgrad_audiofirst_<category>`` (lmms-eval's adapter puts the clip
   first) with ``generation=checkpoint_greedy`` (lmms-eval's decoding), at each ``--batches`` size,
3. ``vocalgrad-hf`` with its default ``generation=greedy`` (no checkpoint penalty),

and prints clips/s of each evaluation call (task loading, data decoding, the model, scoring; the model
load is outside), whether each run's answers equal lmms-eval's per clip, and how many answers the
checkpoint's penalty moves (default greedy against lmms-eval: raw text and parsed label).

A tiny random model says nothing about a 7B model's speed or how often a real model's answer moves;
it measures the harnesses' own cost around the same model calls.

Usage::

    python benchmarks/lmms_side_by_side.py [--sources 8] [--tokens 6] [--batches 1,8]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("VOCALGRAD_ANSWER_LOG", "none")

CATEGORIES = ("pitch", "volume")
QWEN2_AUDIO_GENERATION = dict(do_sample=True, temperature=0.7, top_k=20, top_p=0.5, repetition_penalty=1.1)


def answers(samples: list[dict]) -> dict[str, str]:
    out = {}
    for s in samples:
        doc = s.get("doc") or s["clip"]
        resp = s.get("filtered_resps", s.get("resps"))
        while isinstance(resp, list):
            resp = resp[0]
        out[doc["id"]] = resp.strip()
    return out


def main() -> int:
    from generation.option_types import positive_int, positive_ints

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", type=positive_int, default=8, help="sources per category (2 clips each)")
    ap.add_argument("--tokens", type=positive_int, default=6, help="new tokens per answer")
    ap.add_argument("--batches", type=positive_ints, default="1,8", help="vocalgrad-hf batch sizes")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    import lm_eval.evaluator
    import lmms_eval.evaluator
    from _harness_helpers import build_tiny_qwen2_audio, make_hub_folder, run_lm_eval
    from lmms_eval.models.simple.qwen2_audio import Qwen2_Audio
    from lmms_eval.tasks import TaskManager
    from transformers import GenerationConfig

    from harness_tasks import lmms_configs
    from harness_tasks.models.hf import HFAudioLM
    from harness_tasks.parsing import classify_answer

    lmms_eval.evaluator._enable_reentrant_filelocks._patched = True   # filelock 4 (docs/lmms-eval.md)
    lm_eval.evaluator.add_env_info = lambda results: None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["VOCALGRAD_DATASET"] = str(make_hub_folder(tmp / "hub", categories=CATEGORIES,
                                                              sources=args.sources, sr=48000))
        model_dir = build_tiny_qwen2_audio(tmp / "model")
        own = GenerationConfig.from_pretrained(model_dir)
        GenerationConfig(bos_token_id=own.bos_token_id, eos_token_id=own.eos_token_id, pad_token_id=own.pad_token_id,
                         **QWEN2_AUDIO_GENERATION).save_pretrained(model_dir)
        n = 2 * args.sources * len(CATEGORIES)
        rows = []

        lmms_lm = Qwen2_Audio(pretrained=str(model_dir), device="cpu", device_map="auto", batch_size=1)
        lmms_lm.device_map = "cpu"
        tm = TaskManager(include_path=str(lmms_configs.TASK_DIR), include_defaults=False)
        t0 = time.perf_counter()
        res = lmms_eval.evaluator.simple_evaluate(model=lmms_lm, tasks=[f"vocalgrad_{c}" for c in CATEGORIES],
                                                  bootstrap_iters=0, log_samples=True, task_manager=tm,
                                                  gen_kwargs=f"max_new_tokens={args.tokens}")
        dt = time.perf_counter() - t0
        ref = {k: v for c in CATEGORIES for k, v in answers(res["samples"][f"vocalgrad_{c}"]).items()}
        rows.append(("lmms-eval qwen2_audio", 1, dt, ref))

        runs = [("vocalgrad-hf checkpoint_greedy", "checkpoint_greedy", int(b)) for b in args.batches.split(",")]
        runs.append(("vocalgrad-hf greedy (default)", "greedy", 1))
        for label, generation, batch in runs:
            lm = HFAudioLM(pretrained=str(model_dir), device="cpu", batch_size=batch, retry_unparsed=False,
                           generation=generation)
            t0 = time.perf_counter()
            out = run_lm_eval(lm, [f"vocalgrad_audiofirst_{c}" for c in CATEGORIES], log_samples=True,
                              gen_kwargs=f"max_gen_toks={args.tokens}")
            dt = time.perf_counter() - t0
            got = {k: v for c in CATEGORIES for k, v in answers(out["samples"][f"vocalgrad_audiofirst_{c}"]).items()}
            rows.append((label, batch, dt, got))

    print(f"{n} clips (48 kHz, 1 s), {args.tokens} new tokens, CPU, {torch.get_num_threads()} threads; tiny random "
          f"Qwen2-Audio with Qwen2-Audio-7B-Instruct's generation config (repetition penalty 1.1)")
    print(f"{'run':34s} {'batch':>5s} {'clips/s':>8s}  answers equal to lmms-eval's")
    for label, batch, dt, got in rows:
        same = sum(got.get(k) == v for k, v in ref.items())
        labels = sum(classify_answer(got.get(k, ""))[0] == classify_answer(v)[0] for k, v in ref.items())
        print(f"{label:34s} {batch:5d} {n / dt:8.2f}  {same}/{n} raw, {labels}/{n} parsed labels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
