"""Base of the adapters that send each query as one chat turn (``vocalgrad-hf``, ``-openai``, ``-worker``)."""

from __future__ import annotations

from typing import Any

from .base import Query, VocalGradLM, as_bool
from .thinking import split_reasoning

__all__ = ["ChatLM"]


class ChatLM(VocalGradLM):
    """Base of the adapters that send each query as one chat turn to a model (hf, openai, worker).

    Parameters
    ----------
    audio_first : bool
        Clips before the text (default false: text, then clips); a task's
        ``vocalgrad_audio_first`` wins over it.
    system_prompt : str, optional
        A system turn before the user turn.
    **kwargs
        :class:`VocalGradLM`'s.
    """

    RETRIES = True
    PROMPT_LAYOUT = ("one user turn: the task's text, then its clip(s) (audio_first: clips first; few-shot: "
                     "interleaved in the prompt's order); system turn only with system_prompt")

    def __init__(self, *, audio_first: Any = False, system_prompt: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.audio_first = as_bool(audio_first, name="audio_first")
        self.system_prompt = system_prompt or None

    def audio_first_of(self, q: Query) -> bool:
        """Whether ``q``'s clips go before its text: the task's setting, else the adapter's."""
        return self.audio_first if q.audio_first is None else q.audio_first

    @staticmethod
    def cut_at_stops(text: str, q: Query) -> str:
        """``text`` up to the first of the task's stop strings (``until``), as every chat adapter
        applies them after decoding; a leading reasoning block (:mod:`.thinking`) is kept whole and
        only the answer after it is cut."""
        stops = [s for s in q.gen_kwargs.get("until") or [] if s]
        if not stops or not isinstance(text, str):
            return text
        reasoning, answer, cut_off = split_reasoning(text)
        if cut_off:
            return text                      # all reasoning: no answer to cut
        head = text[:len(text) - len(answer)] if (reasoning or answer != text) else ""
        for stop in stops:
            answer = answer.split(stop)[0]
        return head + answer
