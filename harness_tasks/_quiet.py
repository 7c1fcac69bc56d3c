"""Silence lm-eval log lines that VocalGrad's own task design triggers (nothing the user can act on).

lm-eval 0.4.13 warns once per task that loads its data through ``custom_dataset`` ("Custom kwargs can be
passed to `--metadata` ..."): every VocalGrad task does, so a ``--tasks vocalgrad`` run printed nine copies.
Only those lines, and only for ``vocalgrad*`` tasks, are dropped; lm-eval's other warnings (``--limit``, ...)
stay.
"""

from __future__ import annotations

import logging

__all__ = ["quiet_known_warnings", "OurWarningsFilter"]

#: (logger name, message prefix after "<task>: ") of the lines dropped for VocalGrad tasks.
OUR_WARNINGS = (("lm_eval.api.task", "Custom kwargs can be passed to `--metadata`"),)


class OurWarningsFilter(logging.Filter):
    """Drop the :data:`OUR_WARNINGS` records of ``vocalgrad*`` tasks."""

    def __init__(self, prefix: str):
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        task, sep, rest = record.getMessage().partition(": ")
        return not (sep and task.startswith("vocalgrad") and rest.startswith(self.prefix))


def quiet_known_warnings() -> None:
    """Install the filters (idempotent)."""
    for name, prefix in OUR_WARNINGS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OurWarningsFilter) and f.prefix == prefix for f in logger.filters):
            logger.addFilter(OurWarningsFilter(prefix))
