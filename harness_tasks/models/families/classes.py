"""Which transformers class loads a checkpoint (:func:`resolve_model_class`)."""

from __future__ import annotations

from typing import Any

__all__ = ["resolve_model_class"]

#: transformers auto-mappings searched (in order) for a class that generates text.
_MAPPINGS = (
    "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
    "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
    "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
)
#: ``auto_map`` keys of remote-code checkpoints, with the Auto class that loads each.
_AUTO_MAP_KEYS = (
    ("AutoModelForCausalLM", "AutoModelForCausalLM"),
    ("AutoModelForSpeechSeq2Seq", "AutoModelForSpeechSeq2Seq"),
    ("AutoModelForSeq2SeqLM", "AutoModelForSeq2SeqLM"),
    ("AutoModelForImageTextToText", "AutoModelForImageTextToText"),
    ("AutoModel", "AutoModel"),
)



def resolve_model_class(config: Any, name: str | None = None, *, default: str | None = None,
                        trust_remote_code: bool = False):
    """The class whose ``from_pretrained`` loads the checkpoint.

    Order: ``name`` (a transformers class, or an ``auto_map`` key such as
    ``AutoModelForCausalLM``), the family's ``default``, the checkpoint's ``architectures`` when
    transformers has them, the checkpoint's ``auto_map`` (remote code, through the matching
    transformers Auto class; needs ``trust_remote_code``), then the auto-mappings by model type.
    """
    import transformers
    from transformers.models.auto import modeling_auto

    auto_map = getattr(config, "auto_map", None) or {}
    if name:
        cls = getattr(transformers, name, None)
        if cls is None:
            raise ValueError(f"model_class={name!r} is not a transformers class")
        return cls
    if default and getattr(transformers, default, None) is not None:
        return getattr(transformers, default)
    for arch in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, arch, None)
        if cls is not None and hasattr(cls, "generate"):
            return cls
    for key, auto in _AUTO_MAP_KEYS:
        if key in auto_map:
            if not trust_remote_code:
                raise ValueError(f"the checkpoint's code is remote ({key} -> {auto_map[key]}); "
                                 f"pass trust_remote_code=true if you trust it")
            return getattr(transformers, auto)
    for mapping in _MAPPINGS:
        names = getattr(modeling_auto, mapping, {})
        if config.model_type in names:
            return getattr(transformers, names[config.model_type])
    raise ValueError(
        f"cannot tell which transformers class generates text for model type {config.model_type!r}; "
        f"pass model_class=<ClassName> in --model_args"
    )
