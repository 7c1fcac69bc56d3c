"""``vocalgrad align``: category direction alignment of a model, base or adapted (paper Table 21,
Figure 9; benchmark.md §11).

Features are the LM hidden states at the final input position (the one that predicts the first
answer token) of every test clip, for the chosen hidden-state indices (0 = input embeddings,
``l`` = after layer ``l``; the paper's 5, 10, 15, 20, 25, 28 by default, those the model has).
The directions and cosines are computed by :mod:`.alignment`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import vocalgrad
from analysis.cli_options import add_command, add_model_arguments, add_run_arguments, comma_list
from generation.audio import atomic_path, atomic_write_text
from generation.option_types import comma_text

from .alignment import PAPER_LAYERS, alignment_rows, category_direction, cosine_matrix

__all__ = ["final_position_features", "register_cli", "run_alignment", "write_alignment"]


def final_position_features(lm, clips, layers, *, batch_size: int = 8, audio_first: bool = False,
                            system_prompt: str | None = None, progress: bool = False) -> np.ndarray:
    """(n_clips, len(layers), hidden) float32: hidden states at the last input position."""
    from tqdm.auto import tqdm

    from harness_tasks.models.families import Item

    out = []
    for start in tqdm(range(0, len(clips), batch_size), desc=f"features {clips.category}", disable=not progress,
                      leave=False):
        rows = range(start, min(start + batch_size, len(clips)))
        hs = lm.hidden_states(lm.batch([Item(clips.prompt, [clips.audio(i)], audio_first=audio_first,
                                             system=system_prompt) for i in rows]))
        out.append(np.stack([hs[l][:, -1, :].float().cpu().numpy() for l in layers], axis=1))
    return np.concatenate(out)


def resolve_layers(spec: str | None, n_layers: int) -> list[int]:
    """``paper`` (default: Table 21's indices that exist), ``all`` (0..N) or a comma list."""
    if spec in (None, "", "paper"):
        layers = [l for l in PAPER_LAYERS if l <= n_layers]
        return layers or [n_layers]
    if spec == "all":
        return list(range(n_layers + 1))
    layers = [int(v) for v in spec.split(",") if v.strip()]
    bad = [l for l in layers if not 0 <= l <= n_layers]
    if bad:
        raise ValueError(f"layers {bad} out of range 0..{n_layers}")
    return layers


def run_alignment(*, model: str, data: str, out, adapter: str | None = None, categories=None, layers: str | None = None,
                  batch_size: int = 8, device: str = "auto", dtype: str = "auto", audio_first: bool = False,
                  system_prompt: str | None = None, trust_remote_code: bool = False, progress: bool = True) -> dict:
    """Directions per (category, layer) on the test split and the cosine of every category pair.

    Writes ``alignment.json`` (layers, categories, cosine matrices, pair info) and
    ``directions.npz`` to ``out``.
    """
    from analysis.probe.data import load_clips
    from analysis.probe.model_features import num_lm_layers
    from harness_tasks.models.families import load

    cats = [vocalgrad.category(c).name for c in (categories or vocalgrad.CATEGORY_NAMES)]
    if len(cats) < 2:
        raise ValueError("alignment needs at least two categories")
    lm = load(model, dtype=dtype, device=device, trust_remote_code=trust_remote_code, peft=adapter)
    base = lm.model.get_base_model() if hasattr(lm.model, "get_base_model") else lm.model
    idx = resolve_layers(layers, num_lm_layers(base.config))
    dirs, info = [], {}
    for cat in cats:
        clips = load_clips(data, "test", cat)
        x = final_position_features(lm, clips, idx, batch_size=batch_size, audio_first=audio_first,
                                    system_prompt=system_prompt, progress=progress)
        d, inf = category_direction(clips.ids, x)
        dirs.append(d)
        info[cat] = {"sources": inf["sources"], "pairs": inf["pairs"], "unpaired": len(inf["unpaired"])}
    directions = np.stack(dirs)                          # (C, L, hidden)
    cos = cosine_matrix(directions)                      # (L, C, C)
    label = "base" if not adapter else Path(adapter).resolve().parent.name
    res = {"model": str(model), "adapter": str(adapter) if adapter else None, "label": label, "data": str(data),
           "layers": idx, "categories": cats, "cosine": cos.tolist(), "pairs": info,
           "rows": alignment_rows(cats, cos, idx, model=label),
           "position": "last input position (predicts the first answer token)",
           "method": "increase - decrease per (source, tier, trajectory); mean per source; mean over sources"}
    write_alignment(out, res, directions, cos)
    return res


def write_alignment(out, res: dict, directions: np.ndarray, cos: np.ndarray) -> None:
    """``alignment.json`` and ``directions.npz`` of :func:`run_alignment` in ``out``, each under a temporary
    name then renamed: a symbolic link planted at either name is replaced, never written through."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "alignment.json", json.dumps(res, indent=2))
    with atomic_path(out / "directions.npz") as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, directions=directions, cosine=cos, layers=np.array(res["layers"]),
                            categories=np.array(res["categories"]))


def register_cli(subparsers) -> None:
    """Add ``vocalgrad align --model M [--adapter DIR] --data HUB --out DIR``."""
    p = add_command(
        subparsers, "align", _run_cli,
        help="direction alignment between categories at the final input position (paper Table 21)",
        description="""Pair increase/decrease test clips with the same source, tier and trajectory, average the
            differences of the final-position hidden states per source and then over sources, and report the
            cosine of every category pair per layer, for a base model or an adapter. See docs/finetune.md.""")
    add_model_arguments(p)
    p.add_argument("--data", required=True, metavar="HUB_OR_REPO", help="Hub folder or repo id (test configs)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--categories", type=comma_text, metavar="LIST", help="comma-separated (default: all nine)")
    p.add_argument("--layers", type=comma_text, default="paper", metavar="paper|all|LIST",
                   help="hidden-state indices (paper: 5,10,15,20,25,28 where they exist)")
    add_run_arguments(p)


def _run_cli(args) -> int:
    res = run_alignment(model=args.model, adapter=args.adapter, data=args.data, out=args.out,
                        categories=comma_list(args.categories), layers=args.layers, batch_size=args.batch_size,
                        device=args.device, dtype=args.dtype, audio_first=args.audio_first,
                        system_prompt=args.system_prompt, trust_remote_code=args.trust_remote_code,
                        progress=not args.quiet)
    cos = np.array(res["cosine"])
    iu = np.triu_indices(len(res["categories"]), 1)
    for li, layer in enumerate(res["layers"]):
        vals = np.abs(cos[li][iu])
        mean = f"{np.nanmean(vals):.3f}" if np.isfinite(vals).any() else "n/a (no direction)"
        print(f"layer {layer}: mean |cos| over {len(iu[0])} pairs = {mean}")
    print(f"wrote {args.out}/alignment.json, directions.npz")
    return 0
