"""Qwen3-Omni, text side only: the MoE *thinker* (``Qwen3OmniMoeThinkerForConditionalGeneration``),
not the talker / code2wav speech output. Audio placeholders ``<|audio_pad|>`` between
``<|audio_start|>`` and ``<|audio_end|>``.

Mixed clip lengths in one batch change the results twice over, so the family is not batchable
(``vocalgrad-hf`` answers its clips one at a time): the stock processor pads every clip's waveform
to the longest clip of the call before the Whisper feature extraction (a short clip's features
then depend on its batch), and the audio encoder's strided convolutions run over the padded
frames of a shorter clip inside its last window (measured on the tiny model, clips of 0.5 and
1.0 s: 4e-3 max logit difference from single runs; equal lengths: 1e-6).

Loading the thinker class from a full ``qwen3_omni_moe`` checkpoint (thinker + talker) relies on
transformers' key mapping for the ``thinker.`` prefix: not run here (the tiny test checkpoint is a
thinker-only one). The tiny test chat template is hand-written, **unverified** against the
checkpoint's.
"""

from .base import Family


class Qwen3Omni(Family):
    name = "qwen3_omni"
    model_types = ("qwen3_omni_moe", "qwen3_omni_moe_thinker")
    default_class = "Qwen3OmniMoeThinkerForConditionalGeneration"
    length_sensitive = True
    batchable = False
