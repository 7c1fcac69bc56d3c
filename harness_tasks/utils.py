"""Glue between lm-eval's task YAMLs and VocalGrad: the names the YAMLs reference.

The task YAMLs under ``harness_tasks/vocalgrad/`` name functions as ``vocalgrad_utils.<name>``
(through the ``vocalgrad_utils`` shim next to them, which re-exports this module). They are
defined along four seams; nothing here imports torch:

=========================== ===========================================================
:mod:`.dataset`             which dataset, one config/split, source clips, docs and their audio
:mod:`.fewshot`             few-shot examples: choice, audio, prompt
:mod:`.hooks`               ``custom_dataset``, ``doc_to_text``, ``doc_to_target``, ``process_results``
:mod:`.aggregations`        one lm-eval aggregation function per metric
=========================== ===========================================================

Variants and formats are tabulated in :mod:`.variants`.
"""

from __future__ import annotations

from . import aggregations, dataset, fewshot, hooks
from .aggregations import *  # noqa: F401,F403
from .dataset import *  # noqa: F401,F403
from .fewshot import *  # noqa: F401,F403
from .hooks import *  # noqa: F401,F403
from .variants import FORMATS

__all__ = ["FORMATS", *dataset.__all__, *fewshot.__all__, *hooks.__all__, *aggregations.__all__]
