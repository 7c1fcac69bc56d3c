"""The dataset as its authors published it: ``ynklab/vocalgrad`` as a Hugging Face AudioFolder.

The authors' public release (their ``prepare_vocalgrad_public.py``) is not the per-category
layout of ``vocalgrad hub``: it is one ``default`` config (``drop_labels: true``) over a flat
``audio/`` folder and a root ``metadata.csv`` whose columns are :data:`PUBLISHED_COLUMNS`. It
names categories by the paper's internal ids (``voice_pitch``), tiers ``low/mid/high``,
directions ``up/down`` and has its own clip id (:func:`parse_benchmark_clip_id`). This module is
the one place that detects that layout and maps it to this toolkit's names (docs/published.md):

- :func:`is_published` / :func:`published_folder`: detection (Hub id or local copy; no
  ``datasets`` needed),
- :func:`to_clip_id` / :func:`to_benchmark_clip_id`: the clip-id mapping, both directions
  (defined in :mod:`.published_ids`, re-exported here),
- :func:`hub_row` / :func:`published_row`: one metadata row <-> one row in our Hub columns,
- :func:`load_published_rows`: every row of a local copy in our columns (catalog, verify),
- :func:`load_published`: a ``datasets`` dataset in our columns (lm-eval tasks, probe), streaming
  or not.

Nothing here imports torch; ``datasets``, ``huggingface_hub`` and ``soundfile`` are imported only
by the functions that need them.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
from pathlib import Path
from typing import Any

import vocalgrad

from .published_ids import (DIRECTION_TO_PUBLISHED, TIER_TO_PUBLISHED, benchmark_clip_id_of, parse_benchmark_clip_id,
                            source_clip_of, to_benchmark_clip_id, to_clip_id)

__all__ = [
    "DIRECTION_TO_PUBLISHED",
    "EXTRA_COLUMNS",
    "flac_bytes",
    "PUBLISHED_COLUMNS",
    "PublishedLayoutError",
    "TIER_TO_PUBLISHED",
    "benchmark_clip_id_of",
    "card_is_published",
    "hub_record",
    "hub_row",
    "is_published",
    "iter_file_bytes",
    "load_published",
    "load_config",
    "local_copy",
    "load_published_rows",
    "parse_benchmark_clip_id",
    "published_features",
    "published_folder",
    "published_prompt",
    "published_row",
    "read_metadata",
    "source_clip_of",
    "to_benchmark_clip_id",
    "to_clip_id",
]

#: Columns of the published ``metadata.csv``, in the authors' order.
PUBLISHED_COLUMNS: tuple[str, ...] = (
    "file_name", "category", "benchmark_clip_id", "source_text", "attribute", "prompt", "label",
    "direction", "curve", "tier", "source_clip_id", "speaker_id", "sentence_id", "duration_sec",
    "onset_sec", "offset_sec", "split",
)
_FLOAT_COLUMNS = ("duration_sec", "onset_sec", "offset_sec")
METADATA_FILE = "metadata.csv"
AUDIO_DIR = "audio"
#: Columns kept beside our Hub columns so that nothing of the published row is lost.
EXTRA_COLUMNS: tuple[str, ...] = ("benchmark_clip_id", "source_clip_id")


class PublishedLayoutError(vocalgrad.VocalGradError, ValueError):
    """Published data that cannot be read; the message names the file, row and field."""


def published_prompt(category_name: str) -> str:
    """The ``prompt`` column of the published metadata: question and instruction joined by ONE space.

    The tasks send :func:`vocalgrad.default_prompt` instead (a blank line between the two, as in
    the paper and in the authors' benchmark scripts); see docs/published.md.
    """
    question = vocalgrad.DEFAULT_QUESTION.format(attribute=vocalgrad.category(category_name).attribute)
    return question + " " + vocalgrad.DEFAULT_INSTRUCTION


# ----------------------------------------------------------------------------- detection
def card_is_published(readme_text: str) -> bool:
    """True when a dataset card's YAML header declares the authors' layout.

    That is: a config named ``default`` with ``drop_labels: true`` and no config named after a
    category (a folder made by ``vocalgrad hub`` has one config per category).
    """
    import yaml

    text = readme_text.lstrip("\ufeff")
    if not text.startswith("---"):
        return False
    try:
        header = yaml.safe_load(text[3:].split("\n---", 1)[0]) or {}
    except yaml.YAMLError:
        return False
    configs = header.get("configs") if isinstance(header, dict) else None
    if not isinstance(configs, list):
        return False
    names = {c.get("config_name") for c in configs if isinstance(c, dict)}
    default = [c for c in configs if isinstance(c, dict) and c.get("config_name") == "default"]
    return bool(default) and default[0].get("drop_labels") is True and not names & set(vocalgrad.CATEGORY_NAMES)


def published_folder(src) -> Path | None:
    """``src`` as a local copy of the published layout, or None.

    A local copy is a folder whose ``metadata.csv`` header has ``file_name`` and
    ``benchmark_clip_id`` (the ``audio/`` folder is checked when rows are read).
    """
    try:
        path = Path(src).expanduser()
        if not (path / METADATA_FILE).is_file():
            return None
        with open(path / METADATA_FILE, newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, TypeError, ValueError):
        return None
    return path if {"file_name", "benchmark_clip_id"} <= set(header) else None


@functools.lru_cache(maxsize=32)
def _hub_card(repo_id: str) -> str | None:
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo_id, "README.md", repo_type="dataset")).read_text(encoding="utf-8")
    except Exception:  # offline, no such repo, no card: not detectable as published
        return None


def is_published(src) -> bool:
    """True when ``src`` (a local folder or a Hub repo id) holds the authors' published layout.

    A local folder is checked by :func:`published_folder`; a repo id by its card
    (:func:`card_is_published`, fetched once with ``huggingface_hub``; offline without a cached
    card it is not detected and the caller treats the id as a ``vocalgrad hub`` repository).
    """
    if published_folder(src) is not None:
        return True
    text = str(src)
    if Path(text).expanduser().exists() or text.count("/") != 1:
        return False
    card = _hub_card(text)
    return card is not None and card_is_published(card)


# ----------------------------------------------------------------------------- rows
def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value)


def _float(value: Any, where: str, name: str) -> float | None:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise PublishedLayoutError(f"{where}: {name} is {value!r}, not a number") from None


def read_metadata(folder) -> list[dict]:
    """Rows of a local copy's ``metadata.csv`` (strings; the three time columns as float or None).

    Raises
    ------
    PublishedLayoutError
        If the file is missing or lacks one of :data:`PUBLISHED_COLUMNS`.
    """
    path = Path(folder).expanduser() / METADATA_FILE
    if not path.is_file():
        raise PublishedLayoutError(f"{path}: missing; a published VocalGrad copy has metadata.csv at its root")
    with open(path, newline="", encoding="utf-8-sig") as fh:  # a BOM from spreadsheet tools is dropped
        reader = csv.DictReader(fh)
        missing = [c for c in PUBLISHED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise PublishedLayoutError(f"{path}: missing columns {', '.join(missing)}; is this the authors' "
                                       "published metadata (prepare_vocalgrad_public.py)?")
        rows = []
        for lineno, raw in enumerate(reader, 2):
            row = {c: _text(raw[c]) for c in PUBLISHED_COLUMNS}
            for c in _FLOAT_COLUMNS:
                row[c] = _float(raw[c], f"{path}:{lineno}", c)
            rows.append(row)
    return rows


def hub_row(meta: dict, *, where: str = "metadata.csv") -> dict:
    """One published metadata row in our Hub columns (:func:`vocalgrad.hub_column_types`), plus
    :data:`EXTRA_COLUMNS`; no ``audio``.

    ``category`` becomes the config name, ``tier``/``direction`` our vocabulary, ``trajectory``
    the ``curve``, ``text`` the ``source_text``, ``source_id`` the test item of the clip id,
    ``prompt`` the tasks' prompt (:func:`vocalgrad.default_prompt`). Published onsets are the
    source's, so they fill ``onset_sec`` and ``source_onset_sec`` alike (offsets too).
    Columns the release lacks (values, gender, accent, sample rate, sha256, recipe) are empty/null.

    Raises
    ------
    PublishedLayoutError
        On an unknown category, a malformed clip id, or a ``label``/``direction``/``curve``/
        ``tier`` that disagrees with the clip id.
    """
    bid = _text(meta.get("benchmark_clip_id"))
    try:
        cat = vocalgrad.category(_text(meta.get("category")))
        f = parse_benchmark_clip_id(bid, source_clip_id=_text(meta.get("source_clip_id")) or None)
    except ValueError as exc:
        raise PublishedLayoutError(f"{where}: {exc}") from None
    label = _text(meta.get("label"))
    checks = {"label": (label, f["direction"]),
              "direction": (_text(meta.get("direction")), DIRECTION_TO_PUBLISHED[f["direction"]]),
              "curve": (_text(meta.get("curve")), f["trajectory"]),
              "tier": (_text(meta.get("tier")), TIER_TO_PUBLISHED[f["tier"]])}
    bad = [f"{k}={have!r} (clip id says {want!r})" for k, (have, want) in checks.items() if have != want]
    if bad:
        raise PublishedLayoutError(f"{where}: clip {bid!r}: " + ", ".join(bad))
    onset = _float(meta.get("onset_sec"), where, "onset_sec")
    offset = _float(meta.get("offset_sec"), where, "offset_sec")
    row = {
        "id": vocalgrad.clip_id(f["source_id"], cat.name, f["trajectory"], f["tier"], f["direction"]),
        "category": cat.name, "attribute": _text(meta.get("attribute")) or cat.attribute,
        "direction": f["direction"], "tier": f["tier"], "trajectory": f["trajectory"],
        "source_id": f["source_id"], "speaker_id": _text(meta.get("speaker_id")),
        "sentence_id": _text(meta.get("sentence_id")), "text": _text(meta.get("source_text")),
        "prompt": vocalgrad.default_prompt(cat.name), "label": label,
        "duration_sec": _float(meta.get("duration_sec"), where, "duration_sec"), "onset_sec": onset,
        "offset_sec": offset, "split": _text(meta.get("split")) or "test", "value_start": None,
        "value_end": None, "unit": "", "gender": "", "accent": "", "sample_rate": None,
        "source_onset_sec": onset, "source_offset_sec": offset,
        "speech_found": None if onset is None else True, "clipped_ratio": None, "sha256": "", "recipe": "",
    }
    out = {name: row[name] for name in vocalgrad.hub_column_types()}
    out.update(benchmark_clip_id=bid, source_clip_id=f["source_clip_id"])
    return out


def published_row(row: dict) -> dict:
    """One of our rows (Hub columns) as a published metadata row (inverse of :func:`hub_row`).

    The clip id comes from :func:`benchmark_clip_id_of`, the file name is the authors'
    ``audio/<internal id>__<benchmark_clip_id>.wav`` and ``prompt`` is :func:`published_prompt`.
    """
    cat = vocalgrad.category(row["category"])
    bid = benchmark_clip_id_of(row)
    return {
        "file_name": f"{AUDIO_DIR}/{cat.id}__{bid}.wav", "category": cat.id, "benchmark_clip_id": bid,
        "source_text": _text(row.get("text")), "attribute": _text(row.get("attribute")) or cat.attribute,
        "prompt": published_prompt(cat.name), "label": row.get("label") or row["direction"],
        "direction": DIRECTION_TO_PUBLISHED[row["direction"]], "curve": row["trajectory"],
        "tier": TIER_TO_PUBLISHED[row["tier"]], "source_clip_id": source_clip_of(row),
        "speaker_id": _text(row.get("speaker_id")), "sentence_id": _text(row.get("sentence_id")),
        "duration_sec": row.get("duration_sec"), "onset_sec": row.get("onset_sec"),
        "offset_sec": row.get("offset_sec"), "split": _text(row.get("split")) or "test",
    }


def _audio_path(folder: Path, meta: dict, where: str) -> Path:
    from .contained import outside_reason

    rel = meta["file_name"]
    why = outside_reason(folder, rel)
    if why:
        raise PublishedLayoutError(f"{where}: file_name {why}; it must stay inside {folder}")
    return (folder / rel).resolve()


def local_copy(src) -> Path:
    """A local folder holding the release: ``src`` itself, or a snapshot of the Hub repo ``src``.

    Raises
    ------
    PublishedLayoutError
        If ``src`` is a folder that is not a published copy, or the repo cannot be fetched or is not one.
    """
    folder = published_folder(src)
    if folder is not None:
        return folder
    if Path(str(src)).expanduser().exists() or str(src).count("/") != 1:
        raise PublishedLayoutError(f"{src}: not a published VocalGrad copy (no metadata.csv with file_name and "
                                   "benchmark_clip_id at its root)")
    try:  # not run here (offline tests): the full release is ~21,600 WAV files
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(str(src), repo_type="dataset"))
    except Exception as exc:
        raise PublishedLayoutError(f"cannot fetch the dataset repo {src!r} ({type(exc).__name__}: {exc}); "
                                   "download it (`hf download --repo-type dataset ...`) and pass the folder") from None
    if published_folder(folder) is None:
        raise PublishedLayoutError(f"{src}: the repo holds no metadata.csv with benchmark_clip_id; it is not the "
                                   "authors' release (a `vocalgrad hub` repo needs no conversion)")
    return folder


def load_published_rows(src, *, categories=None, check_files: bool = True) -> list[dict]:
    """Every row of the release in our Hub columns, sorted by our clip id (for verify, catalogs, conversion).

    Parameters
    ----------
    src : path-like or str
        Folder with ``metadata.csv`` and ``audio/``, or a Hub repo id (downloaded first with
        :func:`local_copy`).
    categories : iterable of str, optional
        Keep only these (config names or internal ids).
    check_files : bool
        Fail when an audio file named by ``file_name`` is missing.

    Returns
    -------
    list of dict
        :func:`hub_row` plus ``audio`` = ``{"bytes": None, "path": <absolute file>}``.

    Raises
    ------
    PublishedLayoutError
        Not a published copy, a bad row, duplicate clips, or missing audio files (all listed).
    """
    folder = local_copy(src)
    wanted = None if categories is None else {vocalgrad.category(c).name for c in categories}
    rows, missing, seen = [], [], {}
    for lineno, meta in enumerate(read_metadata(folder), 2):
        where = f"{folder / METADATA_FILE}:{lineno}"
        row = hub_row(meta, where=where)
        if wanted is not None and row["category"] not in wanted:
            continue
        if row["id"] in seen:
            raise PublishedLayoutError(f"{where}: clip {meta['benchmark_clip_id']!r} of {meta['category']!r} "
                                       f"repeats line {seen[row['id']]}")
        seen[row["id"]] = lineno
        path = _audio_path(folder, meta, where)
        if check_files and not path.is_file():
            missing.append(str(path))
        rows.append({"audio": {"bytes": None, "path": str(path)}, **row})
    if missing:
        shown = "\n  ".join(missing[:20]) + (f"\n  ... and {len(missing) - 20} more" if len(missing) > 20 else "")
        raise PublishedLayoutError(f"{folder}: {len(missing)} audio file(s) named in metadata.csv are missing "
                                   f"(download the full copy):\n  {shown}")
    return sorted(rows, key=lambda r: r["id"])


def iter_file_bytes(rows: list[dict], ids=None):
    """Yield ``(clip id, bytes of the published file or None when missing)`` for rows of
    :func:`load_published_rows` (every row, or the ``ids`` given, in that order).

    For ``vocalgrad verify --against`` and other clip-by-clip comparisons (the bytes are WAV).
    """
    by_id = {r["id"]: Path(r["audio"]["path"]) for r in rows}
    for cid in (list(by_id) if ids is None else ids):
        path = by_id.get(cid)
        yield cid, (path.read_bytes() if path is not None and path.is_file() else None)


def hub_record(row: dict, file_bytes: bytes) -> dict:
    """A row of :func:`load_published_rows` with its audio re-encoded as FLAC (lossless).

    ``audio`` becomes ``{"bytes": <FLAC>, "path": "<id>.flac"}``, ``sample_rate`` the file's
    rate and ``sha256`` the hash of the published file's bytes (so a copy can be checked).
    """
    flac, sr = flac_bytes(file_bytes, name=row["audio"].get("path") or row["id"])
    return {**row, "audio": {"bytes": flac, "path": f"{row['id']}.flac"}, "sample_rate": sr,
            "sha256": hashlib.sha256(file_bytes).hexdigest()}


def flac_bytes(file_bytes: bytes, *, name: str = "clip") -> tuple[bytes, int]:
    """A published 16-bit WAV (any format soundfile reads) as FLAC bytes of the same samples, and its rate."""
    import soundfile as sf

    try:
        pcm, sr = sf.read(io.BytesIO(file_bytes), dtype="int16", always_2d=True)
    except Exception as exc:  # soundfile raises several types
        raise PublishedLayoutError(f"{name}: cannot decode audio ({exc})") from None
    buf = io.BytesIO()
    sf.write(buf, pcm if pcm.shape[1] > 1 else pcm[:, 0], sr, format="FLAC", subtype="PCM_16")
    return buf.getvalue(), int(sr)


def published_features(sample_rate: int | None = 48000, *, decode: bool = True):
    """:func:`vocalgrad.features` plus :data:`EXTRA_COLUMNS` (strings)."""
    import datasets

    feats = vocalgrad.features(sample_rate)
    feats["audio"] = datasets.Audio(sampling_rate=sample_rate, decode=decode)
    for name in EXTRA_COLUMNS:
        feats[name] = datasets.Value("string")
    return feats


def load_published(src, *, categories=None, split: str = "test", streaming: bool = False):
    """The published data as a ``datasets`` dataset in our columns, audio undecoded.

    Parameters
    ----------
    src : path-like or str
        A local copy (read with :func:`load_published_rows`: exact strings, no download) or a
        Hub repo id (read with ``datasets.load_dataset(src, split=split)``, the ``default``
        AudioFolder config).
    categories : iterable of str, optional
        Keep only these categories (config names or internal ids).
    split : str
        The release has ``test`` only.
    streaming : bool
        Return an ``IterableDataset`` (a repo id is then streamed, nothing is downloaded first).

    Returns
    -------
    datasets.Dataset or datasets.IterableDataset
        Columns :func:`published_features` (``audio`` with ``decode=False``).
    """
    import datasets

    feats = published_features(None, decode=False)
    if split != "test":
        raise PublishedLayoutError(f"{src}: the published VocalGrad release has only the test split, not "
                                   f"{split!r}; render the {split} split (docs/render.md)")
    if published_folder(src) is not None:
        rows = load_published_rows(src, categories=categories)
        ds = datasets.Dataset.from_list(rows, features=feats)
        return ds.to_iterable_dataset() if streaming else ds
    return _load_with_datasets(str(src), feats, categories=categories, split=split, streaming=streaming)


def load_config(src, config: str, *, split: str = "test"):
    """One of our Hub configs (a category or ``all``) read from published data (:func:`load_published`).

    Raises
    ------
    FileNotFoundError
        For configs the release does not have (``beep``, ``train``, ``sources``) or another split.
    """
    if config == "all":
        cats = None
    elif config in vocalgrad.CATEGORY_NAMES:
        cats = [config]
    else:
        raise FileNotFoundError(
            f"{src}: the published VocalGrad release (AudioFolder, test split only) has no config {config!r}; "
            f"render it (docs/render.md) and build a Hub folder with `vocalgrad hub`")
    if split != "test":
        raise FileNotFoundError(f"{src}: the published VocalGrad release has only the test split, not {split!r}")
    return load_published(src, categories=cats, split=split)


def _load_with_datasets(src: str, feats, *, categories, split: str, streaming: bool):
    """Read an AudioFolder repo (or a folder ``datasets`` reads like one) and map its rows."""
    import datasets

    # The card's ``default`` config names no data files, so ``datasets`` calls its one split
    # ``train`` although every row says ``split=test``: take the only split there is.
    # Typed features keep the metadata as written (without them ``sentence_id`` "007" reads as 7).
    their = datasets.Features({"audio": datasets.Audio(decode=False), **{
        c: datasets.Value("float64" if c in _FLOAT_COLUMNS else "string") for c in PUBLISHED_COLUMNS[1:]}})
    dd = datasets.load_dataset(src, features=their, streaming=streaming)
    ds = dd[split] if split in dd else dd[next(iter(dd))] if len(dd) == 1 else None
    if ds is None:
        raise PublishedLayoutError(f"{src}: splits {sorted(dd)}; expected one split (the test set)")
    if categories is not None:
        ids = {vocalgrad.category(c).id for c in categories}
        ds = ds.filter(lambda c: str(c) in ids, input_columns="category")
    names = list(feats)
    drop = [c for c in (ds.column_names or PUBLISHED_COLUMNS) if c != "audio"]
    ds = ds.map(lambda m: hub_row(m, where=f"{src}:{m.get('benchmark_clip_id')}"), remove_columns=drop)
    return ds.cast(feats).select_columns(names)
