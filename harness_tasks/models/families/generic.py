"""Fallback family: any checkpoint whose processor takes ``audio=`` and whose chat template
takes ``{"type": "audio"}`` parts, including remote-code checkpoints (``auto_map``)."""

from .base import Family


class Generic(Family):
    name = "generic"
