"""``dry_run=true``: what a paid API run would send, before it sends anything.

Prints the request fields the provider's profile sends besides the prompt and the clips (Gemini 3:
``thinking_level``, no temperature; Gemini 2.5: ``thinking_budget``, temperature 0; ...) and how
the answers are decoded, then counts the requests (clips not yet in the answer log), the seconds of
audio they carry (read from the encoded clips' headers, nothing decoded), the prompt text (about 4
characters per token) and the ceiling of output tokens (each request's budget plus the reasoning
budget; Gemini 2.5: plus its thinking budget). Gemini bills 32
tokens per second of audio (Google's documented rate); the other providers' audio token rates are not
stated here. The unparsed-answer retry (256 tokens) and empty-reply re-asks come on top.
"""

from __future__ import annotations

import io
import json
from typing import Any

from .gemini import sampling

__all__ = ["estimate", "summary_line"]

#: Gemini's documented audio token rate.
GEMINI_AUDIO_TOKENS_PER_SECOND = 32


def _seconds(clip: Any) -> float:
    import soundfile as sf

    value = clip.value() if hasattr(clip, "value") else None
    data = value.get("bytes") if isinstance(value, dict) else None
    if data:
        info = sf.info(io.BytesIO(data))
        return info.frames / info.samplerate
    return len(clip["array"]) / clip["sampling_rate"]


def estimate(lm: Any, queries: list[Any]) -> dict[str, Any]:
    """The figures of a dry run of ``lm`` (a ``vocalgrad-openai`` adapter) on ``queries``."""
    logbook = lm.answer_log
    identity = lm.identity() if logbook is not None else None
    todo = [q for q in queries if logbook is None or logbook.get(lm.query_key(q, identity)) is None]
    seconds = sum(_seconds(a) for q in todo for a in q.audios)
    thinking = (getattr(lm.provider, "thinking_budget", None) or 0) + lm.reasoning_budget
    out = {"provider": lm.provider_name, "model": lm.model, "request": lm.provider.settings(),
           "sampling": sampling(lm), "requests": len(todo),
           "in_answer_log": len(queries) - len(todo), "audio_seconds": round(seconds, 1),
           "prompt_text_tokens_approx": sum(len(q.prompt) for q in todo) // 4,
           "output_tokens_at_most": sum(int(q.max_new_tokens) + thinking for q in todo)}
    if lm.provider_name == "gemini":
        out["audio_tokens"] = int(round(seconds * GEMINI_AUDIO_TOKENS_PER_SECOND))
    return out


def summary_line(figures: dict[str, Any]) -> str:
    """One line for the terminal."""
    audio = f", {figures['audio_tokens']:,} audio tokens" if "audio_tokens" in figures else ""
    return (f"dry run ({figures['provider']}, {figures['model']}): each request sends "
            f"{json.dumps(figures['request'], sort_keys=True, default=str)}; decoding: {figures['sampling'].split(':')[0]}; "
            f"{figures['requests']:,} requests "
            f"({figures['in_answer_log']:,} more already in the answer log), {figures['audio_seconds']:,} s of "
            f"audio{audio}, ~{figures['prompt_text_tokens_approx']:,} prompt text tokens, at most "
            f"{figures['output_tokens_at_most']:,} output tokens (before the 256-token retry of unparsed "
            "answers); nothing was sent")
