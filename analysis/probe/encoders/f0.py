"""The decoded-f0 layer of the pitch trackers (``pesto``, ``torchcrepe:*``, ``fcpe``).

A pitch tracker's last layer (:data:`F0_LAYER`, after its network's own layers, whose numbers
stay as they were) is the f0 that its package decodes from the network's output by default, one
value per frame: log2 of f0 in Hz where the package's voicing calls the frame voiced, NaN where
not. Each adapter writes down its decoder (:meth:`PitchTracker.decoder_settings`, part of the feature
cache's key); the choices were fixed before any probe result, but for one range, below:

- ``torchcrepe``: ``torchcrepe.postprocess`` with the package's default decoder
  (``torchcrepe.decode.viterbi``) over its README's range for speech (50-550 Hz; first fixed as
  ``predict``'s default 50-2,006 Hz, changed when the decoded f0 of the unshifted demo sources
  was found at the top of that range: docs/probe.md),
  each frame at its bin's centre (the package adds random dither of up to one bin, 20 cents, from
  numpy's global generator; left out so that the layer is deterministic);
  voicing from the periodicity as the package's README recommends: ``threshold.Silence(-60)``
  (CREPE is confident in silence) then ``threshold.At(0.21)`` ("a threshold of 0.21 has worked"
  for clean speech). The README's 10-20-ms median filter of the periodicity is one frame at the
  adapter's 20-ms hop, i.e. no filter.
- ``pesto``: ``pesto.predict``'s default reduction (``"alwa"``) of its activations and its confidence
  classifier; the package documents no voicing threshold, so a frame is voiced when the
  confidence (a sigmoid "whether a frame is voiced") is >= 0.5.
- ``fcpe``: ``InferCFNaiveMelPE.infer``'s defaults: the ``local_argmax`` decoder at threshold
  0.006, a frame unvoiced when its f0 is below the checkpoint's ``f0_min``.

The layer is pooled by :func:`~analysis.probe.pooling.pool_voiced_f0` (per segment the median
of its voiced frames minus the clip's median; 0 where nothing is voiced), not by the mean.
"""

from __future__ import annotations

import numpy as np

from ..pooling import N_SEGMENTS, pool_voiced_f0
from .base import Encoder

__all__ = ["F0_LAYER", "PitchTracker", "log2_f0"]

#: Name of the decoded-f0 layer (the last layer of every pitch tracker).
F0_LAYER = "decoded f0"


def log2_f0(hz, voiced) -> np.ndarray:
    """``(frames, 1)`` float32: log2 of ``hz`` where ``voiced``, NaN elsewhere (and where ``hz`` is not > 0)."""
    hz = np.asarray(hz, dtype=np.float64).reshape(-1)
    keep = np.asarray(voiced, dtype=bool).reshape(-1) & (hz > 0)
    out = np.full(len(hz), np.nan)
    out[keep] = np.log2(hz[keep])
    return out.astype(np.float32)[:, None]


class PitchTracker(Encoder):
    """An :class:`Encoder` whose last layer is :data:`F0_LAYER`, pooled by :func:`pool_voiced_f0`."""

    @property
    def f0_layer(self) -> int:
        return self.n_layers

    def decoder_settings(self) -> dict:
        """The settings of the f0 decoding (recorded in the output; a change re-extracts the features)."""
        raise NotImplementedError

    def identity(self) -> dict:
        return {**super().identity(), "decoder": self.decoder_settings()}

    def provenance(self) -> dict:
        return {**super().provenance(), "decoder": self.decoder_settings()}

    def pool(self, layer: int, seq: np.ndarray, n_segments: int = N_SEGMENTS) -> np.ndarray:
        if layer == self.f0_layer:
            return pool_voiced_f0(seq, n_segments)
        return super().pool(layer, seq, n_segments)
