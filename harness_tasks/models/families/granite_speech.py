"""Granite Speech (``granite_speech``): a conformer encoder and a Q-Former projector; the chat
template takes each turn as one string with ``<|audio|>`` where the clip goes. The processor's
feature extractor needs torchaudio.

The checkpoint's LoRA (``has_lora_adapter``) is meant to be on whenever audio is present;
transformers switches it only inside ``generate``, so it is switched on after loading (every
VocalGrad input has audio) and forward passes (logits, hidden states) use it too.

Mixed audio lengths in one batch drift from single runs (``length_sensitive``).
"""

from typing import Any

from .base import Family


class GraniteSpeech(Family):
    name = "granite_speech"
    model_types = ("granite_speech",)
    default_class = "GraniteSpeechForConditionalGeneration"
    length_sensitive = True
    batchable = False
    audio_placeholder = "<|audio|>"

    def after_load(self, model: Any, *, pretrained: Any, revision: str | None) -> Any:
        if getattr(model, "_hf_peft_config_loaded", False):
            model.enable_adapters()
        return model
