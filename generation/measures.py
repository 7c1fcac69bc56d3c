"""One owner for the per-category measurements of a clip (the oracle's and ``vocalgrad show``'s).

Two forms per category, both larger = more of the attribute in the sense of "increase":

* :data:`MEASURES` - one number for a window of audio; :mod:`harness_tasks.models.oracle` compares
  it between the first and the last share of the speech span.
* :func:`curve` - the same quantity frame by frame (hop :data:`CURVE_HOP`), relative to the source
  where that gives the recipe's unit; :mod:`analysis.show` draws it under the value schedule.

Window measurements (:data:`MEASURES`):

=========== ========================================================================
speed       centroid of the amplitude-modulation spectrum (2-16 Hz) of the envelope
pitch       median fundamental frequency (YIN, 60-1000 Hz, on a 16 kHz copy), log2
volume      RMS level, dB
noise       spectral floor: median over frames of the 10th-percentile bin power, dB
distortion  share of repeated consecutive samples (sample-and-hold leaves flat steps)
roughness   minus log2 of the number of distinct sample values (bit-depth reduction)
echo        minus the mean absolute change of the 10-ms log envelope, dB (reverb smooths it)
clarity     bandwidth: highest frequency within 60 dB of the spectral peak
vibration   mean absolute change of the 5-ms log envelope, dB (LFO depth and rate)
=========== ========================================================================
Curves (:func:`curve`): F0 in semitones re the source for pitch, RMS in dB re the source for volume,
local rate by DTW against the source for speed, noise/speech RMS, hold length as an effective sample
rate, distinct levels as bits, -60 dB bandwidth for clarity, envelope depth for vibration; echo has
no such measure and shows the residual re the source.

This module sits beside :mod:`generation.span` and :mod:`generation.audio` as a primitive: it imports
only numpy/scipy/librosa/soxr and :mod:`vocalgrad`, so the torch-free harness and the analyses can
both use it without an import cycle.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

import vocalgrad

__all__ = ["CURVE_HOP", "MEASURES", "curve", "hold_share"]

_EPS = 1e-12
#: Hop of :func:`curve`, s.
CURVE_HOP = 0.010


def _frames(x: np.ndarray, size: int, hop: int) -> np.ndarray:
    if x.size < size:
        x = np.pad(x, (0, size - x.size))
    count = 1 + (x.size - size) // hop
    return np.lib.stride_tricks.sliding_window_view(x, size)[::hop][:count]


def _frame_db(x: np.ndarray, sr: int, dur: float) -> np.ndarray:
    size = max(1, int(round(dur * sr)))
    f = _frames(x, size, size)
    return 10 * np.log10(np.mean(f.astype(np.float64) ** 2, axis=1) + 1e-10)


def _power_spec(x: np.ndarray, n_fft: int = 1024) -> np.ndarray:
    f = _frames(x.astype(np.float64), n_fft, n_fft // 2) * np.hanning(n_fft)
    return np.abs(np.fft.rfft(f, axis=1)) ** 2


def _volume(x, sr):
    return 10 * np.log10(np.mean(np.square(x, dtype=np.float64)) + _EPS)


def _yin_f0(x: np.ndarray, sr: int, *, fmin: float = 60.0, fmax: float = 1000.0,
            frame: int = 1024, hop: int = 256, threshold: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame f0 (Hz) by YIN's cumulative-mean-normalised difference, and frame energy."""
    w = frame // 2
    tmin, tmax = max(2, int(sr / fmax)), min(w - 1, int(np.ceil(sr / fmin)))
    f = _frames(x.astype(np.float64), frame, hop)
    spec = np.fft.rfft(f, n=2 * frame)
    head = np.fft.rfft(f[:, :w], n=2 * frame)
    r = np.fft.irfft(spec * np.conj(head), n=2 * frame)[:, : tmax + 1]       # sum_j x_j x_{j+tau}
    c = np.concatenate([np.zeros((f.shape[0], 1)), np.cumsum(f ** 2, axis=1)], axis=1)
    taus = np.arange(tmax + 1)
    e_tau = c[:, taus + w] - c[:, taus]
    d = np.maximum(c[:, [w]] + e_tau - 2 * r, 0.0)
    d[:, 0] = 0.0
    cm = np.cumsum(d[:, 1:], axis=1) / np.arange(1, tmax + 1)
    cmndf = np.ones_like(d)
    cmndf[:, 1:] = d[:, 1:] / np.maximum(cm, 1e-12)
    seg = cmndf[:, tmin:]
    below = seg < threshold
    first = np.where(below.any(axis=1), below.argmax(axis=1), seg.argmin(axis=1))
    # walk to the local minimum after the first dip below the threshold
    idx = first.copy()
    for i in range(seg.shape[0]):
        k = idx[i]
        while k + 1 < seg.shape[1] and seg[i, k + 1] < seg[i, k]:
            k += 1
        idx[i] = k
    rows = np.arange(seg.shape[0])
    inner = (idx > 0) & (idx < seg.shape[1] - 1)
    lo, mid, hi = (seg[rows, np.clip(idx + o, 0, seg.shape[1] - 1)] for o in (-1, 0, 1))
    den = lo - 2 * mid + hi
    shift = np.where(inner & (np.abs(den) > 1e-12), 0.5 * (lo - hi) / np.where(den == 0, 1, den), 0.0)
    return sr / (idx + tmin + np.clip(shift, -1, 1)), c[:, w]


