"""Dataset access of the VocalGrad tasks: which dataset, one config/split, source clips, docs.

Dataset source (first that is set wins):

1. ``--metadata vocalgrad_dataset=...`` (lm-eval's task metadata),
2. the environment variable ``VOCALGRAD_DATASET``,
3. the Hub id ``ynklab/vocalgrad``.

A value that is an existing folder is read as a Hub repo folder made by ``vocalgrad hub``
(``<config>/<split>-0000N-of-0000M.parquet``); anything else is passed to
``datasets.load_dataset`` as a repo id with the category as config name. The authors' published
AudioFolder layout (a local copy or a repo id) is detected and read by :mod:`generation.published`.

Docs hold only metadata: :func:`process_docs` keeps the audio in a per-process store and
:func:`doc_to_audio` reads a clip from it when a model asks.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import vocalgrad
from generation import published
from generation.hub_dir import HubDir, HubDirError

from .clip_audio import ClipAudio

log = logging.getLogger("vocalgrad")

__all__ = ["DATASET_ENV", "DatasetError", "DocList", "SOURCES_CONFIG", "check_dataset_source", "dataset_source",
           "doc_to_audio", "format_label", "load_split", "process_docs", "with_source_clips"]

#: Environment variable naming the dataset (local Hub folder or repo id).
DATASET_ENV = "VOCALGRAD_DATASET"
#: Hub config holding the unmodified source clips (defined once, in vocalgrad.py).
SOURCES_CONFIG = vocalgrad.SOURCES_CONFIG

#: Store key -> audio-only dataset; docs point into it with ``audio_ref`` = ``"<key>#<row>"`` (few-shot examples too).
AUDIO_STORES: dict[str, Any] = {}
#: ``audio_ref`` -> sha256 of the clip's encoded audio, noted when a model reads it (the results file's
#: data record, :mod:`harness_tasks.data_identity`, reuses it instead of hashing the clip again).
CLIP_SHA256: dict[str, str | None] = {}
_PROCESSED: dict[str, Any] = {}


class DatasetError(vocalgrad.VocalGradError, RuntimeError):
    """The dataset cannot be loaded (a repo id that does not load, e.g. offline); the message says what to do."""


def dataset_source(explicit: str | None = None) -> str:
    """The dataset to read: ``explicit``, else ``$VOCALGRAD_DATASET``, else the Hub id."""
    return explicit or os.environ.get(DATASET_ENV) or vocalgrad.HUB_REPO_ID


def _is_local_path(src: str) -> bool:
    """Whether ``src`` names a local path rather than a Hub repo id (``owner/name``, or a bare name)."""
    return (Path(src).expanduser().exists() or src.startswith((".", "~", os.sep)) or src.endswith(os.sep)
            or src.count("/") > 1)


def check_dataset_source(source: str | None = None) -> None:
    """Fail before anything loads when the dataset is a local path that is no Hub folder.

    A missing path, a render folder (``vocalgrad render``'s output) and a folder without
    ``<config>/*.parquet`` shards are named as such, with what to do; the authors' published
    layout and repo ids are left to :func:`load_split`.

    Raises
    ------
    HubDirError
    """
    src = dataset_source(source)
    if not _is_local_path(src) or published.published_folder(src) is not None:
        return
    problem = HubDir(Path(src).expanduser()).not_a_hub_folder(env=DATASET_ENV)
    if problem:
        raise HubDirError(problem)


def load_split(config: str, *, split: str = "test", source: str | None = None,
               category: str | None = None):
    """Load one config/split of VocalGrad as a ``datasets.Dataset`` with undecoded audio.

    Parameters
    ----------
    config : str
        Hub config (a category name, ``all``, ``beep`` or ``train``).
    split : str
        Split name inside the config.
    source : str, optional
        Local Hub folder or repo id (default: :func:`dataset_source`).
    category : str, optional
        Keep only rows of this category (for configs that mix categories).

    Returns
    -------
    datasets.Dataset
        Columns as on the Hub; ``audio`` is ``datasets.Audio(decode=False)`` so that rows hold
        the FLAC bytes and no audio backend (torchcodec) is needed.
    """
    import datasets

    src = dataset_source(source)
    if published.is_published(src):  # the authors' AudioFolder release (docs/published.md)
        ds = published.load_config(src, config, split=split)
    elif _is_local_path(src):
        check_dataset_source(src)
        files = HubDir(Path(src).expanduser()).split_files(config, split, env=DATASET_ENV)
        try:
            ds = datasets.load_dataset("parquet", data_files={split: files}, split=split)
        except Exception as exc:
            damaged = _unreadable_parquet(files)
            if not damaged:
                raise
            raise DatasetError(f"{damaged[0]}: not a readable parquet file ({damaged[1]}); the Hub folder is "
                               "damaged (truncated?): check it with `vocalgrad verify` and rebuild it with "
                               "`vocalgrad hub` or fetch it again") from exc
        _refuse_path_only_audio(ds, f"{src} [{config}/{split}]")
    else:
        try:
            ds = datasets.load_dataset(src, config, split=split)
        except Exception as exc:
            raise DatasetError(
                f"cannot load VocalGrad config {config!r} split {split!r} from {src!r} "
                f"({type(exc).__name__}: {exc}). Offline? Set {DATASET_ENV} to a local Hub folder "
                f"made by `vocalgrad hub`."
            ) from exc
        _refuse_path_only_audio(ds, f"{src} [{config}/{split}]")
    if "audio" not in ds.column_names:
        raise ValueError(f"{src} [{config}/{split}]: no 'audio' column (columns: {ds.column_names})")
    if isinstance(ds.features["audio"], datasets.Audio):
        ds = ds.cast_column("audio", datasets.Audio(decode=False))
    if category is not None and category != config:
        ds = ds.filter(lambda c: c == category, input_columns="category")
    log.info("VocalGrad %s/%s: %d clips from %s", config, split, len(ds), src)
    return ds


def _refuse_path_only_audio(ds, where: str) -> None:
    """Raise :class:`DatasetError` when a row of a Hub folder (or repo) holds no audio bytes.

    A Hub folder or repo made by ``vocalgrad hub`` embeds every clip's FLAC bytes; an ``audio`` value with
    only a ``path`` (``/etc/passwd``, ``../victim.flac``) is a path read from a shard, and is never
    followed (:mod:`generation.contained`): the model would hear a file outside the folder.
    Reads only the validity bitmaps of the memory-mapped column.
    """
    import pyarrow as pa

    if "audio" not in ds.column_names:
        return
    start = 0
    for chunk in ds.data.column("audio").chunks:
        if pa.types.is_struct(chunk.type) and chunk.type.get_field_index("bytes") >= 0:
            data = chunk.flatten()[chunk.type.get_field_index("bytes")]  # a null audio value: null bytes too
            if data.null_count:
                i = next(j for j, v in enumerate(data.is_null().to_pylist()) if v)
                value = chunk[i].as_py() or {}
                cid = ds.data.column("id")[start + i].as_py() if "id" in ds.column_names else start + i
                raise DatasetError(  # (ds[row] would decode the audio: read the file it names)
                    f"{where}: clip {cid!r} (row {start + i}) has no audio bytes, only the path "
                    f"{value.get('path')!r}; a Hub folder or repo made by `vocalgrad hub` embeds every clip's audio "
                    "and a path read from a shard is never followed: rebuild it with `vocalgrad hub`")
        start += len(chunk)


def _unreadable_parquet(files) -> tuple[str, str] | None:
    """The first of ``files`` whose parquet footer cannot be read, with the reason; None when all can."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for f in files:
        try:
            pq.read_metadata(f)
        except (pa.ArrowException, OSError) as exc:
            return str(f), str(exc).splitlines()[0][:200]
    return None


def format_label(direction: str, fmt: str) -> str:
    """Gold label of a clip in a problem format.

    ``binary``: the direction. ``yesno`` (question "does it increase?"): ``yes`` for increase,
    ``no`` for decrease and for unmodified sources. ``ternary``: increase, decrease, or
    ``constant`` for unmodified sources (whose direction is ``constant``).
    """
    if direction not in (*vocalgrad.DIRECTIONS, vocalgrad.CONSTANT):
        raise ValueError(f"direction must be increase, decrease or constant, got {direction!r}")
    if fmt == "yesno":
        return "yes" if direction == "increase" else "no"
    if fmt == "ternary":
        return direction
    if fmt == "binary" and direction != vocalgrad.CONSTANT:
        return direction
    raise ValueError(f"no {fmt!r} label for direction {direction!r}")


def replace_columns(ds, **columns):
    """``ds`` with the given columns replaced (same position and type); the audio is not rewritten."""
    order = ds.column_names
    feats = ds.features
    for name, values in columns.items():
        ds = ds.remove_columns(name).add_column(name, values, feature=feats[name])
    return ds.select_columns(order)


def with_source_clips(ds, category: str, *, source: str | None = None):
    """``ds`` plus every unmodified source clip (Hub config ``sources``) as a ``constant`` clip
    of ``category`` (id ``<source_id>__<category>__source``)."""
    import datasets

    src = load_split(SOURCES_CONFIG, source=source)
    cat = vocalgrad.category(category)
    n = len(src)
    src = replace_columns(src, id=[f"{sid}__{cat.name}__source" for sid in src["source_id"]],
                           category=[cat.name] * n, attribute=[cat.attribute] * n,
                           direction=[vocalgrad.CONSTANT] * n, label=[vocalgrad.CONSTANT] * n)
    try:
        src = src.select_columns(ds.column_names).cast(ds.features)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{dataset_source(source)} [{SOURCES_CONFIG}]: columns do not match the clips "
                         f"of {category!r} ({exc}); rebuild the Hub folder with `vocalgrad hub`") from None
    return datasets.concatenate_datasets([ds, src])


def process_docs(dataset):
    """Replace the audio bytes in the docs by a reference (``audio_ref``) for :func:`doc_to_audio`.

    Docs then hold only metadata, so lm-eval's per-sample logs stay small; the bytes stay in the
    (memory-mapped) dataset until a model reads them.
    """
    if "audio" not in dataset.column_names:
        return dataset
    key = getattr(dataset, "_fingerprint", None) or f"ds{id(dataset)}"
    if key in _PROCESSED:
        return _PROCESSED[key]
    AUDIO_STORES[key] = dataset.select_columns(["audio"])
    meta = dataset.remove_columns(["audio"])
    docs = DocList(meta.to_list())
    for row, doc in enumerate(docs):
        doc["audio_ref"] = f"{key}#{row}"
    docs.features = meta.features
    _PROCESSED[key] = docs
    return docs


class DocList(list):
    """Docs as plain dicts (lm-eval iterates them several times; Arrow row access is slower).

    ``features`` mirrors ``datasets.Dataset.features`` (lm-eval reads its keys).
    """

    features: Any = None

    @property
    def column_names(self) -> list[str]:
        return list(self[0]) if self else []


def doc_to_audio(doc: Mapping[str, Any]) -> list[ClipAudio]:
    """One-element list with the clip's audio as a lazy ``{"array", "sampling_rate"}`` mapping.

    Raises
    ------
    KeyError
        If the doc has neither ``audio`` nor an ``audio_ref`` made by :func:`process_docs` in
        this process.
    """
    cid = doc.get("id", "?")
    if doc.get("audio") is not None:
        return [ClipAudio(cid, doc["audio"])]
    key, _, row = str(doc.get("audio_ref") or "").rpartition("#")
    if key not in AUDIO_STORES:
        raise KeyError(
            f"no audio for clip {cid!r}: the doc has no 'audio' field and no audio_ref from "
            f"process_docs in this process"
        )
    clip = ClipAudio(cid, AUDIO_STORES[key], int(row))
    CLIP_SHA256[str(doc.get("audio_ref"))] = clip.sha256
    return [clip]
