"""Clarity: an STFT low-pass with a raised-cosine transition, chunk-processed and RMS-matched.

:func:`lowpass_segment` is the plain per-segment form (one librosa STFT/ISTFT pair); :func:`lowpass`
runs it batched over a clip's chunks with the source's shared STFTs (:mod:`._stft`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._stft import STFTParams, memo, segment_stft
from .base import ParamError, Result, ValueRange, register, render_chunked, rms_scale

__all__ = ["LowpassParams", "lowpass_mask", "short_segment_stft", "lowpass_segment", "lowpass"]


@dataclass(frozen=True, kw_only=True)
class LowpassParams(STFTParams):
    """STFT settings, the mask's transition width and the smallest STFT of a short outside segment.

    Attributes
    ----------
    transition_hz : float
        Width of the raised-cosine transition (Hz, >= 0; 0 = hard mask).
    min_fft : int
        Smallest ``n_fft`` for audio before the onset / after the offset shorter than ``n_fft``
        (see :func:`short_segment_stft`), >= 1.

    Step values are cut-offs in (0, Nyquist] Hz; an increase clip (clearer) raises the cut-off.
    """

    transition_hz: float
    min_fft: int = 32
    value_name = "cut-off (Hz)"

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(0.0, sample_rate / 2, low_open=True)

    def check(self) -> None:
        super().check()
        if self.transition_hz < 0:
            raise ParamError("transition_hz", f"must be >= 0 Hz, got {self.transition_hz}")
        if self.min_fft < 1:
            raise ParamError("min_fft", f"must be >= 1, got {self.min_fft}")


def lowpass_mask(freqs: np.ndarray, cutoff: float, transition: float) -> np.ndarray:
    """Raised-cosine low-pass mask: 1 below ``cutoff - transition/2``, 0 above ``cutoff + transition/2``.

    float32, as the reference builds it (the lower edge is clamped at 0 Hz).
    """
    if transition <= 0:
        return (freqs <= cutoff).astype(np.float32)
    lo = max(0.0, cutoff - transition / 2.0)
    hi = cutoff + transition / 2.0
    ramp = 0.5 * (1.0 + np.cos(np.pi * np.clip((freqs - lo) / (hi - lo), 0.0, 1.0)))
    return ramp.astype(np.float32)


def short_segment_stft(length: int, n_fft: int, hop_length: int, min_fft: int) -> tuple[int, int]:
    """(n_fft, hop) the reference uses for a segment of ``length`` samples.

    A segment shorter than ``n_fft`` is transformed with ``n_fft = win = max(min_fft, length)``;
    the hop becomes ``win // 4`` when it is not shorter than the window. Only the audio before the
    onset or after the offset can be that short (context segments are >= one 50-ms block).
    """
    if length <= 0 or n_fft <= length:
        return n_fft, hop_length
    n = max(min_fft, length)
    return n, (hop_length if hop_length < n else max(1, n // 4))


def lowpass_segment(seg: np.ndarray, sr: int, cutoff: float, *, n_fft: int, hop_length: int,
                    transition: float, min_fft: int = 32) -> np.ndarray:
    """Low-pass ``seg`` by an STFT mask (Hann, ``n_fft``/``hop_length``), same length out.

    Segments shorter than ``n_fft`` use the smaller transform of :func:`short_segment_stft`.
    """
    import librosa

    if not len(seg):
        return seg
    n_fft, hop_length = short_segment_stft(len(seg), n_fft, hop_length, min_fft)
    D = librosa.stft(seg, n_fft=n_fft, hop_length=hop_length, window="hann")
    mask = lowpass_mask(librosa.fft_frequencies(sr=sr, n_fft=n_fft), cutoff, transition)
    return librosa.istft(D * mask[:, None], n_fft=n_fft, hop_length=hop_length, window="hann",
                         length=len(seg))


@register("lowpass", LowpassParams, np.float32)
def lowpass(x, sr, schedule, params: LowpassParams, *, cache=None) -> Result:
    """Clarity: STFT low-pass (higher cut-off = clearer), RMS-matched, float32 out.

    Batched equivalent of one :func:`lowpass_segment` per chunk; pieces and the processed audio
    outside the span are memoised per (chunk, cut-off) across a source's clips.
    See also :func:`generation.transforms.distortion.sample_hold`.
    """
    import librosa

    n_fft, hop, width = params.n_fft, params.hop_length, params.transition_hz
    st = segment_stft(x, schedule.layout, n_fft, hop, cache)
    freqs = librosa.fft_frequencies(sr=sr, n_fft=n_fft)
    cut = np.asarray(schedule.values, dtype=np.float64)
    pieces_memo = cache.setdefault(("lowpass_pieces", id(st)), {}) if cache is not None else {}
    need = [i for i, v in enumerate(cut) if (i, float(v)) not in pieces_memo]
    for gi in np.unique(st.group_of[need]) if need else []:
        sel = [i for i in need if st.group_of[i] == gi]
        D = st.groups[gi]["D"][st.row_of[sel]]
        masks = np.stack([lowpass_mask(freqs, cut[i], width) for i in sel])[:, :, None]
        y = librosa.istft(D * masks, n_fft=n_fft, hop_length=hop, window="hann",
                          length=st.groups[gi]["length"])
        for j, i in enumerate(sel):
            seg, c, k = st.segments[i]
            # RMS of the whole filtered chunk-with-context matched to the unfiltered one, then the
            # core cut out (benchmark.md §4a)
            pieces_memo[(i, float(cut[i]))] = (y[j, c:c + k] * rms_scale(y[j, :len(seg)], seg)).astype(np.float32)
    pieces = [pieces_memo[(i, float(v))] for i, v in enumerate(cut)]
    on, off = schedule.span.onset, schedule.span.offset

    def outside(seg, v, tag):
        if not len(seg):
            return seg

        def run():
            out = lowpass_segment(seg, sr, v, n_fft=n_fft, hop_length=hop, transition=width,
                                  min_fft=params.min_fft)
            return (out * rms_scale(out, seg)).astype(np.float32)

        return memo(pieces_memo, (tag, float(v)), run)

    pre, post = outside(x[:on], schedule.start, "pre"), outside(x[off:], schedule.end, "post")
    return render_chunked(x, schedule, params, pieces, outside="processed", pre=pre, post=post)
