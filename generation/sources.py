"""Source readers: turn a ``--source`` string into a list of :class:`SourceItem`.

A reader is a function ``(argument: str, options: SourceOptions) -> list[SourceItem]`` registered
under the source prefix with :func:`register_source`. The items' ``audio`` field is either a file
path or any picklable object with a ``read() -> (y, sr)`` method (see :class:`ToneSpec`), so that
items can be sent to render worker processes.

Readers return the *selected* sources of ``options.split`` (benchmark.md §6, see :mod:`generation.selection`)
in a deterministic order; the render takes the first N of them with ``--sources N``.

Forms:

``tones``
    Ten synthetic tone sources of 4 s (pure and harmonic), for tests and the beep ablation.
``vctk:PATH``
    The VCTK corpus, layout 0.80 (``wav48/pNNN/pNNN_MMM.wav``) or 0.92
    (``wav48_silence_trimmed/pNNN/pNNN_MMM_mic1.flac``), with ``speaker-info.txt`` and ``txt/``.
    By default the paper's frozen selection (:mod:`generation.frozen`); ``selection="sample"`` draws
    a new one with the seeded selector.
``folder:PATH``
    Audio files under ``PATH`` (wav, flac, ogg, mp3), described by an optional ``metadata.csv``;
    used as they are (no selection).
``hf:DATASET[:CONFIG][:SPLIT]``
    A ``datasets`` audio dataset: a folder written by ``save_to_disk``, a local folder or file that
    ``load_dataset`` reads (audiofolder, parquet), or a Hub id (needs network access).
``demo``
    The embedded synthetic demo set (``generation/demo_data``): 100 test and 50 train utterances.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import soundfile as sf

from .audio import AudioReadError, read_audio

__all__ = [
    "AUDIO_EXTENSIONS",
    "DEMO_DIR",
    "HFAudio",
    "SourceItem",
    "SourceOptions",
    "SourceSpecError",
    "ToneSpec",
    "audio_duration",
    "demo_items",
    "folder_candidates",
    "hf_candidates",
    "load_source_audio",
    "normalise_gender",
    "parse_hf_spec",
    "read_sources",
    "read_speaker_info",
    "register_source",
    "safe_id",
    "vctk_candidates",
    "vctk_root",
]

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3")


class SourceSpecError(ValueError):
    """A ``--source`` string is malformed or points at something unusable."""


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
        seeded selector of :mod:`generation.selection` (a new dataset instance). None: the source's
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
        """The :class:`generation.selection.SelectionPlan` of these options."""
        from .selection import SelectionPlan

        names = ("test_speakers", "test_per_speaker", "min_duration", "train_utterances")
        unknown = sorted(set(self.counts) - set(names))
        if unknown:
            raise SourceSpecError(f"unknown selection count(s) {unknown}; use {', '.join(names)}")
        v = {n: self.counts.get(n, getattr(self, n)) for n in names}
        return SelectionPlan(n_speakers=int(v["test_speakers"]), per_speaker=int(v["test_per_speaker"]),
                             min_duration=float(v["min_duration"]), n_train=int(v["train_utterances"]),
                             seed=self.seed, allow_small=self.allow_small)


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
            kind = "vctk" if _looks_like_vctk(Path(spec).expanduser()) else "folder"
            raise SourceSpecError(f"source {spec!r} is a bare path; name its kind: --source {kind}:{spec} "
                                  f"(known kinds: {known})")
        raise SourceSpecError(f"unknown source {spec!r}; use one of: {known}")
    items = _READERS[prefix](arg, options)
    counts: dict[str, int] = {}
    for it in items:
        counts[it.source_id] = counts.get(it.source_id, 0) + 1
    dup = sorted(i for i, n in counts.items() if n > 1)
    if dup:
        raise SourceSpecError(f"{spec}: duplicate source ids {dup[:5]}")
    bad = sorted(i for i in counts if not _ID_RE.fullmatch(i))
    if bad:
        raise SourceSpecError(f"{spec}: source ids may hold only letters, digits, '_', '-', '.': {bad[:5]}")
    return items


_ID_RE = re.compile(r"[A-Za-z0-9_.-]+")


def _looks_like_vctk(path: Path) -> bool:
    try:
        vctk_root(path)
        return True
    except (SourceSpecError, OSError):
        return False


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
        items.append(SourceItem(sid, spec, speaker_id=f"tone_{kind}", sentence_id=f"{k:02d}",
                                extra={"selection": "tones"}))
    return items


# --------------------------------------------------------------------------------------------
# Shared helpers of the corpus readers
# --------------------------------------------------------------------------------------------
def safe_id(text: str) -> str:
    """``text`` with every character other than letters, digits, ``_``, ``-``, ``.`` replaced by ``_``."""
    return "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "_-." else "_" for ch in str(text)) or "x"


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


def _selected(items: list[SourceItem], options: SourceOptions, where: str) -> list[SourceItem]:
    from .selection import select

    if options.split not in ("test", "train"):
        raise SourceSpecError(f"{where}: split {options.split!r} is not drawn from a corpus; "
                              "the beep split uses --source tones")
    return select(items, split=options.split, plan=options.plan(), duration_of=_cached(audio_duration),
                  where=where)


def _cached(fn):
    cache: dict[str, float] = {}

    def wrapped(item):
        if item.source_id not in cache:
            cache[item.source_id] = fn(item)
        return cache[item.source_id]

    return wrapped


# --------------------------------------------------------------------------------------------
# folder:PATH
# --------------------------------------------------------------------------------------------
#: Columns understood in a folder's ``metadata.csv`` (only ``file_name`` is required).
FOLDER_COLUMNS = ("file_name", "speaker_id", "gender", "accent", "text", "sentence_id", "source_id")


def folder_candidates(root: Path) -> list[SourceItem]:
    """Every utterance of a folder source.

    Without ``metadata.csv`` every audio file is an utterance; its id is the relative path with
    separators as ``-`` and its speaker is the first sub-folder (none for files at the top).
    With ``metadata.csv`` (columns :data:`FOLDER_COLUMNS`, ``file_name`` relative to the folder)
    exactly the listed files are used.
    """
    meta = root / "metadata.csv"
    if not meta.is_file():
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in AUDIO_EXTENSIONS and p.is_file())
        if not files:
            raise SourceSpecError(f"folder source: no audio files ({', '.join(AUDIO_EXTENSIONS)}) under {root}")
        items = []
        for p in files:
            rel = p.relative_to(root).with_suffix("")
            sid = safe_id("-".join(rel.parts))
            items.append(SourceItem(sid, str(p), speaker_id=safe_id(rel.parts[0]) if len(rel.parts) > 1 else "",
                                    sentence_id=sid))
        return items

    with open(meta, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        if "file_name" not in header:
            raise SourceSpecError(f"{meta}: needs a 'file_name' column (found: {', '.join(header) or 'no header'})")
        rows = [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in reader]
    if not rows:
        raise SourceSpecError(f"{meta}: no rows")
    items = []
    for line, row in enumerate(rows, start=2):
        rel = row["file_name"]
        path = root / rel
        if not rel or not path.is_file():
            raise SourceSpecError(f"{meta}, line {line}: audio file {rel!r} not found under {root}")
        sid = row.get("source_id") or "-".join(Path(rel).with_suffix("").parts)
        speaker = safe_id(row["speaker_id"]) if row.get("speaker_id") else ""
        items.append(SourceItem(safe_id(sid), str(path), speaker_id=speaker,
                                sentence_id=row.get("sentence_id", ""), text=row.get("text", ""),
                                gender=normalise_gender(row.get("gender")), accent=row.get("accent", ""),
                                extra={"file_name": rel}))
    return items


@register_source("folder")
def _folder(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Audio files under a folder, used as they are: the folder is the selection.

    Every file (or every file listed in ``metadata.csv``, in its order) is a source, for whichever
    split is rendered; no benchmark.md §6 selection is drawn, and files that cannot be decoded are left to the
    render, which skips them with the reason. To draw a balanced selection from a folder corpus, read it
    as ``hf:PATH`` (datasets' audiofolder reads the same ``metadata.csv``).
    """
    root = Path(arg).expanduser()
    if not arg or not root.is_dir():
        raise SourceSpecError(f"folder source: {root} is not a folder (use --source folder:PATH)")
    return folder_candidates(root)