def _pitch(x, sr):
    from .audio import resample

    z = resample(x, sr, 16000)
    if z.size < 1024:
        return np.nan
    f0, energy = _yin_f0(z, 16000)
    voiced = f0[energy > energy.max() * 1e-3]
    return float(np.log2(np.median(voiced if voiced.size else f0)))


def _speed(x, sr):
    env = 10 ** (_frame_db(x, sr, 0.01) / 20)  # 100 Hz envelope
    if env.size < 16:
        return np.nan
    env = env - env.mean()
    spec = np.abs(np.fft.rfft(env * np.hanning(env.size), n=max(256, env.size))) ** 2
    freqs = np.fft.rfftfreq(max(256, env.size), d=0.01)
    band = (freqs >= 2) & (freqs <= 16)
    return float(np.sum(freqs[band] * spec[band]) / (np.sum(spec[band]) + _EPS))


def _noise(x, sr):
    p = _power_spec(x)
    return float(10 * np.log10(np.median(np.percentile(p, 10, axis=1)) + _EPS))


def hold_share(x: np.ndarray, keep: np.ndarray | None = None) -> float:
    """Share of repeated consecutive samples among the loud ones (``|x| > 1e-3``); with ``keep`` (bool per
    sample) only pairs of two kept samples count (0 when none does)."""
    d = np.diff(x)
    use = np.abs(x[1:]) > 1e-3
    if keep is not None:
        use &= keep[1:] & keep[:-1]
    return float(np.mean(d[use] == 0)) if use.any() else 0.0


def _distortion(x, sr):
    return hold_share(x)


def _roughness(x, sr):
    return -float(np.log2(np.unique(x).size + 1))


def _echo(x, sr):
    # reverberation smooths the level envelope: less frame-to-frame change = more echo
    db = np.maximum(_frame_db(x, sr, 0.01), -100.0)
    loud = db > db.max() - 60
    d = np.abs(np.diff(db))[loud[1:] & loud[:-1]]
    return -float(d.mean()) if d.size else 0.0


def _clarity(x, sr):
    p = _power_spec(x, 2048).mean(axis=0)
    above = np.flatnonzero(p > p.max() * 1e-6)
    return float(above[-1] * sr / 2048) if above.size else 0.0


def _vibration(x, sr):
    db = np.maximum(_frame_db(x, sr, 0.005), -80.0)
    loud = db > db.max() - 40
    d = np.abs(np.diff(db))[loud[1:] & loud[:-1]]
    return float(d.mean()) if d.size else 0.0


