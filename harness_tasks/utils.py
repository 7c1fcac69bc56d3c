"""Glue between lm-eval's task YAMLs and VocalGrad: dataset loading, prompts, audio, scoring.

The task YAMLs under ``harness_tasks/vocalgrad/`` reference these functions (through the
``vocalgrad_utils`` shim next to them). Nothing here imports torch.

Dataset source (first that is set wins):

1. ``--metadata vocalgrad_dataset=...`` (lm-eval's task metadata),
2. the environment variable ``VOCALGRAD_DATASET``,
3. the Hub id ``ynklab/vocalgrad``.

A value that is an existing folder is read as a Hub repo folder made by ``vocalgrad hub``
(``<config>/<split>-0000N-of-0000M.parquet``); anything else is passed to
``datasets.load_dataset`` as a repo id with the category as config name. The authors' published
AudioFolder layout (a local copy or a repo id) is detected and read by :mod:`.published`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import vocalgrad

from . import metrics, published
from .clip_audio import AUDIO_MARKER, ClipAudio
from .logit_answers import split_logit_answer
from .parsing import classify_answer, is_exact_match
from .variants import FORMATS

log = logging.getLogger("vocalgrad")

__all__ = [
    "DATASET_ENV",
    "RECORD_METRICS",
    "DEFAULT_FEWSHOT_K",
    "FORMATS",
    "attach_fewshot",
    "choose_fewshot",
    "dataset_source",
    "doc_to_audio",
    "doc_to_audio_fewshot",
    "doc_to_target",
    "doc_to_text",
    "doc_to_text_audioref",
    "doc_to_text_fewshot",
    "doc_to_text_reword",
    "doc_to_text_swap",
    "doc_to_text_ternary",
    "doc_to_text_yesno",
    "format_label",
    "label_metric_names",
    "load_split",
    "load_task_dataset",
    "process_docs",
    "process_results",
    "process_results_paraphrase",
    "process_results_reword",
    "process_results_sources",
    "process_results_ternary",
    "process_results_yesno",
    "with_source_clips",
]

#: Examples per query when ``--metadata vocalgrad_fewshot_k=...`` is not given.
DEFAULT_FEWSHOT_K = 4
#: Environment variable naming the dataset (local Hub folder or repo id).
DATASET_ENV = "VOCALGRAD_DATASET"
#: Task metrics aggregated from per-doc records (``acc`` itself is a plain 0/1 mean).
RECORD_METRICS: tuple[str, ...] = (
    "acc_parsed", "balanced_acc", "acc_increase", "acc_decrease", "increase_ratio",
    "increase_ratio_all", "unparsed_rate", "error_rate", "exact_match_rate",
)

#: Metrics of the logit-scored answer (``scoring=logits|both``), aggregated from record codes.
LOGIT_METRICS: tuple[str, ...] = ("acc_logit", "increase_ratio_logit")

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
    if published.is_published(src):  # the authors' AudioFolder release (docs/published.md)
        ds = published.load_config(src, config, split=split)
    elif Path(src).expanduser().is_dir():
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
                      vocalgrad_format: str = "binary", vocalgrad_fewshot: Any = False,
                      vocalgrad_fewshot_k: Any = DEFAULT_FEWSHOT_K, vocalgrad_fewshot_seed: Any = 1234,
                      **_ignored: Any):
    """``custom_dataset`` hook of the task YAMLs: ``DatasetDict({split: Dataset})``.

    lm-eval calls it with the task's ``dataset_kwargs`` and metadata (which also holds the
    model arguments; unknown keys are ignored).

    Parameters
    ----------
    vocalgrad_config, vocalgrad_category, vocalgrad_split, vocalgrad_dataset
        What to load (see :func:`load_split`).
    vocalgrad_format : {"binary", "yesno", "ternary"}
        ``yesno`` and ``ternary`` add the unmodified source clips (Hub config ``sources``) and
        rewrite ``label`` (:func:`format_label`).
    vocalgrad_fewshot : bool
        Attach labelled examples from the ``train`` config to every doc (:func:`attach_fewshot`).
    vocalgrad_fewshot_k, vocalgrad_fewshot_seed
        Number of examples per query and the seed of their choice (``--metadata``).
    """
    import datasets

    ds = load_split(vocalgrad_config, split=vocalgrad_split, source=vocalgrad_dataset,
                    category=vocalgrad_category)
    if vocalgrad_format not in FORMATS:
        raise ValueError(f"vocalgrad_format must be one of {', '.join(FORMATS)}, got {vocalgrad_format!r}")
    if vocalgrad_format != "binary":
        ds = with_source_clips(ds, vocalgrad_category or vocalgrad_config, source=vocalgrad_dataset)
        ds = _replace_columns(ds, label=[format_label(d, vocalgrad_format) for d in ds["direction"]])
    if _as_bool(vocalgrad_fewshot):
        ds = attach_fewshot(ds, vocalgrad_category or vocalgrad_config, k=vocalgrad_fewshot_k,
                            seed=vocalgrad_fewshot_seed, source=vocalgrad_dataset)
    return datasets.DatasetDict({vocalgrad_split: ds})


def _as_bool(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


# ----------------------------------------------------------------------------- formats
#: Hub config holding the unmodified source clips (defined once, in vocalgrad.py).
SOURCES_CONFIG = vocalgrad.SOURCES_CONFIG


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


def _replace_columns(ds, **columns):
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
    src = _replace_columns(src, id=[f"{sid}__{cat.name}__source" for sid in src["source_id"]],
                           category=[cat.name] * n, attribute=[cat.attribute] * n,
                           direction=[vocalgrad.CONSTANT] * n, label=[vocalgrad.CONSTANT] * n)
    try:
        src = src.select_columns(ds.column_names).cast(ds.features)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{dataset_source(source)} [{SOURCES_CONFIG}]: columns do not match the clips "
                         f"of {category!r} ({exc}); rebuild the Hub folder with `vocalgrad hub`") from None
    return datasets.concatenate_datasets([ds, src])


# ----------------------------------------------------------------------------- few-shot
#: Hub config the few-shot examples come from.
FEWSHOT_CONFIG = "train"


def choose_fewshot(query_ids: Sequence[str], query_sources: Sequence[str], pool_labels: Sequence[str],
                   pool_sources: Sequence[str], *, k: int, seed: int = 1234) -> list[list[int]]:
    """Pick ``k`` example rows of the pool for every query.

    The examples of a query never share its source utterance, are balanced between the
    labels (the odd one drawn at random), come in random order and depend only on
    ``(seed, query id)`` — not on the order of the queries or ``--limit``.

    Returns
    -------
    list of list of int
        Pool row indices per query.

    Raises
    ------
    ValueError
        If the pool cannot give a query enough examples from other sources.
    """
    import hashlib

    import numpy as np

    k = int(k)
    if k < 0:
        raise ValueError(f"vocalgrad_fewshot_k must be >= 0, got {k}")
    codes: dict[str, int] = {}
    pool_sources = np.array([codes.setdefault(str(s), len(codes)) for s in pool_sources], dtype=np.int64)
    by_label: dict[str, np.ndarray] = {}
    for lab in sorted(set(pool_labels)):
        by_label[lab] = np.flatnonzero(np.asarray(pool_labels, dtype=object) == lab)
    labels = list(by_label)
    out = []
    for qid, qsrc in zip(query_ids, query_sources):
        h = hashlib.sha256(f"{seed}\x00{qid}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(h[:8], "big"))
        quota = {lab: k // len(labels) for lab in labels} if labels else {}
        for lab in rng.permutation(labels)[: k - sum(quota.values())] if labels else []:
            quota[str(lab)] += 1
        picked: list[int] = []
        for lab in labels:
            allowed = by_label[lab][pool_sources[by_label[lab]] != codes.get(str(qsrc), -1)]
            if len(allowed) < quota[lab]:
                raise ValueError(
                    f"few-shot pool has {len(allowed)} {lab!r} example(s) from sources other than "
                    f"{qsrc!r} (query {qid}), {quota[lab]} needed; lower vocalgrad_fewshot_k or "
                    f"build the {FEWSHOT_CONFIG!r} config from more sources")
            picked += [int(allowed[j]) for j in rng.choice(len(allowed), size=quota[lab], replace=False)]
        if len(picked) < k:
            raise ValueError(f"few-shot pool is empty for query {qid}; build the {FEWSHOT_CONFIG!r} config")
        out.append([picked[j] for j in rng.permutation(len(picked))])
    return out


def attach_fewshot(ds, category: str, *, k: Any = DEFAULT_FEWSHOT_K, seed: Any = 1234,
                   source: str | None = None):
    """Add ``fewshot_ids``, ``fewshot_labels`` and ``fewshot_refs`` (audio references into the
    ``train`` config of the same category) to every row; see :func:`choose_fewshot`."""
    pool = load_split(FEWSHOT_CONFIG, split="train", source=source, category=category)
    rows = choose_fewshot(ds["id"], ds["source_id"], pool["label"], pool["source_id"],
                          k=int(k), seed=int(seed))
    key = "fewshot:" + (getattr(pool, "_fingerprint", None) or f"ds{id(pool)}")
    _AUDIO_STORES.setdefault(key, pool.select_columns(["audio"]))
    ids, labels = pool["id"], pool["label"]
    ds = ds.add_column("fewshot_ids", [[ids[i] for i in r] for r in rows])
    ds = ds.add_column("fewshot_labels", [[labels[i] for i in r] for r in rows])
    return ds.add_column("fewshot_refs", [[f"{key}#{i}" for i in r] for r in rows])


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
    """Default prompt of benchmark.md §7 for the doc's category."""
    return vocalgrad.build_prompt(doc["category"])


