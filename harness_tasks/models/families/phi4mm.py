"""Phi-4-multimodal (``phi4_multimodal``): ``<|audio|>`` placeholders (about 12.5 per second),
features ``audio_input_features`` with ``audio_embed_sizes``.

Its speech ability lives in a LoRA adapter in the checkpoint's ``speech-lora`` subfolder; after
loading it is merged into the weights with peft (``PeftModel.from_pretrained(...)
.merge_and_unload()``: every VocalGrad input has audio, so the adapter is always on; a user
``peft=`` adapter then goes on top). A checkpoint without that subfolder runs on its base
weights (a warning says so).

The conformer encoder sees the padding of shorter clips in a batch, so a batch with mixed
audio lengths differs from single runs (``length_sensitive``); equal lengths match.
"""

import logging
from pathlib import Path
from typing import Any

from .base import Family

log = logging.getLogger("vocalgrad")

#: Subfolder of the checkpoint holding the speech adapter.
SPEECH_ADAPTER = "speech-lora"


class Phi4Multimodal(Family):
    name = "phi4_multimodal"
    model_types = ("phi4_multimodal",)
    default_class = "Phi4MultimodalForCausalLM"
    length_sensitive = True
    batchable = False

    def after_load(self, model: Any, *, pretrained: Any, revision: str | None) -> Any:
        local = Path(str(pretrained))
        if local.is_dir() and not (local / SPEECH_ADAPTER / "adapter_config.json").is_file():
            log.warning("phi4_multimodal: %s has no %s/ adapter; running the base weights", pretrained,
                        SPEECH_ADAPTER)
            return model
        try:
            from peft import PeftModel

            if local.is_dir():
                merged = PeftModel.from_pretrained(model, str(local / SPEECH_ADAPTER), adapter_name="speech")
            else:
                kw = {"revision": revision} if revision else {}
                merged = PeftModel.from_pretrained(model, str(pretrained), subfolder=SPEECH_ADAPTER,
                                                   adapter_name="speech", **kw)
            model = merged.merge_and_unload()
            log.info("phi4_multimodal: merged the %s adapter of %s", SPEECH_ADAPTER, pretrained)
        except (OSError, ValueError) as exc:
            log.warning("phi4_multimodal: no %s adapter for %s (%s); running the base weights",
                        SPEECH_ADAPTER, pretrained, exc)
        return model
