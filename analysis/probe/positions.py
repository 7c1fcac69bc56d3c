"""Token-position probes (paper Tables 18-19): LM hidden states at single token positions.

Positions (names as in ``vocalgrad probe --positions``):

``a1`` .. ``a4``
    the final audio token of each of four equal temporal segments of the audio positions
    (segment bounds ``floor(linspace(0, n, 5))``; a segment of zero length uses its first index);
``o``
    the output-prediction position: the last input position, whose state predicts the first
    answer token;
``q_attr``, ``q_p``, ``q_l``
    only with the audio before the query: the final token of the attribute expression in the
    query, and the penultimate / final token of the query text.

Orders: ``query_audio`` (the benchmark's text-then-audio order) and ``audio_query``. The query is
located as the unique occurrence of the prompt's own token ids (tokenised alone, no special
tokens) in the row; the attribute as the unique occurrence inside the query of the attribute
phrase, tried as ``attribute``, `` attribute``, ``the attribute``, `` the attribute``. Anything
not found exactly once is an error naming the clip (no guessing).

Features are read from one forward pass of :class:`analysis.probe.model_features.ModelFeatures`
(same inputs as the harness) at the chosen layers; ``hidden_states[l]`` is the output of decoder
layer ``l``. The position table averages the probe accuracies of the categories equally.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.cli_options import ordered_subset
from generation.audio import atomic_path, atomic_write_text

from .cache import FeatureCache, FeatureKey, fingerprint_digest
from .run import (LazyFeatures, extract_each, fill_cache, fit_cached, model_config, model_identity, prepare_run,
                  short_name, source_id)

__all__ = ["AUDIO_QUERY_ONLY", "DEFAULT_LAYERS", "ORDERS", "PAPER_POSITIONS", "POSITIONS", "PositionFeatures",
           "find_unique", "locate", "parse_positions", "position_table", "segment_ends", "write_position_markdown"]

POSITIONS: tuple[str, ...] = ("a1", "a2", "a3", "a4", "o", "q_attr", "q_p", "q_l")
#: Positions that exist only when the audio comes before the query.
AUDIO_QUERY_ONLY: tuple[str, ...] = ("q_attr", "q_p", "q_l")
#: Input orders: text then audio (the benchmark's), audio then text.
ORDERS: tuple[str, ...] = ("query_audio", "audio_query")
#: Layers of the paper's position tables.
DEFAULT_LAYERS: tuple[int, ...] = (1, 10, 25)
#: The paper's numbers for reference (percent; Kimi-Audio, query->audio, layer 1), paper Table 18.
PAPER_POSITIONS: dict[tuple[str, str, int], dict[str, float]] = {
    ("Kimi-Audio", "query_audio", 1): {"a1": 85.5, "a2": 78.3, "a3": 78.5, "a4": 92.4, "o": 93.1},
}


def parse_positions(spec: str | Sequence[str]) -> list[str]:
    """``"a1,a2,o"`` or a list -> validated names in :data:`POSITIONS` order."""
    return ordered_subset(spec, POSITIONS, "position")


def segment_ends(audio_positions: Sequence[int], n_segments: int = 4) -> list[int]:
    """Last audio position of each of ``n_segments`` equal segments of ``audio_positions``.

    >>> segment_ends(list(range(10, 20)))
    [11, 14, 16, 19]
    """
    n = len(audio_positions)
    if n == 0:
        raise ValueError("no audio positions")
    bounds = np.linspace(0, n, n_segments + 1).astype(np.int64)
    return [int(audio_positions[max(int(bounds[i + 1]) - 1, int(bounds[i]))]) for i in range(n_segments)]


def find_unique(haystack: Sequence[int], needle: Sequence[int], *, what: str) -> int:
    """Start of the only occurrence of ``needle`` in ``haystack``.

    Raises
    ------
    ValueError
        When it occurs zero or several times (the message says how often).
    """
    needle = list(needle)
    if not needle:
        raise ValueError(f"{what}: tokenises to nothing")
    k = len(needle)
    hits = [i for i in range(len(haystack) - k + 1) if list(haystack[i:i + k]) == needle]
    if len(hits) != 1:
        raise ValueError(f"{what}: found {len(hits)} times in the input ids (need exactly one)")
    return hits[0]


def locate(input_ids: Sequence[int], audio_mask: Sequence[bool], prompt_ids: Sequence[int],
           attribute_ids: Sequence[Sequence[int]], positions: Sequence[str], *, order: str,
           last: int | None = None) -> dict[str, int]:
    """Position index of every requested name in one (left-padded) input row.

    Parameters
    ----------
    input_ids, audio_mask : sequence
        One row of the model inputs and its audio-placeholder mask.
    prompt_ids : sequence of int
        The prompt text tokenised alone (no special tokens).
    attribute_ids : sequence of sequence of int
        Tokenisations of the attribute phrase to try, in order (the first found once wins).
    positions : sequence of str
    order : {"query_audio", "audio_query"}
    last : int, optional
        Index of the last input position (default ``len(input_ids) - 1``).
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    want_q = [p for p in positions if p in AUDIO_QUERY_ONLY]
    if want_q and order != "audio_query":
        raise ValueError(f"position(s) {', '.join(want_q)} exist only with the audio before the query "
                         f"(order audio_query)")
    out: dict[str, int] = {}
    audio = [i for i, m in enumerate(audio_mask) if m]
    if any(p.startswith("a") for p in positions):
        ends = segment_ends(audio)
        for j, name in enumerate(("a1", "a2", "a3", "a4")):
            if name in positions:
                out[name] = ends[j]
    if "o" in positions:
        out["o"] = len(input_ids) - 1 if last is None else int(last)
    if want_q:
        start = find_unique(input_ids, prompt_ids, what="query text")
        end = start + len(prompt_ids)
        if audio and audio[-1] > start:
            raise ValueError("the audio does not come before the query in this row")
        out.update(q_l=end - 1, q_p=end - 2)
        attr_end = None
        for cand in attribute_ids:
            try:
                attr_end = find_unique(list(prompt_ids), cand, what="attribute") + len(cand)
                break
            except ValueError:
                continue
        if attr_end is None:
            raise ValueError("attribute phrase not found exactly once in the query tokens")
        out["q_attr"] = start + attr_end - 1
    return {p: out[p] for p in positions}


