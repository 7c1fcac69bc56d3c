"""Gemma 4 (``gemma4``): the audio-capable Gemma 4 checkpoints (E2B, E4B; the 26B/31B ones have
no audio tower) through ``Gemma4ForConditionalGeneration``.

The processor expands each clip's ``<|audio|>`` placeholder into ``<|audio>`` + one
``<|audio|>`` per 40 ms of the clip (capped at ``audio_seq_length``) + ``<audio|>``; the audio
encoder masks the padded feature frames of shorter clips, so a left-padded batch of mixed clip
lengths gives the logits of single runs (1e-6 on the tiny model here).

The real chat template ships in the checkpoint (``chat_template.jinja``; transformers'
``convert_gemma4_weights.py`` downloads it from the Hub rather than writing it), so it was not
read here: the tiny test template is hand-written and **unverified**.
"""

from .base import Family


class Gemma4(Family):
    name = "gemma4"
    model_types = ("gemma4",)
    default_class = "Gemma4ForConditionalGeneration"
