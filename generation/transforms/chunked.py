"""Chunk-processed transforms: distortion and roughness (RMS-matched), and the shared chunk loop.

Each step's core is processed together with its span-clipped context, the processed core is cut
out, and the cores are joined by :func:`generation.transforms.base.stitch` (benchmark.md §4a). Clarity,
speed and pitch run the same mechanics batched in :mod:`.fast`; their plain one-librosa-call-per-
chunk form is ``benchmarks/reference_impl.py``, which the tests hold them to sample for sample.
"""

from __future__ import annotations

import numpy as np

from .base import Result, chunk_segments, register, render_chunked, rms_scale

__all__ = ["hold_samples", "sample_hold_segment", "quantize_bits", "quantize_segment", "lowpass_mask",
           "short_segment_stft", "lowpass_segment", "chunked", "sample_hold", "quantize"]


# ---- per-segment operations --------------------------------------------------------------------
def hold_samples(sr: int, rate_hz: float) -> int:
    """Hold length of a sample-and-hold at effective rate ``rate_hz``.

    As the reference: the rate is first rounded to an integer and clamped to ``[1000, sr]``, then
    ``hold = round(sr / rate)`` (>= 1); a rate equal to ``sr`` leaves the signal untouched (hold 1).
    """
    rate = max(1000, min(int(sr), int(round(rate_hz))))
    if rate == int(sr):
        return 1
    return max(1, int(round(sr / rate)))


def sample_hold_segment(seg: np.ndarray, hold: int) -> np.ndarray:
    """Repeat every ``hold``-th sample of ``seg`` (counted from its first sample)."""
    idx = (np.arange(len(seg)) // hold) * hold
    return seg[idx]


def quantize_bits(value: float) -> int:
    """Integer bit depth of a roughness step: ``max(2, round(value))``."""
    return max(2, int(round(value)))


def quantize_segment(seg: np.ndarray, bits: int) -> np.ndarray:
    """Symmetric uniform quantiser with ``2**(bits-1) - 1`` codes per side after clipping to [-1, 1]."""
    q = np.float32(2 ** (bits - 1) - 1)
    return (np.round(np.clip(seg, -1.0, 1.0) * q) / q).astype(np.float32)


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


# ---- the shared chunk loop ---------------------------------------------------------------------
def chunked(x, schedule, params, process, *, rms_matched: bool, outside: str) -> Result:
    """Run ``process(segment, value) -> processed segment`` over every step and stitch the cores.

    Each step's chunk-with-context is processed whole; with ``rms_matched`` the processed segment
    is scaled to the RMS of the unprocessed segment (:func:`.base.rms_scale`, over the whole
    segment) and only then is the core cut out (benchmark.md §4a). With ``outside="processed"`` the
    audio before/after the span is processed (and matched) as one segment at the start/end value.
    """
    on, off = schedule.span.onset, schedule.span.offset
    pieces = []
    for (seg, c, k), v in zip(chunk_segments(x, schedule.layout), schedule.values):
        out = process(seg, float(v))
        core = out[c:c + k]
        pieces.append((core * rms_scale(out, seg)).astype(np.float32, copy=False) if rms_matched else core)
    pre = post = None
    if outside == "processed":
        def whole(seg, v):
            if not len(seg):
                return seg
            out = process(seg, v)
            return (out * rms_scale(out, seg)).astype(np.float32, copy=False) if rms_matched else out

        pre, post = whole(x[:on], schedule.start), whole(x[off:], schedule.end)
    return render_chunked(x, schedule, params, pieces, outside=outside, pre=pre, post=post)


# ---- registered transforms ---------------------------------------------------------------------
@register("sample_hold")
def sample_hold(x, sr, schedule, params, *, cache=None) -> Result:
    """Distortion: sample-and-hold at an effective rate (see :func:`hold_samples`), RMS-matched.

    See also :func:`quantize` (roughness), :func:`generation.transforms.fast.lowpass` (clarity).
    """
    return chunked(x, schedule, params, lambda s, v: sample_hold_segment(s, hold_samples(sr, v)),
                   rms_matched=True, outside="processed")


@register("quantize")
def quantize(x, sr, schedule, params, *, cache=None) -> Result:
    """Roughness: uniform quantiser at an integer bit depth (:func:`quantize_bits`), RMS-matched.

    See also :func:`sample_hold` (distortion).
    """
    return chunked(x, schedule, params, lambda s, v: quantize_segment(s, quantize_bits(v)),
                   rms_matched=True, outside="processed")