class PositionFeatures:
    """Hidden states at token positions, on top of a loaded ``ModelFeatures`` (``mf``).

    Uses only the model layer's ``mf.lm.batch`` (the harness's inputs), ``mf.hidden_states`` and the
    processor's tokenizer, so it follows any change of the model layer underneath.
    """

    def __init__(self, mf: Any) -> None:
        self.mf = mf
        self.tokenizer = getattr(mf.lm.processor, "tokenizer", mf.lm.processor)

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def features(self, prompts: list[str], audios: list[tuple[np.ndarray, int]], *, attribute: str, order: str,
                 positions: Sequence[str], layers: Sequence[int],
                 ids: list[str] | None = None) -> dict[tuple[str, int], np.ndarray]:
        """``(position, layer) -> float32 (batch, hidden)`` for one batch of clips."""
        from harness_tasks.models.families import Item

        inputs = self.mf.lm.batch([Item(prompt=p, audios=[(y, int(sr))], audio_first=order == "audio_query",
                                        system=self.mf.system_prompt) for p, (y, sr) in zip(prompts, audios)])
        hs, mask = self.mf.hidden_states(inputs)
        for layer in layers:
            if not 0 <= int(layer) < len(hs):
                raise ValueError(f"layer {layer} out of range 0..{len(hs) - 1}")
        attr = [self._ids(t) for t in (attribute, f" {attribute}", f"the {attribute}", f" the {attribute}")]
        rows = []
        for b in range(len(prompts)):
            try:
                rows.append(locate(inputs["input_ids"][b].tolist(), mask[b].tolist(), self._ids(prompts[b]), attr,
                                   positions, order=order))
            except ValueError as exc:
                name = (ids or [f"row {i}" for i in range(len(prompts))])[b]
                raise RuntimeError(f"{self.mf.lm.name}: {name}: {exc}") from None
        out = {}
        for p in positions:
            idx = [r[p] for r in rows]
            for layer in layers:
                h = hs[int(layer)]
                out[(p, int(layer))] = h[range(len(idx)), idx, :].float().cpu().numpy()
        return out


