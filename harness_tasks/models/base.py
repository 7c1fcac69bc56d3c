"""Common base of the VocalGrad model adapters for lm-eval.

Adapters subclass :class:`VocalGradLM` and implement :meth:`VocalGradLM.answer` for a batch of
:class:`Query` objects. The base class unpacks lm-eval's ``generate_until`` requests
(``(prompt, gen_kwargs, {"audio": [clip]})``), keeps the original order, and applies the
reference decoding protocol (benchmark.md §7): greedy, ``max_gen_toks`` new tokens (128 in the
task YAMLs), then **one retry with 256 tokens for answers that do not parse**. The retry is
done only by adapters that generate text (``RETRIES = True``) and is turned off with the
model argument ``retry_unparsed=false``.

Task-level settings travel in the task's ``generation_kwargs`` (the only per-request channel
lm-eval offers) and are taken out before an adapter sees them:

``vocalgrad_audio_first``   true/false: audio before the text (overrides the adapter's own
                            ``audio_first`` argument for that task; ``vocalgrad_audiofirst``)
``vocalgrad_answer_words``  label -> answer words of the task's prompt (paraphrase, yes/no,
                            ternary); the unparsed-answer retry parses with them

A prompt containing :data:`~harness_tasks.clip_audio.AUDIO_MARKER` once per clip (few-shot
tasks) is split there and the clips are interleaved with the text (:func:`layout`). Answers of failed requests are marked with
:func:`harness_tasks.parsing.error_answer` so that they are counted as errors, not crashes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lm_eval.api.model import LM

from ..clip_audio import AUDIO_MARKER
from ..parsing import classify_answer

log = logging.getLogger("vocalgrad")

__all__ = ["Answer", "Query", "TASK_KWARGS", "VocalGradLM", "as_bool", "layout"]

#: generation_kwargs keys that carry task settings to the adapters (removed from gen_kwargs).
TASK_KWARGS: tuple[str, ...] = ("vocalgrad_audio_first", "vocalgrad_answer_words")

#: Token budget of the single retry for unparsed answers (benchmark.md §7).
RETRY_MAX_NEW_TOKENS = 256


def as_bool(value: Any, *, name: str = "flag") -> bool:
    """Read a boolean model argument (lm-eval passes ``true``/``false`` as str or bool)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")


class Answer(str):
    """Model output; ``retried`` says whether it comes from the 256-token retry."""

    retried: bool = False

    def __new__(cls, text: str, *, retried: bool = False) -> "Answer":
        obj = super().__new__(cls, text)
        obj.retried = retried
        return obj


@dataclass
class Query:
    """One request: prompt text, audio clips (lazy mappings), generation settings."""

    prompt: str
    audios: list[Mapping[str, Any]] = field(default_factory=list)
    max_new_tokens: int = 128
    gen_kwargs: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    #: Audio before the text: True/False as the task demands, None = the adapter's setting.
    audio_first: bool | None = None
    #: Label -> answer words of the task's prompt; None = the benchmark.md §7 words.
    answer_words: dict[str, tuple[str, ...]] | None = None

    @property
    def clip_id(self) -> str:
        """Id of the clip being judged (the last clip: few-shot examples come first)."""
        return getattr(self.audios[-1], "clip_id", "?") if self.audios else "?"

    def parts(self, default_audio_first: bool = False) -> list[tuple[str, Any]]:
        """``("text", str)`` / ``("audio", clip)`` parts in the order the model must see them."""
        first = default_audio_first if self.audio_first is None else self.audio_first
        return layout(self.prompt, self.audios, audio_first=first)


def layout(prompt: str, audios: Sequence[Any], *, audio_first: bool = False) -> list[tuple[str, Any]]:
    """Order text and audio of one request.

    Parameters
    ----------
    prompt : str
        Request text. If it contains :data:`AUDIO_MARKER`, it must contain it once per clip; the
        clips then go where the markers are (few-shot prompts) and ``audio_first`` is ignored.
    audios : sequence
        Clips of the request.
    audio_first : bool
        Without markers: all clips before the text (True) or after it (False).

    Returns
    -------
    list of (kind, value)
        ``kind`` is ``"text"`` (value: non-empty str) or ``"audio"`` (value: the clip).
    """
    if AUDIO_MARKER in prompt:
        pieces = prompt.split(AUDIO_MARKER)
        if len(pieces) - 1 != len(audios):
            raise ValueError(f"prompt has {len(pieces) - 1} audio markers but the request has {len(audios)} clip(s)")
        out: list[tuple[str, Any]] = []
        for i, text in enumerate(pieces):
            text = text.strip("\n")  # each text is its own content part; the marker's line breaks go
            if text.strip():
                out.append(("text", text))
            if i < len(audios):
                out.append(("audio", audios[i]))
        return out
    text = [("text", prompt)]
    clips = [("audio", a) for a in audios]
    return clips + text if audio_first else text + clips


