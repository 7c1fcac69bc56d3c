"""Phi-4-multimodal (``phi4_multimodal``): ``<|audio|>`` placeholders (about 12.5 per second),
features ``audio_input_features`` with ``audio_embed_sizes``.

The conformer encoder sees the padding of shorter clips in a batch, so a batch with mixed
audio lengths differs from single runs (``length_sensitive``); equal lengths match.
"""

from .base import Family


class Phi4Multimodal(Family):
    name = "phi4_multimodal"
    model_types = ("phi4_multimodal",)
    default_class = "Phi4MultimodalForCausalLM"
    length_sensitive = True
