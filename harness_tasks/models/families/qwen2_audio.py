"""Qwen2-Audio (``qwen2_audio``): stock processor and chat template, ``<|AUDIO|>`` placeholders."""

from .base import Family


class Qwen2Audio(Family):
    name = "qwen2_audio"
    model_types = ("qwen2_audio",)
    default_class = "Qwen2AudioForConditionalGeneration"
