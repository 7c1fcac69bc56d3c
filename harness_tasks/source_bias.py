"""Response bias on clips without a gold direction: the unmodified sources (paper Table 8).

The ``source`` config's clips carry no change, so no answer is right; what a model says about them
measures its bias alone. Records are the compact codes of :func:`harness_tasks.metrics.record_code`
(any gold) or mappings with ``pred`` and ``status``.
"""

from __future__ import annotations

import math

from .metrics import parse_record_code

__all__ = ["source_bias"]


def source_bias(records) -> dict[str, float]:
    """Response bias on clips without a gold direction (the unmodified sources, paper Table 8).

    Parameters
    ----------
    records : iterable
        Record codes (:func:`record_code`, any gold) or mappings with ``pred`` and ``status``.

    Returns
    -------
    dict
        ``increase_ratio`` (share of *increase* among parsed answers), ``unparsed_rate`` (share
        of all answers), ``n``, ``n_parsed``, ``n_increase``.
    """
    n = n_parsed = n_inc = 0
    for rec in records:
        if isinstance(rec, str):
            rec = parse_record_code(rec)
        n += 1
        if rec.get("status") == "parsed":
            n_parsed += 1
            n_inc += rec.get("pred") == "increase"
    return {"increase_ratio": n_inc / n_parsed if n_parsed else math.nan,
            "unparsed_rate": (n - n_parsed) / n if n else math.nan,
            "n": n, "n_parsed": n_parsed, "n_increase": n_inc}
