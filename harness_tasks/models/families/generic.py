"""Fallback family: any checkpoint whose processor takes ``audio=`` and whose chat template
takes ``{"type": "audio"}`` parts, including remote-code checkpoints (``auto_map``). ``thinking=on|off``
passes ``enable_thinking`` (the switch of Qwen3's, Gemma 4's and transformers' own ``serve
--reasoning`` templates) and reads a reply past any known reasoning block."""

from .base import Family


class Generic(Family):
    name = "generic"
    thinking_kwargs = ("enable_thinking",)
