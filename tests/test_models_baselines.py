"""Oracle, chance and constant adapters."""

from __future__ import annotations

import numpy as np
import pytest

import vocalgrad
from harness_tasks import prompts
from harness_tasks.clip_audio import ClipAudio
from harness_tasks.models.baselines import ChanceLM, ConstantLM
from generation.span import detect_span
from harness_tasks.models.oracle import MEASURES, OracleLM, category_from_prompt, measure, oracle_direction
from harness_tasks.parsing import classify_answer

SR = 48000
LEAD = 0.3
SPAN = 3.0


def _speechlike(rate_hz, f0_semitones=None, seed=0):
    """Harmonic 150 Hz voice with a syllable envelope; optional per-sample rate / pitch curves."""
    n = int(SPAN * SR)
    t = np.arange(n) / SR
    rate = np.full(n, 4.0) if rate_hz is None else rate_hz
    syll = 0.55 + 0.45 * np.sin(2 * np.pi * np.cumsum(rate) / SR - np.pi / 2)
    f0 = 150.0 * 2 ** ((f0_semitones if f0_semitones is not None else np.zeros(n)) / 12)
    ph = 2 * np.pi * np.cumsum(f0) / SR
    voice = sum(np.sin(k * ph) / k for k in range(1, 9))
    rng = np.random.default_rng(seed)
    voice = voice + 0.02 * rng.standard_normal(n)
    return (0.15 * voice * syll).astype(np.float64), t / SPAN


def _blocks(y, g, fn):
    out = np.empty_like(y)
    b = 2400
    nb = int(np.ceil(y.size / b))
    for i in range(nb):
        s = slice(i * b, min((i + 1) * b, y.size))
        out[s] = fn(y[s], g[min(s.start, g.size - 1)])
    return out


