"""A straightforward, independent implementation of the faithful-v1 recipe, written from benchmark.md §3–§5.

It is deliberately plain: one function per category, one librosa call per 50-ms chunk, the numbers
typed in from the specification, no code shared with ``generation/``. It is the yardstick of
``benchmarks/render_speed.py`` (speed and signal-to-difference) and the oracle of
``tests/test_reference_match.py`` (the engine must reproduce it).
"""

from __future__ import annotations

import hashlib
import math

import librosa
import numpy as np
import soxr
from scipy.signal import fftconvolve, lfilter

SR = 48000
BLOCK = 2400
CTX = 2400
FADE = 240

TIER_VALUES = {  # category -> tier -> (start, end) of an increase clip (benchmark.md §4)
    "volume": {"low": (-6, 6), "medium": (-12, 12), "high": (-18, 18)},
    "speed": {"low": (0.8, 1.2), "medium": (0.7, 1.3), "high": (0.6, 1.4)},
    "pitch": {"low": (-1, 1), "medium": (-2, 2), "high": (-3, 3)},
    "noise": {"low": (0, 0.03), "medium": (0, 0.07), "high": (0, 0.12)},
    "distortion": {"low": (48000, 18000), "medium": (48000, 12000), "high": (48000, 6000)},
    "roughness": {"low": (16, 8), "medium": (16, 6), "high": (16, 4)},
    "clarity": {"low": (5000, 24000), "medium": (2500, 24000), "high": (1200, 24000)},
    "vibration": {"low": (0, 0.6), "medium": (0, 0.75), "high": (0, 0.9)},
    "echo": {"low": (0, 0.28), "medium": (0, 0.40), "high": (0, 0.52)},
}
ROOM = {"low": 0.55, "medium": 0.75, "high": 0.90}


def speech_span(y):
    """benchmark.md §5 onset/offset (samples), plus whether speech was found."""
    y = y.astype(np.float64)
    pe = np.concatenate([y[:1], y[1:] - 0.97 * y[:-1]])
    frame = hop = 480
    n_frames = (len(pe) - frame) // hop + 1 if len(pe) >= frame else 0
    if n_frames == 0:
        return 0, len(y), False
    energies = [math.sqrt(np.mean(pe[i * hop:i * hop + frame] ** 2)) for i in range(n_frames)]
    floor = float(np.median(energies[:20]))
    thr = max(1.8 * floor, 0.003 * max(energies), 5e-5)
    segs, start = [], None
    for i, e in enumerate(energies + [0.0]):
        if e > thr and i < n_frames:
            start = i if start is None else start
        elif start is not None:
            if i - start >= 10:
                segs.append((start, i - 1))
            start = None
    if not segs:
        return 0, len(y), False
    return segs[0][0] * hop, min(len(y), segs[-1][1] * hop + frame), True


def shape(traj, t):
    if traj == "linear":
        return t
    if traj == "quad_first_flat":
        return t ** 2
    if traj == "quad_last_flat":
        return 1 - (1 - t) ** 2
    return 0.0 if t < 0.5 else 1.0


def value(traj, direction, t, a, b):
    gt = shape(traj, t)
    return a + (b - a) * gt if direction == "increase" else b - (b - a) * gt


def _rms(x):
    return math.sqrt(float(np.mean(np.asarray(x, dtype=np.float64) ** 2))) if len(x) else 0.0


def _rms_match(y, ref):
    r = _rms(y)
    return y if r == 0 else (y * np.float32(_rms(ref) / r)).astype(np.float32)


def _rms_match_core(full, ref, c, k):
    """Scale the whole processed segment to the RMS of the whole unprocessed one, then cut the core."""
    r32 = lambda v: math.sqrt(float(np.mean(np.square(np.asarray(v, np.float32)), dtype=np.float64)))  # noqa: E731
    a, b = r32(ref), r32(full)
    g = np.float32(1.0) if a <= 0 or b <= 0 else np.float32(a / b)
    return (full[c:c + k] * g).astype(np.float32)


def _join(out, piece):
    f = min(FADE, len(out), len(piece))
    if f == 0:
        return np.concatenate([out, piece]).astype(np.float32)
    ramp = np.linspace(0, 1, f, dtype=np.float32)
    mixed = out[len(out) - f:] * (np.float32(1) - ramp) + piece[:f] * ramp
    return np.concatenate([out[:len(out) - f], mixed, piece[f:]]).astype(np.float32)


def _chunked(x, on, off, vals_fn, process, rms_match, keep_outside, start_val, end_val, even=False):
    L = off - on
    n = math.ceil(L / BLOCK)
    if even:
        bounds = [on + round(i * L / n) for i in range(n + 1)]
        chunks = list(zip(bounds[:-1], bounds[1:]))
    else:
        chunks = [(on + i * BLOCK, min(on + (i + 1) * BLOCK, off)) for i in range(n)]
    body = np.zeros(0, np.float32)
    for i, (s, e) in enumerate(chunks):
        t = 1.0 if n == 1 else i / (n - 1)
        cs, ce = max(on, s - CTX), min(off, e + CTX)
        if even:  # speed: the stretched chunk's kept centre depends on the rate
            piece = process(x[cs:ce], vals_fn(t), s - cs, e - s)
        else:
            full = process(x[cs:ce], vals_fn(t))
            piece = _rms_match_core(full, x[cs:ce], s - cs, e - s) if rms_match else full[s - cs:e - cs]
        body = piece.astype(np.float32) if i == 0 else _join(body, piece)
    if keep_outside:
        pre, post = x[:on], x[off:]
    else:
        def whole(seg, v):
            if not len(seg):
                return seg
            out = process(seg, v)
            return _rms_match_core(out, seg, 0, len(seg)) if rms_match else out
        pre, post = whole(x[:on], start_val), whole(x[off:], end_val)
    return np.concatenate([pre, body, post]).astype(np.float32), len(pre), len(pre) + len(body)


def _stepwise_envelope(n_total, on, off, vals_fn, start_val, end_val):
    env = np.empty(n_total)
    env[:on], env[off:] = start_val, end_val
    L = off - on
    n = math.ceil(L / BLOCK)
    for i in range(n):
        t = 1.0 if n == 1 else i / (n - 1)
        env[on + i * BLOCK:min(on + (i + 1) * BLOCK, off)] = vals_fn(t)
    return env


def render_reference(x, category, tier, trajectory, direction, *, noise_ids=None):
    """Render one clip. ``x``: float32 source at 48 kHz. Returns (y, onset, offset) in the output."""
    on, off, _ = speech_span(x)
    a, b = TIER_VALUES[category][tier]
    vals = lambda t: value(trajectory, direction, t, a, b)  # noqa: E731
    v0, v1 = vals(0.0), vals(1.0)
    n = len(x)
    if category == "volume":
        env = _stepwise_envelope(n, on, off, vals, v0, v1)
        return x.astype(np.float64) * 10 ** (env / 20), on, off
    if category == "noise":
        item, clip = noise_ids
        stem = f"{item}__{clip}__{trajectory}__{dict(low='low', medium='mid', high='high')[tier]}__" \
               f"{'up' if direction == 'increase' else 'down'}"
        seed = int.from_bytes(hashlib.sha256(f"42:{stem}".encode()).digest()[:8], "big")
        noise = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
        noise = noise / np.float32(_rms(noise))
        env = _stepwise_envelope(n, on, off, vals, v0, v1)
        return x + noise * (_rms(x[on:off]) * env), on, off
    if category in ("vibration", "echo"):
        tt = np.linspace(0, 1, off - on) if off - on > 1 else np.ones(1)
        gt = {"linear": tt, "quad_first_flat": tt ** 2, "quad_last_flat": 1 - (1 - tt) ** 2,
              "jump": np.where(tt < 0.5, 0.0, 1.0)}[trajectory]

        def along(lo, hi):
            inside = lo + (hi - lo) * gt if direction == "increase" else hi - (hi - lo) * gt
            start = lo if direction == "increase" else hi
            end = value(trajectory, direction, 1.0, lo, hi)
            return np.concatenate([np.full(on, start), inside, np.full(n - off, end)])

        if category == "vibration":
            depth, rate = along(a, b), along(0.0, 20.0)
            phi = np.zeros(n)
            phi[1:] = np.cumsum(2 * np.pi * rate / SR)[:-1]      # phi[0] = 0
            return x * (1 - depth * 0.5 * (1 + np.sin(phi))).astype(np.float32), on, off
        room = ROOM[tier]
        imp = np.zeros(int(1.5 * SR))
        imp[0] = 1.0
        combs = np.zeros_like(imp)
        for ms, fb in zip((29.7, 37.1, 41.1, 43.7), (0.805, 0.827, 0.783, 0.764)):
            d = round(ms * SR / 1000)
            den = np.zeros(d + 1)
            den[0], den[d] = 1, -fb * room
            combs += lfilter([1.0], den, imp)
        ir = combs / 4
        for ms in (5.0, 1.7):
            d = round(ms * SR / 1000)
            num, den = np.zeros(d + 1), np.zeros(d + 1)
            num[0], num[d], den[0], den[d] = -0.7 * room, 1, 1, -0.7 * room
            ir = lfilter(num, den, ir)
        wet = _rms_match(fftconvolve(x, ir)[:n].astype(np.float32), x)
        w = along(a, b)
        return (1 - w) * x + w * wet, on, off
    if category == "volume":
        raise AssertionError
    if category == "distortion":
        def proc(seg, f):
            f = max(1000, min(SR, round(f)))
            hold = 1 if f == SR else max(1, round(SR / f))
            return seg[(np.arange(len(seg)) // hold) * hold]
        return _chunked(x, on, off, vals, proc, True, False, v0, v1)
    if category == "roughness":
        def proc(seg, bits):
            q = np.float32(2 ** (max(2, round(bits)) - 1) - 1)
            return (np.round(np.clip(seg, -1, 1) * q) / q).astype(np.float32)
        return _chunked(x, on, off, vals, proc, True, False, v0, v1)
    if category == "clarity":
        def proc(seg, fc):
            nfft, hop = 512, 128
            if len(seg) < nfft:                       # only pre/post parts can be this short
                nfft = max(32, len(seg))
                hop = hop if hop < nfft else max(1, nfft // 4)
            freqs = librosa.fft_frequencies(sr=SR, n_fft=nfft)
            D = librosa.stft(seg, n_fft=nfft, hop_length=hop, window="hann")
            mask = 0.5 * (1 + np.cos(np.pi * np.clip((freqs - (fc - 400)) / 800, 0, 1)))
            return librosa.istft(D * mask.astype(np.float32)[:, None], n_fft=nfft, hop_length=hop,
                                 window="hann", length=len(seg))
        return _chunked(x, on, off, vals, proc, True, False, v0, v1)
    if category == "pitch":
        def proc(seg, semis):
            return librosa.effects.pitch_shift(seg, sr=SR, n_steps=semis, n_fft=512, hop_length=128,
                                               res_type="soxr_hq")
        return _chunked(x, on, off, vals, proc, False, True, v0, v1)
    if category == "speed":
        def proc(seg, rate, c, k):
            st = librosa.effects.time_stretch(seg, rate=rate, n_fft=512, hop_length=128)
            return st[int(c / rate):int((c + k) / rate)]
        return _chunked(x, on, off, vals, proc, False, True, v0, v1, even=True)
    raise ValueError(category)


def load_48k(y, sr):
    """Mono float32 at 48 kHz (soxr HQ), as the reference reads its sources."""
    y = np.asarray(y, dtype=np.float32)
    return y if sr == SR else soxr.resample(y, sr, SR, quality="soxr_hq").astype(np.float32)
