"""Which linear layers get LoRA adapters: the two scopes of the paper (benchmark.md §11).

* ``lm_head_only``: the output projection (``get_output_embeddings()``) only.
* ``all_linear``: every ``nn.Linear`` of the language model (its decoder and the LM head). The
  audio encoder and the audio-to-LM projector are left out unless ``include_audio_encoder`` is
  set, which then adds every ``nn.Linear`` of the whole model (what the authors' Audio Flamingo 3
  script does; see docs/finetune.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SCOPES", "lora_targets", "language_model_prefix"]

SCOPES: tuple[str, ...] = ("lm_head_only", "all_linear")


def _name_of(model: Any, module: Any) -> str | None:
    for name, mod in model.named_modules():
        if mod is module:
            return name
    return None


def language_model_prefix(model: Any) -> str:
    """Dotted name of the language-model decoder inside a (multimodal) model.

    Uses ``get_decoder()`` when it returns a sub-module, else the first module named
    ``language_model`` / ``llm`` / ``text_model``.

    Raises
    ------
    ValueError
        If no decoder can be found.
    """
    getter = getattr(model, "get_decoder", None)
    if callable(getter):
        try:
            dec = getter()
        except Exception:           # some families raise for the top-level class
            dec = None
        name = _name_of(model, dec) if dec is not None else None
        if name:
            return name
    for name, _ in model.named_modules():
        if name.rsplit(".", 1)[-1] in ("language_model", "llm", "text_model"):
            return name
    raise ValueError(f"{type(model).__name__}: cannot find the language model (get_decoder(), "
                     f"'language_model' sub-module); pass explicit LoRA target modules")


def lora_targets(model: Any, scope: str, *, include_audio_encoder: bool = False) -> list[str]:
    """Full module names to wrap with LoRA for a scope.

    Parameters
    ----------
    model : torch.nn.Module
        The base model (not yet wrapped by peft).
    scope : {"lm_head_only", "all_linear"}
    include_audio_encoder : bool
        With ``all_linear``: also the audio encoder and projector (every ``nn.Linear``).

    Returns
    -------
    list of str
        Sorted module names (peft ``target_modules``).
    """
    import torch.nn as nn

    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}; choose from {', '.join(SCOPES)}")
    if include_audio_encoder and scope != "all_linear":
        raise ValueError("include_audio_encoder only applies to scope all_linear")
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    head_name = _name_of(model, head) if head is not None else None
    if head_name is None:
        raise ValueError(f"{type(model).__name__}: no output embeddings (LM head) found")
    if scope == "lm_head_only":
        return [head_name]
    linears = [n for n, m in model.named_modules() if n and isinstance(m, nn.Linear)]
    if include_audio_encoder:
        return sorted(linears)
    prefix = language_model_prefix(model) + "."
    return sorted(n for n in linears if n.startswith(prefix) or n == head_name)