# --------------------------------------------------------------------------------------------
# vctk:PATH
# --------------------------------------------------------------------------------------------
#: Audio folder of each VCTK layout.
VCTK_LAYOUTS = {"0.92": "wav48_silence_trimmed", "0.80": "wav48"}


def vctk_root(path: Path) -> tuple[Path, str]:
    """Find the VCTK root at ``path`` (or in its only sub-folder) and its layout, "0.80" or "0.92"."""
    tried = [path]
    subdirs = sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []
    if len(subdirs) == 1:
        tried.append(subdirs[0])
    for root in tried:
        for layout, audio_dir in VCTK_LAYOUTS.items():
            if (root / audio_dir).is_dir():
                return root, layout
    found = ", ".join(p.name for p in sorted(path.iterdir())[:12]) if path.is_dir() else "not a folder"
    raise SourceSpecError(
        f"vctk source: {path} is not a VCTK corpus: expected wav48/ (VCTK 0.80) or wav48_silence_trimmed/ "
        f"(VCTK 0.92) with speaker-info.txt and txt/; found: {found or 'an empty folder'}"
    )


def read_speaker_info(path: Path) -> dict[str, dict[str, str]]:
    """Parse VCTK's ``speaker-info.txt`` (both layouts) into speaker -> {age, gender, accent, region}.

    Speaker ids are normalised to ``pNNN`` (0.80 lists bare numbers).
    """
    if not path.is_file():
        raise SourceSpecError(f"vctk source: {path} is missing (it gives each speaker's gender and accent)")
    info = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[0].upper() == "ID":
            continue
        spk = parts[0] if not parts[0].isdigit() else f"p{parts[0]}"
        info[spk] = {
            "age": parts[1],
            "gender": normalise_gender(parts[2]),
            "accent": parts[3] if len(parts) > 3 and not parts[3].startswith("(") else "",
            "region": " ".join(p for p in parts[4:] if p) if len(parts) > 4 else "",
        }
    if not info:
        raise SourceSpecError(f"vctk source: {path} lists no speakers (expected lines 'ID AGE GENDER ACCENTS ...')")
    return info


