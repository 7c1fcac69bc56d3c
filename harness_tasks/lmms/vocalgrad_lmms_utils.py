"""Shim loaded by lmms-eval for the ``!function vocalgrad_lmms_utils.*`` references in the YAMLs.

lmms-eval imports this file by path. It makes sure the ``harness_tasks`` package next to this
task folder is importable, also from a source checkout that is not installed, then re-exports the
lmms-eval hooks (:mod:`harness_tasks.lmms_hooks`).
"""

import sys
from pathlib import Path

if "harness_tasks" not in sys.modules:
    _root = Path(__file__).resolve().parents[2]
    if (_root / "harness_tasks" / "__init__.py").is_file() and str(_root) not in sys.path:
        sys.path.insert(0, str(_root))

from harness_tasks.lmms_hooks import *  # noqa: E402,F401,F403  (task class, hooks, agg_* functions)