def position_table(rows: list[dict]) -> dict[tuple[str, int], dict[str, float]]:
    """(order, layer) -> position -> accuracy averaged over the categories equally."""
    acc: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for r in rows:
        acc[(r["order"], int(r["layer"]), r["position"])].append(r["accuracy"])
    table: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    order_key = {o: i for i, o in enumerate(ORDERS)}
    for (order, layer, pos), vals in sorted(acc.items(), key=lambda kv: (order_key.get(kv[0][0], 9), kv[0][1],
                                                                         POSITIONS.index(kv[0][2]))):
        table[(order, layer)][pos] = float(np.mean(vals))
    return dict(table)


def write_position_markdown(rows: list[dict], path, *, model: str | None, data: str, epochs: int) -> Path:
    """The position table (paper Tables 18-19 layout) and the per-category accuracies."""

    path = Path(path)
    cats = list(dict.fromkeys(r["category"] for r in rows))
    table = position_table(rows)
    pos = [p for p in POSITIONS if any(p in v for v in table.values())]

    def pct(v):
        return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"

    lines = ["# Token-position probes (paper Tables 18-19)", "", f"- model: `{model or '-'}`", f"- data: `{data}`",
             f"- categories: {', '.join(cats)}; each cell is the mean over the categories' probe accuracies "
             "(categories weighted equally)",
             f"- probe: as `vocalgrad probe` (standardised, one linear layer, AdamW, {epochs} epochs, seed 1234), "
             "on the hidden state at one token position",
             "- positions: a1-a4 = final audio token of each quarter of the audio positions; o = output-prediction "
             "position; q_attr / q_p / q_l = final token of the attribute expression / penultimate / final query "
             "token (audio before the query only)", "",
             "## Test accuracy (%) by order, layer and position", "",
             "| order | layer | " + " | ".join(pos) + " |", "|---|---|" + "---|" * len(pos)]
    for (order, layer), cells in table.items():
        lines.append(f"| {order.replace('_', '→')} | {layer} | " + " | ".join(pct(cells.get(p)) for p in pos) + " |")
    for (name, order, layer), cells in PAPER_POSITIONS.items():
        lines.append(f"| {name} (paper), {order.replace('_', '→')} | {layer} | "
                     + " | ".join(f"{cells[p]:.1f}" if p in cells else "" for p in pos) + " |")
    lines += ["", "## Per category (%)", "", "| order | layer | position | " + " | ".join(cats) + " |",
              "|---|---|---|" + "---|" * len(cats)]
    per = {(r["order"], int(r["layer"]), r["position"], r["category"]): r["accuracy"] for r in rows}
    for (order, layer), cells in table.items():
        for p in pos:
            if p in cells:
                lines.append(f"| {order} | {layer} | {p} | "
                             + " | ".join(pct(per.get((order, layer, p, c))) for c in cats) + " |")
    lines.append("")
    atomic_write_text(path, "\n".join(lines))
    return path


