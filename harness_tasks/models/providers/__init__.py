"""Provider adapters of ``vocalgrad-openai``: each sends the request its maker documents, through
the maker's SDK.

==========================  ==============================================================  ==========================
``provider=``               what                                                             default request besides
                                                                                             the prompt
==========================  ==============================================================  ==========================
``openai-compatible``       vLLM, SGLang and other OpenAI-compatible servers (``openai``     ``max_tokens``,
                            SDK, :mod:`.openai_api`)                                         temperature 0; greedy
                                                                                             ``full`` (vLLM's fields)
``openai``                  OpenAI's API (``gpt-audio-1.5``)                                 ``max_completion_tokens``,
                                                                                             temperature 0; greedy
                                                                                             ``standard``
``gemini``                  Gemini's native ``generateContent`` (``google-genai`` SDK,       by the model
                            :mod:`.gemini`): Gemini 3 and later ``thinking_level`` at the    (:func:`.gemini.profile_of`)
                            maker's default temperature, Gemini 2.5 ``thinking_budget``
                            and temperature 0
``gemini-openai``           Google's OpenAI-compatible Gemini endpoint                       ``max_tokens``; 2.5: temp.
                                                                                             0, ``top_p`` 1; Gemini 3:
                                                                                             no temperature
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
