"""Source readers: turn a ``--source`` string into a list of :class:`SourceItem`.

A reader is a function ``(argument: str, options: SourceOptions) -> list[SourceItem]`` registered
under the source prefix with :func:`register_source` (:mod:`.base`). The items' ``audio`` field is
either a file path or any picklable object with a ``read() -> (y, sr)`` method (see :class:`ToneSpec`),
so that items can be sent to render worker processes.

Readers return the *selected* sources of ``options.split`` (benchmark.md §6, see :mod:`generation.sources.selection`)
in a deterministic order; the render takes the first N of them with ``--sources N``.

One module per kind of source:

``tones`` (:mod:`.tones`)
    Ten synthetic tone sources of 4 s (pure and harmonic), for tests and the beep ablation.
``vctk:PATH`` (:mod:`.vctk`)
    The VCTK corpus, layout 0.80 or 0.92; the paper's frozen selection or a seeded new one.
``folder:PATH`` (:mod:`.folder`)
    Audio files under ``PATH``, described by an optional ``metadata.csv``; used as they are.
``hf:DATASET[:CONFIG][:SPLIT]`` (:mod:`.hf`)
    A ``datasets`` audio dataset (``save_to_disk`` folder, local files, or a Hub id).
``demo`` (:mod:`.demo`)
    The embedded synthetic demo set (``generation/demo_data``): 100 test and 50 train utterances.
``loquacious[:DATASET...]`` (:mod:`.loquacious`), ``cv-spontaneous:PATH`` (:mod:`.cv_spontaneous`)
    The paper's alternate source domains, each with its frozen test selection.

Every public name of the modules is importable from here (``from generation.sources import SourceItem``).
"""

from __future__ import annotations

from .base import (AUDIO_EXTENSIONS, SelectionPlan, SourceItem, SourceOptions, SourceSpecError, SourceWarning,
                   audio_duration,
                   frozen_extra, load_source_audio, normalise_gender, read_sources, register_source,
                   require_frozen_test, safe_id, with_id)
from .cv_spontaneous import CV_LOCALES, CV_RELEASE, CV_SAMPLE_RATE, CVAudio, cv_spontaneous_items
from .demo import DEMO_DIR, demo_items
from .folder import FOLDER_COLUMNS, folder_candidates
from .hf import (HF_ACCENT_COLUMNS, HF_GENDER_COLUMNS, HF_SPEAKER_COLUMNS, HF_TEXT_COLUMNS, HFAudio, audio_column,
                 hf_candidates, open_hf, parse_hf_spec)
from .loquacious import LOQUACIOUS_DATASET, loquacious_items
from .selection import SelectionError, select_sources
from .tones import TONE_FREQS, ToneSpec
from .vctk import VCTK_LAYOUTS, looks_like_vctk, read_speaker_info, vctk_candidates, vctk_root

__all__ = [
    "AUDIO_EXTENSIONS",
    "CVAudio",
    "CV_LOCALES",
    "CV_RELEASE",
    "CV_SAMPLE_RATE",
    "DEMO_DIR",
    "FOLDER_COLUMNS",
    "HFAudio",
    "HF_ACCENT_COLUMNS",
    "HF_GENDER_COLUMNS",
    "HF_SPEAKER_COLUMNS",
    "HF_TEXT_COLUMNS",
    "LOQUACIOUS_DATASET",
    "SelectionError",
    "SelectionPlan",
    "SourceItem",
    "SourceOptions",
    "SourceSpecError",
    "SourceWarning",
    "TONE_FREQS",
    "ToneSpec",
    "VCTK_LAYOUTS",
    "audio_column",
    "audio_duration",
    "cv_spontaneous_items",
    "demo_items",
    "folder_candidates",
    "frozen_extra",
    "hf_candidates",
    "load_source_audio",
    "looks_like_vctk",
    "loquacious_items",
    "normalise_gender",
    "open_hf",
    "parse_hf_spec",
    "read_sources",
    "read_speaker_info",
    "register_source",
    "require_frozen_test",
    "safe_id",
    "select_sources",
    "vctk_candidates",
    "vctk_root",
    "with_id",
]
