"""Core of the model layer: :class:`Item`, :class:`Family` (per-architecture hooks) and
:class:`LoadedModel` (a loaded model + processor that builds batches and reads answers).

See the package docstring (:mod:`harness_tasks.models.families`) for the contract.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..args import ModelArgumentError
from ..query import layout
from ..thinking import delimiter_token_ids, special_token_ids, template_opens_reasoning
from .audio import AudioInfo, prepare_audio
from .classes import resolve_model_class
from .decoding import GENERATION_MODES, decode_answers, generating_model, generation_config, resolved_generation

log = logging.getLogger("vocalgrad")

__all__ = ["AudioInfo", "Family", "Item", "LoadedModel", "add_special_tokens", "as_item", "batch_items", "prepare_audio",
           "resolve_model_class"]


@dataclass(frozen=True)
class Item:
    """One model input.

    Parameters
    ----------
    prompt : str
        User text. With one :data:`~harness_tasks.clip_audio.AUDIO_MARKER` per clip, the clips
        go where the markers are (few-shot); otherwise before (``audio_first``) or after it.
    audios : list of (np.ndarray, int)
        ``(waveform, sample_rate)`` per clip; mono ``(samples,)`` or ``(channels, samples)`` /
        ``(samples, channels)`` (averaged to mono). Resampled to the processor's rate.
    audio_first : bool
        Clips before the text (no markers).
    system : str, optional
        System turn.
    target : str, optional
        Answer text placed after the generation prompt (training); ``None`` at inference.
    """

    prompt: str
    audios: list = field(default_factory=list)
    audio_first: bool = False
    system: str | None = None
    target: str | None = None


class Family:
    """How one model family loads, builds batches and marks its audio positions.

    Subclasses (one module each) override class attributes and the small hooks below.
    """

    #: Registry name (``family=`` model argument).
    name: str = "generic"
    #: ``config.model_type`` values of the family.
    model_types: tuple[str, ...] = ()
    #: transformers class to load by default (e.g. the Omni *thinker*); None = resolve from config.
    default_class: str | None = None
    #: Mixed audio lengths in one batch change the results (the encoder sees the padding).
    length_sensitive: bool = False
    #: Requests may share a forward pass. False: ``vocalgrad-hf`` answers one clip at a time
    #: whatever ``batch_size`` says, because a batch would change the answers (the audio encoder
    #: sees the padding of shorter clips); see docs/model-layer.md, "Batch invariance".
    batchable: bool = True
    #: The chat template wants each turn's content as one string, the audio as this placeholder
    #: (None: content parts ``{"type": "text"|"audio"}``).
    audio_placeholder: str | None = None
    #: The processor must carry a jinja chat template (False: the prompt is laid out by the
    #: family's own code or a tokenizer package, e.g. Voxtral's mistral-common).
    needs_chat_template: bool = True
    #: Reasoning delimiters (``(open, close)`` pairs, :mod:`..thinking`) the family's checkpoints
    #: write; their special tokens are kept when decoding so the block can be split off; () = none.
    reasoning: tuple[tuple[str, str], ...] = ()
    #: Chat-template arguments that switch thinking, each set to True (``thinking=on``) or False
    #: (``thinking=off``); ``thinking=auto`` passes none. () with no ``reasoning`` either: the family
    #: cannot think and ``thinking=on`` is refused.
    thinking_kwargs: tuple[str, ...] = ()
    #: The reasoning delimiters are special tokens of the tokenizer (a server must be asked not to
    #: drop them: ``skip_special_tokens: false``).
    reasoning_special: bool = False
    #: Regular expression (case-insensitive) that finds the family in a served model's name, for the
    #: routes that see only the name (``vocalgrad-openai``); None: not looked up by name.
    served_names: str | None = None
    #: Lowest transformers release whose classes the family needs (checked before loading, one line).
    min_transformers: str = "4.57"

    def thinks(self, config: Any, name: str) -> bool:
        """Whether this checkpoint reasons before it answers (it then gets the reasoning budget)."""
        return False

    def template_kwargs(self, thinking: str) -> dict[str, bool]:
        """What ``thinking`` (``auto``/``on``/``off``) passes to the chat template (refuses ``on``
        for a family that cannot think, in one line)."""
        if thinking == "on" and not (self.thinking_kwargs or self.reasoning):
            raise ModelArgumentError(f"thinking=on: model family {self.name} has no thinking mode (no reasoning "
                                     "delimiters, no chat-template switch); leave thinking unset")
        return {} if thinking == "auto" else {k: thinking == "on" for k in self.thinking_kwargs}

    def refusal(self, config: Any, name: str) -> str | None:
        """Why this checkpoint cannot answer the benchmark (one line), or None."""
        return None

    # ------------------------------------------------------------------ detection
    def matches(self, config: Any) -> bool:
        return getattr(config, "model_type", None) in self.model_types

    def after_load(self, model: Any, *, pretrained: Any, revision: str | None) -> Any:
        """Adjust a freshly loaded model (e.g. switch on its speech adapter); returns the model."""
        return model

    # ------------------------------------------------------------------ conversation
    def audio_part(self, audio: np.ndarray, sr: int) -> dict:
        """Content part of one clip in the chat template."""
        return {"type": "audio", "audio": audio}

    def conversation(self, item: Item, audios: list[np.ndarray], sr: int) -> list[dict]:
        """Chat turns for one item (system, then one user turn of text/audio parts)."""
        order = layout(item.prompt, audios, audio_first=item.audio_first)
        if self.audio_placeholder is not None:
            text = "".join(v if kind == "text" else self.audio_placeholder for kind, v in order)
            turns = [{"role": "system", "content": item.system}] if item.system else []
            return turns + [{"role": "user", "content": text}]
        parts = [{"type": "text", "text": v} if kind == "text" else self.audio_part(v, sr) for kind, v in order]
        turns = []
        if item.system:
            turns.append({"role": "system", "content": [{"type": "text", "text": item.system}]})
        turns.append({"role": "user", "content": parts})
        return turns

    def render(self, lm: "LoadedModel", convs: list[list[dict]]) -> list[str]:
        """Prompt texts (generation prompt included) of the conversations."""
        return list(lm.processor.apply_chat_template(convs, tokenize=False, add_generation_prompt=True,
                                                     **getattr(lm, "template_kwargs", {})))

    def end_of_turn_ids(self, lm: "LoadedModel") -> list[int]:
        """Token ids the chat template writes right after an assistant turn's text (its end of
        turn, e.g. ``<|im_end|>``): greedy decoding stops there too. Read by rendering a short
        user/assistant exchange; the special tokens that follow the assistant's text, up to the
        first ordinary one. Empty when the template cannot render it."""
        sentinel = "vocalgradanswer"
        try:
            conv = [self.conversation(Item("x", []), [], lm.sampling_rate)[-1],
                    {"role": "assistant", "content": sentinel if self.audio_placeholder is not None
                     else [{"type": "text", "text": sentinel}]}]
            text = lm.processor.apply_chat_template([conv], tokenize=False)
            text = text[0] if isinstance(text, list) else text
        except Exception:        # a template that cannot render an assistant turn: nothing to add
            return []
        if sentinel not in text:
            return []
        tail = text.split(sentinel, 1)[1]
        special = special_token_ids(lm.tokenizer)
        out: list[int] = []
        for tid in lm.tokenizer(tail, add_special_tokens=False)["input_ids"]:
            if tid not in special:
                break
            out.append(int(tid))
        return out

    def end_of_answer(self, lm: "LoadedModel") -> str:
        """Text appended after a training target (the end-of-turn token)."""
        return lm.tokenizer.eos_token or ""

    def encode(self, lm: "LoadedModel", texts: list[str], audios: list[list[np.ndarray]],
               convs: list[list[dict]]) -> Any:
        """Processor call for the rendered texts and their clips (left padding)."""
        flat = [a for group in audios for a in group]
        kw: dict[str, Any] = {"text": texts, "return_tensors": "pt", "add_special_tokens": add_special_tokens(lm, texts),
                              "text_kwargs": {"padding": True, "padding_side": "left"}}
        if flat:
            kw.update(audio=flat, sampling_rate=lm.sampling_rate)
        return lm.processor(**kw)

    def build(self, lm: "LoadedModel", items: list[Item], audios: list[list[np.ndarray]]):
        """Processor outputs of a batch and, for items with targets, the number of target tokens
        at the end of each row (None without targets)."""
        convs = [self.conversation(it, a, lm.sampling_rate) for it, a in zip(items, audios)]
        texts = self.render(lm, convs)
        n_target = None
        if items[0].target is not None:
            end = self.end_of_answer(lm)
            full = [t + it.target + end for t, it in zip(texts, items)]
            n_target = [lm._n_tokens(f) - lm._n_tokens(t) for f, t in zip(full, texts)]
            texts = full
        return self.encode(lm, texts, audios, convs), n_target

    # ------------------------------------------------------------------ positions
    def audio_token_id(self, model: Any, processor: Any) -> int:
        """Id of the placeholder that the processor expands into one token per audio frame."""
        cfg = model.config
        objs = (cfg, cfg.get_text_config() if hasattr(cfg, "get_text_config") else None, processor)
        for obj in objs:
            for attr in ("audio_token_id", "audio_token_index"):
                value = getattr(obj, attr, None) if obj is not None else None
                if isinstance(value, int) and value >= 0:
                    return value
        tok_text = getattr(processor, "audio_token", None)
        tok = getattr(processor, "tokenizer", None)
        if tok_text and tok is not None:
            value = tok.convert_tokens_to_ids(tok_text)
            if isinstance(value, int) and value >= 0:
                return value
        raise ValueError(
            f"{type(model).__name__}: cannot find the audio placeholder token id (config audio_token_id / "
            f"audio_token_index, processor audio_token)")

    def text_hidden_states(self, model: Any, states: tuple) -> tuple:
        """The language model's hidden states as ``(batch, tokens, hidden)`` tensors (a hook for
        models whose states carry an extra leading axis)."""
        return states

    def sampling_rate(self, processor: Any) -> int:
        fe = getattr(processor, "feature_extractor", None) or getattr(processor, "audio_processor", None)
        return int(getattr(fe, "sampling_rate", 16000) or 16000)


class LoadedModel:
    """A model, its processor and its family: batches, generation, answer log-probs, hidden states.

    Made by :func:`harness_tasks.models.families.load`.
    """

    def __init__(self, model: Any, processor: Any, family: Family, *, name: str, revision: str | None = None,
                 device: str = "cpu", peft: str | None = None, generation: str = "greedy") -> None:
        self._set_common(model, processor, family, name=name, revision=revision, device=device, peft=peft,
                         generation=generation)
        tok = getattr(processor, "tokenizer", None)
        if tok is None:
            raise ValueError(f"{name}: the processor has no tokenizer")
        tok.padding_side = "left"
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        self.tokenizer = tok
        self.sampling_rate = family.sampling_rate(processor)
        self.audio_token_id = family.audio_token_id(model, processor)
        #: The chat template's end-of-turn token ids (greedy decoding stops there too).
        self.stop_token_ids = [i for i in family.end_of_turn_ids(self) if i != self.audio_token_id]
        self._set_reasoning(family)

    def _set_common(self, model: Any, processor: Any, family: Family, *, name: str, revision: str | None,
                    device: str, peft: str | None, generation: str = "greedy") -> None:
        """The attributes every loaded model has, whatever its family (subclasses call it too)."""
        if generation not in GENERATION_MODES:
            raise ValueError(f"generation must be one of {', '.join(GENERATION_MODES)}, got {generation!r}")
        self.generation = generation
        self.model = model
        self.processor = processor
        self.family = family.name
        self._family = family
        self.name = name
        self.revision = revision
        self.peft = peft
        self.device = device
        self.last_audio: list[AudioInfo] = []
        self.stop_token_ids: list[int] = []
        #: How the checkpoint reasons (:meth:`_set_reasoning`; families that load themselves: not at all).
        self.thinks, self.reasoning, self.reasoning_opened, self.keep_token_ids = False, (), False, []
        #: ``thinking`` (auto/on/off) and the chat-template arguments it sets (:meth:`Family.template_kwargs`).
        self.thinking, self.template_kwargs = "auto", {}

    def _set_reasoning(self, family: Family, thinking: str = "auto") -> None:
        """The checkpoint's reasoning: the ``thinking`` switch and the template arguments it sets,
        whether it thinks (``on``/``off`` override the family's answer), its delimiters, whether the
        chat template opens the block in the generation prompt, and the special tokens of the
        delimiters that decoding keeps."""
        self.thinking, self.template_kwargs = thinking, family.template_kwargs(thinking)
        self.reasoning = tuple(family.reasoning)
        self.thinks = bool(family.thinks(self.model.config, self.name) if thinking == "auto" else thinking == "on")
        self.keep_token_ids = delimiter_token_ids(self.tokenizer, self.reasoning)
        self.reasoning_opened = template_opens_reasoning(self, family, Item("x", [])) if self.reasoning else False

    @property
    def dtype(self):
        return self.model.dtype

    @property
    def length_sensitive(self) -> bool:
        return self._family.length_sensitive

    @property
    def batchable(self) -> bool:
        """Whether requests may share a forward pass (:attr:`Family.batchable`)."""
        return self._family.batchable

    def provenance(self) -> dict[str, Any]:
        """Model id, revision, dtype, family, device and peft adapter (for logs and answer keys)."""
        return {"model": self.name, "revision": self.revision, "dtype": str(self.dtype).replace("torch.", ""),
                "family": self.family, "device": str(self.device), "peft": self.peft}

    # ------------------------------------------------------------------ inputs
    def conversation(self, item: Item) -> list[dict]:
        """Chat turns of one item, as the family hands them to the chat template."""
        audios = [prepare_audio(y, sr, self.sampling_rate)[0] for y, sr in item.audios]
        return self._family.conversation(item, audios, self.sampling_rate)

    def batch(self, items: Sequence[Item]):
        """Left-padded model inputs of ``items`` on the model's device.

        Every floating tensor is cast to the model's dtype. If the items have targets, the
        target text (plus the end-of-turn token) follows each prompt and ``labels`` is -100
        everywhere except at the target tokens.
        """
        import torch

        items = batch_items(items)
        audios, infos = [], []
        for it in items:
            group = []
            for y, sr in it.audios:
                a, info = prepare_audio(y, sr, self.sampling_rate)
                group.append(a)
                infos.append(info)
            audios.append(group)
        self.last_audio = infos
        enc, n_target = self._family.build(self, items, audios)
        for key in list(enc.keys()):
            value = enc[key]
            if isinstance(value, torch.Tensor):
                enc[key] = value.to(self.device, dtype=self.dtype) if value.is_floating_point() \
                    else value.to(self.device)
        if n_target is not None:
            ids = enc["input_ids"]
            labels = torch.full_like(ids, -100)
            for row, n in enumerate(n_target):
                if n <= 0:
                    raise ValueError(f"target of item {row} ({items[row].target!r}) has no tokens")
                labels[row, -n:] = ids[row, -n:]
            enc["labels"] = labels
        return enc

    def _n_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def audio_positions(self, batch):
        """(batch, tokens) bool: True at the audio placeholder positions of each row."""
        return batch["input_ids"] == self.audio_token_id

    # ------------------------------------------------------------------ outputs
    def _forward_inputs(self, batch) -> dict:
        return {k: v for k, v in batch.items() if k != "labels"}

    def logits(self, batch):
        """Next-token logits after the prompt, float32 on cpu, shape (batch, vocab)."""
        import torch

        with torch.inference_mode():
            out = self.model(**self._forward_inputs(batch), use_cache=False)
        return out.logits[:, -1, :].float().cpu()

    def _generation_config(self):
        """The ``GenerationConfig`` :meth:`generate` runs with (see :meth:`generation_settings`)."""
        return generation_config(self.model, self.generation, pad_token_id=self.tokenizer.pad_token_id,
                                 stop_ids=getattr(self, "stop_token_ids", ()))

    def generation_settings(self) -> dict[str, Any]:
        """Every generation setting :meth:`generate` uses, resolved (the library's defaults filled in
        where the config leaves a field unset), without the per-call ``max_new_tokens``.

        ``generation="greedy"`` (default): greedy decoding whatever the checkpoint's
        ``generation_config`` says; only its token ids (:data:`.decoding.GREEDY_KEEPS`) are kept, so no
        sampling, no repetition penalty, no n-gram ban, no token bias. ``generation="checkpoint"``:
        the checkpoint's own settings (sampling included, if it samples).
        """
        return resolved_generation(self._generation_config())

    def generate(self, batch, *, max_new_tokens: int) -> list[str]:
        """Continuation of each row (special tokens removed), greedy by default
        (:meth:`generation_settings`)."""
        import torch

        inputs = self._forward_inputs(batch)
        cfg = self._generation_config()
        cfg.max_new_tokens = int(max_new_tokens)
        target = generating_model(self.model)
        own = getattr(target, "generation_config", None)
        try:
            # generate() fills every field the passed config leaves unset from the model's own
            # generation_config: swap in the config itself so nothing of the checkpoint leaks in.
            if own is not None:
                target.generation_config = cfg
            with torch.inference_mode():
                out = self.model.generate(**inputs, generation_config=cfg)
        finally:
            if own is not None:
                target.generation_config = own
        if not isinstance(out, torch.Tensor):
            out = out.sequences
        new = out[:, inputs["input_ids"].shape[1]:]
        return decode_answers(self.tokenizer, new, keep=self.keep_token_ids)

    def word_token_ids(self, word: str) -> list[int]:
        """First-token ids of ``word`` as the tokenizer writes it after the prompt: with and
        without a leading space (one id when both are the same token; a variant whose first
        token is only the space, as with byte-level tokenizers without merges, is left out)."""
        ids = []
        for variant in (word, " " + word):
            toks = self.tokenizer(variant, add_special_tokens=False)["input_ids"]
            if not toks:
                raise ValueError(f"answer word {word!r} has no tokens")
            if variant != word and not self.tokenizer.decode(toks[:1]).strip():
                continue
            if toks[0] not in ids:
                ids.append(toks[0])
        return ids

    def answer_logprobs(self, batch, words: Sequence[str], *, logits=None):
        """(batch, len(words)) next-token log-probability of each word's first token.

        The max over the tokenizer's with/without-leading-space variants of the word
        (:meth:`word_token_ids`). Raises if two words share their first token. ``logits``:
        the batch's :meth:`logits` if already computed.
        """
        import torch

        ids = [self.word_token_ids(w) for w in words]
        for i in range(len(ids)):
            for j in range(i):
                if set(ids[i]) & set(ids[j]):
                    raise ValueError(f"answer words {words[j]!r} and {words[i]!r} share a first token; "
                                     f"logit scoring cannot tell them apart with this tokenizer")
        lp = torch.log_softmax(self.logits(batch) if logits is None else logits.float(), dim=-1)
        return torch.stack([lp[:, v].max(dim=1).values for v in ids], dim=1)

    def hidden_states(self, batch) -> tuple:
        """LM hidden states of one forward pass: ``layers + 1`` tensors (batch, tokens, hidden)."""
        import torch

        with torch.inference_mode():
            out = self.model(**self._forward_inputs(batch), output_hidden_states=True, use_cache=False)
        hs = getattr(out, "hidden_states", None)
        if hs is None:
            raise RuntimeError(f"{self.name}: the model returned no hidden states (output_hidden_states)")
        return tuple(self._family.text_hidden_states(self.model, tuple(hs)))


def add_special_tokens(lm: "LoadedModel", texts: Sequence[str]) -> bool:
    """Whether the tokenizer may add its special tokens to rendered prompts: not when the first one
    already starts with the BOS token (the chat template wrote it), exactly as a processor's
    ``apply_chat_template(tokenize=True)`` decides; so no family gets ``<bos><bos>``."""
    bos = getattr(lm.tokenizer, "bos_token", None)
    return not (bos and texts and str(texts[0]).startswith(bos))


def batch_items(items: Sequence[Item]) -> list[Item]:
    """``items`` as a list, checked for :meth:`LoadedModel.batch`: at least one, and either every
    item has a target or none has."""
    items = list(items)
    if not items:
        raise ValueError("batch() needs at least one item")
    with_target = [it.target is not None for it in items]
    if any(with_target) and not all(with_target):
        raise ValueError("either every item of a batch has a target or none has")
    return items


def as_item(prompt: str, clips: Sequence[Mapping[str, Any]], **kw: Any) -> Item:
    """An :class:`Item` from harness clips (mappings with ``array`` and ``sampling_rate``)."""
    return Item(prompt=prompt, audios=[(c["array"], int(c["sampling_rate"])) for c in clips], **kw)
