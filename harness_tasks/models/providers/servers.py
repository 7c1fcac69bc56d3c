"""OpenAI-compatible servers told apart by what they are: which server answers (``/v1/models``'
``owned_by``), which audio content part its chat schema takes, and its reasoning field.

Checked against the servers' own code (read 2026-12-07; not run here against a live server):

============  =====================  ========================================  ===========================
server        ``owned_by``            audio content parts of a user message     reasoning (with a parser)
============  =====================  ========================================  ===========================
vLLM          ``vllm``                ``input_audio`` and ``audio_url``         ``message.reasoning``
                                                                                (``reasoning_content``
                                                                                before)
SGLang        ``sglang``              ``audio_url`` only (no ``input_audio``;   ``message.reasoning_content``
                                      a wrong part is a pydantic validation
                                      error, HTTP 400, naming no field)
============  =====================  ========================================  ===========================

Sources: vllm ``vllm/entrypoints/openai/chat_completion/protocol.py``, ``engine/protocol.py``
(``ModelCard.owned_by = "vllm"``) and ``entrypoints/chat_utils`` (``_InputAudioParser``,
``_AudioParser``: both parts); sglang
``python/sglang/srt/entrypoints/openai/protocol.py`` (``ModelCard.owned_by = "sglang"``,
``ChatCompletionMessageContentPart``) and ``http_server.py`` (its validation handler answers 400 with
the pydantic error text).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

log = logging.getLogger("vocalgrad")

__all__ = ["AUDIO_FORMATS", "SERVER_AUDIO", "audio_parts", "server_kind", "template_fields", "with_audio_format"]

#: Values of ``audio_format``: ``auto`` (the server's own part: ``audio_url`` for SGLang, else
#: ``input_audio``, switched once if the server refuses it), ``input_audio``, ``audio_url``.
AUDIO_FORMATS = ("auto", "input_audio", "audio_url")
#: The audio part each known server takes (``owned_by`` -> part); unknown servers get ``input_audio``.
SERVER_AUDIO = {"sglang": "audio_url", "vllm": "input_audio"}


def server_kind(client: Any, model: str, timeout: float) -> str | None:
    """The ``owned_by`` of ``model`` (else of the first model) in the server's ``/v1/models`` list,
    lower case; None when the list cannot be read (one attempt, at most ``timeout`` seconds)."""
    try:
        page = client.with_options(max_retries=0, timeout=timeout).models.list()
        cards = list(getattr(page, "data", None) or [])
    except Exception as exc:            # no /models, a proxy, a timeout: the kind stays unknown
        log.info("vocalgrad-openai: the server's model list could not be read (%s: %s)", type(exc).__name__, exc)
        return None
    owners = [getattr(c, "owned_by", None) for c in cards if getattr(c, "id", None) == model] or \
        [getattr(c, "owned_by", None) for c in cards]
    return str(owners[0]).strip().lower() if owners and owners[0] else None


def audio_parts(body: dict) -> set[str]:
    """The audio part types (``input_audio`` / ``audio_url``) in a request body's messages."""
    return {p.get("type") for m in body.get("messages") or [] if isinstance(m.get("content"), list)
            for p in m["content"] if isinstance(p, dict) and p.get("type") in ("input_audio", "audio_url")}


def with_audio_format(body: dict, audio_format: str) -> dict:
    """``body`` with every audio part written as ``audio_format`` (a copy; unchanged if already so).
    ``input_audio`` ``{data, format}`` <-> ``audio_url`` ``{url: data:audio/<format>;base64,<data>}``."""
    other = "audio_url" if audio_format == "input_audio" else "input_audio"
    if other not in audio_parts(body):
        return body
    out = copy.deepcopy(body)
    for m in out.get("messages") or []:
        if not isinstance(m.get("content"), list):
            continue
        for i, p in enumerate(m["content"]):
            if not isinstance(p, dict) or p.get("type") != other:
                continue
            if audio_format == "audio_url":
                a = p["input_audio"]
                m["content"][i] = {"type": "audio_url",
                                   "audio_url": {"url": f"data:audio/{a.get('format', 'wav')};base64,{a['data']}"}}
            else:
                head, _, data = p["audio_url"]["url"].partition(",")
                fmt = head.split("/", 1)[-1].split(";", 1)[0] if head.startswith("data:audio/") else "wav"
                m["content"][i] = {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}
    return out


def template_fields(family: Any, thinking: str, extra: dict[str, Any]) -> dict[str, Any]:
    """Body fields that carry ``thinking`` to a vLLM / SGLang server's chat template
    (``chat_template_kwargs`` with the family's switch, :meth:`Family.template_kwargs`; the user's own
    ``extra_body`` ones win and are taken out of ``extra``) and keep reasoning markers that are special
    tokens (``skip_special_tokens: false``: both servers drop special tokens by default, and Gemma 4's
    channel markers are special tokens)."""
    out: dict[str, Any] = {}
    kwargs = {**family.template_kwargs(thinking), **(extra.pop("chat_template_kwargs", None) or {})}
    if kwargs:
        out["chat_template_kwargs"] = kwargs
    if family.reasoning_special and "skip_special_tokens" not in extra:
        out["skip_special_tokens"] = False
    return out
