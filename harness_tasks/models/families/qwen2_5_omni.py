"""Qwen2.5-Omni, text side only: the *thinker* (``Qwen2_5OmniThinkerForConditionalGeneration``)
is loaded, not the talker/speech head. Audio placeholders ``<|AUDIO|>``."""

from .base import Family


class Qwen25Omni(Family):
    name = "qwen2_5_omni"
    model_types = ("qwen2_5_omni", "qwen2_5_omni_thinker")
    default_class = "Qwen2_5OmniThinkerForConditionalGeneration"
