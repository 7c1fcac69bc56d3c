"""lm-eval aggregations of the VocalGrad tasks, one per metric, built from the metric tables.

The task YAMLs name them as ``!function vocalgrad_utils.agg_<metric>[_<suffix>]`` (each name is
bound at the end of the module). Each is an :class:`Aggregation`: it reads the per-doc record
codes written by :mod:`.hooks` (:func:`harness_tasks.metrics.record_code`) and returns one
number; the formulas are in :mod:`.metrics` and :mod:`.label_metrics`. The names come from the
same tables that :mod:`.task_configs` writes into the YAMLs, so a metric is added there and in the
binding at the end (a test ties the two):

==================================== ================================================ =======================
name                                 metric tables                                    reads
==================================== ================================================ =======================
``agg_<m>``                          :data:`RECORD_METRICS`                           every record
``agg_<m>`` (``acc_logit`` ...)      :data:`LOGIT_METRICS`                            records with a logit tag
``agg_<m>_sources``                  :data:`SOURCE_METRICS`                           source-clip answers
``agg_<m>_<fmt>`` (yesno, ternary)   :func:`label_metric_names`                       the format's records
==================================== ================================================ =======================

>>> AGGREGATIONS["agg_balanced_acc"]
vocalgrad_utils.agg_balanced_acc
"""

from __future__ import annotations

from collections.abc import Callable

from . import label_metrics, metrics
from .source_bias import source_bias
from .variants import FORMAT_LABELS, LABELLED_FORMATS

#: Task metrics aggregated from per-doc records (``acc`` itself is a plain 0/1 mean).
RECORD_METRICS: tuple[str, ...] = (
    "acc_parsed", "balanced_acc", "acc_increase", "acc_decrease", "increase_ratio",
    "increase_ratio_all", "unparsed_rate", "error_rate", "blocked_rate", "exact_match_rate",
)
#: Metrics of the logit-scored answer (``scoring=logits|both``), aggregated from record codes.
LOGIT_METRICS: tuple[str, ...] = ("acc_logit", "increase_ratio_logit")
#: Response-bias metrics of the ``vocalgrad_sources`` tasks (unmodified source clips).
SOURCE_METRICS: tuple[str, ...] = ("increase_ratio", "unparsed_rate")


def label_metric_names(fmt: str) -> tuple[str, ...]:
    """Metrics of the yes/no and ternary tasks besides ``acc``: ``macro_f1``, ``unparsed_rate`` and
    ``pred_<label>`` / ``pred_unparsed`` of the format."""
    return ("macro_f1", "unparsed_rate", *(f"pred_{lab}" for lab in FORMAT_LABELS[fmt]),
            f"pred_{label_metrics.UNPARSED}")


class Aggregation:
    """One lm-eval aggregation: ``items`` (the per-doc codes of one metric) -> one number.

    Parameters
    ----------
    name : str
        The name the YAMLs use (``agg_...``).
    compute : callable
        ``compute(items) -> float``.
    doc : str
        What the number is (the docstring).
    """

    def __init__(self, name: str, compute: Callable[[list[str]], float], doc: str):
        self.__name__ = self.__qualname__ = name
        self.__doc__ = f"lm-eval aggregation: {doc}."
        self._compute = compute

    def __call__(self, items: list[str]) -> float:
        return self._compute(items)

    def __repr__(self) -> str:  # what lm-eval writes for the aggregation in the results' configs
        return f"vocalgrad_utils.{self.__name__}"


def _on_records(name: str) -> Callable[[list[str]], float]:
    return lambda items: metrics.metric_from_table(name, metrics.tabulate(items))


def _on_logit_records(name: str) -> Callable[[list[str]], float]:
    def compute(items: list[str]) -> float:
        codes = [c for c in items if c]  # empty code: the answer had no logit tag
        return metrics.metric_from_table(name, metrics.tabulate(codes)) if codes else float("nan")
    return compute


def _on_sources(name: str) -> Callable[[list[str]], float]:
    return lambda items: source_bias(items)[name]


def _on_labels(name: str, fmt: str) -> Callable[[list[str]], float]:
    return lambda items: label_metrics.label_metric(name, fmt, items)


def _build() -> dict[str, Aggregation]:
    specs = [(f"agg_{m}", _on_records(m), f"``{m}`` over per-doc records (see harness_tasks.metrics)")
             for m in RECORD_METRICS]
    specs += [(f"agg_{m}", _on_logit_records(m.removesuffix("_logit")),
               f"``{m.removesuffix('_logit')}`` of the logit-scored answers (nan when there are none)")
              for m in LOGIT_METRICS]
    specs += [(f"agg_{m}_sources", _on_sources(m), f"``{m}`` of the answers on the source clips")
              for m in SOURCE_METRICS]
    specs += [(f"agg_{m}_{fmt}", _on_labels(m, fmt), f"``{m}`` of the {fmt} format over per-doc records")
              for fmt in LABELLED_FORMATS for m in label_metric_names(fmt)]
    return {name: Aggregation(name, compute, doc) for name, compute, doc in specs}


#: Every aggregation the task YAMLs name: ``agg_...`` -> :class:`Aggregation`.
AGGREGATIONS: dict[str, Aggregation] = _build()

# The names the task YAMLs use, bound at module level (grep and static tools find them here), in
# the table's order; tests/test_structure.py checks that each name is bound to its own entry.
(agg_acc_parsed, agg_balanced_acc, agg_acc_increase, agg_acc_decrease, agg_increase_ratio, agg_increase_ratio_all,
 agg_unparsed_rate, agg_error_rate, agg_blocked_rate, agg_exact_match_rate,
 agg_acc_logit, agg_increase_ratio_logit,
 agg_increase_ratio_sources, agg_unparsed_rate_sources,
 agg_macro_f1_yesno, agg_unparsed_rate_yesno, agg_pred_yes_yesno, agg_pred_no_yesno, agg_pred_unparsed_yesno,
 agg_macro_f1_ternary, agg_unparsed_rate_ternary, agg_pred_increase_ternary, agg_pred_decrease_ternary,
 agg_pred_constant_ternary, agg_pred_unparsed_ternary) = AGGREGATIONS.values()

__all__ = ["AGGREGATIONS", "Aggregation", "LOGIT_METRICS", "RECORD_METRICS", "SOURCE_METRICS",
           "label_metric_names", *AGGREGATIONS]
