"""Voxtral (``voxtral``): the prompt is laid out by Mistral's own tokenizer package
(mistral-common, through transformers' ``MistralCommonBackend``), not by a jinja chat template;
the processor takes no ``audio=`` argument, so each clip goes in as a base64 WAV content part.

mistral-common renders one user turn as ``[INST]`` + the parts in order + ``[/INST]``, each clip
as ``[BEGIN_AUDIO]`` and one ``[AUDIO]`` per 80 ms of the clip padded to whole 30-s chunks
(375 per chunk); the processor's chunking (30 s) is read from the model's encoder (:meth:`chunking`),
which equals the processor's defaults for the real checkpoints. Every clip is padded to whole chunks,
so mixed clip lengths batch exactly. Tokenizers before version 13 refuse a system turn when a turn holds audio (a
``ValueError`` from mistral-common). A training target follows ``[/INST]`` as the answer's tokens
and ``</s>``, the way Mistral's instruct format ends an assistant turn.

Installing: mistral-common >= 1.11.5 declares ``numpy<2.4`` on Python <= 3.12 (not on 3.13+, the
same code); this project pins numpy 2.4, so it is installed without its dependency list
(``pip install --no-deps mistral-common==1.13.1``, its other dependencies from the ``voxtral``
extra; ``scripts/test.sh`` does both).
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
    needs_chat_template = False

    def audio_part(self, audio: np.ndarray, sr: int) -> dict:
        return {"type": "audio", "base64": wav_base64(audio, sr)}

    def end_of_answer(self, lm: Any) -> str:
        return lm.tokenizer.eos_token or "</s>"

    @staticmethod
    def chunking(lm: Any) -> dict:
        """The processor's audio chunking read from the model: each chunk is as many feature frames
        as the encoder takes (``2 * max_source_positions``; 3000 = 30 s for the real checkpoints, the
        processor's defaults)."""
        frames = 2 * int(lm.model.config.audio_config.max_source_positions)
        hop = int(getattr(lm.processor.feature_extractor, "hop_length", 160))
        return {"max_source_positions": frames, "pad_to_multiple_of": frames * hop}

    def build(self, lm: Any, items, audios):
        import torch
        from transformers import BatchFeature

        convs = [self.conversation(it, a, lm.sampling_rate) for it, a in zip(items, audios)]
        lm.tokenizer.padding_side = "left"
        enc = lm.processor.apply_chat_template(convs, tokenize=True, return_dict=True, return_tensors="pt",
                                               processor_kwargs={"padding": True, **self.chunking(lm)})
        if items[0].target is None:
            return enc, None
        # the prompt rows without their padding, then the answer's tokens and </s>, left-padded again
        eos = lm.tokenizer.convert_tokens_to_ids(self.end_of_answer(lm))
        rows, n_target = [], []
        for row, it in enumerate(items):
            prompt = enc["input_ids"][row][enc["attention_mask"][row].bool()].tolist()
            answer = lm.tokenizer.encode(it.target, add_special_tokens=False) + [eos]
            rows.append(prompt + answer)
            n_target.append(len(answer))
        width = max(len(r) for r in rows)
        pad = lm.tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows])
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
        data = {k: v for k, v in enc.items() if k not in ("input_ids", "attention_mask")}
        return BatchFeature(data={"input_ids": ids, "attention_mask": mask, **data}), n_target
