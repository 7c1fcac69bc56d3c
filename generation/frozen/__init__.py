"""The paper's frozen source selections, shipped as package data (see ``PROVENANCE.md``).

The authors of VocalGrad published the exact source utterances of every split (benchmark.md §6); a new
random selection is a new dataset instance. This package reads those manifests:

``vctk_test_100.csv``
    The 100 test sources: test item id (``p226_01``), VCTK utterance id (``p226_106``), duration of
    the VCTK 0.80 file, the recorded speech bounds and the detector's threshold / noise floor / peak
    RMS, and the transcript.
``vctk_train_500.csv``
    The 500 train sources: train item id, VCTK utterance id, recorded speech bounds.
``vctk_test_speakers_50.csv``, ``selection_report.json``
    The test speakers (gender, accent group) and the authors' selection summary.
``loquaciousset_test_100.csv``, ``cv_spontaneous_test_100.csv``
    The two alternate source domains of the paper's Table 15.
``annotation/<category>.csv``
    The 50 clips per category the paper's annotators heard.

Bounds are seconds on the original file; a sample index is ``round(sec * sr)`` clamped to the
clip, and a span with ``offset <= onset`` means the whole clip (the authors' convention).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

__all__ = [
    "FROZEN_DIR",
    "FrozenRow",
    "annotation_subset",
    "frozen_rows",
    "recorded_span",
    "selection_report",
    "vctk_test_speakers",
]

#: Folder of the frozen manifests.
FROZEN_DIR = Path(__file__).resolve().parent

#: Manifest file of each (domain, split).
_FILES = {
    ("vctk", "test"): "vctk_test_100.csv",
    ("vctk", "train"): "vctk_train_500.csv",
    ("loquacious", "test"): "loquaciousset_test_100.csv",
    ("cv-spontaneous", "test"): "cv_spontaneous_test_100.csv",
}


@dataclass(frozen=True)
class FrozenRow:
    """One frozen source.

    Attributes
    ----------
    item_id : str
        The benchmark's source item id (``p226_01``, ``loquaciousset_test_0001``).
    corpus_id : str
        The corpus's own id of the utterance (VCTK ``p226_106``, a LoquaciousSet or Common Voice id).
    onset_sec, offset_sec : float
        Recorded speech bounds in seconds on the original file.
    text : str
        Transcript recorded in the manifest ("" when the corpus supplies it).
    extra : dict
        Other recorded columns (duration, detector statistics, row index, locale, ...).
    """

    item_id: str
    corpus_id: str
    onset_sec: float
    offset_sec: float
    text: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)


def _read_csv(name: str) -> list[dict]:
    path = FROZEN_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the package was installed without its frozen selections")
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@lru_cache(maxsize=None)
def _rows(domain: str, split: str) -> tuple[FrozenRow, ...]:
    key = (domain, split)
    if key not in _FILES:
        have = ", ".join(f"{d} {s}" for d, s in _FILES)
        raise KeyError(f"no frozen selection for {domain} {split} (there are: {have})")
    out = []
    for r in _read_csv(_FILES[key]):
        item = r.pop("test_item_id", None) or r.pop("train_item_id")
        out.append(FrozenRow(item, r.pop("clip_id"), float(r.pop("onset_sec")), float(r.pop("offset_sec")),
                             r.pop("text", ""), extra=r))
    return tuple(out)


def frozen_rows(domain: str, split: str = "test") -> list[FrozenRow]:
    """The frozen sources of ``domain`` ("vctk", "loquacious", "cv-spontaneous") and ``split``, in file order."""
    return list(_rows(domain, split))


def recorded_span(onset_sec: float, offset_sec: float, n: int, sr: int) -> tuple[int, int]:
    """Sample bounds ``(onset, offset)`` of recorded seconds on a clip of ``n`` samples at ``sr`` Hz.

    ``round(sec * sr)`` clamped to ``[0, n]``; an empty or inverted span becomes the whole clip.
    """
    a = max(0, min(n, int(round(onset_sec * sr))))
    b = max(0, min(n, int(round(offset_sec * sr))))
    return (0, n) if b <= a else (a, b)


@lru_cache(maxsize=None)
def _speakers() -> dict:
    return {r["speaker_id"]: r for r in _read_csv("vctk_test_speakers_50.csv")}


def vctk_test_speakers() -> dict[str, dict]:
    """The 50 frozen test speakers: id -> {age, gender, accent_raw, accent_group, region}."""
    return dict(_speakers())


def selection_report() -> dict:
    """The authors' summary of the test selection (seed, counts, gender and accent balance)."""
    return json.loads((FROZEN_DIR / "selection_report.json").read_text(encoding="utf-8"))


#: Spelling of tiers and directions in the authors' annotation manifests.
_TIER = {"low": "low", "mid": "medium", "high": "high"}
_DIRECTION = {"increase": "increase", "decrease": "decrease", "up": "increase", "down": "decrease"}


@lru_cache(maxsize=None)
def _annotation(category: str) -> tuple[tuple[str, str, str, str], ...]:
    rows = _read_csv(f"annotation/{category}.csv")
    return tuple((r["item_id"], r["trajectory"], _TIER[r["tier"]], _DIRECTION[r["label"]]) for r in rows)


def annotation_subset(category: str) -> list[tuple[str, str, str, str]]:
    """The paper's 50 annotated clips of ``category`` as ``(item_id, trajectory, tier, direction)``.

    ``category`` is the config name (``vocalgrad.CATEGORY_NAMES``); tiers use this toolkit's names
    (``low``/``medium``/``high``) and directions ``increase``/``decrease``.
    """
    return list(_annotation(category))
