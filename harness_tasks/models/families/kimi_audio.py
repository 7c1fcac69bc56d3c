"""Kimi-Audio (``moonshotai/Kimi-Audio-7B-Instruct``): a family over Kimi's own inference package.

Kimi-Audio is not a transformers processor + chat-template model. Its prompt is built by the
``kimia_infer`` package of the MoonshotAI/Kimi-Audio GitHub repository (not on PyPI), whose
``KimiAudio(model_path, load_detokenizer=False)`` gives the model (``.alm``, remote code through
``AutoModelForCausalLM``) and the prompt manager (``.prompt_manager``). Written against the
public package at commit 2607d515f5b7dffa1dcc7526f9f26feb48e356c4 (:data:`UPSTREAM`); this
module uses only:

* ``prompt_manager.get_prompt(messages, output_type="text")`` with user messages
  ``{"role": "user", "message_type": "text"|"audio", "content": text or wav path}``; the prompt it
  returns ends with the assistant start token (it always appends it). Its ``to_tensor()`` (first
  three: audio-stream ids, text-stream ids, continuous mask, each ``(1, T)``) and
  ``continuous_feature`` (one whisper feature tensor per clip);
* ``prompt_manager.extra_tokens`` (``kimia_assistant_msg_start``, ``kimia_text_blank``,
  ``kimia_text_eos``) and ``prompt_manager.text_tokenizer.encode(text, bos=False, eos=False)`` /
  ``.decode(ids)``;
* ``alm(input_ids=audio ids, text_input_ids=..., whisper_input_feature=[...], is_continuous_mask=...,
  return_dict=True, use_cache=False, output_hidden_states=...)`` whose ``logits`` is
  ``(audio_logits, text_logits)``; the answer is read from the **text** stream.

:meth:`KimiAudioFamily.load` checks that surface with a text-only prompt and stops with a
one-line :class:`KimiApiError` naming what differs. The model takes one sequence at a time (its
whisper features are placed for batch row 0 only), so :class:`KimiTextLM` runs the rows of a
left-padded batch one by one. A training target continues the prompt exactly as Kimi's own
text-only generation would: after the assistant start, one position per answer token and one for
the text end-of-stream token, the audio stream blank there; the loss is on those tokens. Tested
here against a test double of this API only (no weights, no GPU); see docs/model-layer.md.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import Any

from vocalgrad import VocalGradError

from ..base import layout
from .base import Family, Item, LoadedModel, batch_items, prepare_audio

__all__ = ["TRANSFORMERS_RANGE", "KimiApiError", "KimiAudioFamily", "KimiLoadedModel", "KimiTextLM",
           "check_prompt_manager", "check_transformers", "import_kimia"]

#: The public kimia_infer this family was written against.
UPSTREAM = "MoonshotAI/Kimi-Audio at commit 2607d515f5b7dffa1dcc7526f9f26feb48e356c4"
#: The special tokens the family reads from ``prompt_manager.extra_tokens``.
EXTRA_TOKENS = ("kimia_assistant_msg_start", "kimia_text_blank", "kimia_text_eos")

#: How to get ``kimia_infer`` (it is not on PyPI).
INSTALL_HINT = ("Kimi-Audio needs the kimia_infer package (not on PyPI): git clone "
                "https://github.com/MoonshotAI/Kimi-Audio, `git submodule update --init --recursive` and "
                "`pip install -r requirements.txt` there (their README), then put the clone on PYTHONPATH")


def import_kimia():
    """The ``KimiAudio`` class of ``kimia_infer`` (lazy import; a one-line error without it)."""
    try:
        from kimia_infer.api.kimia import KimiAudio
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return KimiAudio


class KimiApiError(VocalGradError, TypeError):
    """The installed ``kimia_infer`` does not offer the API this family calls."""


#: transformers releases the checkpoint's own model code (``modeling_moonshot_kimia.py``, remote
#: code) runs under: it calls ``apply_rotary_pos_emb(q, k, cos, sin, position_ids)``, whose
#: ``position_ids`` transformers 5.0 removed (checked in the 4.57.6 and 5.0.0 wheels; its fifth
#: argument is now ``unsqueeze_dim``). 4.57.6, the last release before 5.0, is the version of the
#: locked environment (harness_tasks/workers/envs/kimi_audio.txt).
TRANSFORMERS_RANGE = (">=4.34.1", "<5")


def check_transformers(version: str | None = None) -> None:
    """One-line :class:`KimiApiError` when ``version`` (default: the installed transformers) is
    outside :data:`TRANSFORMERS_RANGE`."""
    from packaging.specifiers import SpecifierSet

    if version is None:
        import transformers

        version = transformers.__version__
    spec = SpecifierSet(",".join(TRANSFORMERS_RANGE))
    if version not in spec:
        raise KimiApiError(
            f"kimi_audio: transformers {version} is installed; Kimi-Audio's model code needs transformers {spec} "
            f"(it passes position_ids to apply_rotary_pos_emb, which 5.0 removed): run it in the locked environment "
            f"(scripts/worker_env.sh kimi_audio DIR, transformers 4.57.6) or through the kimi_audio worker")


def check_prompt_manager(pm: Any) -> None:
    """Check Kimi's prompt manager against the API this family calls (one-line error otherwise).

    Looks at ``get_prompt``'s signature and the special tokens, then builds a one-word text prompt
    (no audio, so no encoder runs) and checks its streams: equal lengths, ending with the
    assistant start token.
    """
    import inspect

    def fail(what: str):
        raise KimiApiError(f"kimi_audio: kimia_infer's {what}; this family was written for {UPSTREAM} "
                           f"(get_prompt(messages, output_type='text'))")

    for name in ("get_prompt", "extra_tokens", "text_tokenizer"):
        if not hasattr(pm, name):
            fail(f"prompt manager has no {name}")
    try:
        params = inspect.signature(pm.get_prompt).parameters
    except (TypeError, ValueError):
        params = {}
    kinds = {p.kind for p in params.values()}
    if params and "output_type" not in params and inspect.Parameter.VAR_KEYWORD not in kinds:
        fail(f"get_prompt{inspect.signature(pm.get_prompt)} takes no output_type")
    required = [n for n, p in list(params.items())[1:] if p.default is p.empty
                and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if required:
        fail(f"get_prompt{inspect.signature(pm.get_prompt)} also requires {', '.join(required)}")
    missing = [t for t in EXTRA_TOKENS if not hasattr(pm.extra_tokens, t)]
    if missing:
        fail(f"extra_tokens have no {', '.join(missing)}")
    try:
        probe = pm.get_prompt([{"role": "user", "message_type": "text", "content": "a"}], output_type="text")
        streams = probe.to_tensor()
    except Exception as exc:  # any failure of the probe is an API mismatch
        fail(f"prompt manager failed on a one-word text prompt ({type(exc).__name__}: {exc})")
    if len(streams) < 3 or len({tuple(x.shape) for x in streams[:3]}) != 1:
        fail("prompt's to_tensor() does not give three streams of one length")
    last = int(streams[0].reshape(-1)[-1])
    if last != int(pm.extra_tokens.kimia_assistant_msg_start):
        end = " (the message end)" if last == int(getattr(pm.extra_tokens, "msg_end", -1)) else ""
        fail(f"get_prompt(...) ends with audio token {last}{end}, not the assistant start token")


def _nn_module():
    import torch.nn as nn

    return nn.Module


class KimiTextLM(_nn_module()):
    """Kimi's ``alm`` seen as a text LM: ``forward(**batch)`` returns ``loss`` (labels on the text
    stream, shifted as in transformers), ``logits`` (text stream) and ``hidden_states`` (the
    embeddings and every decoder layer, ``num_hidden_layers + 1``; the audio-output branch left out).

    Rows are run one at a time without their left padding and padded back (zeros) afterwards.
    """

    def __init__(self, alm: Any) -> None:
        super().__init__()
        self.alm = alm
        self.config = alm.config

    @property
    def dtype(self):
        return next(self.alm.parameters()).dtype

    def get_output_embeddings(self):
        return self.alm.get_output_embeddings()

    def get_decoder(self):
        return self.alm.get_decoder()

    def gradient_checkpointing_enable(self, **kw):
        if not hasattr(self.alm, "gradient_checkpointing_enable"):
            raise ValueError(f"{type(self.alm).__name__} has no gradient checkpointing")
        return self.alm.gradient_checkpointing_enable(**kw)

    def enable_input_require_grads(self):
        """The alm's (a transformers model); a no-op for a model without it."""
        fn = getattr(self.alm, "enable_input_require_grads", None)
        return fn() if callable(fn) else None

    def forward(self, input_ids, text_input_ids, is_continuous_mask, attention_mask, whisper_input_feature,
                labels=None, output_hidden_states: bool = False, use_cache: bool = False, **_: Any):
        import torch
        import torch.nn.functional as F
        from transformers.modeling_outputs import CausalLMOutputWithPast

        n_layers = int(getattr(self.config, "num_hidden_layers", 0)) or None
        dtype = self.dtype
        rows_logits, rows_hidden = [], []
        width = input_ids.shape[1]
        for r in range(input_ids.shape[0]):
            keep = attention_mask[r].bool()
            start = int(torch.nonzero(keep)[0]) if bool(keep.any()) else width
            feats = [f.to(input_ids.device, dtype=dtype) for f in whisper_input_feature[r]]
            out = self.alm(input_ids=input_ids[r:r + 1, start:], text_input_ids=text_input_ids[r:r + 1, start:],
                           whisper_input_feature=feats or None, is_continuous_mask=is_continuous_mask[r:r + 1, start:],
                           return_dict=True, use_cache=False, output_hidden_states=output_hidden_states)
            text_logits = out.logits[1]
            rows_logits.append(F.pad(text_logits, (0, 0, start, 0)))
            if output_hidden_states:
                hs = tuple(out.hidden_states)[: n_layers + 1 if n_layers else None]
                rows_hidden.append([F.pad(h, (0, 0, start, 0)) for h in hs])
        logits = torch.cat(rows_logits, dim=0)
        hidden = None
        if output_hidden_states:
            hidden = tuple(torch.cat([row[i] for row in rows_hidden], dim=0) for i in range(len(rows_hidden[0])))
        loss = None
        if labels is not None:
            shift = logits[:, :-1, :].float()
            loss = F.cross_entropy(shift.reshape(-1, shift.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100)
        return CausalLMOutputWithPast(loss=loss, logits=logits, hidden_states=hidden)


class _Texts:
    """The tokenizer face :class:`LoadedModel` expects, over Kimi's text tokenizer."""

    padding_side = "left"
    pad_token_id = None
    eos_token = ""

    def __init__(self, tok: Any) -> None:
        self._tok = tok

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, bos=False, eos=False))

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": self.encode(text)}

    def decode(self, ids: Sequence[int], **_: Any) -> str:
        return self._tok.decode([int(i) for i in ids])


