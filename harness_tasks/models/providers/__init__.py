"""Provider adapters of ``vocalgrad-openai``: each sends the request its maker documents, through
the maker's SDK.

==========================  ==============================================================  ==========================
``provider=``               what                                                             default request besides
                                                                                             temperature 0
==========================  ==============================================================  ==========================
``openai-compatible``       vLLM, SGLang and other OpenAI-compatible servers (``openai``     ``max_tokens``; greedy
                            SDK, :mod:`.openai_api`)                                         ``full`` (vLLM's fields)
``openai``                  OpenAI's API (``gpt-audio``, ``gpt-4o-audio-preview``)          ``max_completion_tokens``;
                                                                                             greedy ``standard``
``gemini``                  Gemini's native ``generateContent`` (``google-genai`` SDK,       ``max_output_tokens``,
                            :mod:`.gemini`)                                                  ``thinking_budget``
``gemini-openai``           Google's OpenAI-compatible Gemini endpoint                       ``max_tokens``; greedy
                                                                                             ``basic`` (``top_p``)
==========================  ==============================================================  ==========================

``provider=auto`` (default) picks one from ``base_url`` (:func:`detect`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .base import FieldRefused, Malformed, Provider, Reply, RequestFailed, Stop

__all__ = ["PROFILES", "FieldRefused", "Malformed", "Provider", "Reply", "RequestFailed", "Stop", "detect"]

#: provider -> (default ``greedy``, default budget field, default ``api_key_env``)
PROFILES: dict[str, tuple[str, str, str]] = {
    "openai-compatible": ("full", "max_tokens", "OPENAI_API_KEY"),
    "openai": ("standard", "max_completion_tokens", "OPENAI_API_KEY"),
    "gemini": ("basic", "max_output_tokens", "GEMINI_API_KEY"),
    "gemini-openai": ("basic", "max_tokens", "GEMINI_API_KEY"),
}


def detect(base_url: str) -> str:
    """The provider of ``base_url``: ``api.openai.com`` -> ``openai``;
    ``generativelanguage.googleapis.com`` -> ``gemini`` (``gemini-openai`` for its ``.../openai``
    endpoint); anything else (a vLLM or SGLang server) -> ``openai-compatible``."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host == "api.openai.com":
        return "openai"
    if host == "generativelanguage.googleapis.com":
        return "gemini-openai" if parts.path.rstrip("/").endswith("/openai") else "gemini"
    return "openai-compatible"
