"""What every source reader shares: :class:`SourceItem`, :class:`SourceOptions`, the error, the registry.

A reader is a function ``(argument: str, options: SourceOptions) -> list[SourceItem]`` registered
under the source prefix with :func:`register_source`; :func:`read_sources` resolves a ``--source``
string through the registry. The readers themselves live in the sibling modules, one per kind.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import soundfile as sf
from vocalgrad import VocalGradError

from .. import registry
from ..audio import AudioReadError, read_audio

__all__ = [
    "AUDIO_EXTENSIONS",
    "SelectionPlan",
    "SourceItem",
    "SourceOptions",
    "SourceSpecError",
    "SourceWarning",
    "audio_duration",
    "frozen_extra",
    "load_source_audio",
    "normalise_gender",
    "read_sources",
    "register_source",
    "require_frozen_test",
    "safe_id",
    "with_id",
]

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")


class SourceSpecError(VocalGradError, ValueError):
    """A ``--source`` string is malformed or points at something unusable."""


class SourceWarning(UserWarning):
    """A source is usable but something in it is ignored or unusual (the message says what and where)."""


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
class SelectionPlan:
    """Counts of a selection (benchmark.md §6 defaults).

    Parameters
    ----------
    n_speakers : int
        Test speakers.
    per_speaker : int
        Test utterances per speaker.
    min_duration : float
        Minimum duration of a test utterance, seconds.
    n_train : int
        Train utterances.
    seed : int
        Seed of every ranking.
    allow_small : bool
        Take a smaller (still balanced) selection instead of failing when the corpus is too small.
    """

    n_speakers: int = 50
    per_speaker: int = 2
    min_duration: float = 3.0
    n_train: int = 500
    seed: int = 42
    allow_small: bool = False


@dataclass(frozen=True)
class SourceOptions:
    """Options shared by all readers.

    Parameters
    ----------
    split : {"test", "train", "beep"}
        Which selection to return (``beep`` only for ``tones``).
    seed : int
        Seed of the selection (benchmark.md §6: 42).
    vctk_mic : {1, 2}
        Microphone of VCTK 0.92 (ignored for 0.80).
    text_column, speaker_column : str, optional
        Columns of an ``hf:`` dataset (auto-detected when None).
    allow_small : bool
        Take a smaller balanced selection when the corpus cannot supply the requested counts.
    test_speakers, test_per_speaker, min_duration, train_utterances
        Selection counts (benchmark.md §6: 50 speakers x 2 utterances of >= 3 s; 500 train utterances).
    counts : dict
        Overrides of the four counts above by name (kept for callers that pass a mapping).
    selection : {"frozen", "sample"}, optional
        ``frozen``: the paper's published selection (vctk, loquacious, cv-spontaneous); ``sample``: the
        seeded selector of :mod:`generation.sources.selection` (a new dataset instance). None: the source's
        default (frozen where one exists).
    """

    split: str = "test"
    seed: int = 42
    vctk_mic: int = 1
    text_column: str | None = None
    speaker_column: str | None = None
    allow_small: bool = False
    test_speakers: int = 50
    test_per_speaker: int = 2
    min_duration: float = 3.0
    train_utterances: int = 500
    counts: dict = field(default_factory=dict)
    selection: str | None = None

    def sampler_options(self) -> list[str]:
        """Command-line names of the options given that only the seeded selector uses."""
        default = SourceOptions()
        names = {"seed": "--seed", "allow_small": "--allow-small", "test_speakers": "--test-speakers",
                 "test_per_speaker": "--per-speaker", "min_duration": "--min-duration",
                 "train_utterances": "--train-utterances"}
        given = [flag for name, flag in names.items() if getattr(self, name) != getattr(default, name)]
        return given + ([f"counts={sorted(self.counts)}"] if self.counts else [])

    def plan(self):
        """The :class:`SelectionPlan` of these options."""
        names = ("test_speakers", "test_per_speaker", "min_duration", "train_utterances")
        unknown = sorted(set(self.counts) - set(names))
        if unknown:
            raise SourceSpecError(f"unknown selection count(s) {unknown}; use {', '.join(names)}")
        v = {n: self.counts.get(n, getattr(self, n)) for n in names}
        return SelectionPlan(n_speakers=int(v["test_speakers"]), per_speaker=int(v["test_per_speaker"]),
                             min_duration=float(v["min_duration"]), n_train=int(v["train_utterances"]),
                             seed=self.seed, allow_small=self.allow_small)


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
_READERS: dict[str, Callable[[str, SourceOptions], list[SourceItem]]] = registry.track("source reader", {})


_RECOGNISERS: dict[str, Callable[[Path], bool]] = registry.track("source recogniser", {})


def register_source(prefix: str, *, recognises: Callable[[Path], bool] | None = None):
    """Decorator registering a reader for ``--source PREFIX[:ARGUMENT]``.

    ``recognises(path)``, when given, says whether a bare path given as ``--source`` is of this kind
    (the error message then names it); bare paths no reader recognises are named ``folder``.
    """

    def deco(fn):
        registry.claim(_READERS, prefix, fn, what="source reader")  # a taken prefix is refused (NameTaken)
        if recognises is not None:
            _RECOGNISERS[prefix] = recognises
        return fn

    return deco


def read_sources(spec: str, options: SourceOptions | None = None) -> list[SourceItem]:
    """Resolve a ``--source`` string into source items, in a deterministic order.

    Raises
    ------
    SourceSpecError
        Unknown prefix (the message lists the known ones) or an unusable argument.
    """
    options = options or SourceOptions()
    prefix, _, arg = spec.partition(":")
    if prefix not in _READERS:
        known = ", ".join(f"{p}[:...]" for p in sorted(_READERS))
        if os.path.exists(os.path.expanduser(spec)):
            path = Path(spec).expanduser()
            kind = next((p for p, knows in _RECOGNISERS.items() if knows(path)), "folder")
            raise SourceSpecError(f"source {spec!r} is a bare path; name its kind: --source {kind}:{spec} "
                                  f"(known kinds: {known})")
        raise SourceSpecError(f"unknown source {spec!r}; use one of: {known}")
    items = _READERS[prefix](arg, options)
    counts: dict[str, int] = {}
    for it in items:
        counts[it.source_id] = counts.get(it.source_id, 0) + 1
    dup = sorted(i for i, n in counts.items() if n > 1)
    if dup:
        def files(i: str) -> str:
            paths = [str(it.audio) for it in items if it.source_id == i]
            return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more rows" if len(paths) > 3 else "")

        named = "; ".join(f"{i!r}: {files(i)}" for i in dup[:5])
        more = f" and {len(dup) - 5} more" if len(dup) > 5 else ""
        raise SourceSpecError(f"{spec}: duplicate source ids {dup[:5]}{more} ({named}); give the files distinct names "
                              "(a folder source: distinct file stems or a source_id column in metadata.csv)")
    bad = sorted(i for i in counts if not _ID_RE.fullmatch(i))
    if bad:
        raise SourceSpecError(f"{spec}: source ids may hold only letters, digits, '_', '-', '.': {bad[:5]}")
    return items


_ID_RE = re.compile(r"[A-Za-z0-9_.-]+")

# --------------------------------------------------------------------------------------------
# Shared helpers of the corpus readers
# --------------------------------------------------------------------------------------------
def safe_id(text: str) -> str:
    """``text`` as an id of ASCII letters, digits, ``_``, ``-`` and ``.``.

    ASCII letters, digits, ``_``, ``-``, ``.`` are kept (an ASCII id is unchanged); accented
    letters lose their accents (``é`` -> ``e``, by Unicode NFKD decomposition); other letters and
    digits become ``u`` and their code point in hex (``ж`` -> ``u0436``), so that names in other
    scripts stay distinct; anything else becomes ``_``.
    """
    out = []
    for ch in unicodedata.normalize("NFKD", str(text)):
        if ch.isascii():
            out.append(ch if ch.isalnum() or ch in "_-." else "_")
        elif unicodedata.combining(ch):
            continue
        elif ch.isalnum():
            out.append(f"u{ord(ch):04x}")
        else:
            out.append("_")
    return "".join(out) or "x"


_GENDERS = {"f": "F", "female": "F", "woman": "F", "w": "F", "m": "M", "male": "M", "man": "M"}


def normalise_gender(value: Any) -> str:
    """``"F"``/``"M"`` for the usual spellings of female/male; other values as given (stripped)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    text = str(value).strip()
    return _GENDERS.get(text.lower(), text)


