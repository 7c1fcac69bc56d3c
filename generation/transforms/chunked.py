"""Chunk-processed transforms: distortion and roughness (RMS-matched), and the shared chunk loop.

Each step's core is processed together with its span-clipped context, the processed core is cut
out, and the cores are joined by :func:`generation.transforms.base.stitch` (benchmark.md §4a). Clarity,
speed and pitch run the same mechanics batched in :mod:`.fast`; their plain one-librosa-call-per-
chunk form is ``benchmarks/reference_impl.py``, which the tests hold them to sample for sample.
"""

from __future__ import annotations

import numpy as np

from .base import Result, chunk_segments, match_rms, register, render_chunked

__all__ = ["hold_samples", "sample_hold_segment", "quantize_segment", "lowpass_mask", "lowpass_segment",
           "chunked", "sample_hold", "quantize"]


# ---- per-segment operations --------------------------------------------------------------------
def hold_samples(sr: int, rate_hz: float) -> int:
    """Hold length of a sample-and-hold at effective rate ``rate_hz``: ``round(sr / rate_hz)`` (>= 1)."""
    return max(1, int(round(sr / rate_hz)))


def sample_hold_segment(seg: np.ndarray, hold: int) -> np.ndarray:
    """Repeat every ``hold``-th sample of ``seg`` (counted from its first sample)."""
    idx = (np.arange(len(seg)) // hold) * hold
    return seg[idx]


def quantize_segment(seg: np.ndarray, bits: int) -> np.ndarray:
    """Symmetric uniform quantiser with ``2**(bits-1) - 1`` codes per side after clipping to [-1, 1]."""
    q = np.float32(2 ** (bits - 1) - 1)
    return (np.round(np.clip(seg, -1.0, 1.0) * q) / q).astype(np.float32)


def lowpass_mask(freqs: np.ndarray, cutoff: float, transition: float) -> np.ndarray:
    """Raised-cosine low-pass mask: 1 below ``cutoff - transition/2``, 0 above ``cutoff + transition/2``."""
    lo = cutoff - transition / 2.0
    ramp = 0.5 * (1.0 + np.cos(np.pi * np.clip((freqs - lo) / transition, 0.0, 1.0)))
    return ramp


def lowpass_segment(seg: np.ndarray, sr: int, cutoff: float, *, n_fft: int, hop_length: int,
                    transition: float) -> np.ndarray:
    """Low-pass ``seg`` by an STFT mask (Hann, ``n_fft``/``hop_length``), same length out."""
    import librosa

    D = librosa.stft(seg, n_fft=n_fft, hop_length=hop_length, window="hann")
    mask = lowpass_mask(librosa.fft_frequencies(sr=sr, n_fft=n_fft), cutoff, transition)
    return librosa.istft(D * mask[:, None], n_fft=n_fft, hop_length=hop_length, window="hann",
                         length=len(seg))


# ---- the shared chunk loop ---------------------------------------------------------------------
def chunked(x, schedule, params, process, *, rms_matched: bool, outside: str) -> Result:
    """Run ``process(segment, core_offset, core_len, value) -> core`` over every step and stitch.

    With ``outside="processed"`` the audio before/after the span is processed as one segment at the
    start/end value; with ``rms_matched`` every processed piece is scaled to its original's RMS.
    """
    on, off = schedule.span.onset, schedule.span.offset
    pieces = []
    for (seg, c, k), v in zip(chunk_segments(x, schedule.layout), schedule.values):
        piece = process(seg, c, k, float(v))
        pieces.append(match_rms(piece, seg[c:c + k]) if rms_matched else piece)
    pre = post = None
    if outside == "processed":
        def whole(seg, v):
            out = process(seg, 0, len(seg), v) if len(seg) else seg
            return match_rms(out, seg) if rms_matched else out

        pre, post = whole(x[:on], schedule.start), whole(x[off:], schedule.end)
    return render_chunked(x, schedule, params, pieces, outside=outside, pre=pre, post=post)


# ---- registered transforms ---------------------------------------------------------------------
@register("sample_hold")
def sample_hold(x, sr, schedule, params, *, cache=None) -> Result:
    """Distortion: sample-and-hold at an effective rate (``hold = round(sr / f)``), RMS-matched.

    See also :func:`quantize` (roughness), :func:`generation.transforms.fast.lowpass` (clarity).
    """
    return chunked(x, schedule, params, lambda s, c, k, v: sample_hold_segment(s, hold_samples(sr, v))[c:c + k],
                   rms_matched=True, outside="processed")


@register("quantize")
def quantize(x, sr, schedule, params, *, cache=None) -> Result:
    """Roughness: uniform quantiser at an integer bit depth (rounded per chunk), RMS-matched.

    See also :func:`sample_hold` (distortion).
    """
    return chunked(x, schedule, params, lambda s, c, k, v: quantize_segment(s[c:c + k], int(round(v))),
                   rms_matched=True, outside="processed")