_VCTK_FILE = {
    "0.80": re.compile(r"^(?P<utt>(?P<spk>[a-z]+\d+)_\d+)\.wav$"),
    "0.92": re.compile(r"^(?P<utt>(?P<spk>[a-z]+\d+)_\d+)_mic(?P<mic>[12])\.flac$"),
}


def vctk_candidates(path: Path, *, mic: int = 1) -> list[SourceItem]:
    """Every VCTK utterance (with the chosen microphone for 0.92), before selection.

    Items have ``source_id`` = ``sentence_id`` = the utterance id (``p226_106``) and ``extra`` with
    the layout, microphone, speaker age and region. A missing transcript gives an empty ``text``.
    """
    if mic not in (1, 2):
        raise SourceSpecError(f"vctk source: --vctk-mic must be 1 or 2, got {mic!r}")
    root, layout = vctk_root(path)
    info = read_speaker_info(root / "speaker-info.txt")
    txt_dir = root / "txt"
    if not txt_dir.is_dir():
        raise SourceSpecError(f"vctk source: {txt_dir} is missing (it holds the transcripts)")
    pattern = _VCTK_FILE[layout]
    audio_dir = root / VCTK_LAYOUTS[layout]
    items = []
    for spk_dir in sorted(p for p in audio_dir.iterdir() if p.is_dir()):
        for f in sorted(spk_dir.iterdir()):
            m = pattern.match(f.name)
            if not m or (layout == "0.92" and int(m["mic"]) != mic):
                continue
            utt, spk = m["utt"], m["spk"]
            meta = info.get(spk, {})
            txt = txt_dir / spk / f"{utt}.txt"
            text = txt.read_text(encoding="utf-8", errors="replace").strip() if txt.is_file() else ""
            extra = {"vctk_layout": layout, "vctk_mic": mic if layout == "0.92" else "",
                     "age": meta.get("age", ""), "region": meta.get("region", "")}
            items.append(SourceItem(utt, str(f), speaker_id=spk, sentence_id=utt, text=text,
                                    gender=meta.get("gender", ""), accent=meta.get("accent", ""), extra=extra))
    if not items:
        suffix = "pNNN/pNNN_MMM.wav" if layout == "0.80" else f"pNNN/pNNN_MMM_mic{mic}.flac"
        raise SourceSpecError(f"vctk source: no audio files named {suffix} under {audio_dir}")
    return items


