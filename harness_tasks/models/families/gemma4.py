"""Gemma 4 (``gemma4``): the audio-capable Gemma 4 checkpoints (E2B, E4B; the 26B/31B ones have
no audio tower) through ``Gemma4ForConditionalGeneration``.

The processor expands each clip's ``<|audio|>`` placeholder into ``<|audio>`` + one
``<|audio|>`` per 40 ms of the clip (capped at ``audio_seq_length``) + ``<audio|>``; the audio
encoder masks the padded feature frames of shorter clips, so a left-padded batch of mixed clip
lengths gives the logits of single runs (1e-6 on the tiny model here).

The real chat template ships in the checkpoint (``chat_template.jinja``; transformers'
``convert_gemma4_weights.py`` downloads it from the Hub rather than writing it), so it was not
read here: the tiny test template is hand-written and **unverified**.

Gemma 4 can write a thought channel before its answer, ``<|channel>thought`` ... ``<channel|>``
(the delimiters transformers' own server parses for ``gemma4``). Its markers are special tokens, so
plain special-token skipping would leave the thought in the answer: decoding keeps them and the
block is split off before the parser. Thinking is off unless asked for, so no reasoning budget is
added by default (``reasoning_budget=N`` adds one). ``thinking=on`` passes ``enable_thinking=True`` to
the chat template, which (per vLLM's ``gemma4`` reasoning parser, read 2026-12-07) puts ``<|think|>``
in a system turn; ``thinking=off`` passes False. Gemma 4 first ships in transformers 5.5.0.
"""

from ..thinking import GEMMA4_CHANNEL
from .base import Family


class Gemma4(Family):
    name = "gemma4"
    model_types = ("gemma4",)
    default_class = "Gemma4ForConditionalGeneration"
    reasoning = (GEMMA4_CHANNEL,)
    thinking_kwargs = ("enable_thinking",)
    reasoning_special = True
    served_names = r"gemma[-_ ]?4"
    min_transformers = "5.5"