def doc_to_text_swap(doc: Mapping[str, Any]) -> str:
    """Prompt variant with the two directions swapped."""
    return vocalgrad.build_prompt(doc["category"], "swap")


def doc_to_text_audioref(doc: Mapping[str, Any]) -> str:
    """Prompt variant that refers to "this audio clip"."""
    return vocalgrad.build_prompt(doc["category"], "audioref")


def doc_to_text_reword(doc: Mapping[str, Any]) -> str:
    """Per-category rewording with its own answer words (:data:`vocalgrad.REWORDINGS`; extra group)."""
    return vocalgrad.build_prompt(doc["category"], "reword")


def doc_to_text_yesno(doc: Mapping[str, Any]) -> str:
    """Yes/no format: "Does the ... increase over time?"."""
    return vocalgrad.build_prompt(doc["category"], "yesno")


def doc_to_text_ternary(doc: Mapping[str, Any]) -> str:
    """Ternary format: increase, decrease or constant."""
    return vocalgrad.build_prompt(doc["category"], "ternary")


def doc_to_text_fewshot(doc: Mapping[str, Any]) -> str:
    """The authors' few-shot layout: a lead-in, each example's audio and label, the query audio,
    then the ``audioref`` question, with one :data:`AUDIO_MARKER` where the adapters put each clip
    (:data:`vocalgrad.FEWSHOT_TEXT`). Without examples: the plain default prompt."""
    labels = doc.get("fewshot_labels") or []
    if not labels:
        return vocalgrad.build_prompt(doc["category"]) + "\n" + AUDIO_MARKER
    t = vocalgrad.FEWSHOT_TEXT
    attribute = vocalgrad.category(doc["category"]).attribute
    parts = [t["intro"].format(k=len(labels), attribute=attribute), ""]
    for n, label in enumerate(labels, 1):
        parts += [t["example"].format(n=n), AUDIO_MARKER, t["label"].format(n=n, label=label), ""]
    parts += [t["query"], AUDIO_MARKER, t["question"], vocalgrad.build_prompt(doc["category"], vocalgrad.FEWSHOT_PROMPT)]
    return "\n".join(parts)


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


