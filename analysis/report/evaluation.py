"""The report's view of lm-eval runs: one model on one task variant or one labelled format.

:mod:`.loading` fills these from lm-eval output folders, :mod:`.authors` from the authors' raw
prediction files; the other report modules read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import vocalgrad

__all__ = ["Evaluation", "FormatEvaluation", "ResultsError"]


class ResultsError(vocalgrad.VocalGradError, ValueError):
    """An lm-eval output file that cannot be read; the message names the file and the fix."""


@dataclass
class _Run:
    """Fields and derived properties shared by :class:`Evaluation` and :class:`FormatEvaluation`.

    The per-run collections are keyword-only, so the subclasses' own positional field (``variant``
    or ``fmt``) follows ``label, model, model_args``.
    """

    label: str
    model: str
    model_args: str
    task_metrics: dict[str, dict[str, float]] = field(default_factory=dict, kw_only=True)
    n_samples: dict[str, int] = field(default_factory=dict, kw_only=True)
    records: list[dict[str, Any]] = field(default_factory=list, kw_only=True)
    files: list[Path] = field(default_factory=list, kw_only=True)
    warnings: list[str] = field(default_factory=list, kw_only=True)
    #: What the row was computed on (:func:`analysis.report.content.row_data`); empty when unknown.
    data: dict[str, Any] = field(default_factory=dict, kw_only=True)

    @property
    def categories(self) -> list[str]:
        """Categories present, in :data:`vocalgrad.CATEGORY_NAMES` order, then extension attributes sorted."""
        have = set(self.task_metrics) | {r["category"] for r in self.records}
        return [c for c in vocalgrad.CATEGORY_NAMES if c in have] + sorted(have - set(vocalgrad.CATEGORY_NAMES))

    @property
    def has_samples(self) -> bool:
        return bool(self.records)


@dataclass
class Evaluation(_Run):
    """One model on one task variant.

    Attributes
    ----------
    label : str
        Name shown in the report (``"vocalgrad-oracle"``, ``"Qwen/Qwen2-Audio-7B-Instruct [swap]"``).
    model, model_args : str
        lm-eval's ``--model`` and ``--model_args`` as recorded in the results file.
    variant : {"default", "swap", "audioref", "beep"}
    task_metrics : dict
        Category -> lm-eval's point metrics (``{"acc": 0.51, "balanced_acc": ...}``).
    n_samples : dict
        Category -> number of clips lm-eval evaluated.
    records : list of dict
        One per logged sample: ``id, category, tier, trajectory, direction, source_id, raw,
        pred, status, exact, retried, correct``. Empty when the run had no ``--log_samples``.
    files : list of Path
        Results and sample files read.
    warnings : list of str
    """

    variant: str


@dataclass
class FormatEvaluation(_Run):
    """One model on the yes/no or the ternary format.

    Attributes
    ----------
    label, model, model_args : str
        As in :class:`Evaluation` (the label carries no format suffix).
    fmt : {"yesno", "ternary"}
    task_metrics : dict
        Category -> lm-eval's point metrics (``acc``, ``macro_f1``, ``pred_<label>``, ...).
    n_samples : dict
        Category -> number of clips lm-eval evaluated.
    records : list of dict
        One per logged sample: ``id, category, source_id, direction`` (the gold *label*:
        yes/no or increase/decrease/constant), ``pred, status, raw, correct``; what
        :func:`harness_tasks.label_metrics.confusion` reads. Empty without ``--log_samples``.
    files : list of Path
    warnings : list of str
    """

    fmt: str
