"""How the commands (``vocalgrad``, ``vocalgrad-eval``) print the toolkit's warnings: one line each."""

from __future__ import annotations

import warnings
from pathlib import Path

__all__ = ["plain_warnings"]


#: Where the toolkit's code lives: a warning raised or attributed there is the toolkit's own.
_OUR_CODE = tuple(str(Path(__file__).resolve().parent.parent / name)
                  for name in ("generation", "harness_tasks", "analysis", "vocalgrad_commands", "vocalgrad.py"))
_OUR_PACKAGES = ("generation", "harness_tasks", "analysis", "vocalgrad_commands", "vocalgrad")


def plain_warnings(prog: str) -> None:
    """Print the toolkit's warnings as one line, ``PROG: warning: MESSAGE``, without Python's source line.

    Called by the command-line entry points. A warning is the toolkit's when its class is defined in
    the toolkit (``LabelWarning``, ``SourceWarning``...) or it is attributed to the toolkit's code;
    other libraries' warnings keep Python's format. Only the formatting changes: filters,
    ``pytest.warns`` and ``warnings.catch_warnings(record=True)`` see the same warnings.
    """
    previous = getattr(warnings.formatwarning, "_vocalgrad_previous", warnings.formatwarning)

    def formatwarning(message, category, filename, lineno, line=None):
        ours = (category.__module__.split(".")[0] in _OUR_PACKAGES
                or str(Path(filename).resolve()).startswith(_OUR_CODE))
        if not ours:
            return previous(message, category, filename, lineno, line)
        return f"{prog}: warning: {message}\n"

    formatwarning._vocalgrad_previous = previous
    warnings.formatwarning = formatwarning
