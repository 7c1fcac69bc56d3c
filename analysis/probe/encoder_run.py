"""``vocalgrad probe --encoder NAME``: the layers of a pretrained audio encoder, beside the log-mel.

Stages: ``mel`` (as without an encoder) and ``encoder`` (one probe per layer; layers as
``--layers``, 1..N). Then the negative control ``shuffled``: per category, the best encoder layer
refitted on train labels permuted with a fixed seed, :data:`N_SHUFFLES` times (scored on the true
test labels; the mean stays near chance unless something leaks). The output
records the encoder's package version and each weights file's SHA-256 (``encoder.json``,
``probe.md``); the feature cache is keyed by them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.cli_options import ordered_subset
from generation.audio import atomic_write_text

from .cache import FeatureCache, FeatureKey, fingerprint_digest
from .data import ClipSet
from .pooling import N_SEGMENTS
from .run import (LazyFeatures, ModelSide, extract_each, extract_features, fill_cache, fit_probes, log_mel_cache,
                  parse_layers, prepare_run, progress_bar, resolve_probe_device, source_id, write_outputs)

__all__ = ["ENCODER_STAGES", "N_SHUFFLES", "SHUFFLE_SEED", "encoder_notes", "run_encoder_probe", "shuffled_control"]

#: Stages of an encoder run.
ENCODER_STAGES: tuple[str, ...] = ("mel", "encoder")
#: Seed of the label permutations of the ``shuffled`` control, and how many are fitted. One draw on
#: clips that come in increase/decrease pairs strays far from 50 % (a probe of features with one strong
#: direction scores it with the sign of the permutation's chance correlation with the true labels: a
#: standard deviation of about 14 points measured on the demo build), so the control is the mean of 20
#: (standard error about 3 points; it was 5, about 6).
SHUFFLE_SEED = 1234
N_SHUFFLES = 20
#: Clips per cache write.
CHUNK = 8


def _encoder_side(name: str, layers: str | Sequence[int], cache_root: Path, data: str, device: str):
    """(side, encoder): cache keyed by the data and the weights' SHA-256, layers, lazy loader."""
    from .encoders import get_encoder

    enc = get_encoder(name)
    try:
        layer_list = parse_layers(layers, enc.n_layers)
    except ValueError:
        layer_list = [0]
    if 0 in layer_list:
        raise ValueError(f"--layers {layers}: {enc.name}'s layers are 1..{enc.n_layers} "
                         f"({', '.join(enc.layer_names)}), or all")
    fp = {"data": source_id(data), **enc.identity(), "segments": N_SEGMENTS}
    cache = FeatureCache(cache_root, f"encoder-{name}-{fingerprint_digest(fp)[:8]}", fp)
    return ModelSide(cache, layer_list, enc.name, LazyFeatures(lambda: enc.load(device))), enc


def _extract_encoder(clips: ClipSet, side: ModelSide, progress: bool) -> int:
    """Compute and cache the missing encoder layers of one (split, category); clips computed."""
    keys = [FeatureKey("encoder", layer, clips.split, clips.category) for layer in side.layers]
    missing = [k for k in keys if not side.cache.has(k, clips.ids_digest)]
    if not missing:
        return 0
    w = side.cache.writer(missing, len(clips), clips.ids_digest)
    layers = [k.layer for k in w.keys]

    def compute(idx):
        enc = side.get_model()
        feats = [enc.features(*clips.audio(i), layers) for i in idx]
        return {k: np.stack([f[k.layer] for f in feats]) for k in w.keys}

    return fill_cache(w, len(clips), CHUNK, f"{side.name} {clips.split}/{clips.category}", progress, compute)


def shuffled_control(rows: list[dict], cache: FeatureCache, clipsets: dict[tuple[str, str], ClipSet], *,
                     epochs: int, device: str) -> list[dict]:
    """Per category, the best ``encoder`` layer (test accuracy; ties: the lower layer) refitted on
    :data:`N_SHUFFLES` permutations of the train labels (one generator seeded :data:`SHUFFLE_SEED`);
    one ``shuffled`` row each with the mean scores, ``accuracy_min`` and ``accuracy_max``."""
    from .trainer import train_probe

    out = []
    for cat in dict.fromkeys(r["category"] for r in rows if r["stage"] == "encoder"):
        cands = [r for r in rows if r["stage"] == "encoder" and r["category"] == cat]
        best = max(cands, key=lambda r: (r["accuracy"], -r["layer"]))
        tr, te = clipsets[("train", cat)], clipsets[("test", cat)]
        x_tr = cache.load(FeatureKey("encoder", best["layer"], "train", cat), tr.ids_digest)
        x_te = cache.load(FeatureKey("encoder", best["layer"], "test", cat), te.ids_digest)
        rng = np.random.default_rng(SHUFFLE_SEED)
        res = [train_probe(x_tr, rng.permutation(tr.labels), x_te, te.labels, epochs=epochs, device=device).as_dict()
               for _ in range(N_SHUFFLES)]
        mean = {k: (float(np.mean([r[k] for r in res])) if isinstance(res[0][k], float) else res[0][k]) for k in res[0]}
        mean["seconds"] = float(sum(r["seconds"] for r in res))
        accs = [r["accuracy"] for r in res]
        out.append({"model": best["model"], "category": cat, "stage": "shuffled", "layer": best["layer"], **mean,
                    "accuracy_min": min(accs), "accuracy_max": max(accs)})
    return out