def audio_duration(item: SourceItem) -> float:
    """Duration of a source in seconds (from the file header when it is a path)."""
    if isinstance(item.audio, (str, os.PathLike)):
        try:
            return float(sf.info(str(item.audio)).duration)
        except Exception as exc:  # noqa: BLE001 - soundfile raises several types
            raise AudioReadError(f"{item.audio}: cannot read audio header ({type(exc).__name__}: {exc})") from exc
    if hasattr(item.audio, "duration"):
        return float(item.audio.duration())
    y, sr = load_source_audio(item)
    return len(y) / sr

# --------------------------------------------------------------------------------------------
# Frozen selections of the alternate domains (loquacious, cv-spontaneous)
# --------------------------------------------------------------------------------------------
def frozen_extra(row, domain: str) -> dict:
    """``extra`` of an item of an alternate domain's frozen selection (its recorded id and speech bounds)."""
    return {"corpus_id": row.corpus_id, "reference_clip_id": row.corpus_id, "selection": "frozen",
            "domain": domain, "recorded_onset_sec": row.onset_sec, "recorded_offset_sec": row.offset_sec}


def require_frozen_test(options: SourceOptions, where: str) -> None:
    """Refuse options an alternate domain (frozen test selection only) cannot honour."""
    if options.selection not in (None, "frozen"):
        raise SourceSpecError(f"{where}: only the frozen selection exists for this domain "
                              "(for a new selection read the corpus with hf: or folder:)")
    if options.split != "test":
        raise SourceSpecError(f"{where}: the alternate domains have a test selection only, not {options.split!r}")
    given = options.sampler_options()
    if given:
        raise SourceSpecError(f"{where}: {', '.join(given)} do not apply to a frozen selection; drop them")


def with_id(item: SourceItem, source_id: str) -> SourceItem:
    """Copy of ``item`` under another id."""
    return replace(item, source_id=source_id)
