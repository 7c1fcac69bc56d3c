"""The GPU check run by ``benchmarks/device_check.sh`` (see there; needs CUDA).

For each model (the tiny families of ``tests/_family_helpers.py`` and the 7B-class checkpoints found
locally), ``vocalgrad-hf`` in bfloat16 on ``cuda`` answers :data:`N_CLIPS` fixed clips at batch sizes
:data:`BATCHES`; the answers must be identical across batch sizes (families whose encoders see the
padding, ``length_sensitive``, get clips of one length). Then ``vocalgrad finetune`` trains a LoRA on a
tiny AF3 on CUDA. Results: ``OUT/device_check.json``; one line per check on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

#: Batch sizes compared.
BATCHES = (1, 8, 32)
#: Clips per model and batch size.
N_CLIPS = 32
#: The paper's local checkpoints looked for in the Hugging Face cache (offline).
PAPER_MODELS = ("nvidia/audio-flamingo-3-hf", "Qwen/Qwen2-Audio-7B-Instruct")


def clips(n: int, *, same_length: bool):
    """``n`` deterministic clips (16 kHz tones with a loudness ramp), 1-3 s long unless ``same_length``."""
    import numpy as np

    from harness_tasks.clip_audio import ClipAudio

    out = []
    for i in range(n):
        sr = 16000
        seconds = 2.0 if same_length else 1.0 + (i % 5) * 0.5
        t = np.arange(int(sr * seconds)) / sr
        g = np.linspace(0.1, 1, t.size) if i % 2 else np.linspace(1, 0.1, t.size)
        out.append(ClipAudio(f"c{i}", {"array": (0.3 * g * np.sin(2 * np.pi * (150 + 17 * i) * t)).astype("float32"),
                                       "sampling_rate": sr}))
    return out


def local_models() -> list[str]:
    """7B-class checkpoints present here: VOCALGRAD_DEVICE_MODELS, then the paper's in the HF cache."""
    found = [p for p in os.environ.get("VOCALGRAD_DEVICE_MODELS", "").split() if p]
    try:
        from huggingface_hub import snapshot_download

        for repo in PAPER_MODELS:
            try:
                found.append(snapshot_download(repo, local_files_only=True))
            except Exception:
                pass
    except ImportError:
        pass
    return found


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def check_model(name: str, pretrained: str, processor, prompt: str, device: str = "cuda") -> dict:
    """Answers and clips/s at each batch size in bf16 on CUDA; identical answers across sizes?"""
    import torch

    from harness_tasks.models.hf import HFAudioLM

    lm = HFAudioLM(pretrained=pretrained, processor=processor, dtype="bfloat16", device=device, answer_log="none",
                   retry_unparsed=False)
    data = clips(N_CLIPS, same_length=lm.lm.length_sensitive)
    reqs = [(prompt, {"until": [], "max_gen_toks": 16, "do_sample": False}, {"audio": [c]}) for c in data]
    answers, speed = {}, {}
    for b in BATCHES:
        lm.batch_size = b
        _sync(device)
        t0 = time.perf_counter()
        answers[b] = lm.generate_until(reqs, disable_tqdm=True)
        _sync(device)
        speed[b] = round(len(reqs) / (time.perf_counter() - t0), 2)
    same = {b: sum(x == y for x, y in zip(answers[1], answers[b])) for b in BATCHES}
    row = {"model": name, "family": lm.lm.family, "clips": len(reqs), "clips_per_s": speed,
           "identical_to_batch_1": same, "errors": sum(a.startswith("<<vocalgrad:error>>") for a in answers[1]),
           "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.startswith("cuda") else None,
           "ok": all(v == len(reqs) for v in same.values())}
    del lm
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return row


def check_finetune(tmp: Path, device: str = "cuda") -> dict:
    """``vocalgrad finetune`` on CUDA on a tiny AF3 and a small Hub folder; trains and writes its adapter."""
    import _finetune_helpers as fth
    import _harness_helpers as hh

    from vocalgrad_commands.cli import main

    hub = fth.make_volume_hub(tmp / "hub")
    model = hh.build_tiny_audio_flamingo3(tmp / "af3")
    t0 = time.perf_counter()
    rc = main(["finetune", "--model", str(model), "--data", str(hub), "--category", "volume", "--scope",
               "lm_head_only", "--out", str(tmp / "ft"), "--device", device, "--dtype", "bfloat16",
               "--grad-accum", "2", "--val-fraction", "0.25", "--quiet"])
    report = json.loads((tmp / "ft" / "finetune.json").read_text()) if (tmp / "ft" / "finetune.json").exists() else {}
    return {"check": "finetune", "rc": rc, "seconds": round(time.perf_counter() - t0, 1),
            "adapter": (tmp / "ft" / "adapter").is_dir(), "report_keys": sorted(report)[:12],
            "ok": rc == 0 and (tmp / "ft" / "adapter").is_dir()}


def main() -> int:
    from generation.option_types import comma_list, out_folder

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", type=out_folder, default="device_check", help="output folder (checked before the work)")
    p.add_argument("--device", default="cuda", help="cuda (default); cpu only to smoke-test this script")
    p.add_argument("--families", type=comma_list, help="comma-separated tiny families (default: all)")
    p.add_argument("--no-finetune", action="store_true", help="skip the finetune check")
    args = p.parse_args()
    import _family_helpers as fh  # after the options are checked: torch takes seconds to import
    import torch

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("VOCALGRAD_ANSWER_LOG", "none")
    import vocalgrad

    prompt = vocalgrad.default_prompt("volume")
    rows = []
    gpu = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None
    summary = {"gpu": gpu, "device": args.device, "torch": torch.__version__, "rows": rows}
    wanted = set(args.families) if args.families else set(fh.BUILDERS)
    with tempfile.TemporaryDirectory(prefix="vocalgrad-device-") as tmp:
        tmp = Path(tmp)
        todo = [(fam, str(build(tmp / fam)), fh.PROCESSORS.get(fam)) for fam, build in fh.BUILDERS.items()
                if fam in wanted]
        todo += [(Path(m).name, m, None) for m in local_models()]
        for name, path, proc in todo:
            try:
                row = check_model(name, path, proc(Path(path)) if proc else None, prompt, args.device)
            except Exception as exc:      # one model's failure is reported, the others still run
                row = {"model": name, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:400]}
            rows.append(row)
            print(json.dumps(row), flush=True)
        if not args.no_finetune:
            try:
                row = check_finetune(tmp, args.device)
            except Exception as exc:
                row = {"check": "finetune", "ok": False, "error": f"{type(exc).__name__}: {exc}"[:400]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    (out / "device_check.json").write_text(json.dumps(summary, indent=1) + "\n")
    failed = [r.get("model") or r.get("check") for r in rows if not r.get("ok")]
    print(f"device_check: {len(rows) - len(failed)} of {len(rows)} checks passed"
          + (f"; failed: {', '.join(failed)}" if failed else "") + f" ({out / 'device_check.json'})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