#: Scalar measurement of a window per category (the oracle compares the span's two ends).
MEASURES: dict[str, Callable[[np.ndarray, int], float]] = {
    "speed": _speed, "pitch": _pitch, "volume": _volume, "noise": _noise,
    "distortion": _distortion, "roughness": _roughness, "echo": _echo,
    "clarity": _clarity, "vibration": _vibration,
}


def _timed_frames(y: np.ndarray, sr: int, win_sec: float,
                  hop_sec: float = CURVE_HOP) -> tuple[np.ndarray, np.ndarray]:
    win, hop = max(1, int(win_sec * sr)), max(1, int(hop_sec * sr))
    if y.size < win:
        y = np.pad(y, (0, win - y.size))
    idx = np.arange(0, y.size - win + 1, hop)
    frames = np.lib.stride_tricks.sliding_window_view(y, win)[idx]
    return frames, (idx + win / 2) / sr


def _rms(frames: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(frames**2, axis=-1))


def _db(x):
    return 20 * np.log10(np.maximum(x, 1e-8))


def _f0(y, sr):
    import librosa

    hop = int(CURVE_HOP * sr)
    f0 = librosa.yin(y, fmin=50, fmax=1000, sr=sr, frame_length=int(0.05 * sr), hop_length=hop, center=True)
    rms = librosa.feature.rms(y=y, frame_length=int(0.05 * sr), hop_length=hop, center=True)[0][:f0.size]
    f0 = f0[:rms.size].astype(float)
    f0[rms < 0.1 * rms.max()] = np.nan  # unvoiced / silent frames
    return np.arange(f0.size) * hop / sr, f0


def _hold_rate(frames, sr):
    same = np.mean(frames[:, 1:] == frames[:, :-1], axis=1)
    rate = sr * (1 - same)
    rate[_rms(frames) < 1e-4] = np.nan
    return rate


def _bits(frames):
    # levels met at least twice: the samples blended by a 5 ms cross-fade are (nearly) all unique
    q = np.round(frames * 32768).astype(np.int64)
    n = np.array([np.count_nonzero(np.unique(f, return_counts=True)[1] >= 2) for f in q])
    out = np.log2(n + 1.0)
    out[_rms(frames) < 1e-4] = np.nan
    return out


def _bandwidth(frames, sr):
    spec = np.abs(np.fft.rfft(frames * np.hanning(frames.shape[1]), axis=1)) ** 2
    freqs = np.fft.rfftfreq(frames.shape[1], 1 / sr)
    db = 10 * np.log10(spec + 1e-20)
    above = db > (db.max(axis=1, keepdims=True) - 60)
    last = np.where(above.any(axis=1), above.shape[1] - 1 - np.argmax(above[:, ::-1], axis=1), 0)
    out = freqs[last].astype(float)
    out[_rms(frames) < 1e-4] = np.nan
    return out


def _dtw_rate(y, src, sr):
    import librosa

    hop = int(CURVE_HOP * sr)
    a = librosa.feature.mfcc(y=y, sr=sr, n_mfcc=20, hop_length=hop, n_fft=2048)
    b = librosa.feature.mfcc(y=src, sr=sr, n_mfcc=20, hop_length=hop, n_fft=2048)
    _, path = librosa.sequence.dtw(X=a, Y=b, metric="cosine")
    path = path[::-1]
    src_of_clip = np.zeros(a.shape[1])
    for i, j in path:
        src_of_clip[i] = j
    k = 15  # slope over +-150 ms
    rate = np.full(a.shape[1], np.nan)
    for i in range(k, a.shape[1] - k):
        rate[i] = (src_of_clip[i + k] - src_of_clip[i - k]) / (2 * k)
    rate[(rate < 0.25) | (rate > 4)] = np.nan  # no alignment (silence, stationary sounds)
    return np.arange(a.shape[1]) * hop / sr, rate


