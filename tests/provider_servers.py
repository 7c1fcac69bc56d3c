"""Loopback stand-ins (127.0.0.1 only) of two hosted audio APIs, each enforcing its maker's documented
request schema and answering in its documented shapes, errors and rate limits included.

``OpenAIServer``: ``POST /v1/chat/completions`` as OpenAI's API documents it. A request field outside
the documented chat-completions parameters is refused as OpenAI refuses it (HTTP 400,
``{"error": {"message": "Unrecognized request argument supplied: X", "type": "invalid_request_error",
"param": null, "code": null}}``); content parts are ``text`` or ``input_audio`` ``{data, format: wav|mp3}``;
unknown models get 404 ``model_not_found``; a missing key 401; a scripted rate limit 429
``rate_limit_exceeded`` with ``retry-after-ms``. Replies are ``chat.completion`` objects with ``usage``;
``block`` makes every reply a blocked one, as OpenAI documents them: ``content_filter`` (finish reason
``content_filter``, no content), ``content_filter_text`` (the same with the answer's text still present) or
``refusal`` (content null, the message's ``refusal`` set).

``GeminiServer``: ``POST /{v1,v1beta}/models/{model}:generateContent`` as Google documents it. Field
names are read as the proto JSON parser reads them (lowerCamel or snake_case); an unknown one is
refused with 400 ``INVALID_ARGUMENT`` ``Invalid JSON payload received. Unknown name "X" at '...': Cannot
find field.`` and a ``BadRequest`` ``fieldViolations`` detail; non-zero penalties are refused on 2.5
models (``Penalty is not enabled for models/...``); ``thinkingBudget`` is checked against the model's
range (Pro cannot turn thinking off) on 2.5 models; Gemini 3 models (:data:`GEMINI3_LEVELS`) take
``thinkingLevel`` from their own list (``thinkingLevel`` on a 2.5 model, and both fields in one request, are
refused with 400 as Google refuses them); a scripted 429 is ``RESOURCE_EXHAUSTED`` with ``RetryInfo``.
``block`` blocks every reply: a finish reason (``SAFETY``, ``RECITATION``, ...; ``+text`` keeps the answer's
text in the candidate) or ``prompt:<REASON>`` (no candidate, ``promptFeedback.blockReason``).
The model "thinks" before answering and its thinking counts against ``maxOutputTokens``, as Gemini
2.5's does: 300 thinking tokens when the budget is dynamic (no ``thinkingConfig`` or -1), else at
most the budget; a reply whose thinking leaves no room ends ``MAX_TOKENS`` with no text.

Both answer by listening to the WAV they receive: "increase" when the second half is louder.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import soundfile as sf
from _timing import hang_guard

__all__ = ["DripServer", "GeminiServer", "OpenAIServer", "listen"]


def listen(wav: bytes) -> str:
    """The direction a ramp clip goes (louder second half: increase)."""
    y, sr = sf.read(io.BytesIO(wav))
    h = len(y) // 2
    return "increase" if np.sqrt(np.mean(y[h:] ** 2)) > np.sqrt(np.mean(y[:h] ** 2)) else "decrease"


class _Base:
    """A threading HTTP server on 127.0.0.1 with a request log and a script of failures."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.script: list[str] = []          # one action per request: "429", then normal handling
        self.block: str | None = None        # every reply blocked this way (see the subclasses)
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = None
                sent = {k.lower(): v for k, v in self.headers.items()}
                with outer.lock:
                    outer.requests.append({"path": self.path, "body": body, "headers": sent})
                    action = outer.script.pop(0) if outer.script else "ok"
                status, payload, headers = outer.handle(self.path, sent, body, action)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def handle(self, path, headers, body, action):  # pragma: no cover - overridden
        raise NotImplementedError

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# ----------------------------------------------------------------------------- OpenAI
#: The request body parameters of OpenAI's chat completions API reference (non-streaming and streaming).
OPENAI_PARAMS = frozenset({
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "reasoning_effort", "response_format", "safety_identifier", "seed",
    "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options"})
OPENAI_AUDIO_MODELS = frozenset({"gpt-audio-1.5", "gpt-audio", "gpt-audio-mini", "gpt-4o-audio-preview",
                                 "gpt-4o-mini-audio-preview"})


