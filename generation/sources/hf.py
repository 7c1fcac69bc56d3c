"""``hf:DATASET[:CONFIG][:SPLIT]``: a ``datasets`` audio dataset: a folder written by ``save_to_disk``, a
local folder or file that ``load_dataset`` reads (audiofolder, parquet), or a Hub id (needs network access).

Items carry an :class:`HFAudio` reference (picklable, decoded on ``read()``); :func:`open_hf` is also
used by the LoquaciousSet reader (:mod:`generation.sources.loquacious`).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from ..audio import AudioReadError, decode_mono
from .selection import select_sources
from .base import SourceItem, SourceOptions, SourceSpecError, normalise_gender, register_source, safe_id

__all__ = ["HF_ACCENT_COLUMNS", "HF_GENDER_COLUMNS", "HF_SPEAKER_COLUMNS", "HF_TEXT_COLUMNS", "HFAudio", "audio_column", "hf_candidates", "open_hf", "parse_hf_spec"]


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


def open_hf(dataset: str, config: str | None, split: str | None):
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


def audio_column(ds, where: str) -> str:
    """Name of the first :class:`datasets.Audio` column of ``ds`` (``where`` names it in the error)."""
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

            ds, _ = open_hf(self.dataset, self.config, self.split)
            _HF_OPEN[key] = ds.select_columns([self.column]).cast_column(self.column, datasets.Audio(decode=False))
        return _HF_OPEN[key][self.index][self.column]

    def read(self) -> tuple[np.ndarray, int]:
        enc = self._encoded()
        data, path = enc.get("bytes"), enc.get("path")
        where = f"hf:{self.dataset} row {self.index}"
        if not data and not (path and os.path.isfile(path)):
            raise AudioReadError(f"{where}: audio has neither bytes nor a readable path ({path!r})")
        try:
            return decode_mono(data if data else path)
        except Exception as exc:  # noqa: BLE001
            raise AudioReadError(f"{where} ({path or 'bytes'}): cannot decode audio "
                                 f"({type(exc).__name__}: {exc})") from exc

    def sha256(self) -> str:
        """sha256 of the row's encoded audio (its bytes, or the file its path names): the source's
        identity in a render (:func:`generation.render_identity.source_sha256`)."""
        from ..identity import sha256_bytes, sha256_file

        enc = self._encoded()
        if enc.get("bytes"):
            return sha256_bytes(enc["bytes"])
        if enc.get("path") and os.path.isfile(enc["path"]):
            return sha256_file(enc["path"])
        raise AudioReadError(f"hf:{self.dataset} row {self.index}: audio has neither bytes nor a readable path")

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
    ds, split = open_hf(dataset, config, split)
    audio_col = audio_column(ds, where)
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
            for it in select_sources(hf_candidates(arg, options), options, f"hf:{arg}")]
