"""Gemma 3n (``gemma3n``): audio soft tokens inside ``<start_of_audio>`` ... ``<end_of_audio>``,
a fixed number per clip (``audio_seq_length``); the processor also holds an image processor.

Mixed audio lengths in one batch drift from single runs (``length_sensitive``). Building a
tiny Gemma 3n needs ``timm`` (its vision tower), absent here, so this family has no tiny test.
"""

from .base import Family


class Gemma3n(Family):
    name = "gemma3n"
    model_types = ("gemma3n",)
    default_class = "Gemma3nForConditionalGeneration"
    length_sensitive = True
    batchable = False
