"""Source readers: turn a ``--source`` SPEC into a list of :class:`SourceItem`.

A reader is a function ``(argument: str, options: SourceOptions) -> list[SourceItem]`` registered
under the SPEC prefix with :func:`register_source`. The items' ``audio`` field is either a file
path or any picklable object with a ``read() -> (y, sr)`` method (see :class:`ToneSpec`), so that
items can be sent to render worker processes.

Forms available here:

``tones``
    Ten synthetic tone sources of 4 s (pure and harmonic), for tests and the beep ablation.
``folder:PATH``
    Every audio file under ``PATH`` (wav, flac, ogg, mp3), sorted by relative path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .audio import AudioReadError, read_audio

__all__ = [
    "AUDIO_EXTENSIONS",
    "SourceItem",
    "SourceOptions",
    "SourceSpecError",
    "ToneSpec",
    "load_source_audio",
    "read_sources",
    "register_source",
]

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")


class SourceSpecError(ValueError):
    """A ``--source`` SPEC is malformed or points at something unusable."""


@dataclass(frozen=True)
class SourceItem:
    """One source utterance.

    Attributes
    ----------
    source_id : str
        Unique id, used in clip ids; letters, digits, ``_``, ``-`` and ``.`` only.
    audio : str or object
        Path of an audio file, or a picklable object with ``read() -> (y, sr)``.
    speaker_id, sentence_id, text, gender, accent : str
        Metadata copied into the manifest (empty when unknown).
    extra : dict
        Reader-specific metadata (e.g. the VCTK layout), kept out of the manifest.
    """

    source_id: str
    audio: Any
    speaker_id: str = ""
    sentence_id: str = ""
    text: str = ""
    gender: str = ""
    accent: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class SourceOptions:
    """Options shared by all readers (extended by the sources issue: VCTK mic, columns, ...)."""

    split: str = "test"
    seed: int = 42
    vctk_mic: int = 1
    text_column: str | None = None
    speaker_column: str | None = None
    allow_small: bool = False
    counts: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ToneSpec:
    """A synthetic tone source: silence, a tone with 10 ms raised-cosine ramps, silence.

    Parameters
    ----------
    f0 : float
        Fundamental frequency in Hz.
    harmonics : int
        Number of harmonics (1 = pure sine); harmonic k has amplitude 1/k.
    duration : float
        Total duration in seconds.
    lead, tail : float
        Silence before and after the tone, seconds.
    peak : float
        Peak amplitude of the tone.
    sr : int
        Sample rate in Hz.
    """

    f0: float
    harmonics: int = 1
    duration: float = 4.0
    lead: float = 0.3
    tail: float = 0.3
    peak: float = 0.3
    sr: int = 48000

    def read(self) -> tuple[np.ndarray, int]:
        n = int(round(self.duration * self.sr))
        a, b = int(round(self.lead * self.sr)), n - int(round(self.tail * self.sr))
        t = np.arange(b - a) / self.sr
        tone = sum(np.sin(2 * np.pi * k * self.f0 * t) / k for k in range(1, self.harmonics + 1))
        tone *= self.peak / np.max(np.abs(tone))
        ramp = int(0.01 * self.sr)
        env = np.ones(b - a)
        env[:ramp] = 0.5 - 0.5 * np.cos(np.pi * np.arange(ramp) / ramp)
        env[-ramp:] = env[:ramp][::-1]
        y = np.zeros(n)
        y[a:b] = tone * env
        return y.astype(np.float32), self.sr


def load_source_audio(item: SourceItem) -> tuple[np.ndarray, int]:
    """Read a source's audio as mono float32 and its sample rate (no resampling)."""
    if isinstance(item.audio, (str, os.PathLike)):
        return read_audio(item.audio)
    if hasattr(item.audio, "read"):
        y, sr = item.audio.read()
        return np.asarray(y, dtype=np.float32), int(sr)
    raise AudioReadError(f"{item.source_id}: unsupported audio reference {item.audio!r}")


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
_READERS: dict[str, Callable[[str, SourceOptions], list[SourceItem]]] = {}


def register_source(prefix: str):
    """Decorator registering a reader for ``--source PREFIX[:ARGUMENT]``."""

    def deco(fn):
        _READERS[prefix] = fn
        return fn

    return deco


def read_sources(spec: str, options: SourceOptions | None = None) -> list[SourceItem]:
    """Resolve a ``--source`` SPEC into source items, in a deterministic order.

    Raises
    ------
    SourceSpecError
        Unknown prefix (the message lists the known ones) or an unusable argument.
    """
    options = options or SourceOptions()
    prefix, _, arg = spec.partition(":")
    if prefix not in _READERS:
        raise SourceSpecError(
            f"unknown source {spec!r}; use one of: " + ", ".join(f"{p}[:...]" for p in sorted(_READERS))
        )
    items = _READERS[prefix](arg, options)
    ids = [it.source_id for it in items]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise SourceSpecError(f"{spec}: duplicate source ids {dup}")
    return items


#: Beep-ablation tone frequencies (Hz): ten pure tones spaced a whole tone apart from 220 Hz.
TONE_FREQS = tuple(round(220.0 * 2 ** (k / 6), 1) for k in range(10))


@register_source("tones")
def _tones(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Ten 4-s tones: pure sines for the beep split, alternating pure/harmonic otherwise."""
    if arg:
        raise SourceSpecError(f"'tones' takes no argument, got {arg!r}")
    items = []
    for k, f0 in enumerate(TONE_FREQS):
        harmonic = options.split != "beep" and k % 2 == 1
        spec = ToneSpec(f0=f0 if not harmonic else f0 / 2, harmonics=8 if harmonic else 1)
        kind = "harm" if harmonic else "pure"
        sid = f"tone{k:02d}_{kind}_{int(round(spec.f0))}hz"
        items.append(SourceItem(sid, spec, speaker_id=f"tone_{kind}", sentence_id=f"{k:02d}"))
    return items


@register_source("folder")
def _folder(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Every audio file under a folder; ids are relative paths with separators as ``-``."""
    root = Path(arg).expanduser()
    if not arg or not root.is_dir():
        raise SourceSpecError(f"folder source: {root} is not a folder (use --source folder:PATH)")
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in AUDIO_EXTENSIONS and p.is_file())
    if not files:
        raise SourceSpecError(f"folder source: no audio files ({', '.join(AUDIO_EXTENSIONS)}) under {root}")
    items = []
    for p in files:
        rel = p.relative_to(root).with_suffix("")
        sid = "-".join(rel.parts)
        sid = "".join(ch if ch.isalnum() or ch in "_-." else "_" for ch in sid)
        items.append(SourceItem(sid, str(p), speaker_id=rel.parts[0] if len(rel.parts) > 1 else "",
                                sentence_id=rel.name))
    return items


def with_id(item: SourceItem, source_id: str) -> SourceItem:
    """Copy of ``item`` under another id."""
    return replace(item, source_id=source_id)