def _openai_error(message: str, type_: str = "invalid_request_error", param=None, code=None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


class OpenAIServer(_Base):
    """OpenAI's chat completions with audio input (see the module docstring). ``url`` is the base URL."""

    def __init__(self) -> None:
        super().__init__()
        self.url = self.root + "/v1"

    def handle(self, path, headers, body, action):
        if path != "/v1/chat/completions":
            return 404, _openai_error(f"Invalid URL (POST {path})"), {}
        if not (headers.get("authorization") or "").startswith("Bearer sk-"):
            return 401, _openai_error("Incorrect API key provided.", code="invalid_api_key"), {}
        if action == "429":
            return 429, _openai_error("Rate limit reached for requests per min (RPM): Limit 3, Used 3, "
                                      "Requested 1. Please try again in 20ms.", "requests",
                                      code="rate_limit_exceeded"), {"retry-after-ms": "20"}
        if not isinstance(body, dict):
            return 400, _openai_error("We could not parse the JSON body of your request."), {}
        for key in body:
            if key not in OPENAI_PARAMS:
                return 400, _openai_error(f"Unrecognized request argument supplied: {key}"), {}
        if body.get("model") not in OPENAI_AUDIO_MODELS:
            return 404, _openai_error(f"The model `{body.get('model')}` does not exist or you do not have access "
                                      "to it.", code="model_not_found"), {}
        wavs, prompt_chars = [], 0
        for i, msg in enumerate(body.get("messages") or []):
            content = msg.get("content")
            for j, part in enumerate(content if isinstance(content, list) else []):
                kind = part.get("type")
                where = f"messages[{i}].content[{j}]"
                if kind == "text":
                    prompt_chars += len(part.get("text", ""))
                elif kind == "input_audio":
                    audio = part.get("input_audio") or {}
                    if audio.get("format") not in ("wav", "mp3"):
                        return 400, _openai_error(f"Invalid value: '{audio.get('format')}'. Supported values are: "
                                                  "'wav' and 'mp3'.", param=f"{where}.input_audio.format",
                                                  code="invalid_value"), {}
                    wavs.append(base64.b64decode(audio.get("data", ""), validate=True))
                else:
                    return 400, _openai_error(f"Invalid value: '{kind}'. Supported values are: 'text', "
                                              "'image_url', 'input_audio', 'refusal', 'audio', and 'file'.",
                                              param=f"{where}.type", code="invalid_value"), {}
        if not wavs:
            return 400, _openai_error("This model requires that either input content or output modality "
                                      "contain audio.", param="model"), {}
        answer = listen(wavs[-1])
        seconds = sum(sf.info(io.BytesIO(w)).duration for w in wavs)
        audio_tokens = int(round(10 * seconds))
        usage = {"prompt_tokens": prompt_chars // 4 + audio_tokens, "completion_tokens": 1,
                 "total_tokens": prompt_chars // 4 + audio_tokens + 1,
                 "prompt_tokens_details": {"audio_tokens": audio_tokens, "cached_tokens": 0},
                 "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}
        message = {"role": "assistant", "content": answer, "refusal": None, "annotations": []}
        finish = "stop"
        if self.block in ("content_filter", "content_filter_text"):
            finish = "content_filter"
            message["content"] = answer if self.block == "content_filter_text" else None
        elif self.block == "refusal":
            message.update(content=None, refusal="I'm sorry, I can't help with that.")
        return 200, {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
                     "model": body["model"], "choices": [{"index": 0, "message": message,
                                                          "logprobs": None, "finish_reason": finish}],
                     "usage": usage}, {}


# ----------------------------------------------------------------------------- Gemini
def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


#: Field names of the generateContent request (snake_case; lowerCamel spellings are read as well).
GEMINI_FIELDS = {
    "": {"contents", "tools", "tool_config", "safety_settings", "system_instruction", "generation_config",
         "cached_content"},
    "content": {"role", "parts"},
    "part": {"text", "inline_data", "file_data", "thought", "thought_signature", "function_call",
             "function_response", "executable_code", "code_execution_result", "video_metadata"},
    "inline_data": {"mime_type", "data"},
    "generation_config": {"stop_sequences", "response_mime_type", "response_schema", "response_json_schema",
                          "response_modalities", "candidate_count", "max_output_tokens", "temperature", "top_p",
                          "top_k", "seed", "presence_penalty", "frequency_penalty", "response_logprobs", "logprobs",
                          "enable_enhanced_civic_answers", "speech_config", "thinking_config", "image_config",
                          "media_resolution"},
    "thinking_config": {"include_thoughts", "thinking_budget", "thinking_level"},
}
#: Thinking budget range per Gemini 2.5 model (Pro cannot turn thinking off).
GEMINI_MODELS = {"gemini-2.5-flash": (0, 24576), "gemini-2.5-flash-lite": (0, 24576), "gemini-2.5-pro": (128, 32768)}
#: Thinking levels per Gemini 3 model (the Pro models refuse MINIMAL), as Google's thinking guide lists them.
GEMINI3_LEVELS = {"gemini-3.5-flash": ("MINIMAL", "LOW", "MEDIUM", "HIGH"),
                  "gemini-3.1-pro-preview": ("LOW", "MEDIUM", "HIGH")}


def _google_error(code: int, status: str, message: str, details: list | None = None) -> dict:
    err = {"code": code, "message": message, "status": status}
    if details:
        err["details"] = details
    return {"error": err}


class _Unknown(Exception):
    def __init__(self, name: str, where: str) -> None:
        super().__init__(name)
        self.name, self.where = name, where


def _read(obj: dict, level: str, where: str) -> dict:
    """``obj`` with snake_case keys; an unknown name raises :class:`_Unknown`."""
    out = {}
    for key, value in obj.items():
        name = _snake(key)
        if name not in GEMINI_FIELDS[level]:
            raise _Unknown(key, where)
        out[name] = value
    return out


class GeminiServer(_Base):
    """Gemini's generateContent with inline audio (see the module docstring). ``url`` is the SDK's base URL."""

    def __init__(self) -> None:
        super().__init__()
        self.url = self.root

    def handle(self, path, headers, body, action):
        m = re.fullmatch(r"/v1(?:beta)?/models/([\w.-]+):generateContent", path.split("?")[0])
        if not m:
            return 404, _google_error(404, "NOT_FOUND", f"Requested entity was not found: {path}"), {}
        model = m.group(1)
        if not headers.get("x-goog-api-key") and "key=" not in path:
            return 403, _google_error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers "
                                      "(callers without established identity). Please use API Key or other form of "
                                      "API consumer identity to call this API."), {}
        if action == "429":
            return 429, _google_error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check "
                                      "your plan and billing details.", [{"@type": "type.googleapis.com/google.rpc."
                                                                          "RetryInfo", "retryDelay": "0s"}]), {}
        if model not in GEMINI_MODELS and model not in GEMINI3_LEVELS:
            return 404, _google_error(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta, or is "
                                      "not supported for generateContent."), {}
        try:
            req = _read(body, "", "")
            contents = [_read(c, "content", f"contents[{i}]") for i, c in enumerate(req.get("contents") or [])]
            parts = [(_read(p, "part", f"contents[{i}].parts[{j}]"), f"contents[{i}].parts[{j}]")
                     for i, c in enumerate(contents) for j, p in enumerate(c.get("parts") or [])]
            inline = [_read(p["inline_data"], "inline_data", f"{w}.inline_data") for p, w in parts if "inline_data" in p]
            cfg = _read(req.get("generation_config") or {}, "generation_config", "generation_config")
            thinking = _read(cfg.get("thinking_config") or {}, "thinking_config", "generation_config.thinking_config")
        except _Unknown as exc:
            at = f" at '{exc.where}'" if exc.where else ""
            message = f'Invalid JSON payload received. Unknown name "{exc.name}"{at}: Cannot find field.'
            violation = {"description": message} | ({"field": exc.where} if exc.where else {})
            return 400, _google_error(400, "INVALID_ARGUMENT", message, [
                {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]}]), {}
        if any(cfg.get(k) for k in ("presence_penalty", "frequency_penalty")):
            return 400, _google_error(400, "INVALID_ARGUMENT", f"Penalty is not enabled for models/{model}"), {}
        budget, level = thinking.get("thinking_budget"), thinking.get("thinking_level")
        if budget is not None and level is not None:
            return 400, _google_error(400, "INVALID_ARGUMENT", "thinking_budget and thinking_level are not supported "
                                      "together."), {}
        if level is not None and (model not in GEMINI3_LEVELS or str(level).upper() not in GEMINI3_LEVELS[model]):
            return 400, _google_error(400, "INVALID_ARGUMENT", f"Thinking level {level} is not supported for this "
                                      "model."), {}
        low, high = GEMINI_MODELS.get(model, (128, 32768))
        if budget is not None and budget != -1 and not low <= budget <= high:
            msg = (f"Budget {budget} is invalid. This model only works in thinking mode." if budget == 0 else
                   f"The thinking budget {budget} is invalid. Please choose a value between {low} and {high}.")
            return 400, _google_error(400, "INVALID_ARGUMENT", msg), {}
        if not inline or any(not d.get("mime_type", "").startswith("audio/") for d in inline):
            return 400, _google_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument."), {}
        wavs = [base64.b64decode(d["data"], altchars=b"-_" if re.search(r"[-_]", d["data"]) else None, validate=True)
                for d in inline]                                     # proto JSON bytes: standard or URL-safe
        seconds = sum(sf.info(io.BytesIO(w)).duration for w in wavs)
        text_tokens = sum(len(p.get("text", "")) for p, _ in parts) // 4
        audio_tokens = int(round(32 * seconds))                     # Gemini: 32 tokens per second of audio
        think = 300 if budget in (None, -1) else min(budget, 300)
        limit = cfg.get("max_output_tokens") or 65536
        out_parts, finish, answer_tokens = [], "STOP", 1
        if think + answer_tokens > limit:
            think, answer_tokens, finish = min(think, limit), 0, "MAX_TOKENS"
        else:
            if thinking.get("include_thoughts"):
                out_parts.append({"text": "**Listening** the level seems to change.", "thought": True})
            out_parts.append({"text": listen(wavs[-1])})
        usage = {"promptTokenCount": text_tokens + audio_tokens, "candidatesTokenCount": answer_tokens,
                 "totalTokenCount": text_tokens + audio_tokens + answer_tokens + think,
                 "promptTokensDetails": [{"modality": "TEXT", "tokenCount": text_tokens},
                                         {"modality": "AUDIO", "tokenCount": audio_tokens}]}
        if think:
            usage["thoughtsTokenCount"] = think
        block = self.block or ""
        if block.startswith("prompt:"):
            return 200, {"promptFeedback": {"blockReason": block.split(":", 1)[1]}, "usageMetadata": usage,
                         "modelVersion": model, "responseId": f"r{len(self.requests)}"}, {}
        if block:
            finish = block.split("+")[0]
            out_parts = out_parts if block.endswith("+text") else []
        content = {"role": "model"} | ({"parts": out_parts} if out_parts else {})
        return 200, {"candidates": [{"content": content, "finishReason": finish, "index": 0}],
                     "usageMetadata": usage, "modelVersion": model, "responseId": f"r{len(self.requests)}"}, {}


class DripServer:
    """A loopback server that reads each request, then sends its reply one byte every ``interval`` seconds
    (a stalled proxy or an overloaded server): no read ever waits long, the reply never ends in time.
    ``connections`` counts the requests it received."""

    def __init__(self, interval: float = 0.5) -> None:
        import socket

        self.interval, self.connections, self._stop = interval, 0, threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.root = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.url = self.root + "/v1"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn) -> None:
        reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n" + b" " * 4000
        with conn:
            try:
                conn.settimeout(hang_guard(5))
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(1 << 16)
                head, _, rest = data.partition(b"\r\n\r\n")
                m = re.search(rb"(?i)content-length:\s*(\d+)", head)   # none on a GET (/v1/models)
                length = int(m.group(1)) if m else 0
                while len(rest) < length:
                    rest += conn.recv(1 << 16)
                self.connections += 1
                for i in range(len(reply)):
                    if self._stop.wait(self.interval):
                        return
                    conn.sendall(reply[i:i + 1])
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
