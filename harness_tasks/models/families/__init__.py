"""The model layer: one small module per model family, used by evaluation (``vocalgrad-hf``),
probing (:mod:`analysis.probe.model_features`) and fine-tuning.

Contract
--------
>>> from harness_tasks.models.families import Item, load
>>> lm = load("path/or/hub-id", dtype="bfloat16", device="cuda")          # doctest: +SKIP
>>> b = lm.batch([Item("Does the pitch rise or fall?", [(y, 48000)])])    # doctest: +SKIP

:func:`load` ``(pretrained, *, revision, dtype, device, trust_remote_code, model_class, family,
peft, processor, attn_implementation, generation)`` picks the family from ``config.model_type`` (then the
``family=`` override, then ``generic``), loads the model class the family names (Omni: the
thinker), or the checkpoint's architecture, or its ``auto_map`` through the transformers Auto
classes (remote code), puts an optional peft adapter on top and returns a :class:`LoadedModel`:

``model, processor, tokenizer``   the loaded objects (tokenizer padding side: left)
``family, dtype, device``         family name, model dtype, device string
``sampling_rate``                 the processor's rate; every clip is resampled to it (soxr HQ), mono
``provenance()``                  model id, revision, dtype, family, device, peft adapter
``batch(items)``                  chat template, left padding, floating tensors in the model's dtype,
                                  on the device; items with ``target`` also get ``labels``
                                  (-100 except the target tokens and the end-of-turn token)
``audio_positions(batch)``        (batch, tokens) bool, True at the audio placeholders of each row
``logits(batch)``                 next-token logits after the prompt (float32, cpu)
``generate(batch, max_new_tokens=)``  greedy answers (text): no sampling, penalty or other
                                  decoding setting of the checkpoint's ``generation_config``
                                  (``generation="checkpoint"`` keeps them)
``generation_settings()``         the resolved settings ``generate`` uses (answer-log key)
``answer_logprobs(batch, words)`` (batch, len(words)) log-prob of each word's first token, max over
                                  the with/without-leading-space variants
``hidden_states(batch)``          LM hidden states, layers + 1 tensors (batch, tokens, hidden)
``last_audio``                    :class:`AudioInfo` (source rate, rate, channels, seconds) of the
                                  clips of the last batch (also logged at DEBUG)

An :class:`Item` is ``(prompt, audios=[(waveform, rate), ...], audio_first, system, target)``.
A new family is a module with a :class:`Family` subclass registered in :data:`FAMILIES`.
"""

from __future__ import annotations

import logging
from typing import Any

from .audioflamingo3 import AudioFlamingo3
from .base import AudioInfo, Family, Item, LoadedModel, as_item, prepare_audio, resolve_model_class
from ..thinking import parse_thinking
from .decoding import GENERATION_MODES
from .gemma3n import Gemma3n
from .gemma4 import Gemma4
from .generic import Generic
from .granite_speech import GraniteSpeech
from .kimi_audio import KimiAudioFamily
from .musicflamingo import MusicFlamingo
from .phi4mm import Phi4Multimodal
from .qwen2_5_omni import Qwen25Omni
from .qwen2_audio import Qwen2Audio
from .qwen3_omni import Qwen3Omni
from .refused import Gemma4Unified, NemotronHOmni
from .versions import FamilyUnavailable, check_transformers
from .voxtral import Voxtral

log = logging.getLogger("vocalgrad")

__all__ = ["AudioInfo", "FAMILIES", "Family", "FamilyUnavailable", "Item", "LoadedModel", "as_item", "detect_family", "load",
           "pick_device", "prepare_audio", "register", "resolve_model_class", "served_family"]

