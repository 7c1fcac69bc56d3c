"""Linear probing (benchmark.md §10): where does the direction information get lost inside a model?

Modules: :mod:`.data` (clips from a Hub folder/repo), :mod:`.mel` and :mod:`.model_features`
(feature stages), :mod:`.pooling` (16 equal time segments), :mod:`.cache` (float16 feature
cache), :mod:`.trainer` (the probe), :mod:`.report` (csv/markdown/figures), :mod:`.run` (the
pipeline) and :mod:`.cli` (``vocalgrad probe``). Importing this package does not import torch.
"""

from __future__ import annotations

from .cli import register_cli
from .pooling import N_SEGMENTS, pool_segments

__all__ = ["N_SEGMENTS", "pool_segments", "register_cli", "run_probe"]


def run_probe(**kwargs):
    """See :func:`analysis.probe.run.run_probe`."""
    from .run import run_probe as _run

    return _run(**kwargs)
