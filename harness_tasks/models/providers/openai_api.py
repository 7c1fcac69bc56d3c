"""Chat completions with audio through OpenAI's SDK (``openai``): OpenAI's own API
(``gpt-audio-1.5``) and Google's OpenAI-compatible Gemini endpoint.

A clip is an ``input_audio`` content part (``{"data": base64 WAV, "format": "wav"}``, OpenAI's
audio input) or, with ``audio_format=audio_url``, a ``data:`` URL. ``audio_format=auto`` (default) on
an OpenAI-compatible server asks its ``/v1/models`` which server it is (:mod:`.servers`): SGLang gets
``audio_url`` parts (its chat schema has no ``input_audio``), others ``input_audio``; a server that
refuses the part with an HTTP 400 naming it is switched to the other part once (a warning says so),
and a refusal of the part the user chose stops the run in one line naming ``audio_format``. A
server's reasoning field (vLLM's ``reasoning``, SGLang's ``reasoning_content``) comes back in
:attr:`Reply.reasoning`. The SDK owns the HTTP retries:
408, 409, 429 and 5xx, timeouts and connection errors, with its own backoff and the server's
``Retry-After`` / ``retry-after-ms``; every attempt ends within ``timeout`` seconds in all
(:mod:`.deadline`).

A reply the provider blocked (``finish_reason: content_filter``, or a ``refusal`` in the message:
OpenAI's documented block signals) comes back with :attr:`Reply.blocked` set: the adapter names it
a blocked answer and never asks again, whatever text it carries.

OpenAI's API refuses request fields it does not know (HTTP 400 "Unrecognized request argument
supplied: ..."), so this profile sends only the fields of the SDK's own request type
(:data:`OPENAI_FIELDS`, read from ``openai.types.chat.completion_create_params``) and asks for the
answer budget as ``max_completion_tokens`` (OpenAI's name; ``max_tokens`` is deprecated there and
refused by its reasoning models). Google's endpoint is reported to refuse the penalties on
Gemini 2.5 models ("Penalty is not enabled for models/...") and older ones as unknown names, so
its profile sends ``temperature`` and ``top_p`` only.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import logging
import threading

from .base import FATAL_STATUS, FieldRefused, Malformed, Provider, Reply, RequestFailed, Stop, refused_field, stop_line
from .servers import SERVER_AUDIO, audio_parts, server_kind, with_audio_format

log = logging.getLogger("vocalgrad")

__all__ = ["AudioRefused", "ChatCompletions", "OPENAI_FIELDS", "GEMINI_OPENAI_FIELDS", "openai_fields"]


def openai_fields() -> frozenset[str]:
    """The body fields of OpenAI's chat completions request, as the installed SDK types them."""
    import typing

    from openai.types.chat import completion_create_params as params

    return frozenset(typing.get_type_hints(params.CompletionCreateParamsBase)) | {"stream"}


#: Fields Google documents for its OpenAI-compatible endpoint besides model and messages
#: (``extra_body`` carries its ``google`` options); the penalties are not among them.
GEMINI_OPENAI_FIELDS = frozenset({
    "max_tokens", "max_completion_tokens", "temperature", "top_p", "n", "stop", "seed", "reasoning_effort",
    "response_format", "tools", "tool_choice", "stream", "stream_options", "extra_body", "logprobs", "top_logprobs"})

OPENAI_FIELDS: frozenset[str] | None = None   # filled on first use (imports the SDK)


