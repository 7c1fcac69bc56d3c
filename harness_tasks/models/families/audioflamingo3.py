"""Audio Flamingo 3 (``audioflamingo3``): ``<sound>`` placeholders; the checkpoint's processor
carries the chat template.

The template that transformers' conversion script writes for ``nvidia/audio-flamingo-3-hf``
(``convert_audioflamingo3_to_hf.py``) renders a turn whose content is a list as **one**
``<sound>`` if the turn has any audio part, always before the text, then the turn's text parts
joined with nothing between them; with no system turn it adds "You are a helpful assistant.".
The processor (transformers 5.x) takes one clip per text. So the family lays out a request as:

* one clip, text first (the benchmark's prompt, swap, audio-reference, ...): one user turn
  ``[text, clip]``, which the template renders clip-first (``<sound>`` + text), as the authors
  ran the model;
* one clip, audio first (``vocalgrad_audiofirst``): the clip alone in a user turn, then the text
  in a second user turn (the one-turn form would render exactly like the default);
* several clips (few-shot): one user turn per clip, holding the clip and the text that follows it
  up to the next clip; text before the first clip is a turn of its own. The rendered prompt keeps
  the request's order of text and clips. The processor is then run once per clip and the
  expanded ``<sound>`` run of each clip is put in place of its placeholder (:meth:`encode`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..query import layout
from .base import Family, Item, add_special_tokens

__all__ = ["AudioFlamingo3"]


class AudioFlamingo3(Family):
    name = "audioflamingo3"
    model_types = ("audioflamingo3",)
    default_class = "AudioFlamingo3ForConditionalGeneration"
    #: ``AudioFlamingo3ForConditionalGeneration`` first ships in 5.0.0 (none in 4.57.x)
    min_transformers = "5.0"

    def conversation(self, item: Item, audios: list[np.ndarray], sr: int) -> list[dict]:
        order = layout(item.prompt, audios, audio_first=item.audio_first)
        n_clips = sum(kind == "audio" for kind, _ in order)
        if n_clips == 0 or (n_clips == 1 and not item.audio_first):
            return super().conversation(item, audios, sr)
        turns: list[list[dict]] = []
        for kind, value in order:
            part = {"type": "text", "text": value} if kind == "text" else self.audio_part(value, sr)
            # a clip opens a turn; so does the text after a lone audio-first clip
            if kind == "audio" or not turns or (n_clips == 1 and item.audio_first):
                turns.append([])
            turns[-1].append(part)
        out = [{"role": "system", "content": [{"type": "text", "text": item.system}]}] if item.system else []
        return out + [{"role": "user", "content": parts} for parts in turns]

    def encode(self, lm: Any, texts: list[str], audios: list[list[np.ndarray]], convs: list[list[dict]]) -> Any:
        """Processor outputs; rows with several clips go through the processor one clip at a time."""
        if all(len(group) <= 1 for group in audios):
            return super().encode(lm, texts, audios, convs)
        from transformers import BatchFeature

        proc = lm.processor
        token = proc.audio_token
        flat = [a for group in audios for a in group]
        for row, (text, group) in enumerate(zip(texts, audios)):
            if text.count(token) != len(group):
                raise ValueError(f"item {row}: the chat template wrote {text.count(token)} {token} placeholder(s) "
                                 f"for {len(group)} clip(s)")
        # one text per clip, as the processor wants: the features of every clip and the length
        # of its expanded placeholder run
        per_clip = proc(text=[token] * len(flat), audio=flat, sampling_rate=lm.sampling_rate, return_tensors="pt",
                        text_kwargs={"padding": True, "padding_side": "left"})
        runs = iter((per_clip["input_ids"] == proc.audio_token_id).sum(-1).tolist())
        # Music Flamingo's processor wraps each run in its own begin/end tokens; AF3's has none
        head, tail = getattr(proc, "audio_bos_token", None) or "", getattr(proc, "audio_eos_token", None) or ""
        expanded = []
        for text in texts:
            pieces = text.split(token)
            out = pieces[0]
            for piece in pieces[1:]:
                out += head + token * int(next(runs)) + tail + piece
            expanded.append(out)
        enc = lm.tokenizer(expanded, return_tensors="pt", padding=True, padding_side="left",
                           add_special_tokens=add_special_tokens(lm, expanded))
        data = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
        data.update({k: v for k, v in per_clip.items() if k not in ("input_ids", "attention_mask", "num_audio_tokens")})
        return BatchFeature(data=data)
