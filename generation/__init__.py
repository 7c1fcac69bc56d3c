"""Offline pipeline that renders VocalGrad clips: sources -> speech span -> schedule -> transform -> files.

Importing the package hands the vocabulary (``vocalgrad.py``, which imports nothing of the toolkit)
what only the pipeline knows: the installed extension attributes (:mod:`generation.attributes`) and
the steps of the ``datasets`` builder (:mod:`generation.builder_steps`). Both are imported only when
first asked for.
"""

from __future__ import annotations

import vocalgrad


def _extension_categories() -> dict:
    """The installed extension attributes (not the paper's nine) as ``vocalgrad.Category``, by name."""
    from .attributes import installed

    return {a.name: a.category() for a in installed().values() if not a.paper}


def _builder_steps():
    from . import builder_steps

    return builder_steps


vocalgrad.register_extensions(_extension_categories)
vocalgrad.register_builder_steps(_builder_steps)