def doc_to_audio_fewshot(doc: Mapping[str, Any]) -> list[ClipAudio]:
    """The doc's example clips (in prompt order), then its own clip."""
    clips = []
    for cid, ref in zip(doc.get("fewshot_ids") or [], doc.get("fewshot_refs") or []):
        key, _, row = str(ref).rpartition("#")
        if key not in _AUDIO_STORES:
            raise KeyError(f"no audio for few-shot example {cid!r}: its store {key!r} was not loaded in this process")
        clips.append(ClipAudio(cid, _AUDIO_STORES[key], int(row)))
    return clips + doc_to_audio(doc)


def process_results(doc: Mapping[str, Any], results: list[Any], *, words=None) -> dict[str, Any]:
    """Score one answer: ``acc`` as 0/1, the other metrics from a compact record code.

    The code (``gold:pred:status:exact|other[:retried]``, see
    :func:`harness_tasks.metrics.record_code`) lands in lm-eval's per-sample log next to the
    doc (clip id, tier, trajectory, ...) and the raw output. ``words``: answer vocabulary of
    the prompt (default: benchmark.md §7). An answer with a logit tag
    (:mod:`harness_tasks.logit_answers`, ``vocalgrad-hf scoring=logits|both``) also gives
    ``acc_logit`` and ``increase_ratio_logit`` (empty code otherwise: those metrics read nan).
    """
    raw = results[0] if results else None
    retried = getattr(raw, "retried", False)
    raw, logit_label, _ = split_logit_answer(raw)
    gold = doc_to_target(doc)
    pred, status = classify_answer(raw, words)
    code = metrics.record_code({"direction": gold, "pred": pred, "status": status,
                                "exact": is_exact_match(raw, words), "retried": retried})
    out: dict[str, Any] = {"acc": float(pred == gold)}
    for name in RECORD_METRICS:
        out[name] = code
    logit_code = "" if logit_label is None else metrics.record_code(
        {"direction": gold, "pred": logit_label, "status": "parsed", "exact": True})
    for name in LOGIT_METRICS:
        out[name] = logit_code
    return out


