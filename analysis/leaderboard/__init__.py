"""``vocalgrad leaderboard``: many results folders (lm-eval, ``vocalgrad-eval``) into one static page and table.

One row per model × task variant × dataset build (a build is its digest over the clips' sha256, so rows
from different builds are never merged); the paper's rows are copied and marked. The folder is ready to
be a static Hub Space (``README.md`` front matter, ``index.html``) and a Hub results dataset
(``runs/*.json``, one file per run). See ``docs/leaderboard.md``.
"""

from __future__ import annotations

__all__ = ["register_cli"]


def register_cli(sub) -> None:
    """Add the ``leaderboard`` sub-command (see :mod:`vocalgrad_commands.cli`)."""
    from .command import register_cli as _register

    _register(sub)