class AudioRefused(Stop):
    """The server refused the request's audio part (HTTP 400 quoting its type): switched once
    under ``audio_format=auto``, else the run stops with this line."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ChatCompletions(Provider):
    """``/chat/completions`` with ``input_audio`` parts through the ``openai`` SDK.

    Parameters
    ----------
    name : str
        The profile (``openai``, ``gemini-openai``, ``openai-compatible``).
    model, base_url, api_key : str
        Model name, endpoint, key (may be empty for a local server).
    audio_format : {"auto", "input_audio", "audio_url"}
        How clips are sent (``auto``: the server's own part, :mod:`.servers`).
    fields : dict
        Every body field besides model, messages and the budget (greedy settings, extra_body ...).
    budgets : dict
        Budget field -> ``"task"`` (the task's token budget) or an int.
    timeout, max_retries : float, int
        The SDK's per-request timeout and its retries.
    route : str
        The adapter's name, for messages.
    """

    def __init__(self, *, name: str, model: str, base_url: str, api_key: str, audio_format: str,
                 fields: Mapping[str, Any], budgets: Mapping[str, Any], timeout: float, max_retries: int,
                 route: str = "vocalgrad-openai") -> None:
        self.name, self.model, self.base_url, self.route = name, model, base_url, route
        self.fields, self.budgets = dict(fields), dict(budgets)
        self.timeout, self.max_retries, self.api_key = timeout, max_retries, api_key
        #: ``audio_format=auto``: the part follows the server (asked once, switched at most once).
        self.audio_auto = audio_format == "auto"
        self.audio_format = "input_audio" if self.audio_auto else audio_format
        #: The server's ``owned_by`` (``vllm``, ``sglang`` ...; OpenAI-compatible servers only, None: unknown).
        self.server: str | None = None
        self._asked = name != "openai-compatible"
        self._switched = False
        self._audio_lock = threading.Lock()

    def _make_client(self):
        try:
            import openai
        except ImportError:
            raise Stop(f"{self.route}: provider {self.name} needs the openai package: "
                       "pip install -e '.[api]'") from None
        from .deadline import DeadlineTransport

        return openai.OpenAI(api_key=self.api_key or "unused", base_url=self.base_url, timeout=self.timeout,
                             max_retries=self.max_retries,
                             http_client=openai.DefaultHttpx2Client(transport=DeadlineTransport(self.timeout)))

    def settings(self) -> dict[str, Any]:
        return {**self.fields, **self.budgets}

    def _ask_server(self) -> None:
        """Once: which server this is (``/v1/models``' ``owned_by``) and, with ``audio_format=auto``, its part."""
        with self._audio_lock:
            if self._asked:
                return
            self._asked = True
            self.server = server_kind(self.client, self.model, min(float(self.timeout), 30.0))
            if self.audio_auto and not self._switched:
                self.audio_format = SERVER_AUDIO.get(self.server or "", "input_audio")
            log.info("%s: the server at %s says owned_by=%s; clips go as %s parts", self.route, self.base_url,
                     self.server or "(unknown)", self.audio_format)

    def _audio_refused(self, exc: "AudioRefused", body: dict) -> dict:
        """The body to send again after the server refused its audio part (``audio_format=auto``,
        switched once for every thread), else the refusal's one-line stop."""
        with self._audio_lock:
            sent = audio_parts(body)
            if self.audio_auto and not self._switched and self.audio_format in sent:
                self._switched = True
                old, self.audio_format = self.audio_format, ("audio_url" if self.audio_format == "input_audio"
                                                             else "input_audio")
                log.warning("%s: the server refused %s parts (HTTP %d); sending every clip as %s from now on "
                            "(set audio_format=%s to skip the first try)", self.route, old, exc.status,
                            self.audio_format, self.audio_format)
            if self.audio_auto and self.audio_format not in sent:
                return with_audio_format(body, self.audio_format)
        raise exc

    # ------------------------------------------------------------------ request
    def _audio_part(self, wav: bytes) -> dict:
        b64 = base64.b64encode(wav).decode("ascii")
        if self.audio_format == "input_audio":
            return {"type": "input_audio", "input_audio": {"data": b64, "format": "wav"}}
        return {"type": "audio_url", "audio_url": {"url": f"data:audio/wav;base64,{b64}"}}

    def build(self, parts, *, system, budget, scale=1.0):
        """The request body (its audio parts follow :attr:`audio_format`; :meth:`send` rewrites them
        when the server's part is known only then)."""
        content = [{"type": "text", "text": v} if kind == "text" else self._audio_part(v) for kind, v in parts]
        messages = [{"role": "user", "content": content}]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        for name, value in self.budgets.items():
            body[name] = int(round(int(budget if value == "task" else value) * scale))
        body.update(self.fields)
        return body

    # ------------------------------------------------------------------ reply
    def send(self, body):
        import openai

        self._ask_server()
        body = with_audio_format(body, self.audio_format)
        for attempt in range(2):             # a second time only after switching the audio part
            rest = {k: v for k, v in body.items() if k not in ("model", "messages")}
            try:
                resp = self.client.chat.completions.with_raw_response.create(
                    model=body["model"], messages=body["messages"], extra_body=rest)
                break
            except openai.APIStatusError as exc:
                err = self._status_error(exc, body)
                if isinstance(err, AudioRefused) and attempt == 0:
                    body = self._audio_refused(err, body)
                    continue
                raise err from None
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                raise RequestFailed(f"{type(exc).__name__}: {exc}") from None
        raw = resp.http_response.content if hasattr(resp, "http_response") else resp.content
        try:
            obj = json.loads(raw)
            choice = obj["choices"][0]
            content = choice["message"].get("content")
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError, UnicodeDecodeError):
            raise Malformed(f"malformed reply: {raw[:120]!r}") from None
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise Malformed(f"malformed reply: content is {type(content).__name__}")
        usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
        finish = choice.get("finish_reason")
        message = choice["message"]
        refusal = message.get("refusal")
        blocked = ("finish_reason content_filter" if finish == "content_filter" else
                   f"refusal: {' '.join(str(refusal).split())[:120]}" if isinstance(refusal, str) and refusal.strip()
                   else None)
        reasoning = message.get("reasoning") or message.get("reasoning_content") or ""
        return Reply(content, finish, usage, reasoning=reasoning if isinstance(reasoning, str) else "",
                     blocked=blocked)

    def _status_error(self, exc, body) -> Exception:
        status = int(getattr(exc, "status_code", 0) or 0)
        err = getattr(exc, "body", None)
        if isinstance(err, list) and err:                 # Google's endpoint wraps its error in a list
            err = err[0]
        if isinstance(err, dict) and isinstance(err.get("error"), dict):
            err = err["error"]
        message = (err.get("message") if isinstance(err, dict) else None) or str(exc)
        param = err.get("param") if isinstance(err, dict) else None
        violations = [v.get("field", "") for d in (err.get("details") or []) if isinstance(d, dict)
                      for v in d.get("fieldViolations") or [] if isinstance(v, dict)] if isinstance(err, dict) else []
        if status in (400, 422):
            field = refused_field(message, [k for k in body if k not in ("model", "messages")], param, violations)
            if field:
                return FieldRefused(stop_line(self.route, self.name, status, message, field, self.hint(field)), field)
            part = next((p for p in sorted(audio_parts(body)) if p in str(message)), None)
            if part:
                other = "audio_url" if part == "input_audio" else "input_audio"
                return AudioRefused(stop_line(
                    self.route, self.name, status, message, None,
                    f"the server refused the {part} audio part: set audio_format={other} (SGLang takes audio_url "
                    "data: URLs only; vLLM takes both)"), status)
        if status in FATAL_STATUS:
            return Stop(stop_line(self.route, self.name, status, message, None,
                                  "check api_key_env, base_url and model"))
        return RequestFailed(f"HTTP {status}: {' '.join(str(message).split())[:200]}")

    def hint(self, field: str) -> str:
        if field in ("repetition_penalty", "min_p", "frequency_penalty", "presence_penalty", "top_p"):
            return ("the greedy setting sends it: use greedy=standard (OpenAI's fields) or greedy=none, or "
                    "provider=openai / provider=gemini, which send only what those APIs accept")
        if field in ("max_tokens", "max_completion_tokens"):
            other = "max_completion_tokens" if field == "max_tokens" else "max_tokens"
            return f"leave it out with {field}=none and set {other}=task"
        if field == "reasoning_effort":
            return ("the server refuses this reasoning_effort for this model: pick one its message lists, or leave "
                    "it out (Gemini: extra_body's thinking_level names the level directly)")
        return "leave it out of --model_args (or extra_body), or set provider= to the server's kind"
