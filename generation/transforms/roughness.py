"""Roughness: a uniform quantiser at a per-step bit depth, chunk-processed and RMS-matched."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ChunkedParams, Result, ValueRange, chunked, register

__all__ = ["QuantizeParams", "quantize_bits", "quantize_segment", "quantize"]


@dataclass(frozen=True, kw_only=True)
class QuantizeParams(ChunkedParams):
    """Only the recipe's cross-fade; the step values (bits) come from the schedule.

    Tier ends are whole bit depths in [2, 16] (the clips are 16-bit, so more bits change nothing;
    :func:`quantize_bits` would silently raise fewer than 2); an increase clip (more roughness)
    lowers the bit depth.
    """

    value_name = "bit depth"
    increase_sign = -1
    whole_values = True

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(2.0, 16.0)


def quantize_bits(value: float) -> int:
    """Integer bit depth of a roughness step: ``max(2, round(value))``."""
    return max(2, int(round(value)))


def quantize_segment(seg: np.ndarray, bits: int) -> np.ndarray:
    """Symmetric uniform quantiser with ``2**(bits-1) - 1`` codes per side after clipping to [-1, 1]."""
    q = np.float32(2 ** (bits - 1) - 1)
    return (np.round(np.clip(seg, -1.0, 1.0) * q) / q).astype(np.float32)


@register("quantize", QuantizeParams, np.float32)
def quantize(x, sr, schedule, params: QuantizeParams, *, cache=None) -> Result:
    """Roughness: uniform quantiser at an integer bit depth (:func:`quantize_bits`), RMS-matched, float32 out.

    See also :func:`generation.transforms.distortion.sample_hold`.
    """
    return chunked(x, schedule, params, lambda s, v: quantize_segment(s, quantize_bits(v)),
                   rms_matched=True, outside="processed")
