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


def run_probe(*, encoder: str | None = None, **kwargs):
    """See :func:`analysis.probe.run.run_probe`; with ``encoder``, a pretrained audio encoder instead of a
    model (:func:`analysis.probe.encoder_run.run_encoder_probe`, stages ``mel`` and ``encoder``)."""
    if encoder is None:
        from .run import run_probe as _run

        return _run(**kwargs)
    if kwargs.pop("model", None) is not None:
        raise ValueError("--model and --encoder are exclusive: probe one network per run")
    import inspect

    from .encoder_run import run_encoder_probe

    keep = set(inspect.signature(run_encoder_probe).parameters) - {"encoder"}
    extra = sorted(k for k, v in kwargs.items() if k not in keep and v is not None)
    if extra:
        raise TypeError(f"run_probe(encoder=...) does not take {', '.join(extra)} (model settings)")
    return run_encoder_probe(encoder=encoder, **{k: v for k, v in kwargs.items() if k in keep})
