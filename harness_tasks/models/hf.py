"""``vocalgrad-hf``: transformers audio-text chat models (Qwen2-Audio, Qwen2.5-Omni, Audio
Flamingo 3, Voxtral, Phi-4-multimodal, Gemma 3n, ...).

The model's processor must carry a chat template that accepts audio content parts. For each
clip the adapter builds one user turn ``[text, audio]`` (``audio_first=true`` flips it),
renders it with the processor's chat template, resamples the clip to the feature extractor's
rate (soxr, high quality), and decodes greedily with left padding. Left-padded batches give
the same answers as single requests for models whose audio encoder does not see the padding
(checked for Qwen2-Audio and Audio Flamingo 3).

Model arguments
---------------
pretrained : str              model folder or Hub id (or a loaded ``PreTrainedModel`` from Python)
processor : str               processor folder / id if it differs from ``pretrained``
model_class : str             transformers class name, e.g. ``Qwen2_5OmniThinkerForConditionalGeneration``
                              (default: the checkpoint's ``architectures`` entry)
dtype : str                   ``auto`` (default), ``float32``, ``bfloat16``, ``float16``
device : str                  ``auto`` (default: cuda if available), ``cpu``, ``cuda``, ``cuda:1`` ...
batch_size : int              clips per forward pass (default 1)
audio_first : bool            audio before the question (default false: text, then audio); a task
                              can set it (``vocalgrad_audiofirst``), which wins
system_prompt : str           optional system turn
trust_remote_code : bool      passed to ``from_pretrained`` (default false)
attn_implementation : str     passed to ``from_pretrained``
retry_unparsed : bool         one retry with 256 new tokens for unparsed answers (default true)
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

import numpy as np

from .base import Query, VocalGradLM, as_bool, layout

log = logging.getLogger("vocalgrad")

__all__ = ["HFAudioLM", "resolve_model_class"]

_MAPPINGS = (
    "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
    "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
    "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
)


def resolve_model_class(config: Any, name: str | None = None):
    """The transformers class to load: ``name``, else the checkpoint's architecture, else the
    first auto-mapping that knows the model type."""
    import transformers
    from transformers.models.auto import modeling_auto

    if name:
        cls = getattr(transformers, name, None)
        if cls is None:
            raise ValueError(f"model_class={name!r} is not a transformers class")
        return cls
    for arch in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, arch, None)
        if cls is not None and hasattr(cls, "generate"):
            return cls
    for mapping in _MAPPINGS:
        names = getattr(modeling_auto, mapping, {})
        if config.model_type in names:
            return getattr(transformers, names[config.model_type])
    raise ValueError(
        f"cannot tell which transformers class generates text for model type {config.model_type!r}; "
        f"pass model_class=<ClassName> in --model_args"
    )


def _pick_device(device: Any) -> str:
    import torch

    dev = str(device or "auto")
    if dev == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if dev.startswith("cuda") and not torch.cuda.is_available():
        log.warning("vocalgrad-hf: device %s requested but CUDA is not available; using cpu", dev)
        return "cpu"
    return dev


class HFAudioLM(VocalGradLM):
    """lm-eval adapter for transformers audio-text models (see the module docstring)."""

    RETRIES = True

    def __init__(
        self,
        *,
        pretrained: Any,
        processor: Any = None,
        model_class: str | None = None,
        dtype: str = "auto",
        device: Any = "auto",
        audio_first: Any = False,
        system_prompt: str | None = None,
        trust_remote_code: Any = False,
        attn_implementation: str | None = None,
        **kwargs: Any,
    ) -> None:
        max_batch_size = kwargs.pop("max_batch_size", None)
        kwargs.pop("device", None)
        super().__init__(**kwargs)
        del max_batch_size
        import torch
        import transformers

        self.audio_first = as_bool(audio_first, name="audio_first")
        self.system_prompt = system_prompt
        trust = as_bool(trust_remote_code, name="trust_remote_code")
        self._device = _pick_device(device)

        if isinstance(pretrained, str):
            config = transformers.AutoConfig.from_pretrained(pretrained, trust_remote_code=trust)
            cls = resolve_model_class(config, model_class)
            load_kw: dict[str, Any] = {"trust_remote_code": trust}
            if dtype != "auto":
                load_kw["dtype"] = getattr(torch, str(dtype))
            else:
                load_kw["dtype"] = "auto"
            if attn_implementation:
                load_kw["attn_implementation"] = attn_implementation
            self.model = cls.from_pretrained(pretrained, **load_kw)
            self.name = pretrained
        else:
            self.model = pretrained
            self.name = getattr(getattr(pretrained, "config", None), "_name_or_path", type(pretrained).__name__)
        self.model.eval().to(self._device)

        if processor is None or isinstance(processor, str):
            src = processor or (pretrained if isinstance(pretrained, str) else None)
            if src is None:
                raise ValueError("pass processor=... when pretrained is a loaded model")
            processor = transformers.AutoProcessor.from_pretrained(src, trust_remote_code=trust)
        self.processor = processor
        if not getattr(processor, "chat_template", None):
            raise ValueError(
                f"{self.name}: the processor has no chat template; VocalGrad needs one that takes audio parts"
            )
        tok = getattr(processor, "tokenizer", None)
        if tok is None:
            raise ValueError(f"{self.name}: the processor has no tokenizer")
        tok.padding_side = "left"
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        self.tokenizer = tok
        fe = getattr(processor, "feature_extractor", None)
        self.target_sr = int(getattr(fe, "sampling_rate", 16000) or 16000)

    # ------------------------------------------------------------------ inputs
    def _audio(self, clip: Any) -> np.ndarray:
        y, sr = clip["array"], int(clip["sampling_rate"])
        if sr != self.target_sr:
            import soxr

            y = soxr.resample(np.asarray(y, dtype=np.float32), sr, self.target_sr, quality="HQ")
        return np.asarray(y, dtype=np.float32)

    def conversation(self, prompt: str, audios: list[np.ndarray], *, audio_first: bool | None = None) -> list[dict]:
        """The chat (one user turn) for a prompt and its decoded audio.

        ``audio_first`` (None: the adapter's argument) puts the audio before the text; a prompt
        with one :data:`~harness_tasks.clip_audio.AUDIO_MARKER` per clip interleaves them.
        """
        first = self.audio_first if audio_first is None else audio_first
        content = [{"type": "text", "text": v} if kind == "text" else {"type": "audio", "audio": v}
                   for kind, v in layout(prompt, audios, audio_first=first)]
        turns = []
        if self.system_prompt:
            turns.append({"role": "system", "content": [{"type": "text", "text": self.system_prompt}]})
        turns.append({"role": "user", "content": content})
        return turns

    def prepare(self, queries: list[Query]):
        """Processor outputs (left-padded tensors on the model's device) for a batch."""
        audios = [[self._audio(a) for a in q.audios] for q in queries]
        convs = [self.conversation(q.prompt, a, audio_first=q.audio_first) for q, a in zip(queries, audios)]
        texts = self.processor.apply_chat_template(convs, tokenize=False, add_generation_prompt=True)
        flat = [a for group in audios for a in group]
        kw: dict[str, Any] = {"text": texts, "return_tensors": "pt",
                              "text_kwargs": {"padding": True, "padding_side": "left"}}
        if flat:
            kw.update(audio=flat, sampling_rate=self.target_sr)
        inputs = self.processor(**kw)
        return inputs.to(self._device)

    def first_token_logits(self, queries: list[Query]):
        """Next-token logits at the last prompt position, shape (batch, vocab) (float32, cpu)."""
        import torch

        inputs = self.prepare(queries)
        with torch.inference_mode():
            out = self.model(**inputs)
        return out.logits[:, -1, :].float().cpu()

    # ------------------------------------------------------------------ generation
    def answer(self, queries: list[Query]) -> list[str]:
        import torch

        out: list[str] = [""] * len(queries)
        by_budget: dict[int, list[int]] = defaultdict(list)
        for i, q in enumerate(queries):
            by_budget[q.max_new_tokens].append(i)
        for budget, idx in by_budget.items():
            batch = [queries[i] for i in idx]
            inputs = self.prepare(batch)
            with torch.inference_mode():
                gen = self.model.generate(**inputs, max_new_tokens=budget, do_sample=False,
                                          pad_token_id=self.tokenizer.pad_token_id)
            new = gen[:, inputs["input_ids"].shape[1]:]
            texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
            for i, q, text in zip(idx, batch, texts):
                for stop in q.gen_kwargs.get("until") or []:
                    if stop:
                        text = text.split(stop)[0]
                out[i] = text
        return out
