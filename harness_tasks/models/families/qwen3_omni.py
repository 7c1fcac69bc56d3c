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

Three checkpoints share the model type ``qwen3_omni_moe``; they are told apart by name (the Hub
id or the folder's name, else the config's ``_name_or_path``; ``thinking=true|false`` on
``vocalgrad-hf`` overrides it for a renamed folder): ``Qwen3-Omni-30B-A3B-Instruct`` answers
directly; ``-Thinking`` reasons in ``<think>`` ... ``</think>`` first (plain text, not special
tokens) and gets the reasoning budget; ``-Captioner`` takes no instruction (audio in, a caption
out) and is refused. Thinking is a property of the checkpoint, not a chat-template switch, so
``thinking=on|off`` tells the route whether it reasons (its budget) and passes nothing to the template.
"""

from typing import Any

from ..thinking import THINK
from .base import Family


def _names(config: Any, name: str) -> str:
    return f"{name} {getattr(config, '_name_or_path', '') or ''}".lower()


class Qwen3Omni(Family):
    name = "qwen3_omni"
    model_types = ("qwen3_omni_moe", "qwen3_omni_moe_thinker")
    default_class = "Qwen3OmniMoeThinkerForConditionalGeneration"
    length_sensitive = True
    batchable = False
    reasoning = (THINK,)
    served_names = r"qwen3[-_ ]?omni"
    min_transformers = "4.57"

    def thinks(self, config: Any, name: str) -> bool:
        return "thinking" in _names(config, name)

    def refusal(self, config: Any, name: str) -> str | None:
        if "captioner" in _names(config, name):
            return (f"{name}: Qwen3-Omni-30B-A3B-Captioner takes no instruction (audio in, a caption out), so it "
                    f"cannot answer the benchmark's question; use Qwen3-Omni-30B-A3B-Instruct or -Thinking")
        return None
