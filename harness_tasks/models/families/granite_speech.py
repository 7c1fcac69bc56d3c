"""Granite Speech (``granite_speech``): ``<|audio|>`` placeholders, a conformer encoder and a
Q-Former projector. The processor's feature extractor needs torchaudio.

Mixed audio lengths in one batch drift from single runs (``length_sensitive``).
"""

from .base import Family


class GraniteSpeech(Family):
    name = "granite_speech"
    model_types = ("granite_speech",)
    default_class = "GraniteSpeechForConditionalGeneration"
    length_sensitive = True
