"""Synthetic lm-eval output folders for the report tests (no lm-eval run needed).

:func:`write_results` writes what ``vocalgrad-eval --output_path DIR --log_samples`` leaves for
one model: ``DIR/<model>/results_<stamp>.json`` and one ``samples_vocalgrad_<cat>_<stamp>.jsonl``
per category, with the fields the real files carry (doc, filtered_resps, the scored record).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import vocalgrad
from harness_tasks.metrics import METRICS, record_code, score_answer, tabulate


def clips(*, sources: int = 3, categories=vocalgrad.CATEGORY_NAMES) -> list[dict]:
    """Docs of a full design: sources x categories x tiers x trajectories x directions."""
    docs = []
    for s in range(sources):
        sid = f"spk{s:02d}_{s:02d}"
        for cat in categories:
            for tier in vocalgrad.TIERS:
                for traj in vocalgrad.TRAJECTORIES:
                    for d in vocalgrad.DIRECTIONS:
                        docs.append({"id": vocalgrad.clip_id(sid, cat, traj, tier, d), "category": cat,
                                     "direction": d, "label": d, "tier": tier, "trajectory": traj,
                                     "source_id": sid})
    return docs


def build_clips(build: str, *, sources: int = 3, categories=("pitch", "volume")) -> list[dict]:
    """:func:`clips` of one dataset build: the same clip ids on every build, the audio (its sha256) differs."""
    docs = clips(sources=sources, categories=categories)
    for d in docs:
        d["sha256"] = hashlib.sha256(f"{build}:{d['id']}".encode()).hexdigest()
    return docs


def write_results(root: Path, model: str, answer: Callable[[dict], str | None], *, docs: list[dict],
                  model_args: str = "", stamp: str = "2026-01-01T00-00-00.000000",
                  variant: str = "default", samples: bool = True, log_format: str = "code",
                  sha256: Callable[[dict], str] | None = None, data: dict | None = None) -> Path:
    """Write one model's lm-eval output below ``root``; ``answer(doc)`` gives its raw output.

    ``log_format``: the per-sample metric value as the task logs it now (``"code"``, see
    ``harness_tasks.metrics.record_code``), as a dict (earlier logs), or ``"none"`` (raw only).
    ``sha256(doc)``: the sha256 of the clip's audio, logged with the request as lm-eval logs it
    (``arguments``; none when not given). ``data``: the results file's ``vocalgrad_data`` entry.
    """
    out = Path(root) / model.replace("/", "__")
    out.mkdir(parents=True, exist_ok=True)
    prefix = "vocalgrad_" if variant == "default" else f"vocalgrad_{variant}_"
    results, nsamp = {}, {}
    by_cat: dict[str, list[dict]] = {}
    for doc in docs:
        by_cat.setdefault(doc["category"], []).append(doc)
    for cat, cat_docs in by_cat.items():
        task = prefix + cat
        lines, recs = [], []
        for i, doc in enumerate(cat_docs):
            raw = answer(doc)
            rec = score_answer(raw, doc["direction"], id=doc["id"])
            recs.append(rec)
            logged = {"id": doc["id"], "direction": doc["direction"], "pred": rec["pred"],
                      "status": rec["status"], "exact": rec["exact"], "retried": False}
            line = {"doc_id": i, "doc": doc, "target": doc["direction"], "resps": [[raw]],
                    "filtered_resps": [raw], "filter": "none", "acc": float(rec["correct"])}
            if sha256 is not None:
                line["arguments"] = {"gen_args_0": {"arg_0": "prompt", "arg_2": {
                    "audio": [{"clip_id": doc["id"], "sha256": sha256(doc)}]}}}
            if log_format != "none":
                for name in ("acc_parsed", "balanced_acc", "increase_ratio"):
                    line[name] = record_code(logged) if log_format == "code" else logged
            lines.append(json.dumps(line))
        if samples:
            (out / f"samples_{task}_{stamp}.jsonl").write_text("\n".join(lines) + "\n")
        t = tabulate(recs)
        results[task] = {"alias": cat, **{f"{k},none": float(fn(t)) for k, fn in METRICS.items()},
                         "acc_stderr,none": 0.0}
        nsamp[task] = {"original": len(cat_docs), "effective": len(cat_docs)}
    results[prefix.rstrip("_")] = {"alias": "vocalgrad", "acc,none": 0.5}
    out_data = {"results": results, "n-samples": nsamp,
                "config": {"model": model, "model_args": model_args}, "model_name": model}
    if data is not None:
        out_data["vocalgrad_data"] = data
    path = out / f"results_{stamp}.json"
    path.write_text(json.dumps(out_data))
    return path
