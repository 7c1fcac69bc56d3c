"""Voxtral (``voxtral``): the processor takes no ``audio=`` argument; the audio goes through the
chat template (mistral-common's tokenizer), here as base64 WAV content parts.

Needs ``mistral-common[audio]``, which cannot be installed next to numpy 2.4 (it pins
numpy < 2.4); this family is therefore not run here (its test skips with that reason).
"""

from __future__ import annotations

import base64
import io
import wave
from typing import Any

import numpy as np

from .base import Family


def wav_base64(audio: np.ndarray, sr: int) -> str:
    """16-bit PCM mono WAV of ``audio`` (float in [-1, 1]) as base64 text."""
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).round().astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sr))
        w.writeframes(pcm.tobytes())
    return base64.b64encode(buf.getvalue()).decode("ascii")


class Voxtral(Family):
    name = "voxtral"
    model_types = ("voxtral",)
    default_class = "VoxtralForConditionalGeneration"

    def audio_part(self, audio: np.ndarray, sr: int) -> dict:
        return {"type": "audio", "base64": wav_base64(audio, sr)}

    def _encode(self, lm: Any, convs: list[list[dict]]):
        return lm.processor.apply_chat_template(convs, tokenize=True, return_dict=True, return_tensors="pt",
                                                padding=True)

    def build(self, lm: Any, items, audios):
        convs = [self.conversation(it, a, lm.sampling_rate) for it, a in zip(items, audios)]
        lm.tokenizer.padding_side = "left"
        if items[0].target is None:
            return self._encode(lm, convs), None
        prompt = self._encode(lm, convs)
        full_convs = [c + [{"role": "assistant", "content": it.target}] for c, it in zip(convs, items)]
        full = self._encode(lm, full_convs)
        n_target = (full["attention_mask"].sum(1) - prompt["attention_mask"].sum(1)).tolist()
        return full, n_target
