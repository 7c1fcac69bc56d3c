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
tasks) is split there and the clips are interleaved with the text (:func:`layout`).

Reliability (every adapter)
---------------------------
*Answer log.* Every answer is appended at once (one JSON line, fsync-ed) to a per-clip log
(:mod:`.answer_log`), keyed by the adapter's :meth:`VocalGradLM.identity` (class, model id,
revision, dtype, adapter settings: by default every model argument except those in
``IDENTITY_EXCLUDE``), the prompt, the generation settings, the audio order, the id and sha256
of each clip and the toolkit version. A rerun of the same command skips the clips already answered and
logs how many it skipped. :meth:`VocalGradLM.answer_log_info` adds fields to each line (hf: the
resolved generation settings; worker: the worker's handshake). Model argument ``answer_log``: ``auto`` (the default unless
``$VOCALGRAD_ANSWER_LOG`` says otherwise: ``$VOCALGRAD_CACHE/answers/<model>-<identity hash>/``,
else ``~/.cache/vocalgrad/answers/...``), a folder, or ``none`` to turn it off.

*Shared logs.* Runs sharing one answer log claim clips before asking (:meth:`AnswerLog.claim`,
:mod:`.claims`): each clip is asked by one of them, the others wait for its answer; a crashed
run's claims end with its process.

*Per-clip failures.* An exception raised by :meth:`VocalGradLM.answer` (an undecodable clip, a
model error) is retried on halves of the batch down to single clips; a clip that still fails
gets an error answer (:func:`harness_tasks.parsing.error_answer`): counted wrong (``error_rate``),
kept in lm-eval's sample log with its reason, listed in a warning at the end, never a crash.
Only :class:`FatalAdapterError` (e.g. a crashed worker process) stops the run. Error answers are
logged but not reused by a rerun. A reply the provider blocked is a *blocked answer*
(:func:`harness_tasks.parsing.blocked_answer`): the provider's answer, logged and reused like any
other, never retried, counted wrong and in ``blocked_rate``.

*Several processes.* Under ``accelerate launch`` / ``torchrun`` (``WORLD_SIZE`` > 1) the base
sets lm-eval's ``rank`` / ``world_size`` and its gather / barrier primitives, so lm-eval splits
the requests over the processes and gathers the results on rank 0.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from lm_eval.api.model import LM

from vocalgrad import VocalGradError

from ..clip_audio import audio_sha256
from ..parsing import classify_answer, error_answer, is_blocked_answer, is_error_answer
from .answer_tally import count_answers
from .answer_log import AnswerLog, answer_key, ask_claimed, default_log_root
from .args import (ModelArgumentError, UnknownModelArgument, accepted_arguments, as_bool, float_arg, int_arg,
                   positive_int)
from .distributed import Distributed
from .query import Answer, Query, layout
from .thinking import ReasoningRoute

log = logging.getLogger("vocalgrad")

__all__ = ["Answer", "FatalAdapterError", "Query", "TASK_KWARGS", "VocalGradLM", "as_bool", "layout",
           "positive_int", "ModelArgumentError", "int_arg", "float_arg"]

#: generation_kwargs keys that carry task settings to the adapters (removed from gen_kwargs).
TASK_KWARGS: tuple[str, ...] = ("vocalgrad_audio_first", "vocalgrad_answer_words")

#: Token budget of the single retry for unparsed answers (benchmark.md §7).
RETRY_MAX_NEW_TOKENS = 256


class FatalAdapterError(VocalGradError, RuntimeError):
    """An adapter failure that must stop the run (not a per-clip error), e.g. a dead worker."""