@register_source("vctk")
def _vctk(arg: str, options: SourceOptions) -> list[SourceItem]:
    """VCTK 0.80 or 0.92: the paper's frozen selection, or the seeded selector with ``selection="sample"``."""
    if not arg:
        raise SourceSpecError("vctk source: give the corpus folder, e.g. --source vctk:/data/VCTK-Corpus")
    path = Path(arg).expanduser()
    where = f"vctk:{path}"
    mode = options.selection or "frozen"
    candidates = vctk_candidates(path, mic=options.vctk_mic)
    if mode == "sample":
        items = [replace(it, extra={**it.extra, "selection": "sample", "selection_seed": options.seed})
                 for it in _selected(candidates, options, where)]
    elif mode == "frozen":
        _refuse_sampler_options(options, where)
        items = _vctk_frozen(candidates, options, path, where)
    else:
        raise SourceSpecError(f"{where}: unknown selection {mode!r}; use frozen (the paper's) or sample")
    # benchmark.md §4a: the reference seeds the noise of a test clip with the VCTK utterance id (p226_106)
    return [replace(it, extra={**it.extra, "reference_clip_id": it.extra.get("corpus_id", it.source_id)})
            for it in items]


def _refuse_sampler_options(options: SourceOptions, where: str) -> None:
    given = options.sampler_options()
    if given:
        raise SourceSpecError(
            f"{where}: {', '.join(given)} shape the seeded selector, but the frozen selection (the paper's "
            f"test 100 / train 500) is fixed; add --selection sample for a new dataset instance, or drop them")


def _vctk_frozen(candidates: list[SourceItem], options: SourceOptions, path: Path, where: str) -> list[SourceItem]:
    """The frozen test/train utterances of the corpus, renamed to their item ids."""
    from .frozen import frozen_rows
    from .selection import SelectionError

    if options.split not in ("test", "train"):
        raise SourceSpecError(f"{where}: split {options.split!r} has no VCTK selection "
                              "(the beep split uses --source tones)")
    rows = frozen_rows("vctk", options.split)
    by_id = {it.source_id: it for it in candidates}
    missing = [r.corpus_id for r in rows if r.corpus_id not in by_id]
    if missing:
        root, layout = vctk_root(path)
        raise SelectionError(_missing_message(missing, len(rows), options, root, layout, where))
    layout = candidates[0].extra["vctk_layout"]
    items = []
    for r in rows:
        it = by_id[r.corpus_id]
        extra = {**it.extra, "corpus_id": r.corpus_id}
        if layout == "0.80":  # the recorded bounds belong to 0.80's untrimmed files
            extra.update(selection="frozen", recorded_onset_sec=r.onset_sec, recorded_offset_sec=r.offset_sec)
        else:
            extra.update(selection="frozen-redetected")
        items.append(replace(it, source_id=r.item_id, sentence_id=r.corpus_id, text=r.text or it.text,
                             extra=extra))
    # utterance number then speaker, so that the first N items cover N speakers (as the selector orders)
    items.sort(key=lambda it: (it.source_id.rsplit("_", 1)[1], it.speaker_id))
    return items


