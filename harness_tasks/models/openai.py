"""``vocalgrad-openai``: OpenAI-compatible chat completions with audio input.

Serves vLLM deployments (``vllm serve Qwen/Qwen2-Audio-7B-Instruct``; the way to spread an
evaluation over many GPUs and nodes), Gemini's OpenAI-compatible endpoint and other hosted APIs
(docs/models.md has exact commands). Each clip is sent as base64 16-bit WAV in an
``input_audio`` content part (or as a ``data:`` URL in an ``audio_url`` part), after the text
by default.

Robustness: requests run concurrently in threads; HTTP 429 / 408 / 5xx, timeouts, connection
errors and malformed replies are retried with exponential backoff (``Retry-After`` is
honoured); a request that still fails is returned as an *error answer* (counted by
``error_rate``) - the run never crashes on it. An empty reply (a thinking model that spent its
budget) is asked again with ``empty_budget_factor`` times the token budget; still empty, it is an
error answer, never a cached success. Every answer goes to the base class's per-clip answer log
at once (fsync-ed; key: model, base_url, every body setting, prompt, audio sha256, ...), so an
interrupted or repeated run resumes without paying twice. Ctrl-C (SIGINT) cancels the requests
not yet sent, waits for the ones on the wire (their answers are logged), and exits.

Model arguments
---------------
model : str (required)         model name sent to the server
base_url : str                 default ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``
api_key_env : str              environment variable holding the key (default ``OPENAI_API_KEY``;
                               may be unset for a local server)
audio_format : str             ``input_audio`` (default) or ``audio_url``
audio_first : bool             put the audio before the text (default false; a task's own
                               setting, e.g. ``vocalgrad_audiofirst``, wins)
system_prompt : str            optional system message
sample_rate : int              resample before sending (default 0 = keep the clip's rate)
max_tokens : int | task | none body field ``max_tokens``: ``task`` (default) = the task's budget
                               (128, 256 for the retry); ``none`` leaves the field out
max_completion_tokens : ...    body field ``max_completion_tokens`` (same values; default none).
                               Reasoning models: ``max_tokens=none,max_completion_tokens=2048``
temperature : float | none     default 0; ``none`` leaves the field out
greedy : str                   the rest of the greedy settings (:data:`GREEDY`): ``full`` (default)
                               sends ``top_p`` 1, ``frequency_penalty`` 0, ``presence_penalty`` 0
                               and vLLM's ``repetition_penalty`` 1 and ``min_p`` 0, so that a vLLM
                               server fills none of them from the checkpoint's generation_config
                               (its ``--generation-config auto`` default); ``standard`` only the
                               OpenAI fields (for APIs that refuse unknown fields); ``none`` nothing
stop_token_ids : ints          vLLM's ``stop_token_ids`` (``|``-separated or a JSON list; default
                               none): the chat template's end-of-turn ids when the checkpoint's
                               generation_config does not name them
seed, reasoning_effort, top_p  sent when given (default: left out; ``top_p`` 1 with ``greedy``)
extra_body : JSON object       merged into the request body last (a dict, or a JSON string);
                               pass it through JSON ``--model_args '{...}'``
empty_retries : int            re-asks of an empty reply with a larger budget (default 1)
empty_budget_factor : float    budget multiplier per re-ask (default 4)
concurrency : int              parallel requests (default 8)
timeout : float                seconds per request (default 120)
max_retries : int              retries after the first attempt (default 5)
backoff : float                first backoff in seconds, doubled each retry (default 1, max 60)
answer_log : str               answer-log folder, ``auto`` (default) or ``none`` (``cache`` is an
                               older name for it)
retry_unparsed : bool          one retry with 256 tokens for unparsed answers (default true)
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import random
import threading
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

from generation.audio import resample
from vocalgrad import VocalGradError

from ..clip_audio import encode_wav
from ..parsing import error_answer, is_error_answer
from .base import ModelArgumentError, Query, VocalGradLM, float_arg, int_arg, layout, positive_int
from .chat import ChatLM

log = logging.getLogger("vocalgrad")

__all__ = ["OpenAIAudioLM"]

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}

#: Body fields of greedy decoding besides ``temperature`` 0, per ``greedy`` setting. ``standard``:
#: OpenAI's own fields, at their neutral values. ``full`` adds vLLM's extra sampling fields, which
#: vLLM would otherwise take from the checkpoint's generation_config.json (``--generation-config
#: auto``, its default: e.g. Audio Flamingo 3's repetition penalty 1.05); servers that do not know
#: them ignore them (vLLM, SGLang and other OpenAI-compatible servers; OpenAI's own API refuses
#: unknown fields: use ``standard`` there).
GREEDY = {
    "none": {},
    "standard": {"top_p": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0},
    "full": {"top_p": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0, "repetition_penalty": 1.0,
             "min_p": 0.0},
}


class _Retryable(VocalGradError):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


class OpenAIAudioLM(ChatLM):
    """lm-eval adapter for OpenAI-compatible ``/chat/completions`` endpoints with audio."""

    name = "vocalgrad-openai"
    IDENTITY_EXCLUDE = VocalGradLM.IDENTITY_EXCLUDE | {
        "api_key_env", "concurrency", "timeout", "max_retries", "backoff", "cache"}

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        audio_format: str = "input_audio",
        sample_rate: Any = 0,
        max_tokens: Any = "task",
        max_completion_tokens: Any = None,
        temperature: Any = 0.0,
        seed: Any = None,
        reasoning_effort: Any = None,
        top_p: Any = None,
        greedy: Any = "full",
        stop_token_ids: Any = None,
        extra_body: Any = None,
        empty_retries: Any = 1,
        empty_budget_factor: Any = 4.0,
        concurrency: Any = 8,
        timeout: Any = 120.0,
        max_retries: Any = 5,
        backoff: Any = 1.0,
        cache: str | None = None,
        **kwargs: Any,
    ) -> None:
        if cache is not None:
            kwargs.setdefault("answer_log", cache)
        super().__init__(**kwargs)
        if not model:
            raise ModelArgumentError("vocalgrad-openai needs model=<name> in --model_args")
        if audio_format not in ("input_audio", "audio_url"):
            raise ModelArgumentError(f"audio_format must be 'input_audio' or 'audio_url', got {audio_format!r}")
        self.model = str(model)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.audio_format = audio_format
        self.sample_rate = int_arg(sample_rate, "sample_rate")
        self.max_tokens = self._budget_arg(max_tokens, "max_tokens")
        self.max_completion_tokens = self._budget_arg(max_completion_tokens, "max_completion_tokens")
        self.temperature = None if _unset(temperature) else float_arg(temperature, "temperature")
        self.greedy = "none" if _unset(greedy) else str(greedy).strip().lower()
        if self.greedy not in GREEDY:
            raise ModelArgumentError(f"greedy must be one of {', '.join(GREEDY)}, got {greedy!r}")
        self.stop_token_ids = _token_ids(stop_token_ids)
        self.fixed = dict(GREEDY[self.greedy])
        if self.stop_token_ids:
            self.fixed["stop_token_ids"] = self.stop_token_ids
        self.fixed.update({k: v for k, v in (("seed", None if _unset(seed) else int_arg(seed, "seed")),
                                             ("reasoning_effort", reasoning_effort),
                                             ("top_p", None if _unset(top_p) else float_arg(top_p, "top_p")))
                           if v is not None})
        if isinstance(extra_body, str) and not _unset(extra_body):
            try:
                extra_body = json.loads(extra_body)
            except json.JSONDecodeError as exc:
                raise ModelArgumentError(f"extra_body must be a JSON object, got {extra_body!r} ({exc})") from None
        if extra_body is not None and not _unset(extra_body) and not isinstance(extra_body, dict):
            raise ModelArgumentError(f"extra_body must be a JSON object, got {extra_body!r}")
        self.extra_body = dict(extra_body) if isinstance(extra_body, dict) else {}
        self.empty_retries = max(0, int_arg(empty_retries, "empty_retries"))
        self.empty_budget_factor = max(1.0, float_arg(empty_budget_factor, "empty_budget_factor"))
        self.concurrency = max(1, int_arg(concurrency, "concurrency"))
        self.timeout = float_arg(timeout, "timeout")
        self.max_retries = max(0, int_arg(max_retries, "max_retries"))
        self.backoff = max(0.0, float_arg(backoff, "backoff"))
        self.n_requests = 0
        self.n_errors = 0
        self.n_empty = 0
        self._count_lock = threading.Lock()
        self._cancel = threading.Event()

    @staticmethod
    def _budget_arg(value: Any, name: str) -> int | str | None:
        if _unset(value):
            return None
        if str(value).strip().lower() == "task":
            return "task"
        return positive_int(value, name, "an integer, 'task' or 'none'")

    def card_fields(self) -> dict[str, Any]:
        fields = {"temperature": self.temperature, **self.fixed, **self.extra_body}
        for name in ("max_tokens", "max_completion_tokens"):
            if getattr(self, name) is not None:
                fields[name] = getattr(self, name)
        return {"environment": {"file": None, "server": self.base_url, "model": self.model},
                "decoding": {"greedy": self.greedy, "body": fields}, "stop_tokens": self.stop_token_ids,
                "prompt_layout": f"{self.PROMPT_LAYOUT}; the server's chat template renders it "
                                 f"({self.audio_format} parts, 16-bit WAV)"}

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["endpoint"] = {"base_url": self.base_url, "model": self.model}
        return ident

    # ------------------------------------------------------------------ request building
    def _audio_payload(self, q: Query) -> tuple[list[dict], str]:
        parts, digest = [], hashlib.sha256()
        for a in q.audios:
            y, sr = a["array"], a["sampling_rate"]
            if self.sample_rate and sr != self.sample_rate:
                y, sr = resample(y, sr, self.sample_rate), self.sample_rate
            wav = encode_wav(y, sr)
            digest.update(wav)
            b64 = base64.b64encode(wav).decode("ascii")
            if self.audio_format == "input_audio":
                parts.append({"type": "input_audio", "input_audio": {"data": b64, "format": "wav"}})
            else:
                parts.append({"type": "audio_url", "audio_url": {"url": f"data:audio/wav;base64,{b64}"}})
        return parts, digest.hexdigest()

    def _body(self, q: Query, audio_parts: list[dict], *, scale: float = 1.0) -> dict:
        # audio_parts are in q.audios order; layout() places them (text/audio order, markers)
        clips = iter(audio_parts)
        content = [{"type": "text", "text": v} if kind == "text" else next(clips)
                   for kind, v in layout(q.prompt, list(range(len(audio_parts))), audio_first=self.audio_first_of(q))]
        messages = [{"role": "user", "content": content}]
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        for name in ("max_tokens", "max_completion_tokens"):
            budget = getattr(self, name)
            if budget is not None:
                base = q.max_new_tokens if budget == "task" else budget
                body[name] = int(round(int(base) * scale))
        if self.temperature is not None:
            body["temperature"] = self.temperature
        body.update(self.fixed)
        body.update(self.extra_body)
        return body

    # ------------------------------------------------------------------ HTTP
    def _post(self, body: dict) -> str:
        data = json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + "/chat/completions", data=data, method="POST")
        req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            if exc.code in _RETRY_STATUS:
                wait = exc.headers.get("Retry-After") if exc.headers else None
                try:
                    wait = float(wait) if wait is not None else None
                except ValueError:
                    wait = None
                raise _Retryable(f"HTTP {exc.code}: {detail}", wait) from None
            raise RuntimeError(f"HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            raise _Retryable(f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}") from None
        try:
            obj = json.loads(raw)
            content = obj["choices"][0]["message"]["content"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, UnicodeDecodeError):
            raise _Retryable(f"malformed reply: {raw[:120]!r}") from None
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise _Retryable(f"malformed reply: content is {type(content).__name__}")
        return content

    def _ask(self, q: Query) -> str:
        try:
            parts, _ = self._audio_payload(q)
        except Exception as exc:
            return error_answer(f"audio of {q.clip_id}: {exc}")
        scale = 1.0
        for round_ in range(self.empty_retries + 1):
            answer = self._send(q, self._body(q, parts, scale=scale))
            if answer is None:               # cancelled before sending
                raise KeyboardInterrupt
            if answer.strip():
                return answer if is_error_answer(answer) else self.cut_at_stops(answer, q)
            with self._count_lock:
                self.n_empty += 1
            scale *= self.empty_budget_factor
            log.info("vocalgrad-openai: empty reply for %s; asking again with %gx the budget", q.clip_id, scale)
        return error_answer(f"empty reply {self.empty_retries + 1} time(s), last budget x{scale / self.empty_budget_factor:g} "
                            "(a thinking model may spend the whole budget: raise max_completion_tokens or lower "
                            "its reasoning effort)")

    def _send(self, q: Query, body: dict) -> str | None:
        """One request with retries: the reply text, an error answer, or None if cancelled."""
        reason = "no attempt"
        attempt = 0
        for attempt in range(self.max_retries + 1):
            if self._cancel.is_set():
                return None
            with self._count_lock:
                self.n_requests += 1
            try:
                return self._post(body)
            except _Retryable as exc:
                reason = str(exc)
                if attempt < self.max_retries:
                    delay = exc.wait if exc.wait is not None else self.backoff * 2 ** attempt
                    if self._cancel.wait(min(60.0, delay) * (1 + 0.1 * random.random())):
                        return None
                continue
            except Exception as exc:  # a non-retryable HTTP status or bug: an error answer
                reason = str(exc)
                break
        with self._count_lock:
            self.n_errors += 1
        log.warning("vocalgrad-openai: %s failed after %d attempt(s): %s", q.clip_id, attempt + 1, reason)
        return error_answer(f"{reason} (after {attempt + 1} attempts)")

    # ------------------------------------------------------------------ adapter interface
    def answer(self, queries: list[Query]) -> list[str]:
        if len(queries) == 1 or self.concurrency == 1:
            return [self._ask(q) for q in queries]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._ask, queries))

    def _answer_todo(self, queries: list[Query], index: list[int], deliver) -> None:
        """Concurrent requests; each answer is delivered (and logged) as it arrives.

        Ctrl-C: requests not yet sent are cancelled, those on the wire finish and are logged,
        then KeyboardInterrupt propagates.
        """
        if not queries:
            return
        self._cancel.clear()
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        futures = {pool.submit(self._ask, q): i for q, i in zip(queries, index)}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                for fut in done:
                    deliver(futures[fut], fut.result())
        except KeyboardInterrupt:
            self._cancel.set()
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=True, cancel_futures=True)  # requests on the wire finish
            unsent = 0
            for fut in pending:
                if not fut.cancelled() and fut.exception() is None:
                    deliver(futures[fut], fut.result())
                else:
                    unsent += 1
            log.warning("vocalgrad-openai: interrupted; %d request(s) not sent; every answer received is in the "
                        "answer log (rerun the same command to continue)", unsent)
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def _token_ids(value: Any) -> list[int]:
    """``stop_token_ids`` as a list of ints (a list, a JSON list, or ``a|b|c``); empty when unset."""
    if value is None or (isinstance(value, str) and _unset(value)):
        return []
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text) if text.startswith("[") else [w for w in text.split("|") if w.strip()]
        except json.JSONDecodeError:
            value = None
    if isinstance(value, int):
        value = [value]
    try:
        return [int(v) for v in value]
    except (TypeError, ValueError):
        raise ValueError(f"stop_token_ids must be token ids (a JSON list or a|b|c), got {value!r}") from None


def _unset(value: Any) -> bool:
    """A model argument the user unset: None or the word ``none``."""
    return value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null", ""))