def _jsonable(value: Any) -> Any:
    """A JSON-safe stand-in of a model argument for the adapter identity."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    name = getattr(value, "name_or_path", None) or getattr(getattr(value, "config", None), "_name_or_path", None)
    return f"<{type(value).__name__} {name}>" if name else f"<{type(value).__name__}>"


_OFF = ("none", "false", "off", "no", "0", "")


class VocalGradLM(ReasoningRoute, Distributed, LM):
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

    #: lm-eval model name the adapter is registered under (``--model``); each adapter sets its own,
    #: and ``tests/test_structure.py`` ties it to pyproject's entry points and :data:`harness_tasks.MODEL_ADAPTERS`.
    name: ClassVar[str] = ""
    MULTIMODAL = True
    RETRIES = False
    #: lm-eval reads this when --apply_chat_template is given; prompts go through unchanged.
    tokenizer_name = "vocalgrad-passthrough"
    #: Model arguments that do not change an answer (left out of :meth:`identity`).
    IDENTITY_EXCLUDE: frozenset[str] = frozenset(
        {"batch_size", "max_batch_size", "device", "answer_log", "retry_unparsed"})

    def __new__(cls, *args: Any, **kwargs: Any):
        obj = super().__new__(cls)
        obj._init_args = dict(kwargs)  # every model argument, for identity()
        return obj

    def __init__(self, *, retry_unparsed: Any = True, batch_size: Any = 1, answer_log: Any = "default",
                 reasoning_budget: Any = "auto", **kwargs: Any) -> None:
        super().__init__()
        self._init_reasoning(reasoning_budget)
        self.retry_unparsed = as_bool(retry_unparsed, name="retry_unparsed") and self.RETRIES
        self.batch_size = self._parse_batch_size(batch_size)
        self.n_retried = 0
        self.n_retry_parsed = 0
        #: queries handed to answer() / found in the answer log / turned into error answers
        self.n_asked = 0
        self.n_reused = 0
        self.failed: list[tuple[str, str]] = []
        self._answer_log_arg = answer_log
        self._answer_log: AnswerLog | None | bool = False  # False: not opened yet
        unknown = set(kwargs) - {"device", "max_batch_size"}
        if unknown:
            raise UnknownModelArgument(
                f"{self.name or type(self).__name__}: unknown model argument(s) {', '.join(sorted(unknown))}; "
                f"it takes {', '.join(a for a in accepted_arguments(type(self)) if a != 'kwargs')}")
        self._setup_distributed(kwargs.get("device"))

    @staticmethod
    def _parse_batch_size(value: Any) -> int:
        if value is None or str(value).startswith("auto"):
            return 1
        return positive_int(value, "batch_size", "a positive integer or 'auto'")

    # -------------------------------------------------------------- lm-eval interface
    def generate_until(self, requests: Sequence[Any], disable_tqdm: bool = False) -> list[str]:
        queries = [self._to_query(i, req) for i, req in enumerate(requests)]
        extra = self.reasoning_budget           # reasoning tokens on top of the answer budget (models.thinking)
        for q in queries:
            q.max_new_tokens += extra
        answers = [self.restore_opening(a) for a in self._run(queries, disable_tqdm=disable_tqdm)]
        if self.retry_unparsed:
            todo = [q for q, a in zip(queries, answers)
                    if classify_answer(self.parser_text(a), q.answer_words)[1] in ("unparsed", "ambiguous")]
            if todo:
                for q in todo:
                    q.max_new_tokens = max(RETRY_MAX_NEW_TOKENS + extra, q.max_new_tokens)
                again = self._run(todo, disable_tqdm=True)
                for q, a in zip(todo, again):
                    answers[q.index] = Answer(self.restore_opening(a), retried=True)
                    self.n_retried += 1
                    self.n_retry_parsed += classify_answer(self.parser_text(answers[q.index]),
                                                           q.answer_words)[1] == "parsed"
                log.info("retried %d unparsed answers with %d tokens; %d parsed after the retry",
                         len(todo), RETRY_MAX_NEW_TOKENS + extra,
                         sum(classify_answer(self.parser_text(answers[q.index]), q.answer_words)[1] == "parsed"
                             for q in todo))
        self.count_reasoning(answers)
        blocked = sum(is_blocked_answer(a) for a in answers)
        if blocked:
            log.warning("%s: %d of %d clip(s) were blocked by the provider (status blocked: counted wrong and in "
                        "blocked_rate, never re-asked)", type(self).__name__, blocked, len(queries))
        errors = [(q.clip_id, a) for q, a in zip(queries, answers) if is_error_answer(a)]
        count_answers(len(queries), errors)  # vocalgrad-eval: every request failed? (answer_tally)
        if errors:
            shown = "; ".join(f"{cid}: {a[:160]}" for cid, a in errors[:10])
            log.warning("%s: %d of %d clip(s) got error answers (counted wrong, listed in the sample log): %s%s",
                        type(self).__name__, len(errors), len(queries), shown,
                        " ..." if len(errors) > 10 else "")
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

    # -------------------------------------------------------------- identity and answer log
    def identity(self) -> dict[str, Any]:
        """What decides this adapter's answers besides the request (part of every log key).

        Default: the class, every model argument except :attr:`IDENTITY_EXCLUDE` and, for an
        adapter holding a transformers model in ``self.model``, the checkpoint's commit hash and
        the dtype it runs in. Adapters add what else the arguments leave implicit (a resolved URL).
        """
        args = {k: _jsonable(v) for k, v in sorted(getattr(self, "_init_args", {}).items())
                if k not in self.IDENTITY_EXCLUDE}
        ident: dict[str, Any] = {"adapter": f"{type(self).__module__}.{type(self).__qualname__}", "args": args}
        # a loaded transformers model: the checkpoint's commit and the dtype it really runs in
        config = getattr(getattr(self, "model", None), "config", None)
        if config is not None:
            ident["loaded"] = {"commit": getattr(config, "_commit_hash", None),
                               "dtype": str(getattr(self.model, "dtype", "")) or None}
        return ident

    #: How the route lays out a request (docs/models.md, the route table); adapters override it.
    PROMPT_LAYOUT: ClassVar[str] = "no model prompt (answers from the clip or a seed)"
    #: The parser that reads every adapter's answers (benchmark.md §7).
    PARSER: ClassVar[str] = ("harness_tasks.parsing: one unique direction word (docs/benchmark.md, the parser), read "
                             "after a leading reasoning block (models.thinking); logit tag when present")

    def model_card(self) -> dict[str, Any]:
        """The route's card (docs/models.md, "Routes"): route, environment, prompt layout, decoding,
        stop tokens and parser, as recorded under ``config.vocalgrad_model`` of every results file
        (:meth:`get_model_info`). Adapters extend :meth:`card_fields`."""
        card: dict[str, Any] = {"route": self.name, "environment": None, "prompt_layout": self.PROMPT_LAYOUT,
                                "decoding": None, "stop_tokens": [], "parser": self.PARSER,
                                "reasoning": self.reasoning_card()}
        card.update(self.card_fields())
        return _jsonable(card)

    def card_fields(self) -> dict[str, Any]:
        """The fields of :meth:`model_card` this adapter knows (environment, decoding, stop tokens ...)."""
        return {}

    def get_model_info(self) -> dict[str, Any]:
        """lm-eval adds this to the ``config`` of its results file: the route's :meth:`model_card`."""
        return {"vocalgrad_model": self.model_card()}

    def answer_log_info(self) -> dict[str, Any]:
        """Extra fields written on each answer-log line (hf: its generation settings; worker: its handshake)."""
        return {}

    def query_key(self, q: Query, identity: Any = None) -> str | None:
        """Answer-log key of a query (None when a clip's audio cannot be read: never reused)."""
        shas = [getattr(a, "sha256", None) or audio_sha256(a) for a in q.audios]
        if any(s is None for s in shas):
            return None
        request = {"prompt": q.prompt, "max_new_tokens": int(q.max_new_tokens), "gen": q.gen_kwargs,
                   "audio_first": q.audio_first, "answer_words": q.answer_words, "clips": shas,
                   "clip_ids": [getattr(a, "clip_id", None) for a in q.audios]}
        return answer_key(self.identity() if identity is None else identity, request)

    @property
    def answer_log(self) -> AnswerLog | None:
        """The answer log (opened on first use), or None when ``answer_log=none``."""
        if self._answer_log is False:
            arg = self._answer_log_arg
            if isinstance(arg, str) and arg == "default":
                arg = os.environ.get("VOCALGRAD_ANSWER_LOG") or "auto"
            if arg is None or arg is False or str(arg).strip().lower() in _OFF:
                self._answer_log = None
            else:
                folder = self._default_log_folder() if str(arg).strip().lower() == "auto" else Path(str(arg))
                self._answer_log = AnswerLog(folder, rank=self.rank)
                log.info("%s: answer log %s (%d answers)", type(self).__name__, self._answer_log.folder,
                         len(self._answer_log))
        return self._answer_log

    def _default_log_folder(self) -> Path:
        ident = self.identity()
        args = ident.get("args", {})
        name = next((str(args[k]) for k in ("pretrained", "model", "name", "cmd") if args.get(k)),
                    type(self).__name__)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name.strip("/").split("/")[-1] if "/" in name else name)[:60]
        digest = hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:12]
        return default_log_root() / f"{slug or 'model'}-{digest}"

    # -------------------------------------------------------------- running queries
    def _run(self, queries: list[Query], *, disable_tqdm: bool = False) -> list[str]:
        """Answers for ``queries`` (same order): from the log where possible, else asked."""
        from tqdm import tqdm

        out: list[str] = [""] * len(queries)
        logbook = self.answer_log
        identity = self.identity() if logbook is not None else None
        keys = [self.query_key(q, identity) if logbook is not None else None for q in queries]
        todo = []
        for i, k in enumerate(keys):
            hit = logbook.get(k) if k is not None else None
            if hit is None:
                todo.append(i)
            else:
                out[i] = hit
        reused = len(queries) - len(todo)
        self.n_reused += reused
        if reused:
            log.warning("%s: %d of %d answers found in the answer log %s; asking the model for %d",
                        type(self).__name__, reused, len(queries), logbook.folder, len(todo))
        bar = tqdm(total=len(todo), disable=disable_tqdm, desc=type(self).__name__)

        def deliver(i: int, answer: str) -> None:
            out[i] = answer
            if is_error_answer(answer):
                self.failed.append((queries[i].clip_id, answer))
            if logbook is not None and keys[i] is not None:
                logbook.put(keys[i], answer, error=is_error_answer(answer), clip_id=queries[i].clip_id,
                            max_new_tokens=queries[i].max_new_tokens, **self.answer_log_info())
            bar.update(1)

        try:
            if logbook is None:
                self._answer_todo([queries[i] for i in todo], todo, deliver)
            else:
                self._answer_claimed(queries, keys, todo, out, deliver, bar)
        finally:
            bar.close()
        return out

    #: Fewest keys claimed at a time in a shared answer log (more for big batches or many concurrent requests).
    CLAIM_CHUNK = 32

    def _answer_claimed(self, queries: list[Query], keys: list[str | None], todo: list[int], out: list[str],
                        deliver, bar) -> None:
        """Ask for ``todo`` through :func:`.answer_log.ask_claimed`, so that runs sharing the log never ask twice."""
        logbook = self.answer_log
        unkeyed = [i for i in todo if keys[i] is None]  # unreadable audio: an error answer, never logged
        if unkeyed:
            self._answer_todo([queries[i] for i in unkeyed], unkeyed, deliver)
        chunk = max(self.CLAIM_CHUNK, 4 * self.batch_size, 4 * int(getattr(self, "concurrency", 1) or 1))

        def found(i: int, answer: str) -> None:
            out[i] = answer
            bar.update(1)

        n = ask_claimed(logbook, keys, [i for i in todo if keys[i] is not None],
                        lambda idx: self._answer_todo([queries[i] for i in idx], idx, deliver), found,
                        chunk=chunk, who=type(self).__name__)
        self.n_reused += n

    def _answer_todo(self, queries: list[Query], index: list[int], deliver) -> None:
        """Ask the model for ``queries`` in batches; ``deliver(index[j], answer)`` as each arrives."""
        for start in range(0, len(queries), self.batch_size):
            batch = queries[start:start + self.batch_size]
            for j, a in enumerate(self._safe_answer(batch)):
                deliver(index[start + j], a)

    def _safe_answer(self, batch: list[Query]) -> list[str]:
        """:meth:`answer` with failures isolated: halve the batch, then error answers."""
        try:
            self.n_asked += len(batch)
            res = list(self.answer(batch))
            if len(res) != len(batch):
                raise FatalAdapterError(
                    f"{type(self).__name__}.answer returned {len(res)} answers for {len(batch)} queries")
            return res
        except FatalAdapterError:
            raise
        except Exception as exc:
            if len(batch) > 1:
                half = len(batch) // 2
                log.warning("%s: a batch of %d failed (%s: %s); retrying in halves", type(self).__name__,
                            len(batch), type(exc).__name__, exc)
                return self._safe_answer(batch[:half]) + self._safe_answer(batch[half:])
            q = batch[0]
            log.warning("%s: clip %s failed: %s: %s", type(self).__name__, q.clip_id, type(exc).__name__, exc)
            return [error_answer(f"{q.clip_id}: {type(exc).__name__}: {exc}")]
