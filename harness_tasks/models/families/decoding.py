"""How :meth:`LoadedModel.generate <harness_tasks.models.families.LoadedModel.generate>` decodes:
greedy by default, whatever the checkpoint's ``generation_config.json`` asks for.

transformers' ``generate`` fills every field a passed ``GenerationConfig`` leaves unset from the
model's own ``generation_config`` (Audio Flamingo 3's samples at temperature 0.7 with top-k 20,
top-p 0.8 and a repetition penalty of 1.05). Setting only ``do_sample=False`` would keep the
penalty. So greedy decoding here is a fresh config holding only the checkpoint's token ids, which
``generate`` runs with in place of the model's own (see ``LoadedModel.generate``).

Greedy decoding also stops at the chat template's end-of-turn token(s) (``stop_ids``, found by
:meth:`Family.end_of_turn_ids <harness_tasks.models.families.base.Family.end_of_turn_ids>`):
transformers' newer Audio Flamingo 3 conversion writes a generation config whose only end token
is the tokenizer's (``<|endoftext|>``), so without them greedy decoding would run past
``<|im_end|>`` to the token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..thinking.tokens import special_token_ids

__all__ = ["GENERATION_MODES", "GREEDY_KEEPS", "decode_answers", "generating_model", "generation_config",
           "resolved_generation"]

#: ``generation`` settings of a loaded model: ``greedy`` (the benchmark's decoding, default),
#: ``checkpoint`` (the checkpoint's own ``generation_config``, sampling included) or
#: ``checkpoint_greedy`` (the checkpoint's ``generation_config`` with sampling off and one beam, its
#: repetition penalty and other logits settings kept: what ``generate(do_sample=False)`` gives, and so
#: what lmms-eval's adapters decode with; docs/lmms-eval.md).
GENERATION_MODES = ("greedy", "checkpoint", "checkpoint_greedy")
#: Fields of the checkpoint's ``generation_config`` that greedy decoding keeps (token ids only).
GREEDY_KEEPS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")


def generating_model(model: Any) -> Any:
    """The transformers model whose ``generate`` runs (the base model under a peft wrapper)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def generation_config(model: Any, mode: str = "greedy", *, pad_token_id: int | None = None,
                      stop_ids: Sequence[int] = ()):
    """The ``GenerationConfig`` to decode ``model`` with in ``mode`` (a copy; the model's own is
    not changed). ``pad_token_id`` is used when the checkpoint sets none; in ``greedy`` mode the
    token ids ``stop_ids`` (the chat template's end of turn) are added to the end tokens."""
    import copy

    from transformers import GenerationConfig

    if mode not in GENERATION_MODES:
        raise ValueError(f"generation must be one of {', '.join(GENERATION_MODES)}, got {mode!r}")
    own = getattr(generating_model(model), "generation_config", None)
    if mode == "checkpoint" and own is not None:
        return copy.deepcopy(own)
    if mode == "checkpoint_greedy":
        cfg = copy.deepcopy(own) if own is not None else GenerationConfig()
        cfg.do_sample, cfg.num_beams = False, 1
        for name in ("temperature", "top_p", "top_k", "min_p", "typical_p"):   # sampling only: unused
            setattr(cfg, name, None)
        if cfg.pad_token_id is None:
            cfg.pad_token_id = pad_token_id
        return cfg
    keep = {k: getattr(own, k, None) for k in GREEDY_KEEPS}
    if keep.get("pad_token_id") is None:
        keep["pad_token_id"] = pad_token_id
    eos = keep.get("eos_token_id")
    eos = [] if eos is None else ([int(eos)] if isinstance(eos, int) else [int(e) for e in eos])
    eos += [int(i) for i in stop_ids if int(i) not in eos]
    keep["eos_token_id"] = (eos[0] if len(eos) == 1 else eos) if eos else None
    return GenerationConfig(**{k: v for k, v in keep.items() if v is not None}, do_sample=False, num_beams=1)


def resolved_generation(cfg: Any) -> dict[str, Any]:
    """The settings of a ``GenerationConfig`` as ``generate`` applies them: the fields it leaves
    unset take transformers' defaults; unset fields without a default, metadata and the per-call
    ``max_new_tokens`` / ``max_length`` are left out."""
    from transformers import GenerationConfig

    out = cfg.to_dict()
    defaults = getattr(GenerationConfig, "_get_default_generation_params", None)   # transformers 5
    for key, value in (defaults() if callable(defaults) else {}).items():
        if out.get(key) is None:
            out[key] = value
    skip = {"transformers_version", "max_new_tokens", "max_length"}
    return {k: v for k, v in sorted(out.items()) if v is not None and not k.startswith("_") and k not in skip}


def decode_answers(tokenizer: Any, rows: Any, *, keep: Sequence[int] = ()) -> list[str]:
    """Text of generated token rows, special tokens removed except ``keep`` (the special tokens of
    the family's reasoning delimiters, e.g. Gemma 4's ``<|channel>`` / ``<channel|>``: without them
    the thought would read as part of the answer). Without ``keep``: ``batch_decode(...,
    skip_special_tokens=True)``."""
    if not keep:
        return tokenizer.batch_decode(rows, skip_special_tokens=True)
    keep = {int(k) for k in keep}
    drop = special_token_ids(tokenizer) - keep
    return [tokenizer.decode([int(t) for t in row if int(t) not in drop], skip_special_tokens=False)
            for row in rows.tolist()]

