"""Speaking speed: a per-chunk phase-vocoder time stretch; the clip length changes (benchmark.md §4 speed)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._stft import STFTParams, segment_stft, stretch_rows
from .base import Result, ValueRange, register, render_chunked

__all__ = ["TimeStretchParams", "time_stretch"]


@dataclass(frozen=True, kw_only=True)
class TimeStretchParams(STFTParams):
    """Phase-vocoder STFT (``n_fft``, ``hop_length``) and the recipe's cross-fade.

    Step values are playback rates in [0.25, 4] (> 1 = faster; the same stretch range as a
    +-24-semitone pitch shift).
    """

    value_name = "rate"

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(0.25, 4.0)


@register("time_stretch", TimeStretchParams, np.float32)
def time_stretch(x, sr, schedule, params: TimeStretchParams, *, cache=None) -> Result:
    """Speaking speed: per-chunk phase-vocoder stretch (rate > 1 = faster), float32 out.

    Keeps ``[int(c / r), int((c + k) / r))`` of each stretched chunk-with-context (c = left context,
    k = chunk length); audio outside the span is untouched. Batched equivalent of one
    ``librosa.effects.time_stretch`` call per chunk (:mod:`._stft`). See also
    :func:`generation.transforms.pitch.pitch_shift`.
    """
    st = segment_stft(x, schedule.layout, params.n_fft, params.hop_length, cache)
    rates = np.asarray(schedule.values, dtype=np.float64)
    full = stretch_rows(st, np.arange(len(rates)), rates)
    pieces = []
    for (seg, c, k), r, y in zip(st.segments, rates, full):
        pieces.append(y[int(c / r): int((c + k) / r)])
    return render_chunked(x, schedule, params, pieces, outside="keep")
