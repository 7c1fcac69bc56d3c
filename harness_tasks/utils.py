"""Glue between lm-eval's task YAMLs and VocalGrad: dataset loading, prompts, audio, scoring.

The task YAMLs under ``harness_tasks/vocalgrad/`` reference these functions (through the
``vocalgrad_utils`` shim next to them). Nothing here imports torch.

Dataset source (first that is set wins):

1. ``--metadata vocalgrad_dataset=...`` (lm-eval's task metadata),
2. the environment variable ``VOCALGRAD_DATASET``,
3. the Hub id ``ynklab/vocalgrad``.

A value that is an existing folder is read as a Hub repo folder made by ``vocalgrad hub``
(``<config>/<split>-0000N-of-0000M.parquet``); anything else is passed to
``datasets.load_dataset`` as a repo id with the category as config name.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import vocalgrad

from . import metrics
from .clip_audio import ClipAudio
from .parsing import classify_answer, is_exact_match

log = logging.getLogger("vocalgrad")

__all__ = [
    "DATASET_ENV",
    "RECORD_METRICS",
    "dataset_source",
    "doc_to_audio",
    "doc_to_target",
    "doc_to_text",
    "load_split",
    "load_task_dataset",
    "process_docs",
    "process_results",
]

#: Environment variable naming the dataset (local Hub folder or repo id).
DATASET_ENV = "VOCALGRAD_DATASET"
#: Task metrics aggregated from per-doc records (``acc`` itself is a plain 0/1 mean).
RECORD_METRICS: tuple[str, ...] = (
    "acc_parsed", "balanced_acc", "acc_increase", "acc_decrease", "increase_ratio",
    "increase_ratio_all", "unparsed_rate", "error_rate", "exact_match_rate",
)

# store key -> audio-only dataset; docs point into it with "audio_ref" = "<key>#<row>".
_AUDIO_STORES: dict[str, Any] = {}
_PROCESSED: dict[str, Any] = {}


# ----------------------------------------------------------------------------- dataset
def dataset_source(explicit: str | None = None) -> str:
    """The dataset to read: ``explicit``, else ``$VOCALGRAD_DATASET``, else the Hub id."""
    return explicit or os.environ.get(DATASET_ENV) or vocalgrad.HUB_REPO_ID


def _local_files(folder: Path, config: str, split: str) -> list[str]:
    cdir = folder / config
    if not cdir.is_dir():
        have = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        raise FileNotFoundError(
            f"{folder}: no config folder {config!r} (found: {', '.join(have) or 'none'}); "
            f"build the folder with `vocalgrad hub` or point {DATASET_ENV} elsewhere"
        )
    files = sorted(str(p) for p in cdir.glob(f"{split}-*.parquet"))
    if not files:
        raise FileNotFoundError(f"{cdir}: no '{split}-*.parquet' shards for split {split!r}")
    return files


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
    if Path(src).expanduser().is_dir():
        folder = Path(src).expanduser()
        ds = datasets.load_dataset("parquet", data_files={split: _local_files(folder, config, split)},
                                   split=split)
    else:
        try:
            ds = datasets.load_dataset(src, config, split=split)
        except Exception as exc:
            raise RuntimeError(
                f"cannot load VocalGrad config {config!r} split {split!r} from {src!r} "
                f"({type(exc).__name__}: {exc}). Offline? Set {DATASET_ENV} to a local Hub folder "
                f"made by `vocalgrad hub`."
            ) from exc
    if "audio" not in ds.column_names:
        raise ValueError(f"{src} [{config}/{split}]: no 'audio' column (columns: {ds.column_names})")
    if isinstance(ds.features["audio"], datasets.Audio):
        ds = ds.cast_column("audio", datasets.Audio(decode=False))
    if category is not None and category != config:
        ds = ds.filter(lambda c: c == category, input_columns="category")
    log.info("VocalGrad %s/%s: %d clips from %s", config, split, len(ds), src)
    return ds


def load_task_dataset(*, vocalgrad_config: str, vocalgrad_category: str | None = None,
                      vocalgrad_split: str = "test", vocalgrad_dataset: str | None = None,
                      **_ignored: Any):
    """``custom_dataset`` hook of the task YAMLs: ``DatasetDict({split: Dataset})``.

    lm-eval calls it with the task's ``dataset_kwargs`` and metadata (which also holds the
    model arguments; unknown keys are ignored).
    """
    import datasets

    ds = load_split(vocalgrad_config, split=vocalgrad_split, source=vocalgrad_dataset,
                    category=vocalgrad_category)
    return datasets.DatasetDict({vocalgrad_split: ds})


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
    _AUDIO_STORES[key] = dataset.select_columns(["audio"])
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


# ----------------------------------------------------------------------------- doc hooks
def doc_to_text(doc: Mapping[str, Any]) -> str:
    """Default prompt of SPEC §7 for the doc's category."""
    return vocalgrad.build_prompt(doc["category"])


def doc_to_text_swap(doc: Mapping[str, Any]) -> str:
    """Prompt variant with the two directions swapped."""
    return vocalgrad.build_prompt(doc["category"], "swap")


def doc_to_text_audioref(doc: Mapping[str, Any]) -> str:
    """Prompt variant that refers to "this audio clip"."""
    return vocalgrad.build_prompt(doc["category"], "audioref")


def doc_to_target(doc: Mapping[str, Any]) -> str:
    """Gold label: ``increase`` or ``decrease``."""
    return doc.get("label") or doc["direction"]


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
    if key not in _AUDIO_STORES:
        raise KeyError(
            f"no audio for clip {cid!r}: the doc has no 'audio' field and no audio_ref from "
            f"process_docs in this process"
        )
    return [ClipAudio(cid, _AUDIO_STORES[key], int(row))]


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score one answer: ``acc`` as 0/1, the other metrics from a compact record code.

    The code (``gold:pred:status:exact|other[:retried]``, see
    :func:`harness_tasks.metrics.record_code`) lands in lm-eval's per-sample log next to the
    doc (clip id, tier, trajectory, ...) and the raw output.
    """
    raw = results[0] if results else None
    gold = doc_to_target(doc)
    pred, status = classify_answer(raw)
    code = metrics.record_code({"direction": gold, "pred": pred, "status": status,
                                "exact": is_exact_match(raw), "retried": getattr(raw, "retried", False)})
    out: dict[str, Any] = {"acc": float(pred == gold)}
    for name in RECORD_METRICS:
        out[name] = code
    return out


# ----------------------------------------------------------------------------- aggregations
def _agg(name: str):
    def agg(items: list[str]) -> float:
        return metrics.metric_from_table(name, metrics.tabulate(items))

    agg.__name__ = f"agg_{name}"
    agg.__doc__ = f"lm-eval aggregation: ``{name}`` over per-doc records (see harness_tasks.metrics)."
    return agg


agg_acc_parsed = _agg("acc_parsed")
agg_balanced_acc = _agg("balanced_acc")
agg_acc_increase = _agg("acc_increase")
agg_acc_decrease = _agg("acc_decrease")
agg_increase_ratio = _agg("increase_ratio")
agg_increase_ratio_all = _agg("increase_ratio_all")
agg_unparsed_rate = _agg("unparsed_rate")
agg_error_rate = _agg("error_rate")
agg_exact_match_rate = _agg("exact_match_rate")