def encoder_notes(prov: dict[str, Any], rows: list[dict]) -> list[str]:
    """``probe.md`` lines: the encoder's package, weights (SHA-256), layers, best layer per category."""
    lines = ["## Encoder", "", f"- `{prov['encoder']}`: {prov['distribution']} {prov['version']}, "
             f"{prov['sample_rate']} Hz" + (f", {prov['frame_rate']:g} frames/s" if prov.get("frame_rate") else "")]
    for w in prov["weights"]:
        lines.append(f"- weights `{w['file']}` ({w['bytes']:,} bytes), sha256 `{w['sha256']}`")
    lines.append("- layers: " + ", ".join(f"{i} {n}" for i, n in prov["layers"].items()))
    lines += ["", "## Best encoder layer per category (test accuracy %)", "",
              f"| category | best layer | accuracy | shuffled-label control: mean of {N_SHUFFLES} (range) |", "|---|---|---|---|"]
    for cat in dict.fromkeys(r["category"] for r in rows if r["stage"] == "encoder"):
        best = max((r for r in rows if r["stage"] == "encoder" and r["category"] == cat),
                   key=lambda r: (r["accuracy"], -r["layer"]))
        sh = next((r for r in rows if r["stage"] == "shuffled" and r["category"] == cat), None)
        name = prov["layers"].get(best["layer"], "")
        control = "-" if sh is None else (f"{100 * sh['accuracy']:.1f} ({100 * sh['accuracy_min']:.1f}-"
                                          f"{100 * sh['accuracy_max']:.1f})")
        lines.append(f"| {cat} | {best['layer']} ({name}) | {100 * best['accuracy']:.1f} | {control} |")
    return lines + [""]


def run_encoder_probe(*, data: str, out, encoder: str, categories: Sequence[str] | None = None,
                      stages: str | Sequence[str] = ENCODER_STAGES, layers: str | Sequence[int] = "all",
                      device: str = "auto", cache_dir=None, probe_device: str | None = None, epochs: int = 200,
                      plots: bool = True, progress: bool = True) -> dict[str, Any]:
    """Probe the layers of ``encoder`` (a registered name or a transformers folder).

    Returns
    -------
    dict
        As :func:`analysis.probe.run.run_probe`, plus ``provenance`` (package, version, weights'
        SHA-256, layers), ``computed["encoder"]`` and the encoder's wall and CPU seconds
        (``encoder_seconds``, ``encoder_cpu_seconds``: loading included).
    """
    stage_list = ordered_subset(stages, ENCODER_STAGES, "stage")
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    cache_root = Path(cache_dir) if cache_dir else Path(out) / "cache"
    side, enc = _encoder_side(encoder, layers, cache_root, data, device)   # a bad name or layer: nothing written
    cats, out = prepare_run(data, categories, out)
    mel_cache = log_mel_cache(cache_root, data) if "mel" in stage_list else None
    prov = enc.provenance()
    computed = {"mel": 0, "model": 0, "encoder": 0}
    t0 = time.perf_counter()
    enc_seconds = enc_cpu = 0.0

    def extract(clips: ClipSet) -> None:
        nonlocal enc_seconds, enc_cpu
        computed["mel"] += extract_features(clips, mel_cache=mel_cache, model_cache=None, progress=progress)["mel"]
        if "encoder" in stage_list:
            t, c = time.perf_counter(), time.process_time()
            computed["encoder"] += _extract_encoder(clips, side, progress)
            enc_seconds += time.perf_counter() - t
            enc_cpu += time.process_time() - c

    clipsets = extract_each(data, cats, extract)
    extract_s = time.perf_counter() - t0
    probe_device = resolve_probe_device(probe_device or device, None)
    t1 = time.perf_counter()
    caches = {s: mel_cache if s == "mel" else side.cache for s in stage_list}
    rows = fit_probes(cats, stage_list, side, caches, clipsets, epochs=epochs, device=probe_device,
                       progress=progress)
    if "encoder" in stage_list:
        with progress_bar(1, 0, "shuffled-label control", progress, unit="set"):
            rows += shuffled_control(rows, side.cache, clipsets, epochs=epochs, device=probe_device)
    probe_s = time.perf_counter() - t1
    out_json = out / "encoder.json"
    atomic_write_text(out_json, json.dumps(prov, indent=1) + "\n")
    files = write_outputs(rows, out, model_name=side.name, data=data, epochs=epochs, plots=plots,
                           notes=encoder_notes(prov, rows))
    return {"rows": rows, "files": [*files, out_json], "computed": computed, "extract_seconds": extract_s,
            "encoder_seconds": enc_seconds, "encoder_cpu_seconds": enc_cpu, "probe_seconds": probe_s,
            "provenance": prov}