def curve(category: str, y: np.ndarray, sr: int, *, source: np.ndarray | None = None,
            on_off: tuple[float, float] | None = None):
    """A measurement of the varied quantity on a clip.

    Parameters
    ----------
    category : str
    y : np.ndarray
        The clip (mono float).
    sr : int
    source : np.ndarray, optional
        The source at the same rate. Needed for the relative measures (volume, pitch, speed,
        noise, vibration, echo).
    on_off : (float, float), optional
        Speech span of the source in seconds (noise is measured re the span's RMS).

    Returns
    -------
    (times, values, label, same_unit) or None
        Frame times (s), values, axis label, and whether ``values`` is in the unit of the
        value schedule. None when the measure needs the source and none is given.
    """
    cat = vocalgrad.category(category).name
    n = min(y.size, source.size) if source is not None else y.size
    if cat == "pitch":
        t, f0 = _f0(y, sr)
        if source is None:
            return t, f0, "F0 (Hz)", False
        ref = np.nanmedian(_f0(source, sr)[1])
        return t, 12 * np.log2(f0 / ref), "F0 re source median (semitones)", True
    if cat == "speed":
        if source is None:
            return None
        t, rate = _dtw_rate(y, source, sr)
        return t, rate, "local rate (DTW vs source)", True
    frames, t = _timed_frames(y, sr, 0.05)
    if cat == "distortion":
        return t, _hold_rate(frames, sr), "effective rate from held samples (Hz)", True
    if cat == "roughness":
        f20, t20 = _timed_frames(y, sr, 0.02)
        return t20, _bits(f20), "log2(repeated levels + 1), a lower bound (bits)", True
    if cat == "clarity":
        return t, _bandwidth(frames, sr), "-60 dB bandwidth (Hz)", True
    if source is None:
        if cat == "volume":
            level = _db(_rms(frames))
            level[_rms(frames) < 1e-5] = np.nan
            return t, level, "RMS (dBFS)", False
        return None
    cf, t = _timed_frames(y[:n], sr, 0.05)
    sf_, _ = _timed_frames(source[:n], sr, 0.05)
    src_rms = _rms(sf_)
    span = source[:n]
    if on_off is not None:
        span = span[int(on_off[0] * sr): int(on_off[1] * sr)]
    span_rms = (np.sqrt(np.mean(span**2)) if span.size else 0.0) or 1.0
    if cat == "noise":
        rf, _ = _timed_frames(y[:n] - source[:n], sr, 0.05)
        return t, _rms(rf) / span_rms, "residual RMS / source speech RMS", True
    if cat == "volume":
        out = _db(_rms(cf)) - _db(src_rms)
        out[src_rms < 1e-4] = np.nan
        return t, out, "RMS re source (dB)", True
    if cat == "vibration":
        ce, te = _timed_frames(y[:n], sr, 0.005, 0.0025)
        se, _ = _timed_frames(source[:n], sr, 0.005, 0.0025)
        gain = _rms(ce) / np.maximum(_rms(se), 1e-8)
        gain[_rms(se) < 1e-4] = np.nan
        w = 80  # 200-ms windows
        depth = np.full(gain.size, np.nan)
        for i in range(w // 2, gain.size - w // 2):
            seg = gain[i - w // 2: i + w // 2]
            if np.isfinite(seg).sum() > w // 2:
                depth[i] = 1 - np.nanmin(seg) / np.nanmax(seg)
        return te, depth, "envelope depth re source (1 - min/max over 200 ms)", True
    if cat == "echo":  # no direct measure of the wet mix: the residual grows with it
        from scipy.ndimage import median_filter

        rf, _ = _timed_frames(y[:n] - source[:n], sr, 0.05)
        out = median_filter(_rms(rf) / span_rms, size=21, mode="nearest")
        return t, out, "residual RMS / source speech RMS (200 ms median)", False
    return None