def run_positions(*, data: str, out, model: Any, processor: Any = None, categories=None, positions="a1,a2,a3,a4,o",
                  orders: Sequence[str] = ORDERS, layers: Sequence[int] = DEFAULT_LAYERS, device: str = "auto",
                  dtype: str = "auto", batch_size: int = 8, system_prompt: str | None = None,
                  model_class: str | None = None, trust_remote_code: bool = False, cache_dir=None,
                  probe_device: str | None = None, epochs: int = 200, progress: bool = True) -> dict[str, Any]:
    """``vocalgrad probe --positions``: cached position features, one probe per (category, order,
    position, layer), ``positions.csv`` and ``probe.md`` (the position table) in ``out``.

    Audio-query-only positions are skipped for the ``query_audio`` order.
    """
    from .model_features import ModelFeatures

    pos_list = parse_positions(positions)
    bad = [o for o in orders if o not in ORDERS]
    if bad or not orders:
        raise ValueError(f"unknown order(s) {bad or orders}; choose from {', '.join(ORDERS)}")
    cats, out = prepare_run(data, categories, out)
    name, identity = model_identity(model)
    get = LazyFeatures(lambda: PositionFeatures(ModelFeatures(
        model, processor=processor, device=device, dtype=dtype, system_prompt=system_prompt,
        model_class=model_class, trust_remote_code=trust_remote_code)))
    layer_list = _checked_layers(model, layers, trust_remote_code)
    fp = {"data": source_id(data), "model": identity, "dtype": dtype, "system_prompt": system_prompt,
          "prompt": "default", "kind": "positions-v1"}
    cache = FeatureCache(Path(cache_dir) if cache_dir else out / "cache",
                         f"positions-{short_name(name)}-{fingerprint_digest(fp)[:8]}", fp)
    plan = [(o, p) for o in orders for p in pos_list if o == "audio_query" or p not in AUDIO_QUERY_ONLY]
    t0 = time.perf_counter()
    computed = {"model": 0}

    def extract(clips) -> None:
        for order in orders:
            computed["model"] += _extract_order(clips, order, plan=plan, layers=layer_list, cache=cache, get=get,
                                                batch_size=batch_size, progress=progress)

    clipsets = extract_each(data, cats, extract)
    extract_s = time.perf_counter() - t0
    probe_device = _probe_device(probe_device, get)
    t1 = time.perf_counter()
    rows = [{"model": name, "category": cat, "order": order, "position": p, "layer": layer,
             **fit_cached(cache, f"pos_{order}_{p}", layer, cat, clipsets, epochs=epochs,
                          device=probe_device).as_dict()}
            for cat in cats for order, p in plan for layer in layer_list]
    probe_s = time.perf_counter() - t1
    csv_path = _write_csv(rows, out / "positions.csv")
    md = write_position_markdown(rows, out / "probe.md", model=name, data=str(data), epochs=epochs)
    return {"rows": rows, "files": [csv_path, md], "computed": {"mel": 0, "model": computed["model"]},
            "extract_seconds": extract_s, "probe_seconds": probe_s}


# ----------------------------------------------------------------------------- steps of run_positions
def _checked_layers(model: Any, layers: Sequence[int], trust_remote_code: bool) -> list[int]:
    """Sorted unique layer numbers, each within the model's 0..N LM layers."""
    from .model_features import num_lm_layers

    n_layers = num_lm_layers(model_config(model, trust_remote_code))
    layer_list = sorted({int(x) for x in layers})
    if any(not 0 <= x <= n_layers for x in layer_list):
        raise ValueError(f"layer(s) {layer_list} out of range: the model has {n_layers} LM layers; "
                         f"pass --layers (default {','.join(map(str, DEFAULT_LAYERS))})")
    return layer_list


def _extract_order(clips, order: str, *, plan: list[tuple[str, str]], layers: list[int], cache, get: LazyFeatures,
                   batch_size: int, progress: bool) -> int:
    """Cache the missing position features of one ClipSet in one input order; clips computed."""
    import vocalgrad

    keys = [FeatureKey(f"pos_{order}_{p}", layer, clips.split, clips.category) for o, p in plan if o == order
            for layer in layers]
    missing = [k for k in keys if not cache.has(k, clips.ids_digest)]
    if not missing:
        return 0
    w = cache.writer(missing, len(clips), clips.ids_digest)
    pf = get()
    prefix = f"pos_{order}_"
    want = sorted({k.stage[len(prefix):] for k in w.keys}, key=POSITIONS.index)
    attribute = vocalgrad.category(clips.category).attribute

    def compute(idx: list[int]) -> dict:
        feats = pf.features([clips.prompt] * len(idx), [clips.audio(i) for i in idx], attribute=attribute,
                            order=order, positions=want, layers=layers, ids=[clips.ids[i] for i in idx])
        return {k: feats[(k.stage[len(prefix):], k.layer)] for k in w.keys}

    return fill_cache(w, len(clips), batch_size, f"positions {order} {clips.split}/{clips.category}", progress,
                      compute)


def _probe_device(requested: str | None, get: LazyFeatures) -> str:
    """Probe-training device: as asked, else (also for ``auto``) the loaded model's, else cuda when available."""
    if requested in (None, "auto"):
        import torch

        return get.loaded.mf.device if get.loaded is not None else ("cuda" if torch.cuda.is_available() else "cpu")
    return requested


def _write_csv(rows: list[dict], path: Path) -> Path:
    """``positions.csv``: one row per probe (atomic write)."""
    import csv

    cols = ("model", "category", "order", "position", "layer", "accuracy", "balanced_accuracy", "train_accuracy",
            "n_train", "n_test", "dim", "seconds")
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        wr.writeheader()
        wr.writerows(rows)
    return path