class VocalGradLM(LM):
    """Base adapter: request unpacking, ordering and the unparsed-answer retry.

    Parameters
    ----------
    retry_unparsed : bool
        Retry once with 256 new tokens when an answer does not parse (generative adapters).
    batch_size : int or str
        Requests per :meth:`answer` call (``"auto"`` reads as 1 for adapters without batching).
    **kwargs
        lm-eval passes ``device`` and ``max_batch_size``; adapters that do not use them
        ignore them.
    """

    MULTIMODAL = True
    RETRIES = False
    #: lm-eval reads this when --apply_chat_template is given; prompts go through unchanged.
    tokenizer_name = "vocalgrad-passthrough"

    def __init__(self, *, retry_unparsed: Any = True, batch_size: Any = 1, **kwargs: Any) -> None:
        super().__init__()
        self.retry_unparsed = as_bool(retry_unparsed, name="retry_unparsed") and self.RETRIES
        self.batch_size = self._parse_batch_size(batch_size)
        self.n_retried = 0
        self.n_retry_parsed = 0
        unknown = set(kwargs) - {"device", "max_batch_size"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown model argument(s): {', '.join(sorted(unknown))}")

    @staticmethod
    def _parse_batch_size(value: Any) -> int:
        if value is None or str(value).startswith("auto"):
            return 1
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"batch_size must be a positive integer or 'auto', got {value!r}") from None
        if n < 1:
            raise ValueError(f"batch_size must be >= 1, got {n}")
        return n

    # -------------------------------------------------------------- lm-eval interface
    def generate_until(self, requests: Sequence[Any], disable_tqdm: bool = False) -> list[str]:
        queries = [self._to_query(i, req) for i, req in enumerate(requests)]
        answers = self._run(queries, disable_tqdm=disable_tqdm)
        if self.retry_unparsed:
            todo = [q for q, a in zip(queries, answers)
                    if classify_answer(a, q.answer_words)[1] in ("unparsed", "ambiguous")]
            if todo:
                for q in todo:
                    q.max_new_tokens = max(RETRY_MAX_NEW_TOKENS, q.max_new_tokens)
                again = self._run(todo, disable_tqdm=True)
                for q, a in zip(todo, again):
                    answers[q.index] = Answer(a, retried=True)
                    self.n_retried += 1
                    self.n_retry_parsed += classify_answer(a, q.answer_words)[1] == "parsed"
                log.info("retried %d unparsed answers with %d tokens; %d parsed after the retry",
                         len(todo), RETRY_MAX_NEW_TOKENS,
                         sum(classify_answer(answers[q.index], q.answer_words)[1] == "parsed" for q in todo))
        return [a if isinstance(a, Answer) else Answer(a) for a in answers]

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError(f"{type(self).__name__} only supports generate_until tasks (VocalGrad)")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError(f"{type(self).__name__} only supports generate_until tasks (VocalGrad)")

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """Return the user text unchanged: adapters apply their own chat format."""
        return "\n\n".join(m["content"] for m in chat_history if m.get("role") != "assistant")

    # -------------------------------------------------------------- adapter interface
    def answer(self, queries: list[Query]) -> list[str]:  # pragma: no cover - abstract
        """Return one raw answer per query (same order). Failed queries: ``error_answer(...)``."""
        raise NotImplementedError

    # -------------------------------------------------------------- helpers
    def _to_query(self, index: int, req: Any) -> Query:
        args = req.args if hasattr(req, "args") else req
        prompt = args[0]
        gen = dict(args[1]) if len(args) > 1 and args[1] else {}
        media = args[2] if len(args) > 2 and args[2] else {}
        audios = media.get("audio") or []
        if isinstance(audios, Mapping):
            audios = [audios]
        max_new = int(gen.get("max_gen_toks", gen.get("max_new_tokens", 128)))
        first = gen.pop("vocalgrad_audio_first", None)
        words = gen.pop("vocalgrad_answer_words", None)
        if words is not None:
            if not isinstance(words, Mapping):
                raise ValueError(f"generation_kwargs vocalgrad_answer_words must map label -> words, got {words!r}")
            words = {str(k): tuple(v) if isinstance(v, (list, tuple)) else (str(v),) for k, v in words.items()}
        return Query(prompt=prompt, audios=list(audios), max_new_tokens=max_new, gen_kwargs=gen, index=index,
                     audio_first=None if first is None else as_bool(first, name="vocalgrad_audio_first"),
                     answer_words=words)

    def _run(self, queries: list[Query], *, disable_tqdm: bool = False) -> list[str]:
        from tqdm import tqdm

        out: list[str] = [""] * len(queries)
        pos = {id(q): i for i, q in enumerate(queries)}
        bar = tqdm(total=len(queries), disable=disable_tqdm, desc=type(self).__name__)
        for start in range(0, len(queries), self.batch_size):
            batch = queries[start:start + self.batch_size]
            res = self.answer(batch)
            if len(res) != len(batch):
                raise RuntimeError(f"{type(self).__name__}.answer returned {len(res)} answers for {len(batch)} queries")
            for q, a in zip(batch, res):
                out[pos[id(q)]] = a
            bar.update(len(batch))
        bar.close()
        return out