def _missing_message(missing: list[str], total: int, options: SourceOptions, root: Path, layout: str,
                     where: str) -> str:
    """Which frozen utterances the corpus lacks, and where they would be."""
    hints = []
    if layout == "0.92":
        other = 2 if options.vctk_mic == 1 else 1
        audio_dir = root / VCTK_LAYOUTS["0.92"]
        found = [u for u in missing if (audio_dir / u.split("_")[0] / f"{u}_mic{other}.flac").is_file()]
        if found:
            hints.append(f"{len(found)} of them exist as _mic{other}.flac: use --vctk-mic {other}")
    absent = sorted({u.split("_")[0] for u in missing if not (root / VCTK_LAYOUTS[layout] / u.split("_")[0]).is_dir()})
    if absent:
        hints.append(f"speaker folders absent: {', '.join(absent[:12])}{' ...' if len(absent) > 12 else ''}")
    shown = ", ".join(missing[:20]) + (f" ... (+{len(missing) - 20})" if len(missing) > 20 else "")
    return (
        f"{where}: the frozen {options.split} selection needs {total} VCTK utterances; {len(missing)} are missing "
        f"from this VCTK {layout} tree: {shown}. "
        + (" ".join(h + "." for h in hints) + " " if hints else "")
        + "They are in VCTK 0.80 (wav48/pNNN/pNNN_MMM.wav, the release the paper used, whose recorded speech "
        "bounds apply) and, under the same ids, in VCTK 0.92 (wav48_silence_trimmed/pNNN/pNNN_MMM_mic1.flac and "
        "_mic2.flac). Use a complete corpus, or --selection sample for a new dataset instance drawn from what "
        "this tree has."
    )


# --------------------------------------------------------------------------------------------
# demo
# --------------------------------------------------------------------------------------------
#: Folder of the embedded demo set.
DEMO_DIR = Path(__file__).resolve().parent / "demo_data"


def demo_items(split: str = "test", *, root: Path = DEMO_DIR) -> list[SourceItem]:
    """The demo set's fixed ``split`` (test: 100 utterances, 10 voices; train: 50, 5 other voices).

    Items are ordered by utterance number, then voice, so the first N cover N voices (N <= 10).
    """
    meta = root / "metadata.csv"
    if not meta.is_file():
        raise SourceSpecError(f"demo source: {meta} is missing; the package was installed without its demo data")
    with open(meta, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["split"] == split]
    items = [
        SourceItem(r["source_id"], str(root / r["file_name"]), speaker_id=r["speaker_id"],
                   sentence_id=r["sentence_id"], text=r["text"], gender=r["gender"], accent=r["accent"],
                   extra={"engine": r["engine"], "voice": r["voice"], "duration": float(r["duration"])})
        for r in rows
    ]
    items.sort(key=lambda it: (it.source_id.rsplit("_", 1)[1], it.speaker_id))
    return items


@register_source("demo")
def _demo(arg: str, options: SourceOptions) -> list[SourceItem]:
    """The embedded synthetic demo set; its test/train split is fixed (no selection)."""
    if arg:
        raise SourceSpecError(f"'demo' takes no argument, got {arg!r}")
    if options.split not in ("test", "train"):
        raise SourceSpecError(f"demo source: split {options.split!r} is not available "
                              "(test or train; the beep split uses --source tones)")
    return demo_items(options.split)


# --------------------------------------------------------------------------------------------
# hf:DATASET[:CONFIG][:SPLIT]
# --------------------------------------------------------------------------------------------
#: Columns tried, in order, when --text-column / --speaker-column are not given.
HF_TEXT_COLUMNS = ("text", "transcription", "transcript", "sentence", "normalized_text", "raw_text")
HF_SPEAKER_COLUMNS = ("speaker_id", "speaker", "client_id", "spk_id")
HF_GENDER_COLUMNS = ("gender", "sex")
HF_ACCENT_COLUMNS = ("accent", "accents")

_HF_OPEN: dict[tuple, Any] = {}


