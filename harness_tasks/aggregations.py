"""lm-eval aggregations of the VocalGrad tasks, one plain function per metric.

The task YAMLs name them as ``!function vocalgrad_utils.agg_<metric>[_<suffix>]``. Each reads the
per-doc record codes written by :mod:`.hooks` (:func:`harness_tasks.metrics.record_code`) and
returns one number; the formulas are in :mod:`.metrics`.
"""

from __future__ import annotations

from . import label_metrics, metrics
from .variants import FORMAT_LABELS

__all__ = [
    "LOGIT_METRICS", "RECORD_METRICS", "label_metric_names", "agg_acc_parsed", "agg_balanced_acc",
    "agg_acc_increase", "agg_acc_decrease", "agg_increase_ratio", "agg_increase_ratio_all",
    "agg_unparsed_rate", "agg_error_rate", "agg_exact_match_rate", "agg_acc_logit",
    "agg_increase_ratio_logit", "agg_increase_ratio_sources", "agg_unparsed_rate_sources",
    "agg_macro_f1_yesno", "agg_unparsed_rate_yesno", "agg_pred_yes_yesno", "agg_pred_no_yesno",
    "agg_pred_unparsed_yesno", "agg_macro_f1_ternary", "agg_unparsed_rate_ternary",
    "agg_pred_increase_ternary", "agg_pred_decrease_ternary", "agg_pred_constant_ternary",
    "agg_pred_unparsed_ternary"
]

#: Task metrics aggregated from per-doc records (``acc`` itself is a plain 0/1 mean).
RECORD_METRICS: tuple[str, ...] = (
    "acc_parsed", "balanced_acc", "acc_increase", "acc_decrease", "increase_ratio",
    "increase_ratio_all", "unparsed_rate", "error_rate", "exact_match_rate",
)
#: Metrics of the logit-scored answer (``scoring=logits|both``), aggregated from record codes.
LOGIT_METRICS: tuple[str, ...] = ("acc_logit", "increase_ratio_logit")


def label_metric_names(fmt: str) -> tuple[str, ...]:
    """Metrics of the yes/no and ternary tasks besides ``acc``: ``macro_f1``, ``unparsed_rate`` and
    ``pred_<label>`` / ``pred_unparsed`` of the format."""
    return ("macro_f1", "unparsed_rate", *(f"pred_{lab}" for lab in FORMAT_LABELS[fmt]),
            f"pred_{label_metrics.UNPARSED}")


def _record_metric(name: str, items: list[str]) -> float:
    return metrics.metric_from_table(name, metrics.tabulate(items))


def _logit_metric(name: str, items: list[str]) -> float:
    codes = [c for c in items if c]  # empty code: the answer had no logit tag
    return metrics.metric_from_table(name, metrics.tabulate(codes)) if codes else float("nan")


# ----------------------------------------------------------------------------- default record codes
def agg_acc_parsed(items: list[str]) -> float:
    """lm-eval aggregation: ``acc_parsed`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("acc_parsed", items)


def agg_balanced_acc(items: list[str]) -> float:
    """lm-eval aggregation: ``balanced_acc`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("balanced_acc", items)


def agg_acc_increase(items: list[str]) -> float:
    """lm-eval aggregation: ``acc_increase`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("acc_increase", items)


def agg_acc_decrease(items: list[str]) -> float:
    """lm-eval aggregation: ``acc_decrease`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("acc_decrease", items)


def agg_increase_ratio(items: list[str]) -> float:
    """lm-eval aggregation: ``increase_ratio`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("increase_ratio", items)


def agg_increase_ratio_all(items: list[str]) -> float:
    """lm-eval aggregation: ``increase_ratio_all`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("increase_ratio_all", items)


