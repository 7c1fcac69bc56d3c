"""Loopback stand-ins (127.0.0.1 only) of the two open-source servers ``vocalgrad-openai`` talks to as
``openai-compatible``, each behaving as its own code does (read 2026-12-07):

``SGLangServer``: ``GET /v1/models`` cards say ``owned_by: "sglang"``; a user message's content parts are
pydantic models of ``text``, ``image_url``, ``video_url`` and ``audio_url`` only, so an ``input_audio``
part fails validation and the server's handler answers HTTP 400 with ``{"object": "error", "message":
"<str(exc)> <str(exc.errors())>", "type": "Bad Request", "param": null, "code": 400}`` (no field named).
A reasoning parser's split goes to ``message.reasoning_content``.

``VLLMServer``: cards say ``owned_by: "vllm"``; ``input_audio`` and ``audio_url`` parts are both taken;
the split reasoning goes to ``message.reasoning``; the ``gemma4`` parser sets ``skip_special_tokens``
false itself.

Both decode with ``skip_special_tokens`` true unless the request says false, as both do. The served
"model" listens to the last clip (louder second half: increase) and writes, by its name:

- ``...Thinking...``: ``<think>`` + :data:`THOUGHT_WORDS` words weighing both directions + ``</think>``
  + the answer (plain-text delimiters; one word = one token);
- ``...gemma-4...``: with ``chat_template_kwargs.enable_thinking`` true, ``<|channel>thought\\n`` + the
  same words + ``<channel|>`` + the answer (the channel markers are special tokens);
- anything else: the answer.

A budget (``max_tokens``) that ends inside the reasoning ends the reply there (``finish_reason: length``).
"""

from __future__ import annotations

import base64
import json
import time
from typing import List, Literal, Optional, Union

from pydantic import BaseModel, ValidationError
from provider_servers import _Base, listen

__all__ = ["SGLangServer", "THOUGHT_WORDS", "VLLMServer"]

