"""Gemma 3n (``gemma3n``): audio soft tokens inside ``<start_of_audio>`` ... ``<end_of_audio>``,
a fixed number per clip (``audio_soft_tokens_per_image``, 188 = 30 s for the real checkpoints);
the processor also holds an image processor.

Not batchable: the audio encoder's output for a clip depends on the longest clip of its batch
(the model pads the encoder output to the fixed soft-token count with a padding embedding), so
mixed audio lengths drift from single runs (8e-2 max logit difference on the tiny model) and
``vocalgrad-hf`` answers its clips one at a time.

The language model runs AltUp: its hidden states carry a leading axis of ``altup_num_inputs``
streams; :meth:`text_hidden_states` keeps the active one (``altup_active_idx``), the stream the
next layer's prediction starts from. The tiny test builds the real audio tower, projector and
language model; its vision tower (timm, which needs torchvision) is an empty stand-in audio never
reaches. The tiny test chat template is hand-written (**unverified**).
"""

from typing import Any

from .base import Family


class Gemma3n(Family):
    name = "gemma3n"
    model_types = ("gemma3n",)
    default_class = "Gemma3nForConditionalGeneration"
    length_sensitive = True
    batchable = False

    def text_hidden_states(self, model: Any, states: tuple) -> tuple:
        active = int(getattr(model.config.get_text_config(), "altup_active_idx", 0))
        return tuple(h[active] if h.dim() == 4 else h for h in states)