class KimiLoadedModel(LoadedModel):
    """A loaded Kimi-Audio: :class:`LoadedModel` methods over Kimi's prompt manager."""

    def __init__(self, runtime: Any, model: Any, family: Family, *, name: str, revision: str | None = None,
                 device: str = "cpu", peft: str | None = None) -> None:
        self.runtime = runtime
        self.prompt_manager = runtime.prompt_manager
        self.extra = self.prompt_manager.extra_tokens
        self._set_common(model, None, family, name=name, revision=revision, device=device, peft=peft)
        self.tokenizer = _Texts(self.prompt_manager.text_tokenizer)
        self.sampling_rate = KimiAudioFamily.rate
        self.audio_token_id = None
        self.token_offset = int(getattr(runtime, "kimia_token_offset", None)
                                or getattr(model.config, "kimia_token_offset", 0))

    # ------------------------------------------------------------------ inputs
    def _messages(self, item: Item, paths: list[str]) -> list[dict]:
        """The user turn as Kimi messages (text and clips in the item's order)."""
        if item.system:
            raise ValueError("Kimi-Audio's prompt manager has no system turn; leave --system-prompt unset")
        order = layout(item.prompt, paths, audio_first=item.audio_first)
        return [{"role": "user", "message_type": "text" if kind == "text" else "audio", "content": v}
                for kind, v in order if kind != "text" or v]

    def conversation(self, item: Item) -> list[dict]:
        """Kimi messages of one item (clips shown as ``<clip k>``; :meth:`batch` writes them as WAV
        files), with the target as an assistant text message."""
        msgs = self._messages(item, [f"<clip {k}>" for k in range(len(item.audios))])
        if item.target is not None:
            msgs.append({"role": "assistant", "message_type": "text", "content": item.target})
        return msgs

    def _encode_one(self, item: Item, tmp: str, index: int):
        import soundfile as sf
        import torch

        paths = []
        for k, (y, sr) in enumerate(item.audios):
            a, info = prepare_audio(y, sr, self.sampling_rate)
            self.last_audio.append(info)
            path = os.path.join(tmp, f"clip{index}_{k}.wav")
            sf.write(path, a, self.sampling_rate, subtype="FLOAT")
            paths.append(path)
        history = self.prompt_manager.get_prompt(self._messages(item, paths), output_type="text")
        t = history.to_tensor()
        audio_ids, text_ids, cont = (x.reshape(-1).cpu() for x in t[:3])
        feats = [f.detach().cpu() for f in history.continuous_feature]
        if int(audio_ids[-1]) != int(self.extra.kimia_assistant_msg_start):
            raise KimiApiError("kimi_audio: Kimi's prompt does not end with the assistant start token "
                               f"(the family was written for {UPSTREAM})")
        label = None
        if item.target is not None:
            answer = self.tokenizer.encode(item.target)
            if not answer:
                raise ValueError(f"target {item.target!r} has no tokens")
            blank, eos = int(self.extra.kimia_text_blank), int(self.extra.kimia_text_eos)
            n, m = len(audio_ids), len(answer) + 1
            audio_ids = torch.cat([audio_ids, torch.full((m,), blank, dtype=audio_ids.dtype)])
            text_ids = torch.cat([text_ids, torch.tensor(answer + [eos], dtype=text_ids.dtype)])
            cont = torch.cat([cont.bool(), torch.zeros(m, dtype=torch.bool)])
            label = [-100] * n + answer + [eos]
        return audio_ids, text_ids, cont.bool(), feats, label

    def batch(self, items: Sequence[Item]):
        """Left-padded Kimi inputs: ``input_ids`` (audio stream), ``text_input_ids``,
        ``is_continuous_mask``, ``attention_mask``, ``whisper_input_feature`` (per row, a list of
        clip features) and, with targets, ``labels`` (text stream; -100 except the answer tokens
        and the text end-of-stream token)."""
        import torch

        items = batch_items(items)
        self.last_audio = []
        with tempfile.TemporaryDirectory(prefix="vocalgrad-kimi-") as tmp:
            rows = [self._encode_one(it, tmp, i) for i, it in enumerate(items)]
        width = max(len(r[0]) for r in rows)
        blank = int(self.extra.kimia_text_blank)
        b = len(rows)
        audio = torch.full((b, width), blank, dtype=torch.long)
        text = torch.full((b, width), blank, dtype=torch.long)
        cont = torch.zeros((b, width), dtype=torch.bool)
        mask = torch.zeros((b, width), dtype=torch.long)
        labels = torch.full((b, width), -100, dtype=torch.long) if items[0].target is not None else None
        for r, (a, t, c, _, lab) in enumerate(rows):
            n = len(a)
            audio[r, width - n:], text[r, width - n:], cont[r, width - n:] = a, t, c
            mask[r, width - n:] = 1
            if labels is not None:
                labels[r, width - n:] = torch.tensor(lab)
        dev = self.device
        out = {"input_ids": audio.to(dev), "text_input_ids": text.to(dev), "is_continuous_mask": cont.to(dev),
               "attention_mask": mask.to(dev),
               "whisper_input_feature": [[f.to(dev, dtype=self.dtype) for f in r[3]] for r in rows]}
        if labels is not None:
            out["labels"] = labels.to(dev)
        return out

    def audio_positions(self, batch):
        """(batch, tokens) bool: the discrete audio-token positions, where the whisper features enter."""
        return batch["is_continuous_mask"].bool()

    # ------------------------------------------------------------------ outputs
    def logits(self, batch):
        """Next text-token logits after the prompt (float32, cpu)."""
        import torch

        with torch.inference_mode():
            out = self.model(**self._forward_inputs(batch))
        return out.logits[:, -1, :].float().cpu()

    def hidden_states(self, batch) -> tuple:
        import torch

        with torch.inference_mode():
            out = self.model(**self._forward_inputs(batch), output_hidden_states=True)
        return tuple(out.hidden_states)

    def generation_settings(self) -> dict[str, Any]:
        """Kimi's own decoding loop (:meth:`generate`): argmax, one beam, no penalties."""
        return {"do_sample": False, "num_beams": 1, "repetition_penalty": 1.0, "use_cache": False}

    def generate(self, batch, *, max_new_tokens: int) -> list[str]:
        """Greedy text answers: each step appends the argmax text token to the text stream and
        the text-blank token to the audio stream (Kimi's text-only output), until the text
        end-of-stream token."""
        import torch

        inputs = self._forward_inputs(batch)
        blank, eos = int(self.extra.kimia_text_blank), int(self.extra.kimia_text_eos)
        b = inputs["input_ids"].shape[0]
        answers: list[list[int]] = [[] for _ in range(b)]
        done = [False] * b
        cur = dict(inputs)
        with torch.inference_mode():
            for _ in range(int(max_new_tokens)):
                nxt = self.model(**cur).logits[:, -1, :].argmax(dim=-1)
                for r in range(b):
                    if not done[r]:
                        if int(nxt[r]) == eos:
                            done[r] = True
                        else:
                            answers[r].append(int(nxt[r]))
                if all(done):
                    break
                one = torch.ones((b, 1), dtype=torch.long, device=nxt.device)
                cur["input_ids"] = torch.cat([cur["input_ids"], one * blank], dim=1)
                cur["text_input_ids"] = torch.cat([cur["text_input_ids"], nxt[:, None].long()], dim=1)
                cur["is_continuous_mask"] = torch.cat([cur["is_continuous_mask"], torch.zeros_like(one).bool()], dim=1)
                cur["attention_mask"] = torch.cat([cur["attention_mask"], one], dim=1)
        off = self.token_offset
        return [self.tokenizer.decode([t for t in ids if not off or t < off]) for ids in answers]



