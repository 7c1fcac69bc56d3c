"""Deprecated alias of :mod:`vocalgrad_commands.cli`, where the ``vocalgrad`` command lives now.

Kept only for a ``vocalgrad`` script installed before the command moved (its first line says
``from generation.cli import main``) and for code written against that name; reinstalling the
toolkit makes the script name ``vocalgrad_commands.cli:main``. The one import from ``generation``
up to the command package, allowed by name in ``tests/test_import_layers.py`` (docs/code-layout.md).
"""

from vocalgrad_commands.cli import main

__all__ = ["main"]