def parse_hf_spec(arg: str) -> tuple[str, str | None, str | None]:
    """Split ``DATASET[:CONFIG][:SPLIT]`` (an existing local path may itself contain ``:``)."""
    if not arg:
        raise SourceSpecError("hf source: give a dataset, e.g. --source hf:/data/my_dataset "
                              "or hf:user/name:config:split")
    parts = arg.split(":")
    for cut in range(len(parts), 0, -1):  # the longest prefix that is a local path wins
        head = ":".join(parts[:cut])
        if os.path.exists(os.path.expanduser(head)):
            head, rest = os.path.abspath(os.path.expanduser(head)), parts[cut:]
            break
    else:
        head, rest = parts[0], parts[1:]
    if len(rest) > 2:
        raise SourceSpecError(f"hf source: {arg!r} has too many ':' parts (use hf:DATASET[:CONFIG][:SPLIT])")
    config = rest[0] or None if rest else None
    split = rest[1] or None if len(rest) > 1 else None
    return head, config, split


def _open_hf(dataset: str, config: str | None, split: str | None):
    """Open a dataset split (memory-mapped), cached per process; returns (dataset, split name)."""
    key = (dataset, config, split)
    if key in _HF_OPEN:
        return _HF_OPEN[key]
    import datasets

    local = Path(dataset).expanduser()
    saved = local.is_dir() and any((local / n).is_file() for n in ("dataset_dict.json", "state.json"))
    try:
        if saved:
            ds = datasets.load_from_disk(str(local))
        else:
            ds = datasets.load_dataset(str(local) if local.exists() else dataset, config)
    except Exception as exc:  # noqa: BLE001 - datasets raises many types
        raise SourceSpecError(f"hf source: cannot load dataset {dataset!r}"
                              f"{f' config {config!r}' if config else ''} ({type(exc).__name__}: {exc})") from exc
    if isinstance(ds, (datasets.DatasetDict, dict)):
        names = list(ds)
        if split is None:
            if len(names) != 1:
                raise SourceSpecError(f"hf source: {dataset!r} has splits {names}; name one: hf:{dataset}:CONFIG:SPLIT "
                                      f"(CONFIG may be empty: hf:{dataset}::{names[0]})")
            split = names[0]
        if split not in ds:
            raise SourceSpecError(f"hf source: {dataset!r} has no split {split!r} (it has {names})")
        ds = ds[split]
    if getattr(ds, "_indices", None) is not None:  # a selected/shuffled view: make rows match the table
        ds = ds.flatten_indices()
    _HF_OPEN[key] = (ds, split or "")
    return _HF_OPEN[key]


def _audio_column(ds, where: str) -> str:
    import datasets

    cols = [c for c, f in ds.features.items() if isinstance(f, datasets.Audio)]
    if not cols:
        raise SourceSpecError(f"{where}: no audio column (columns: {', '.join(ds.column_names)})")
    return cols[0]


@dataclass(frozen=True)
class HFAudio:
    """Lazy, picklable reference to one row's audio of a ``datasets`` dataset.

    ``read()`` opens the dataset (once per process, memory-mapped) and decodes the row's audio bytes
    with soundfile; no audio is held in memory between calls.
    """

    dataset: str
    config: str | None
    split: str | None
    column: str
    index: int

    def _encoded(self) -> dict:
        key = (self.dataset, self.config, self.split, "encoded", self.column)
        if key not in _HF_OPEN:
            import datasets

            ds, _ = _open_hf(self.dataset, self.config, self.split)
            _HF_OPEN[key] = ds.select_columns([self.column]).cast_column(self.column, datasets.Audio(decode=False))
        return _HF_OPEN[key][self.index][self.column]

    def read(self) -> tuple[np.ndarray, int]:
        enc = self._encoded()
        data, path = enc.get("bytes"), enc.get("path")
        where = f"hf:{self.dataset} row {self.index}"
        try:
            if data:
                y, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
            elif path and os.path.isfile(path):
                y, sr = sf.read(path, dtype="float32", always_2d=True)
            else:
                raise AudioReadError(f"{where}: audio has neither bytes nor a readable path ({path!r})")
        except AudioReadError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise AudioReadError(f"{where} ({path or 'bytes'}): cannot decode audio "
                                 f"({type(exc).__name__}: {exc})") from exc
        from .audio import to_mono_float

        return to_mono_float(y), int(sr)

    def duration(self) -> float:
        enc = self._encoded()
        try:
            src = io.BytesIO(enc["bytes"]) if enc.get("bytes") else enc.get("path")
            return float(sf.info(src).duration)
        except Exception:  # noqa: BLE001 - fall back to decoding
            y, sr = self.read()
            return len(y) / sr