class KimiAudioFamily(Family):
    """``kimi_audio``: ``moonshotai/Kimi-Audio-7B-Instruct`` through ``kimia_infer`` (loads itself)."""

    name = "kimi_audio"
    #: ``moonshot_kimia``: the checkpoint's config.json as described by a third party; ``kimi_audio``:
    #: vLLM's copy of the config class (the Hub file itself was not read here).
    model_types = ("moonshot_kimia", "kimi_audio")
    #: The prompt manager reads clips at 16 kHz (librosa ``sr=16000``).
    rate = 16000
    #: :func:`harness_tasks.models.families.load` hands loading to :meth:`load`.
    loads_itself = True
    architectures = ("MoonshotKimiaForCausalLM",)
    #: the lower end of :data:`TRANSFORMERS_RANGE` (its upper end, < 5, is checked by :func:`check_transformers`)
    min_transformers = "4.34.1"

    def matches(self, config: Any) -> bool:
        if getattr(config, "model_type", None) in self.model_types:
            return True
        if set(getattr(config, "architectures", None) or ()) & set(self.architectures):
            return True
        auto_map = getattr(config, "auto_map", None) or {}
        return any("moonshot_kimia" in str(v) for v in auto_map.values())

    def load(self, pretrained: str, *, revision: str | None = None, dtype: Any = "auto", device: str = "cpu",
             peft: str | None = None, **_: Any) -> KimiLoadedModel:
        """``KimiAudio(pretrained, load_detokenizer=False)``, its model on ``device`` in ``dtype``
        (``auto``: as ``kimia_infer`` loads it, bfloat16), an optional peft adapter on top."""
        import torch

        if revision:
            raise ValueError("kimi_audio: kimia_infer loads a folder or Hub id without a revision; "
                             "download the revision and pass its folder")
        KimiAudio = import_kimia()
        check_transformers()
        runtime = KimiAudio(model_path=str(pretrained), load_detokenizer=False)
        check_prompt_manager(runtime.prompt_manager)
        model = KimiTextLM(runtime.alm)
        if dtype not in (None, "auto"):
            model = model.to(dtype if isinstance(dtype, torch.dtype) else getattr(torch, str(dtype)))
        if peft:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, str(peft))
        model.eval().to(device)
        return KimiLoadedModel(runtime, model, self, name=str(pretrained), device=device,
                               peft=str(peft) if peft else None)
