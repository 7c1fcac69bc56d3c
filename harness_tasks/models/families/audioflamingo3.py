"""Audio Flamingo 3 (``audioflamingo3``): ``<sound>`` placeholders; the checkpoint's processor
carries the chat template."""

from .base import Family


class AudioFlamingo3(Family):
    name = "audioflamingo3"
    model_types = ("audioflamingo3",)
    default_class = "AudioFlamingo3ForConditionalGeneration"