def _pick_column(ds, given: str | None, defaults: tuple[str, ...], what: str, where: str) -> str | None:
    if given:
        if given not in ds.column_names:
            raise SourceSpecError(f"{where}: no {what} column {given!r} (columns: {', '.join(ds.column_names)})")
        return given
    return next((c for c in defaults if c in ds.column_names), None)


def hf_candidates(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Every row of a ``datasets`` audio dataset as an utterance, before selection.

    Ids are the audio file stems when they are unique, otherwise ``row000123``.
    """
    dataset, config, split = parse_hf_spec(arg)
    where = f"hf:{arg}"
    ds, split = _open_hf(dataset, config, split)
    audio_col = _audio_column(ds, where)
    text_col = _pick_column(ds, options.text_column, HF_TEXT_COLUMNS, "text", where)
    spk_col = _pick_column(ds, options.speaker_column, HF_SPEAKER_COLUMNS, "speaker", where)
    gender_col = _pick_column(ds, None, HF_GENDER_COLUMNS, "gender", where)
    accent_col = _pick_column(ds, None, HF_ACCENT_COLUMNS, "accent", where)
    n = len(ds)
    if n == 0:
        raise SourceSpecError(f"{where}: the dataset is empty")

    def column(name):
        if not name:
            return [""] * n
        values = ds.data.column(name).to_pylist()
        feature = ds.features[name]
        if hasattr(feature, "int2str"):  # ClassLabel: store the label names
            values = [feature.int2str(v) if isinstance(v, int) and v >= 0 else "" for v in values]
        return values

    texts, spks, genders, accents = (column(c) for c in (text_col, spk_col, gender_col, accent_col))
    audio = ds.data.column(audio_col)
    paths = audio.combine_chunks().field("path").to_pylist() if hasattr(audio.type, "get_field_index") else [None] * n
    stems = [safe_id(Path(p).stem) if p else None for p in paths]
    use_stems = all(stems) and len(set(stems)) == n
    items = []
    for i in range(n):
        sid = stems[i] if use_stems else f"row{i:06d}"
        ref = HFAudio(dataset, config, split or None, audio_col, i)
        items.append(SourceItem(sid, ref, speaker_id=safe_id(spks[i]) if spks[i] not in (None, "") else "",
                                sentence_id=sid, text=str(texts[i] or "").strip(),
                                gender=normalise_gender(genders[i]), accent=str(accents[i] or ""),
                                extra={"hf_row": i}))
    return items


@register_source("hf")
def _hf(arg: str, options: SourceOptions) -> list[SourceItem]:
    """A ``datasets`` audio dataset with the benchmark.md §6 selection (a new dataset instance)."""
    if options.selection not in (None, "sample"):
        raise SourceSpecError(f"hf:{arg}: no frozen selection exists for an arbitrary dataset; frozen selections "
                              "exist for vctk:, loquacious: and cv-spontaneous: (drop --selection or use sample)")
    return [replace(it, extra={**it.extra, "selection": "sample", "selection_seed": options.seed})
            for it in _selected(hf_candidates(arg, options), options, f"hf:{arg}")]


def with_id(item: SourceItem, source_id: str) -> SourceItem:
    """Copy of ``item`` under another id."""
    return replace(item, source_id=source_id)


from . import domains as _domains  # noqa: E402,F401  registers loquacious: and cv-spontaneous:
