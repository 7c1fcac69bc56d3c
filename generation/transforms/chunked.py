"""Chunk-processed transforms: distortion, roughness, clarity (RMS-matched) and speed, pitch.

Each step's core is processed together with its span-clipped context, the processed core is cut
out, and the cores are joined by :func:`generation.transforms.base.stitch` (SPEC §4a). The
per-segment functions and the ``*_loop`` transforms here are the plain definition (one librosa
call per chunk); the registered pitch, speed and clarity transforms are the batched equivalents
in :mod:`.fast`.
"""

from __future__ import annotations

import numpy as np

from .base import Result, chunk_segments, match_rms, register, render_chunked

__all__ = ["hold_samples", "sample_hold_segment", "quantize_segment", "lowpass_mask", "lowpass_segment",
           "stretch_segment", "pitch_segment", "chunked",
           "sample_hold", "quantize", "lowpass_loop", "time_stretch_loop", "pitch_shift_loop"]


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


def stretch_segment(seg: np.ndarray, core: int, k: int, rate: float, *, n_fft: int, hop_length: int) -> np.ndarray:
    """Phase-vocoder stretch of a chunk-with-context, keeping ``[int(core/r), int((core+k)/r))``."""
    import librosa

    st = librosa.effects.time_stretch(seg, rate=rate, n_fft=n_fft, hop_length=hop_length)
    return st[int(core / rate): int((core + k) / rate)]


def pitch_segment(seg: np.ndarray, sr: int, semitones: float, *, n_fft: int, hop_length: int,
                  res_type: str) -> np.ndarray:
    """librosa pitch shift (phase vocoder + resampling) of a segment, same length out."""
    import librosa

    return librosa.effects.pitch_shift(seg, sr=sr, n_steps=semitones, n_fft=n_fft, hop_length=hop_length,
                                       res_type=res_type)


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

    See also :func:`quantize` (roughness), :func:`lowpass` (clarity).
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


def lowpass_loop(x, sr, schedule, params, *, cache=None) -> Result:
    """Clarity: STFT low-pass with a raised-cosine transition; higher cut-off = clearer. RMS-matched.

    See also :func:`sample_hold`, :func:`quantize`.
    """
    kw = dict(n_fft=params["n_fft"], hop_length=params["hop_length"], transition=params["transition_hz"])
    return chunked(x, schedule, params, lambda s, c, k, v: lowpass_segment(s, sr, v, **kw)[c:c + k],
                   rms_matched=True, outside="processed")


def time_stretch_loop(x, sr, schedule, params, *, cache=None) -> Result:
    """Speaking speed: per-chunk phase-vocoder stretch (rate > 1 = faster); clip length changes.

    Audio outside the span is untouched. See also :func:`pitch_shift`.
    """
    kw = dict(n_fft=params["n_fft"], hop_length=params["hop_length"])
    return chunked(x, schedule, params, lambda s, c, k, v: stretch_segment(s, c, k, v, **kw),
                   rms_matched=False, outside="keep")


def pitch_shift_loop(x, sr, schedule, params, *, cache=None) -> Result:
    """Voice pitch: per-chunk pitch shift in semitones (phase vocoder + soxr resampling).

    Audio outside the span is untouched. See also :func:`time_stretch`.
    """
    kw = dict(n_fft=params["n_fft"], hop_length=params["hop_length"], res_type=params["res_type"])
    return chunked(x, schedule, params, lambda s, c, k, v: pitch_segment(s, sr, v, **kw)[c:c + k],
                   rms_matched=False, outside="keep")