#: name -> family (the order is the detection order; ``generic`` last).
FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add a family to :data:`FAMILIES` (before ``generic``).

    Raises
    ------
    generation.registry.NameTaken
        The family name is taken by another family class (a registered family is never replaced).
    """
    from generation.registry import claim

    claim(dict(FAMILIES), family.name, family, what="model family")  # checks only; the order is set below
    generic = FAMILIES.pop("generic", None)
    FAMILIES[family.name] = family
    if generic is not None and family.name != "generic":
        FAMILIES["generic"] = generic
    return family


for _f in (Qwen2Audio(), AudioFlamingo3(), Qwen25Omni(), Voxtral(), Gemma3n(), Phi4Multimodal(), GraniteSpeech(),
           KimiAudioFamily(), Gemma4(), Qwen3Omni(), MusicFlamingo(), NemotronHOmni(), Gemma4Unified(), Generic()):
    register(_f)


def detect_family(config: Any, family: str | None = None) -> Family:
    """The family of a config: ``family`` if given, else by ``model_type``, else ``generic``."""
    if family:
        if family not in FAMILIES:
            raise ValueError(f"unknown model family {family!r}; choose from {', '.join(FAMILIES)}")
        return FAMILIES[family]
    for fam in FAMILIES.values():
        if fam.matches(config):
            return fam
    return FAMILIES["generic"]


def _self_loading_family(pretrained: str, revision: str | None, family: str | None) -> Family | None:
    """A family that loads its checkpoint itself (``loads_itself``; Kimi-Audio through
    ``kimia_infer``), by ``family=`` or by the checkpoint's raw ``config.json`` (read without
    transformers or remote code); None otherwise."""
    from types import SimpleNamespace

    if family:
        fam = detect_family(None, family)
        return fam if getattr(fam, "loads_itself", False) else None
    raw = _raw_config(pretrained, revision)
    if not isinstance(raw, dict):
        return None
    cfg = SimpleNamespace(**{k: raw.get(k) for k in ("model_type", "architectures", "auto_map")})
    for fam in FAMILIES.values():
        if getattr(fam, "loads_itself", False) and fam.matches(cfg):
            return fam
    return None


def _raw_config(pretrained: str, revision: str | None) -> dict | None:
    """The checkpoint's ``config.json`` as plain JSON (no transformers, no remote code), or None."""
    import json
    import os

    raw = None
    try:
        if os.path.isdir(pretrained):
            path = os.path.join(pretrained, "config.json")
            raw = json.loads(open(path, encoding="utf-8").read()) if os.path.isfile(path) else None
        else:
            from huggingface_hub import hf_hub_download

            raw = json.loads(open(hf_hub_download(pretrained, "config.json", revision=revision),
                                  encoding="utf-8").read())
    except Exception:          # no config to read here: the transformers path reports it
        raw = None
    return raw if isinstance(raw, dict) else None


def _check_before_reading(pretrained: str, revision: str | None, family: str | None) -> None:
    """Stop in one line before transformers reads the checkpoint when the installed transformers is
    older than its family needs (an old transformers would otherwise fail on the unknown model type)."""
    from types import SimpleNamespace

    raw = _raw_config(pretrained, revision) if not family else None
    fam = detect_family(SimpleNamespace(model_type=raw.get("model_type")) if raw else None, family) \
        if (raw or family) else None
    if fam is not None:
        check_transformers(fam)


def pick_device(device: Any) -> str:
    """``auto`` -> cuda if available else cpu; a cuda device without CUDA falls back to cpu (warning)."""
    import torch

    dev = str(device or "auto")
    if dev == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if dev.startswith("cuda") and not torch.cuda.is_available():
        log.warning("device %s requested but CUDA is not available; using cpu", dev)
        return "cpu"
    return dev


def _torch_dtype(dtype: Any):
    import torch

    if dtype in (None, "auto"):
        return "auto"
    if isinstance(dtype, torch.dtype):
        return dtype
    value = getattr(torch, str(dtype), None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"dtype must be auto, float32, bfloat16 or float16, got {dtype!r}")
    return value


