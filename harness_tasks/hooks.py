"""The hooks the task YAMLs name: ``custom_dataset``, ``doc_to_text``, ``doc_to_target`` and
``process_results`` (scoring one answer into ``acc`` and a record code per metric).

The aggregations of the record codes are in :mod:`.aggregations`; dataset access in
:mod:`.dataset`; few-shot examples in :mod:`.fewshot`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import vocalgrad

from . import metrics, prompts
from .aggregations import LOGIT_METRICS, RECORD_METRICS, label_metric_names
from .dataset import replace_columns, format_label, load_split, with_source_clips
from .fewshot import DEFAULT_FEWSHOT_K, attach_fewshot
from .logit_answers import split_logit_answer
from .models.thinking import answer_text
from .parsing import classify_answer, is_exact_match
from .variants import FORMATS

__all__ = ["doc_to_target", "doc_to_text", "doc_to_text_audioref", "doc_to_text_reword", "doc_to_text_swap",
           "doc_to_text_ternary", "doc_to_text_yesno", "load_task_dataset", "process_results",
           "process_results_paraphrase", "process_results_reword", "process_results_sources",
           "process_results_ternary", "process_results_yesno"]


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
        ds = replace_columns(ds, label=[format_label(d, vocalgrad_format) for d in ds["direction"]])
    if _as_bool(vocalgrad_fewshot):
        ds = attach_fewshot(ds, vocalgrad_category or vocalgrad_config, k=vocalgrad_fewshot_k,
                            seed=vocalgrad_fewshot_seed, source=vocalgrad_dataset)
    return datasets.DatasetDict({vocalgrad_split: ds})


def _as_bool(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


def doc_to_text(doc: Mapping[str, Any]) -> str:
    """Default prompt of benchmark.md §7 for the doc's category."""
    return prompts.build_prompt(doc["category"])


def doc_to_text_swap(doc: Mapping[str, Any]) -> str:
    """Prompt variant with the two directions swapped."""
    return prompts.build_prompt(doc["category"], "swap")


def doc_to_text_audioref(doc: Mapping[str, Any]) -> str:
    """Prompt variant that refers to "this audio clip"."""
    return prompts.build_prompt(doc["category"], "audioref")


def doc_to_text_reword(doc: Mapping[str, Any]) -> str:
    """Per-category rewording with its own answer words (:data:`harness_tasks.prompts.REWORDINGS`; extra group)."""
    return prompts.build_prompt(doc["category"], "reword")


def doc_to_text_yesno(doc: Mapping[str, Any]) -> str:
    """Yes/no format: "Does the ... increase over time?"."""
    return prompts.build_prompt(doc["category"], "yesno")


def doc_to_text_ternary(doc: Mapping[str, Any]) -> str:
    """Ternary format: increase, decrease or constant."""
    return prompts.build_prompt(doc["category"], "ternary")


def doc_to_target(doc: Mapping[str, Any]) -> str:
    """Gold label: ``increase`` or ``decrease``."""
    return doc.get("label") or doc["direction"]


def _reply(results: list[Any]) -> tuple[Any, bool]:
    """The text the parser reads of a reply (after a leading reasoning block,
    :func:`harness_tasks.models.thinking.split_reasoning`; the sample log keeps the whole reply) and
    whether it came from the unparsed-answer retry."""
    raw = results[0] if results else None
    return answer_text(raw), bool(getattr(raw, "retried", False))


def process_results(doc: Mapping[str, Any], results: list[Any], *, words=None) -> dict[str, Any]:
    """Score one answer: ``acc`` as 0/1, the other metrics from a compact record code.

    The code (``gold:pred:status:exact|other[:retried]``, see
    :func:`harness_tasks.metrics.record_code`) lands in lm-eval's per-sample log next to the
    doc (clip id, tier, trajectory, ...) and the raw output. ``words``: answer vocabulary of
    the prompt (default: benchmark.md §7). An answer with a logit tag
    (:mod:`harness_tasks.logit_answers`, ``vocalgrad-hf scoring=logits|both``) also gives
    ``acc_logit`` and ``increase_ratio_logit`` (empty code otherwise: those metrics read nan).
    """
    raw, retried = _reply(results)
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
    words of :data:`harness_tasks.prompts.SYNONYM_WORDS` must name exactly one direction. An exact match is an
    answer that is one vocabulary word."""
    out = process_results(doc, results, words=prompts.SYNONYM_WORDS)
    raw = _reply(results)[0]
    exact = isinstance(raw, str) and any(is_exact_match(raw, {lab: (w,)})
                                         for lab, ws in prompts.SYNONYM_WORDS.items() for w in ws)
    code = metrics.parse_record_code(out["acc_parsed"])
    code["exact"] = exact
    return {**out, **{name: metrics.record_code(code) for name in RECORD_METRICS}}


def process_results_reword(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """:func:`process_results` with the rewording's answer words of the doc's category."""
    return process_results(doc, results, words=prompts.answer_words("reword", doc["category"]))


def process_results_sources(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score the binary question on an unmodified source clip: no gold direction, only what was
    said (record code with gold ``constant``), for the response-bias metrics."""
    raw, retried = _reply(results)
    pred, status = classify_answer(raw)
    code = metrics.record_code({"direction": vocalgrad.CONSTANT, "pred": pred, "status": status,
                                "exact": is_exact_match(raw), "retried": retried})
    return {name: code for name in ("increase_ratio", "unparsed_rate")}


def _process_labels(doc: Mapping[str, Any], results: list[Any], fmt: str) -> dict[str, Any]:
    raw, retried = _reply(results)
    gold = doc["label"]
    words = prompts.answer_words(fmt)
    pred, status = classify_answer(raw, words)
    code = metrics.record_code({"direction": gold, "pred": pred, "status": status,
                                "exact": is_exact_match(raw, words), "retried": retried})
    return {"acc": float(pred == gold), **{name: code for name in label_metric_names(fmt)}}


def process_results_yesno(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score a yes/no answer (gold ``label``: yes/no); metrics from record codes."""
    return _process_labels(doc, results, "yesno")


def process_results_ternary(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score a ternary answer (gold ``label``: increase/decrease/constant)."""
    return _process_labels(doc, results, "ternary")