def synth(category, direction, seed=0):
    n = int(SPAN * SR)
    u = np.linspace(0, 1, n)
    g = u if direction == "increase" else 1 - u
    rng = np.random.default_rng(100 + seed)
    if category == "speed":
        y, _ = _speechlike(3.0 + 4.0 * g, seed=seed)
    elif category == "pitch":
        y, _ = _speechlike(None, f0_semitones=-2 + 4 * g, seed=seed)
    else:
        y, _ = _speechlike(None, seed=seed)
    rms = np.sqrt(np.mean(y ** 2))
    if category == "volume":
        y = y * 10 ** ((-12 + 24 * g) / 20)
    elif category == "noise":
        y = y + rng.standard_normal(n) * rms * 0.12 * g
    elif category == "distortion":
        def hold(x, a):
            h = int(round(1 + 7 * a))
            idx = (np.arange(x.size) // h) * h
            return x[idx]
        y = _blocks(y, g, hold)
    elif category == "roughness":
        def quant(x, a):
            bits = int(round(16 - 12 * a))
            q = 2 ** (bits - 1) - 1
            return np.round(np.clip(x, -1, 1) * q) / q
        y = _blocks(y, g, quant)
    elif category == "clarity":
        def lowpass(x, a):
            cut = 1200 + (SR / 2 - 1200) * a
            X = np.fft.rfft(x)
            X[np.fft.rfftfreq(x.size, 1 / SR) > cut] = 0
            return np.fft.irfft(X, n=x.size)
        y = _blocks(y, g, lowpass)
    elif category == "echo":
        ir = rng.standard_normal(int(0.6 * SR)) * np.exp(-np.arange(int(0.6 * SR)) / (0.15 * SR))
        from scipy.signal import fftconvolve
        wet = fftconvolve(y, ir)[:n]
        wet *= rms / (np.sqrt(np.mean(wet ** 2)) + 1e-12)
        y = (1 - 0.6 * g) * y + 0.6 * g * wet
    elif category == "vibration":
        phase = np.cumsum(2 * np.pi * 20.0 * g / SR)
        y = y * (1 - 0.9 * g * 0.5 * (1 + np.sin(phase)))
    pad = np.zeros(int(LEAD * SR))
    out = np.concatenate([pad, y, pad])
    pcm = np.clip(out * 32768, -32768, 32767).astype(np.int16)   # 16-bit like the rendered clips
    return pcm.astype(np.float32) / 32768


@pytest.mark.parametrize("category", vocalgrad.CATEGORY_NAMES)
def test_oracle_hears_each_attribute_in_both_directions(category):
    for direction in vocalgrad.DIRECTIONS:
        assert oracle_direction(category, synth(category, direction), SR) == direction, (category, direction)


def test_oracle_measures_on_the_renderers_speech_span():
    # the oracle has no span detector of its own: it measures the edges of generation.span's span
    y = synth("volume", "increase")
    span = detect_span(y, SR)
    assert span.found
    assert abs(span.onset / SR - LEAD) < 0.05 and abs(span.offset / SR - (LEAD + SPAN)) < 0.05
    inner = y[span.onset:span.offset]
    k = round(0.3 * inner.size)
    for cat in ("volume", "noise", "vibration"):
        assert measure(cat, y, SR) == (MEASURES[cat](inner[:k], SR), MEASURES[cat](inner[-k:], SR))
    # measured on the whole clip, the lead-in silence would lower the first window's level
    assert measure("volume", y, SR)[0] > MEASURES["volume"](y[:round(0.3 * y.size)], SR) + 1


def test_category_from_every_prompt_variant():
    for c in vocalgrad.CATEGORY_NAMES:
        for v in prompts.PROMPT_VARIANTS:
            assert category_from_prompt(prompts.build_prompt(c, v)) == c
    assert category_from_prompt("What is the weather?") is None


class Req:
    def __init__(self, prompt, audio):
        self.args = (prompt, {"until": [], "max_gen_toks": 128}, {"audio": [audio]})


def test_oracle_adapter_answers_and_marks_bad_requests():
    lm = OracleLM(batch_size=2, device="cuda:0")      # lm-eval passes device; the oracle ignores it
    clips = [ClipAudio(f"v{d}", {"array": synth("volume", d), "sampling_rate": SR}) for d in vocalgrad.DIRECTIONS]
    reqs = [Req(vocalgrad.default_prompt("volume"), c) for c in clips]
    reqs.append(Req("Is it raining?", clips[0]))
    out = lm.generate_until(reqs, disable_tqdm=True)
    assert list(out[:2]) == ["increase", "decrease"]
    assert classify_answer(out[2])[1] == "error"


def test_chance_is_seeded_per_clip_and_order_free():
    clips = [ClipAudio(f"c{i}", {"array": np.zeros(10, np.float32), "sampling_rate": SR}) for i in range(200)]
    reqs = [Req(vocalgrad.default_prompt("pitch"), c) for c in clips]
    a = ChanceLM(seed=1).generate_until(reqs, disable_tqdm=True)
    b = ChanceLM(seed=1, batch_size=7).generate_until(reqs[::-1], disable_tqdm=True)[::-1]
    c = ChanceLM(seed=2).generate_until(reqs, disable_tqdm=True)
    assert list(a) == list(b) and list(a) != list(c)
    assert 60 < sum(x == "increase" for x in a) < 140
    assert set(ChanceLM(p_increase=1.0).generate_until(reqs[:20], disable_tqdm=True)) == {"increase"}
    with pytest.raises(ValueError, match="p_increase"):
        ChanceLM(p_increase=2)


def test_constant():
    reqs = [Req(vocalgrad.default_prompt("echo"), ClipAudio("x", {"array": np.zeros(4, np.float32), "sampling_rate": SR}))]
    assert list(ConstantLM(direction="decrease").generate_until(reqs, disable_tqdm=True)) == ["decrease"]
    with pytest.raises(ValueError, match="direction"):
        ConstantLM(direction="up")
    with pytest.raises(NotImplementedError, match="generate_until"):
        ConstantLM().loglikelihood([])