def load(pretrained: Any, *, revision: str | None = None, dtype: Any = "auto", device: Any = "auto",
         trust_remote_code: bool = False, model_class: str | None = None, family: str | None = None,
         peft: str | None = None, processor: Any = None, attn_implementation: str | None = None,
         generation: str = "greedy", thinking: Any = "auto", **kw: Any) -> LoadedModel:
    """Load a checkpoint (folder or Hub id, or an already loaded model) as a :class:`LoadedModel`.

    Parameters
    ----------
    pretrained : str or PreTrainedModel
        Checkpoint; a loaded model needs ``processor``.
    revision : str, optional
        Hub revision (branch, tag, commit) of the model and processor.
    dtype : {"auto", "float32", "bfloat16", "float16"} or torch.dtype
    device : str
        ``auto``, ``cpu``, ``cuda``, ``cuda:1`` ...
    trust_remote_code : bool
        Allow the checkpoint's own code (``auto_map``), loaded through the Auto classes.
    model_class : str, optional
        transformers class name or Auto class (``AutoModelForCausalLM``) to load with.
    family : str, optional
        Override the detected family (see :data:`FAMILIES`).
    peft : str, optional
        Folder of a peft adapter to put on top (``PeftModel.from_pretrained``).
    processor : str or ProcessorMixin, optional
        Processor folder / id or object (default: the checkpoint's).
    generation : {"greedy", "checkpoint"}
        ``greedy`` (default): greedy decoding whatever the checkpoint's ``generation_config`` says
        (only its token ids are kept); ``checkpoint``: the checkpoint's own settings
        (:meth:`LoadedModel.generation_settings`).
    thinking : {"auto", "on", "off"} or bool
        ``auto`` (default): the family tells whether the checkpoint reasons (e.g. by the checkpoint's
        name for Qwen3-Omni Thinking / Instruct) and the chat template gets no thinking switch;
        ``on`` / ``off`` (True / False): it does or does not, and the family's switch
        (:attr:`Family.thinking_kwargs`, e.g. ``enable_thinking``) reaches the chat template.
    **kw
        Further ``from_pretrained`` keyword arguments of the model.
    """
    import transformers

    dev = pick_device(device)
    own = _self_loading_family(pretrained, revision, family) if isinstance(pretrained, str) else None
    if generation not in GENERATION_MODES:
        raise ValueError(f"generation must be one of {', '.join(GENERATION_MODES)}, got {generation!r}")
    thinking = parse_thinking("auto" if thinking is None else {True: "on", False: "off"}.get(thinking, thinking))
    if own is not None:
        if thinking != "auto":
            raise ValueError(f"family {own.name} runs its own prompt code; it has no thinking switch (leave thinking unset)")
        if generation != "greedy":
            raise ValueError(f"family {own.name} decodes greedily only (its own decoding loop); leave generation unset")
        return own.load(pretrained, revision=revision, dtype=_torch_dtype(dtype), device=dev, peft=peft)
    if isinstance(pretrained, str):
        _check_before_reading(pretrained, revision, family)
        config = transformers.AutoConfig.from_pretrained(pretrained, revision=revision,
                                                         trust_remote_code=trust_remote_code)
        fam = detect_family(config, family)
        check_transformers(fam)
        why = fam.refusal(config, pretrained)
        if why:
            raise FamilyUnavailable(why)
        cls = resolve_model_class(config, model_class, default=fam.default_class,
                                  trust_remote_code=trust_remote_code)
        load_kw: dict[str, Any] = {"dtype": _torch_dtype(dtype), "revision": revision, **kw}
        if trust_remote_code:
            load_kw["trust_remote_code"] = True
        if attn_implementation:
            load_kw["attn_implementation"] = attn_implementation
        model = fam.after_load(cls.from_pretrained(pretrained, **load_kw), pretrained=pretrained,
                               revision=revision)
        name = pretrained
    else:
        model = pretrained
        fam = detect_family(model.config, family)
        name = getattr(model.config, "_name_or_path", "") or type(model).__name__
        why = fam.refusal(model.config, name)
        if why:
            raise FamilyUnavailable(why)
        if dtype not in (None, "auto"):
            model = model.to(_torch_dtype(dtype))
    if peft:
        try:
            from peft import PeftModel
        except ImportError as exc:  # pragma: no cover - peft is a dependency of the fine-tuning extra
            raise ImportError("peft=... needs the peft package (pip install peft)") from exc
        model = PeftModel.from_pretrained(model, str(peft))
    model.eval().to(dev)
    if processor is None or isinstance(processor, str):
        src = processor or (pretrained if isinstance(pretrained, str) else None)
        if src is None:
            raise ValueError("pass processor=... when pretrained is a loaded model")
        processor = transformers.AutoProcessor.from_pretrained(
            src, revision=revision if processor is None else None, trust_remote_code=trust_remote_code)
    if fam.needs_chat_template and not getattr(processor, "chat_template", None):
        raise ValueError(f"{name}: the processor has no chat template; VocalGrad needs one that takes audio parts")
    lm = LoadedModel(model, processor, fam, name=name, revision=revision, device=dev,
                     peft=str(peft) if peft else None, generation=generation)
    if thinking != "auto":
        lm._set_reasoning(fam, thinking)
    return lm


def served_family(model: str) -> Family | None:
    """The family whose :attr:`Family.served_names` finds ``model`` (a served model's name), or None."""
    import re

    return next((fam for fam in FAMILIES.values()
                 if fam.served_names and re.search(fam.served_names, str(model), re.IGNORECASE)), None)
