"""Voice pitch: a per-chunk shift in semitones (phase-vocoder stretch, soxr resampling back)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._stft import STFTParams, fix_length, segment_stft, stretch_rows
from .base import ParamError, Result, ValueRange, register, render_chunked

__all__ = ["PitchShiftParams", "pitch_shift"]

SOXR_QUALITIES = ("soxr_vhq", "soxr_hq", "soxr_mq", "soxr_lq", "soxr_qq")


@dataclass(frozen=True, kw_only=True)
class PitchShiftParams(STFTParams):
    """Phase-vocoder STFT, the resampler quality ``res_type`` (one of :data:`SOXR_QUALITIES`) and the cross-fade.

    Step values are shifts in semitones, [-24, 24] (two octaves each way).
    """

    res_type: str
    value_name = "shift (semitones)"

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(-24.0, 24.0)

    def check(self) -> None:
        super().check()
        if self.res_type not in SOXR_QUALITIES:
            raise ParamError("res_type", f"must be one of {', '.join(SOXR_QUALITIES)}, got {self.res_type!r}")


@register("pitch_shift", PitchShiftParams, np.float32)
def pitch_shift(x, sr, schedule, params: PitchShiftParams, *, cache=None) -> Result:
    """Voice pitch: per-chunk shift in semitones (stretch by ``2**(-n/12)``, soxr resampling back), float32 out.

    Audio outside the span is untouched. Batched equivalent of one
    ``librosa.effects.pitch_shift`` call per chunk (:mod:`._stft`); pieces are memoised per
    (chunk, shift) across a source's clips. See also :func:`generation.transforms.speed.time_stretch`.
    """
    import soxr

    st = segment_stft(x, schedule.layout, params.n_fft, params.hop_length, cache)
    semis = np.asarray(schedule.values, dtype=np.float64)
    memo = cache.setdefault(("pitch_pieces", id(st)), {}) if cache is not None else {}
    need = [i for i, v in enumerate(semis) if (i, float(v)) not in memo]
    if need:
        rates = np.array([2.0 ** (-float(semis[i]) / 12) for i in need])
        stretched = stretch_rows(st, np.array(need), rates)
        # soxr's per-call set-up dominates; rows sharing a ratio and length go through one
        # multi-channel call (bit-identical per channel to separate calls).
        by_ratio: dict = {}
        for j, ys in enumerate(stretched):
            by_ratio.setdefault((float(rates[j]), len(ys)), []).append(j)
        for (rate, _), js in by_ratio.items():
            orig_sr = float(sr) / rate
            stack = np.stack([stretched[j] for j in js], axis=1)
            res = np.asarray(soxr.resample(stack, orig_sr, sr, quality=params.res_type), dtype=np.float32)
            n_samples = int(np.ceil(stack.shape[0] * (float(sr) / orig_sr)))
            for col, j in enumerate(js):
                i = need[j]
                seg, c, k = st.segments[i]
                y = fix_length(fix_length(res[:, col], n_samples), len(seg))
                memo[(i, float(semis[i]))] = y[c:c + k]
    pieces = [memo[(i, float(v))] for i, v in enumerate(semis)]
    return render_chunked(x, schedule, params, pieces, outside="keep")
