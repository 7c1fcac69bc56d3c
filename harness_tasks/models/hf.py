"""``vocalgrad-hf``: transformers audio-text chat models, through the model layer
(:mod:`harness_tasks.models.families`: Qwen2-Audio, Audio Flamingo 3, Music Flamingo, Qwen2.5-Omni
and Qwen3-Omni thinkers, Phi-4-multimodal, Granite Speech, Gemma 3n, Gemma 4, Voxtral,
remote-code checkpoints).

For each clip the adapter builds one user turn ``[text, audio]`` (``audio_first=true`` flips
it; few-shot prompts interleave), lets the family render it with the processor's chat template,
resamples the clip to the processor's rate (soxr HQ, mono), casts every floating input to the
model's dtype and decodes greedily with left padding: no sampling, no repetition penalty and no
other decoding setting from the checkpoint's ``generation_config`` (Audio Flamingo 3's samples
with a repetition penalty of 1.05), only its token ids; ``generation=checkpoint`` keeps the
checkpoint's settings. The resolved settings (:meth:`LoadedModel.generation_settings`) are part of
the answer-log key, written on every answer-log line and into the ``config`` of lm-eval's results.
Left-padded batches give the same answers as single requests (tested at batch size 1 and 8 for every
family on tiny checkpoints); Phi-4, Granite, Gemma 3n and Qwen3-Omni drift with mixed audio lengths in one
batch (their audio encoders see the padding), so their families say ``batchable = False`` and this adapter
answers their clips one at a time whatever ``batch_size`` says (a warning at start says so).

Thinking checkpoints (Qwen3-Omni Thinking; a family's ``reasoning`` delimiters, e.g. Gemma 4's thought
channel): the delimiters' special tokens are kept in the decoded reply, a reasoning model gets
``reasoning_budget`` tokens (default 4096) on top of the task's budget, and the answer is read after
the reasoning block (:mod:`harness_tasks.models.thinking`). Audio Flamingo 3's chat template
writes one clip per turn, before the turn's text; its family lays out the audio-first and few-shot
requests for that (docs/model-layer.md).

Failures (handled by the adapter base class): a CUDA out-of-memory error (the cache is freed
first) or any other failure of a batch halves the batch, down to one clip; a clip that still fails, or whose audio cannot be decoded, becomes an error answer
(:func:`harness_tasks.parsing.error_answer`), counted wrong, never a crash.

Model arguments
---------------
pretrained : str              model folder or Hub id (or a loaded ``PreTrainedModel`` from Python)
revision : str                Hub revision (branch, tag or commit) of model and processor
processor : str               processor folder / id if it differs from ``pretrained``
family : str                  model family, overriding the detection (see ``families.FAMILIES``)
model_class : str             transformers class or Auto class name (default: the family's class,
                              the checkpoint's ``architectures`` entry, or its ``auto_map``)
peft : str                    folder of a peft adapter loaded on top (fine-tuned models)
dtype : str                   ``auto`` (default), ``float32``, ``bfloat16``, ``float16``
device : str                  ``auto`` (default: cuda if available), ``cpu``, ``cuda``, ``cuda:1`` ...
batch_size : int              clips per forward pass (default 1)
audio_first : bool            audio before the question (default false: text, then audio); a task
                              can set it (``vocalgrad_audiofirst``), which wins
system_prompt : str           optional system turn
scoring : str                 ``generate`` (default): greedy text; ``logits``: no generation, the
                              answer is the label whose first answer-word token has the higher
                              next-token log-prob; ``both``: the generated text plus the logit
                              choice (results: ``acc`` and ``acc_logit`` side by side). See
                              :mod:`harness_tasks.logit_answers` and docs/model-layer.md
trust_remote_code : bool      run the checkpoint's own code (``auto_map``; default false)
attn_implementation : str     passed to ``from_pretrained``
generation : str              ``greedy`` (default), ``checkpoint`` (the checkpoint's own
                              ``generation_config``, sampling included if it samples) or
                              ``checkpoint_greedy`` (that config with sampling off, its repetition
                              penalty kept: lmms-eval's decoding, docs/lmms-eval.md)
retry_unparsed : bool         one retry with 256 new tokens for unparsed answers (default true;
                              off with ``scoring=logits``)
thinking : str                ``auto`` (default: its family tells whether the checkpoint reasons,
                              e.g. Qwen3-Omni by the name ``-Thinking``; the chat template gets no
                              switch), ``on`` or ``off``: it does or does not, and the family's
                              switch (``enable_thinking`` for Gemma 4 and unknown families) reaches
                              the chat template (``true``/``false`` read as on/off)
reasoning_budget : int        reasoning tokens added to every request's budget (default ``auto``:
                              4096 for a thinking checkpoint, else 0)
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

import vocalgrad

from ..logit_answers import logit_answer
from ..parsing import error_answer
from .base import ModelArgumentError, Query, as_bool
from .chat import ChatLM
from .families import Item, LoadedModel, as_item, load, resolve_model_class
from .thinking import KNOWN_DELIMITERS, parse_thinking

log = logging.getLogger("vocalgrad")

__all__ = ["HFAudioLM", "SCORING", "resolve_model_class"]

#: Values of the ``scoring`` model argument.
SCORING = ("generate", "logits", "both")


def _ids(value: Any) -> list[int]:
    """Token ids of a generation setting (an int, a list or None)."""
    if value is None:
        return []
    return [int(value)] if isinstance(value, int) else [int(v) for v in value]


def _is_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


class HFAudioLM(ChatLM):
    """lm-eval adapter for transformers audio-text models (see the module docstring)."""

    name = "vocalgrad-hf"

    def __init__(
        self,
        *,
        pretrained: Any,
        processor: Any = None,
        revision: str | None = None,
        family: str | None = None,
        model_class: str | None = None,
        peft: str | None = None,
        dtype: str = "auto",
        device: Any = "auto",
        scoring: str = "generate",
        trust_remote_code: Any = False,
        attn_implementation: str | None = None,
        generation: str = "greedy",
        thinking: Any = "auto",
        **kwargs: Any,
    ) -> None:
        kwargs.pop("max_batch_size", None)
        kwargs.pop("device", None)
        super().__init__(**kwargs)
        self.scoring = str(scoring or "generate").strip().lower()
        if self.scoring not in SCORING:
            raise ModelArgumentError(f"scoring must be one of {', '.join(SCORING)}, got {scoring!r}")
        if self.scoring == "logits":
            self.retry_unparsed = False          # the answer is always one label word
        self.lm: LoadedModel = load(pretrained, revision=revision, dtype=dtype, device=device,
                                    trust_remote_code=as_bool(trust_remote_code, name="trust_remote_code"),
                                    model_class=model_class, family=family, peft=peft, processor=processor,
                                    attn_implementation=attn_implementation,
                                    generation=str(generation or "greedy").strip().lower(),
                                    thinking=parse_thinking(thinking))
        self.model, self.processor, self.tokenizer = self.lm.model, self.lm.processor, self.lm.tokenizer
        self.model_name = self.lm.name
        self._device = self.lm.device
        self.target_sr = self.lm.sampling_rate
        self.generation_settings = self.lm.generation_settings()
        log.info("vocalgrad-hf: %s; generation %s", self.lm.provenance(), self.generation_settings)
        if not self.lm.batchable and self.batch_size > 1:
            log.warning("vocalgrad-hf: family %s answers one clip at a time (batch_size=%d not used): its audio "
                        "encoder sees the padding of a batch, which would change the answers", self.lm.family,
                        self.batch_size)
        if self.generation_settings.get("do_sample"):
            log.warning("vocalgrad-hf: generation=checkpoint samples (the checkpoint's generation_config): "
                        "answers change from run to run; the benchmark decodes greedily (generation=greedy)")

    def reasoning_format(self) -> dict[str, Any]:
        """The checkpoint's reasoning as its family declares it (:class:`.thinking.ReasoningRoute`)."""
        lm = self.lm
        return {"thinks": bool(getattr(lm, "thinks", False)),
                "delimiters": getattr(lm, "reasoning", ()) or KNOWN_DELIMITERS,
                "opened": bool(getattr(lm, "reasoning_opened", False)),
                "thinking": getattr(lm, "thinking", "auto"), "template_kwargs": getattr(lm, "template_kwargs", {})}

    def identity(self) -> dict[str, Any]:
        """What decides the answers besides the request (used by the answer log where present)."""
        base = super().identity() if hasattr(super(), "identity") else {}
        prov = {k: v for k, v in self.lm.provenance().items() if k != "device"}
        return {**base, "provenance": prov, "scoring": self.scoring, "generation": self.generation_settings}

    def answer_log_info(self) -> dict[str, Any]:
        """Written on every answer-log line: the resolved generation settings."""
        return {"generation": self.generation_settings}

    def get_model_info(self) -> dict[str, Any]:
        """lm-eval adds this to the ``config`` of its results file (with the route's card)."""
        return {**super().get_model_info(),
                "vocalgrad_hf": {**self.lm.provenance(), "scoring": self.scoring,
                                 "generation": self.generation_settings}}

    def card_fields(self) -> dict[str, Any]:
        import transformers

        stops = sorted({*self.lm.stop_token_ids, *_ids(self.generation_settings.get("eos_token_id"))})
        tok = getattr(self.lm, "tokenizer", None)
        names = tok.convert_ids_to_tokens(stops) if tok is not None and hasattr(tok, "convert_ids_to_tokens") else stops
        return {"environment": {"file": None, "python_packages": f"transformers {transformers.__version__}"},
                "family": self.lm.family, "decoding": {"scoring": self.scoring, **self.generation_settings},
                "stop_tokens": list(names),
                "prompt_layout": f"{self.PROMPT_LAYOUT}; rendered by the processor's chat template "
                                 f"(family {self.lm.family}, docs/model-layer.md)"}

    # ------------------------------------------------------------------ inputs
    def item(self, q: Query) -> Item:
        """The model-layer :class:`Item` of a query (decodes its clips)."""
        return as_item(q.prompt, q.audios, audio_first=self.audio_first_of(q), system=self.system_prompt)

    def conversation(self, prompt: str, audios: list, *, audio_first: bool | None = None) -> list[dict]:
        """Chat turns for a prompt and its (already decoded, processor-rate) audio arrays."""
        first = self.audio_first if audio_first is None else audio_first
        item = Item(prompt, [(a, self.target_sr) for a in audios], audio_first=first, system=self.system_prompt)
        return self.lm.conversation(item)

    def prepare(self, queries: list[Query]):
        """Model inputs of a batch (left-padded, model dtype, on the device)."""
        return self.lm.batch([self.item(q) for q in queries])

    def first_token_logits(self, queries: list[Query]):
        """Next-token logits at the last prompt position, shape (batch, vocab) (float32, cpu)."""
        return self.lm.logits(self.prepare(queries))

    # ------------------------------------------------------------------ answers
    def answer(self, queries: list[Query]) -> list[str]:
        out: list[str | None] = [None] * len(queries)
        items: dict[int, Item] = {}
        for i, q in enumerate(queries):
            try:
                items[i] = self.item(q)
            except Exception as exc:  # undecodable clip: this clip only
                log.warning("vocalgrad-hf: clip %s cannot be decoded: %s: %s", q.clip_id, type(exc).__name__, exc)
                out[i] = error_answer(f"{q.clip_id}: audio decode failed: {type(exc).__name__}: {exc}")
        by_budget: dict[int, list[int]] = defaultdict(list)
        for i in items:
            by_budget[queries[i].max_new_tokens].append(i)
        for budget, idx in by_budget.items():
            for i, text in zip(idx, self._answer_items(idx, [items[i] for i in idx], queries, budget)):
                out[i] = text
        return [str(a) for a in out]

    def _answer_items(self, idx: list[int], items: list[Item], queries: list[Query], budget: int) -> list[str]:
        """Answers of one batch. On CUDA out of memory the cache is freed before the error goes up to
        the base class, which retries the batch in halves down to one clip and gives a clip that still
        fails an error answer (:meth:`VocalGradLM._safe_answer`)."""
        try:
            return self._score(items, [queries[i] for i in idx], budget)
        except Exception as exc:
            if _is_oom(exc):
                self._free_memory()
            raise

    @staticmethod
    def _free_memory() -> None:
        import gc

        import torch

        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _score(self, items: list[Item], queries: list[Query], budget: int) -> list[str]:
        if len(items) > 1 and not self.lm.batchable:          # one clip per forward pass (Family.batchable)
            return [text for it, q in zip(items, queries) for text in self._score([it], [q], budget)]
        batch = self.lm.batch(items)
        texts = [""] * len(items)
        if self.scoring != "logits":
            texts = self.lm.generate(batch, max_new_tokens=budget)
            texts = [self.cut_at_stops(t, q) for t, q in zip(texts, queries)]
        if self.scoring == "generate":
            return texts
        return self._with_logit_choice(batch, queries, texts)

    def _with_logit_choice(self, batch, queries: list[Query], texts: list[str]) -> list[str]:
        """Add the logit tag (label of the highest first-token log-prob) to each answer."""
        groups: dict[tuple, list[int]] = defaultdict(list)
        for j, q in enumerate(queries):
            words = q.answer_words or {d: (d,) for d in vocalgrad.DIRECTIONS}
            groups[tuple((label, tuple(ws)) for label, ws in words.items())].append(j)
        out = list(texts)
        logits = self.lm.logits(batch)                       # one forward pass for every group
        for words, rows in groups.items():
            labels = [label for label, _ in words]
            lp = self.lm.answer_logprobs(batch, [ws[0] for _, ws in words], logits=logits)
            for j in rows:
                scores = {label: float(lp[j, k]) for k, label in enumerate(labels)}
                best = max(labels, key=lambda lab: scores[lab])
                text = dict(words)[best][0] if self.scoring == "logits" else texts[j]
                out[j] = logit_answer(best, scores, text=text)
        return out
