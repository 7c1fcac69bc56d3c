"""The VocalGrad ``evaluate`` metric, for users who run their own inference loop.

>>> import evaluate
>>> from harness_tasks.vocalgrad_accuracy import PATH
>>> metric = evaluate.load(PATH)                                                # doctest: +SKIP
>>> metric.compute(predictions=["Increase.", "no idea"], references=["increase", "decrease"])  # doctest: +SKIP

``PATH`` is this folder (as a string: ``evaluate.load`` needs one). The metric script is
``vocalgrad_accuracy.py`` next to this file; see ``docs/report.md``.
"""

from pathlib import Path

__all__ = ["PATH"]

#: Folder to pass to ``evaluate.load``.
PATH = str(Path(__file__).resolve().parent)
