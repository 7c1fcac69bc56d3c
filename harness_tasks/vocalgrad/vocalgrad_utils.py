"""Shim loaded by lm-eval for the ``!function vocalgrad_utils.*`` references in the YAMLs.

lm-eval imports this file by path. It makes sure the ``harness_tasks`` package (and the
``vocalgrad`` module) next to this task folder are importable, also when ``lm_eval`` runs from a
source checkout that is not installed, then re-exports the task hooks.
"""

import sys
from pathlib import Path

if "harness_tasks" not in sys.modules:
    _root = Path(__file__).resolve().parents[2]
    if (_root / "harness_tasks" / "__init__.py").is_file() and str(_root) not in sys.path:
        sys.path.insert(0, str(_root))

from harness_tasks.utils import *  # noqa: E402,F401,F403  (hooks and agg_* functions, see __all__)
