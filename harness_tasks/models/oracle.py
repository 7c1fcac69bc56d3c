"""``vocalgrad-oracle``: a signal-processing listener that answers from the clip alone.

It never sees the source utterance or the labels. For a clip it (1) finds the speech span
with the renderer's detector (:func:`generation.span.detect_span`, benchmark.md §5), (2) takes
the first and the last :data:`EDGE` share of the span, (3) computes one measurement per attribute in both windows and (4) answers
``increase`` when the measurement is larger at the end. The category is read from the
prompt (its attribute phrase). It is the "what a simple listener gets" reference: a model
that cannot beat it is not using the acoustic evidence well.

Measurements (larger = more of the attribute in the sense of "increase"):

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
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import vocalgrad
from generation.span import detect_span

from ..parsing import error_answer
from .base import Query, VocalGradLM

__all__ = ["EDGE", "OracleLM", "category_from_prompt", "measure", "oracle_direction"]

#: Share of the speech span used at each end.
EDGE = 0.3
_EPS = 1e-12


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
    import soxr

    z = soxr.resample(x.astype(np.float32), sr, 16000) if sr != 16000 else x.astype(np.float32)
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


def _distortion(x, sr):
    d = np.diff(x)
    loud = np.abs(x[1:]) > 1e-3
    return float(np.mean(d[loud] == 0)) if loud.any() else 0.0


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


MEASURES: dict[str, Callable[[np.ndarray, int], float]] = {
    "speed": _speed, "pitch": _pitch, "volume": _volume, "noise": _noise,
    "distortion": _distortion, "roughness": _roughness, "echo": _echo,
    "clarity": _clarity, "vibration": _vibration,
}


def measure(category: str, y: np.ndarray, sr: int, *, edge: float = EDGE) -> tuple[float, float]:
    """The category's measurement in the first and last ``edge`` share of the speech span."""
    cat = vocalgrad.category(category).name
    y = np.asarray(y, dtype=np.float32)
    span = detect_span(y, sr)
    span = y[span.onset:span.offset]
    k = max(1, int(round(edge * span.size)))
    fn = MEASURES[cat]
    return fn(span[:k], sr), fn(span[-k:], sr)


def oracle_direction(category: str, y: np.ndarray, sr: int) -> str | None:
    """``increase`` if the measurement is larger at the end, ``decrease`` if smaller, else None."""
    a, b = measure(category, y, sr)
    if not (np.isfinite(a) and np.isfinite(b)) or a == b:
        return None
    return "increase" if b > a else "decrease"


_PHRASES = sorted(((c.attribute, c.name) for c in vocalgrad.CATEGORIES), key=lambda p: -len(p[0]))


def category_from_prompt(prompt: str) -> str | None:
    """Category whose attribute phrase (or paraphrased question) appears in the prompt."""
    low = prompt.lower()
    for name, question, _ in vocalgrad.PARAPHRASES.values():
        if question.lower() in low:
            return name
    for name, (question, _, _) in vocalgrad.REWORDINGS.items():
        if question.lower() in low:
            return name
    for phrase, name in _PHRASES:
        if f"the {phrase}" in low:
            return name
    return None


class OracleLM(VocalGradLM):
    """lm-eval adapter around :func:`oracle_direction` (no retry: answers always parse).

    A clip where the two measurements tie (or cannot be computed) gets the answer ``"unsure"``,
    which is unparsed and counts as wrong.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)

    def answer(self, queries: list[Query]) -> list[str]:
        out = []
        for q in queries:
            cat = category_from_prompt(q.prompt)
            if cat is None:
                out.append(error_answer(f"oracle: no VocalGrad attribute in prompt {q.prompt[:60]!r}"))
                continue
            if not q.audios:
                out.append(error_answer(f"oracle: no audio for {q.clip_id}"))
                continue
            y, sr = q.audios[-1]["array"], q.audios[-1]["sampling_rate"]  # few-shot examples come first
            out.append(_in_task_words(oracle_direction(cat, y, sr), q.answer_words))
        return out


def _in_task_words(direction: str | None, words: dict | None) -> str:
    """The oracle's direction said in the task's answer words (paraphrase, yes/no, ternary)."""
    if direction is None:
        return "unsure"
    if not words:
        return direction
    if direction in words:
        return words[direction][0]
    if set(words) == set(vocalgrad.ANSWER_WORDS["yesno"]):
        return words["yes" if direction == "increase" else "no"][0]
    return direction