def process_results_paraphrase(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score a paraphrase answer with the synonym parser (``synonym-unique-direction-v1``): whole
    words of :data:`vocalgrad.SYNONYM_WORDS` must name exactly one direction. An exact match is an
    answer that is one vocabulary word."""
    out = process_results(doc, results, words=vocalgrad.SYNONYM_WORDS)
    raw = results[0] if results else None
    exact = isinstance(raw, str) and any(is_exact_match(raw, {lab: (w,)})
                                         for lab, ws in vocalgrad.SYNONYM_WORDS.items() for w in ws)
    code = metrics.parse_record_code(out["acc_parsed"])
    code["exact"] = exact
    return {**out, **{name: metrics.record_code(code) for name in RECORD_METRICS}}


def process_results_reword(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """:func:`process_results` with the rewording's answer words of the doc's category."""
    return process_results(doc, results, words=vocalgrad.answer_words("reword", doc["category"]))


def process_results_sources(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score the binary question on an unmodified source clip: no gold direction, only what was
    said (record code with gold ``constant``), for the response-bias metrics."""
    raw = results[0] if results else None
    pred, status = classify_answer(raw)
    code = metrics.record_code({"direction": vocalgrad.CONSTANT, "pred": pred, "status": status,
                                "exact": is_exact_match(raw), "retried": getattr(raw, "retried", False)})
    return {name: code for name in ("increase_ratio", "unparsed_rate")}


def _agg_sources(name: str):
    def agg(items: list[str]) -> float:
        return metrics.source_bias(items)[name]

    agg.__name__ = f"agg_{name}_sources"
    agg.__doc__ = f"lm-eval aggregation: ``{name}`` of the answers on the source clips."
    return agg


agg_increase_ratio_sources = _agg_sources("increase_ratio")
agg_unparsed_rate_sources = _agg_sources("unparsed_rate")
__all__ += ["agg_increase_ratio_sources", "agg_unparsed_rate_sources"]


#: Metrics of the yes/no and ternary tasks (besides ``acc``), aggregated from record codes.
def label_metric_names(fmt: str) -> tuple[str, ...]:
    """``macro_f1``, ``unparsed_rate`` and ``pred_<label>`` / ``pred_unparsed`` of a format."""
    return ("macro_f1", "unparsed_rate", *(f"pred_{lab}" for lab in metrics.FORMAT_LABELS[fmt]),
            f"pred_{metrics.UNPARSED}")


def _process_labels(doc: Mapping[str, Any], results: list[Any], fmt: str) -> dict[str, Any]:
    raw = results[0] if results else None
    gold = doc["label"]
    words = vocalgrad.answer_words(fmt)
    pred, status = classify_answer(raw, words)
    code = metrics.record_code({"direction": gold, "pred": pred, "status": status,
                                "exact": is_exact_match(raw, words), "retried": getattr(raw, "retried", False)})
    return {"acc": float(pred == gold), **{name: code for name in label_metric_names(fmt)}}


def process_results_yesno(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score a yes/no answer (gold ``label``: yes/no); metrics from record codes."""
    return _process_labels(doc, results, "yesno")


def process_results_ternary(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score a ternary answer (gold ``label``: increase/decrease/constant)."""
    return _process_labels(doc, results, "ternary")


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
__all__ += [f"agg_{name}" for name in RECORD_METRICS]


def _agg_logit(name: str):
    def agg(items: list[str]) -> float:
        codes = [c for c in items if c]
        return metrics.metric_from_table(name, metrics.tabulate(codes)) if codes else float("nan")

    agg.__name__ = f"agg_{name}_logit"
    agg.__doc__ = f"lm-eval aggregation: ``{name}`` of the logit-scored answers (nan when there are none)."
    return agg


agg_acc_logit = _agg_logit("acc")
agg_increase_ratio_logit = _agg_logit("increase_ratio")
__all__ += [f"agg_{name}" for name in LOGIT_METRICS]


def _agg_labels(name: str, fmt: str):
    def agg(items: list[str]) -> float:
        return metrics.label_metric(name, fmt, items)

    agg.__name__ = f"agg_{name}_{fmt}"
    agg.__doc__ = f"lm-eval aggregation: ``{name}`` of the {fmt} format over per-doc records."
    return agg


for _fmt in ("yesno", "ternary"):
    for _name in label_metric_names(_fmt):
        globals()[f"agg_{_name}_{_fmt}"] = _agg_labels(_name, _fmt)
        __all__.append(f"agg_{_name}_{_fmt}")
del _fmt, _name
