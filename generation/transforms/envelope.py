"""Former home of the sample-wise effects, kept as an import path: :func:`per_sample` now lives in
:mod:`.base`, :func:`noise_seed` in :mod:`.noise` (the noise effect owns its seed rule)."""

from .base import per_sample
from .noise import noise_seed

__all__ = ["per_sample", "noise_seed"]
