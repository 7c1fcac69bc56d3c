"""The names lmms-eval's VocalGrad task YAMLs reference (``harness_tasks/lmms/``), for lmms-eval 0.7.

Everything that decides a number is the lm-eval tasks' own definition, imported from
:mod:`.hooks`, :mod:`.dataset` and :mod:`.aggregations` (prompt, parser, record codes, metrics,
dataset selection). What is here only adapts lmms-eval's task API:

* :class:`VocalGradTask` loads the split with :func:`harness_tasks.hooks.load_task_dataset` (lmms-eval
  0.7 has no ``custom_dataset``; its own loader calls ``datasets.load_dataset(dataset_path, ...)``,
  which cannot read ``$VOCALGRAD_DATASET`` nor the authors' published layout);
* lmms-eval 0.7 drops the doc from its sample logs (``<date>_samples_<task>.jsonl``): every
  ``process_results*`` hook here adds the metric ``clip`` (:func:`clip_record`: the doc's metadata
  and the sha256 of the clip's audio bytes), so the report reads clip ids, tiers and sources, and a
  run's dataset build, from lmms-eval logs as from lm-eval's ``doc``;
* the ``doc_to_text*`` hooks take lmms-eval's optional ``lmms_eval_specific_kwargs`` and put its
  ``pre_prompt`` / ``post_prompt`` (empty unless a user sets them) around the lm-eval prompt.

Imports lmms-eval: load this module only from lmms-eval (through the shim).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lmms_eval.api.task import ConfigurableTask

from . import hooks
from .aggregations import *  # noqa: F401,F403  (agg_* functions the YAMLs name)
from .aggregations import __all__ as _aggregations
from .dataset import doc_to_audio, process_docs
from .hooks import doc_to_target

__all__ = ["CLIP_METRIC", "VocalGradTask", "agg_clips", "clip_record", "doc_to_audio", "doc_to_target", "doc_to_text", "doc_to_text_audioref",
           "doc_to_text_reword", "doc_to_text_swap", "doc_to_text_ternary", "doc_to_text_yesno",
           "process_docs", "process_results", "process_results_paraphrase", "process_results_reword",
           "process_results_sources", "process_results_ternary", "process_results_yesno", *_aggregations]


class VocalGradTask(ConfigurableTask):
    """lmms-eval ``ConfigurableTask`` that reads VocalGrad like the lm-eval tasks do.

    ``download`` calls :func:`harness_tasks.hooks.load_task_dataset` with the task's
    ``dataset_kwargs`` (``vocalgrad_config``, ``vocalgrad_category``, ``vocalgrad_format``), so the
    dataset is ``$VOCALGRAD_DATASET`` (a local Hub folder made by ``vocalgrad hub``, or a repo id)
    or ``ynklab/vocalgrad``; then ``process_docs`` keeps the audio out of the docs (sample logs stay
    small) and ``doc_to_visual`` hands the clip to the model as ``{"array", "sampling_rate"}``.
    """

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        # the YAML key `class` names this class; TaskConfig has no such field
        super().__init__(config={k: v for k, v in dict(config or {}).items() if k != "class"}, **kwargs)

    def download(self, dataset_kwargs: Mapping[str, Any] | None = None) -> None:
        loaded = hooks.load_task_dataset(**dict(dataset_kwargs or {}))
        self.dataset = {split: (self.config.process_docs(ds) if self.config.process_docs else ds)
                        for split, ds in loaded.items()}
        self.dataset_no_image = self.dataset  # the docs hold no audio after process_docs


def _lmms_text(fn: Callable[[Mapping[str, Any]], str]) -> Callable[..., str]:
    def hook(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None) -> str:
        kw = lmms_eval_specific_kwargs or {}
        return f"{kw.get('pre_prompt', '')}{fn(doc)}{kw.get('post_prompt', '')}"

    hook.__name__ = fn.__name__
    hook.__doc__ = f"{fn.__doc__}\n\n(lmms-eval: ``pre_prompt`` + this + ``post_prompt`` of ``lmms_eval_specific_kwargs``.)"
    return hook


doc_to_text = _lmms_text(hooks.doc_to_text)
doc_to_text_swap = _lmms_text(hooks.doc_to_text_swap)
doc_to_text_audioref = _lmms_text(hooks.doc_to_text_audioref)
doc_to_text_reword = _lmms_text(hooks.doc_to_text_reword)
doc_to_text_yesno = _lmms_text(hooks.doc_to_text_yesno)
doc_to_text_ternary = _lmms_text(hooks.doc_to_text_ternary)


#: Metric whose per-sample value is the clip's record (:func:`clip_record`), logged by lmms-eval.
CLIP_METRIC = "clip"


def clip_record(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The doc's metadata (no audio, no store reference) plus ``sha256`` of the clip's encoded audio."""
    rec = {k: v for k, v in doc.items() if k not in ("audio", "audio_ref", "fewshot")}
    if not rec.get("sha256"):
        rec["sha256"] = doc_to_audio(doc)[0].sha256
    return rec


def agg_clips(items: list[Any]) -> float:
    """Aggregation of :data:`CLIP_METRIC`: the number of clips answered."""
    return float(len(items))


def _with_clip(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def hook(doc: Mapping[str, Any], results: list[Any], **kwargs: Any) -> dict[str, Any]:
        kwargs.pop("full_docs", None)
        return {**fn(doc, results, **kwargs), CLIP_METRIC: clip_record(doc)}

    hook.__name__ = fn.__name__
    hook.__doc__ = f"{fn.__doc__}\n\n(lmms-eval: plus the metric ``clip``, :func:`clip_record`.)"
    return hook


process_results = _with_clip(hooks.process_results)
process_results_paraphrase = _with_clip(hooks.process_results_paraphrase)
process_results_reword = _with_clip(hooks.process_results_reword)
process_results_sources = _with_clip(hooks.process_results_sources)
process_results_yesno = _with_clip(hooks.process_results_yesno)
process_results_ternary = _with_clip(hooks.process_results_ternary)