#: Reasoning length of the thinking "models", in tokens (words): longer than the task's 128-token budget.
THOUGHT_WORDS = 200
_THOUGHT = " ".join(["it could increase, or it could decrease;"] * (THOUGHT_WORDS // 7) +
                    ["hmm"] * (THOUGHT_WORDS - 7 * (THOUGHT_WORDS // 7)))
_SPECIAL = ("<|channel>", "<channel|>")


# SGLang's chat request schema (python/sglang/srt/entrypoints/openai/protocol.py), the parts that matter here.
class ChatCompletionMessageContentTextPart(BaseModel):
    type: Literal["text"]
    text: str


class ChatCompletionMessageContentURL(BaseModel):
    url: str


class ChatCompletionMessageContentImagePart(BaseModel):
    type: Literal["image_url"]
    image_url: ChatCompletionMessageContentURL


class ChatCompletionMessageContentVideoPart(BaseModel):
    type: Literal["video_url"]
    video_url: ChatCompletionMessageContentURL


class ChatCompletionMessageContentAudioPart(BaseModel):
    type: Literal["audio_url"]
    audio_url: ChatCompletionMessageContentURL


class ChatCompletionMessageGenericParam(BaseModel):
    role: Literal["system", "assistant", "tool"]
    content: Union[str, List[ChatCompletionMessageContentTextPart], None]


class ChatCompletionMessageUserParam(BaseModel):
    role: Literal["user"]
    content: Union[str, List[Union[ChatCompletionMessageContentTextPart, ChatCompletionMessageContentImagePart,
                                   ChatCompletionMessageContentVideoPart, ChatCompletionMessageContentAudioPart]]]


class ChatCompletionRequest(BaseModel):
    messages: List[Union[ChatCompletionMessageGenericParam, ChatCompletionMessageUserParam]]
    model: str
    max_tokens: Optional[int] = None


def _wav(part: dict) -> bytes | None:
    if part.get("type") == "input_audio":
        return base64.b64decode(part["input_audio"]["data"])
    if part.get("type") == "audio_url":
        return base64.b64decode(part["audio_url"]["url"].split(",", 1)[1])
    return None


class _Served(_Base):
    """A chat-completions server with a model list (see the module docstring)."""

    owned_by = ""
    reasoning_field = ""

    def __init__(self, model: str, *, reasoning_parser: str | None = None, models_list: bool = True) -> None:
        super().__init__()
        self.url = self.root + "/v1"
        self.model, self.reasoning_parser, self.models_list = model, reasoning_parser, models_list
        outer = self

        class Handler(self.httpd.RequestHandlerClass):
            def do_GET(self):
                with outer.lock:
                    outer.requests.append({"path": self.path, "method": "GET"})
                ok = outer.models_list and self.path == "/v1/models"
                card = {"id": outer.model, "object": "model", "created": int(time.time()), "owned_by": outer.owned_by,
                        "root": outer.model, "max_model_len": 32768}
                data = json.dumps({"object": "list", "data": [card]} if ok else {"detail": "Not Found"}).encode()
                self.send_response(200 if ok else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd.RequestHandlerClass = Handler

    @property
    def posts(self) -> list[dict]:
        return [r for r in self.requests if r.get("method") != "GET"]

    def validate(self, body: dict) -> tuple[int, dict] | None:
        return None

    def model_output(self, body: dict, wav: bytes) -> str:
        """What the model writes, special tokens included."""
        answer = listen(wav)
        name = self.model.lower()
        if "thinking" in name:
            return f"<think>\n{_THOUGHT}\n</think>\n\n{answer}"
        if "gemma-4" in name and (body.get("chat_template_kwargs") or {}).get("enable_thinking"):
            return f"<|channel>thought\n{_THOUGHT}<channel|>{answer}"
        return answer

    def handle(self, path, headers, body, action):
        if path != "/v1/chat/completions":
            return 404, {"detail": "Not Found"}, {}
        refused = self.validate(body)
        if refused:
            return refused[0], refused[1], {}
        wavs = [w for m in body["messages"] if isinstance(m.get("content"), list)
                for w in map(_wav, m["content"]) if w is not None]
        text, finish = self.model_output(body, wavs[-1]), "stop"
        words = text.split(" ")
        budget = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        if len(words) > budget:
            text, finish = " ".join(words[:budget]), "length"
        parser = self.reasoning_parser
        skip = body.get("skip_special_tokens", True) and parser != "gemma4"   # vLLM's gemma4 parser keeps them
        reasoning = None
        if parser == "gemma4" and text.startswith("<|channel>"):
            inner = text[len("<|channel>"):]
            reasoning, _, content = inner.partition("<channel|>")
            reasoning = reasoning.removeprefix("thought\n")
            content = content if "<channel|>" in inner else ""
        elif parser in ("qwen3", "deepseek_r1") and text.startswith("<think>"):
            inner = text[len("<think>"):]
            reasoning, _, content = inner.partition("</think>")
            content = content.strip() if "</think>" in inner else ""
            reasoning = reasoning.strip()
        else:
            content = text
        if skip:
            for token in _SPECIAL:
                content = content.replace(token, "")
        message = {"role": "assistant", "content": content or None}
        if self.reasoning_field:
            message[self.reasoning_field] = reasoning
        return 200, {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
                     "model": body["model"], "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": min(len(words), budget),
                               "total_tokens": 10 + min(len(words), budget)}}, {}


class SGLangServer(_Served):
    """SGLang's OpenAI-compatible server (see the module docstring)."""

    owned_by = "sglang"
    reasoning_field = "reasoning_content"

    def validate(self, body):
        try:
            ChatCompletionRequest.model_validate(body)
        except ValidationError as exc:        # sglang http_server.py: validation errors become 400
            exc_str, errors_str = str(exc), str(exc.errors())
            message = f"{exc_str} {errors_str}" if errors_str and errors_str != exc_str else exc_str
            return 400, {"object": "error", "message": message, "type": "Bad Request", "param": None, "code": 400}
        return None


class VLLMServer(_Served):
    """vLLM's OpenAI-compatible server (see the module docstring)."""

    owned_by = "vllm"
    reasoning_field = "reasoning"