def agg_unparsed_rate(items: list[str]) -> float:
    """lm-eval aggregation: ``unparsed_rate`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("unparsed_rate", items)


def agg_error_rate(items: list[str]) -> float:
    """lm-eval aggregation: ``error_rate`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("error_rate", items)


def agg_exact_match_rate(items: list[str]) -> float:
    """lm-eval aggregation: ``exact_match_rate`` over per-doc records (see harness_tasks.metrics)."""
    return _record_metric("exact_match_rate", items)


# ----------------------------------------------------------------------------- logit-scored answers
def agg_acc_logit(items: list[str]) -> float:
    """lm-eval aggregation: ``acc`` of the logit-scored answers (nan when there are none)."""
    return _logit_metric("acc", items)


def agg_increase_ratio_logit(items: list[str]) -> float:
    """lm-eval aggregation: ``increase_ratio`` of the logit-scored answers (nan when there are none)."""
    return _logit_metric("increase_ratio", items)


# ----------------------------------------------------------------------------- source clips (response bias)
def agg_increase_ratio_sources(items: list[str]) -> float:
    """lm-eval aggregation: ``increase_ratio`` of the answers on the source clips."""
    return metrics.source_bias(items)["increase_ratio"]


def agg_unparsed_rate_sources(items: list[str]) -> float:
    """lm-eval aggregation: ``unparsed_rate`` of the answers on the source clips."""
    return metrics.source_bias(items)["unparsed_rate"]


# ----------------------------------------------------------------------------- yesno format
def agg_macro_f1_yesno(items: list[str]) -> float:
    """lm-eval aggregation: ``macro_f1`` of the yesno format over per-doc records."""
    return label_metrics.label_metric("macro_f1", "yesno", items)


def agg_unparsed_rate_yesno(items: list[str]) -> float:
    """lm-eval aggregation: ``unparsed_rate`` of the yesno format over per-doc records."""
    return label_metrics.label_metric("unparsed_rate", "yesno", items)


def agg_pred_yes_yesno(items: list[str]) -> float:
    """lm-eval aggregation: ``pred_yes`` of the yesno format over per-doc records."""
    return label_metrics.label_metric("pred_yes", "yesno", items)


def agg_pred_no_yesno(items: list[str]) -> float:
    """lm-eval aggregation: ``pred_no`` of the yesno format over per-doc records."""
    return label_metrics.label_metric("pred_no", "yesno", items)


def agg_pred_unparsed_yesno(items: list[str]) -> float:
    """lm-eval aggregation: ``pred_unparsed`` of the yesno format over per-doc records."""
    return label_metrics.label_metric("pred_unparsed", "yesno", items)


# ----------------------------------------------------------------------------- ternary format
def agg_macro_f1_ternary(items: list[str]) -> float:
    """lm-eval aggregation: ``macro_f1`` of the ternary format over per-doc records."""
    return label_metrics.label_metric("macro_f1", "ternary", items)


def agg_unparsed_rate_ternary(items: list[str]) -> float:
    """lm-eval aggregation: ``unparsed_rate`` of the ternary format over per-doc records."""
    return label_metrics.label_metric("unparsed_rate", "ternary", items)


def agg_pred_increase_ternary(items: list[str]) -> float:
    """lm-eval aggregation: ``pred_increase`` of the ternary format over per-doc records."""
    return label_metrics.label_metric("pred_increase", "ternary", items)


def agg_pred_decrease_ternary(items: list[str]) -> float:
    """lm-eval aggregation: ``pred_decrease`` of the ternary format over per-doc records."""
    return label_metrics.label_metric("pred_decrease", "ternary", items)


def agg_pred_constant_ternary(items: list[str]) -> float:
    """lm-eval aggregation: ``pred_constant`` of the ternary format over per-doc records."""
    return label_metrics.label_metric("pred_constant", "ternary", items)


def agg_pred_unparsed_ternary(items: list[str]) -> float:
    """lm-eval aggregation: ``pred_unparsed`` of the ternary format over per-doc records."""
    return label_metrics.label_metric("pred_unparsed", "ternary", items)
