"""``vocalgrad report``: tables, intervals, response bias, plots and the paper's numbers.

Reads lm-eval output folders (results JSON + ``--log_samples`` JSONL) and writes
``report.md``, ``report.json`` and PNG plots. See ``docs/report.md``.

>>> from analysis.report import build_report                     # doctest: +SKIP
>>> build_report(["results/"], "report/")                          # doctest: +SKIP
"""

from __future__ import annotations

from generation.paper_results import PAPER_CATEGORY_ACC, PAPER_TRAJECTORY_ACC, paper_rows

__all__ = ["PAPER_CATEGORY_ACC", "PAPER_TRAJECTORY_ACC", "build_report", "paper_rows", "register_cli"]


def build_report(*args, **kwargs):
    """See :func:`analysis.report.command.build_report`."""
    from .command import build_report as _build

    return _build(*args, **kwargs)


def register_cli(sub) -> None:
    """Add the ``report`` sub-command (see :mod:`vocalgrad_commands.cli`)."""
    from .command import register_cli as _register

    _register(sub)
