"""One request as the adapters see it: :class:`Query`, its text/audio :func:`layout`, and the
:class:`Answer` text returned to lm-eval."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..clip_audio import AUDIO_MARKER

__all__ = ["Answer", "Query", "layout"]


class Answer(str):
    """Model output; ``retried`` says whether it comes from the 256-token retry."""

    retried: bool = False

    def __new__(cls, text: str, *, retried: bool = False) -> "Answer":
        obj = super().__new__(cls, text)
        obj.retried = retried
        return obj


@dataclass
class Query:
    """One request: prompt text, audio clips (lazy mappings), generation settings."""

    prompt: str
    audios: list[Mapping[str, Any]] = field(default_factory=list)
    max_new_tokens: int = 128
    gen_kwargs: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    #: Audio before the text: True/False as the task demands, None = the adapter's setting.
    audio_first: bool | None = None
    #: Label -> answer words of the task's prompt; None = the benchmark.md §7 words.
    answer_words: dict[str, tuple[str, ...]] | None = None

    @property
    def clip_id(self) -> str:
        """Id of the clip being judged (the last clip: few-shot examples come first)."""
        return getattr(self.audios[-1], "clip_id", "?") if self.audios else "?"

    def parts(self, default_audio_first: bool = False) -> list[tuple[str, Any]]:
        """``("text", str)`` / ``("audio", clip)`` parts in the order the model must see them."""
        first = default_audio_first if self.audio_first is None else self.audio_first
        return layout(self.prompt, self.audios, audio_first=first)


def layout(prompt: str, audios: Sequence[Any], *, audio_first: bool = False) -> list[tuple[str, Any]]:
    """Order text and audio of one request.

    Parameters
    ----------
    prompt : str
        Request text. If it contains :data:`AUDIO_MARKER`, it must contain it once per clip; the
        clips then go where the markers are (few-shot prompts) and ``audio_first`` is ignored.
    audios : sequence
        Clips of the request.
    audio_first : bool
        Without markers: all clips before the text (True) or after it (False).

    Returns
    -------
    list of (kind, value)
        ``kind`` is ``"text"`` (value: non-empty str) or ``"audio"`` (value: the clip).
    """
    if AUDIO_MARKER in prompt:
        pieces = prompt.split(AUDIO_MARKER)
        if len(pieces) - 1 != len(audios):
            raise ValueError(f"prompt has {len(pieces) - 1} audio markers but the request has {len(audios)} clip(s)")
        out: list[tuple[str, Any]] = []
        for i, text in enumerate(pieces):
            text = text.strip("\n")  # each text is its own content part; the marker's line breaks go
            if text.strip():
                out.append(("text", text))
            if i < len(audios):
                out.append(("audio", audios[i]))
        return out
    text = [("text", prompt)]
    clips = [("audio", a) for a in audios]
    return clips + text if audio_first else text + clips
