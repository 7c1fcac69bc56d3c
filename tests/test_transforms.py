"""Each transform moves its attribute the right way by the right amount — checked by MEASURING the
output signal (not by reading the schedule back), for every category x direction x tier."""

import numpy as np
import pytest
from scipy.signal import fftconvolve, hilbert

import vocalgrad as vg
from generation.recipe import load_recipe
from generation.render import prepare_source, render_clip
from generation.sources import SourceItem
from generation.transforms.echo import schroeder_ir

SR = 48000
REC = load_recipe()
TIERS = vg.TIERS
DIRS = vg.DIRECTIONS


class ArraySource:
    """Picklable in-memory source for tests."""

    def __init__(self, y, sr=SR):
        self.y, self.sr = y, sr

    def read(self):
        return self.y.astype(np.float32), self.sr


def make(y, sid="s"):
    item = SourceItem(sid, ArraySource(y))
    x, span = prepare_source(item, REC)
    return item, x, span


def clip(item, x, span, category, tier, trajectory, direction):
    res, sched = render_clip(x, item, REC, span, category=category, tier=tier, trajectory=trajectory,
                             direction=direction)
    return res, sched


def padded(sig, lead=0.3, tail=0.3):
    return np.concatenate([np.zeros(int(lead * SR)), sig, np.zeros(int(tail * SR))])


def harmonic(f0, dur, n_harm=8, amp=0.3):
    t = np.arange(int(dur * SR)) / SR
    y = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, n_harm + 1))
    return amp * y / np.abs(y).max()


@pytest.fixture(scope="module")
def tone():
    return make(padded(harmonic(200.0, 3.0)), "tone")


@pytest.fixture(scope="module")
def noise_src():
    rng = np.random.default_rng(0)
    return make(padded(0.1 * rng.standard_normal(3 * SR)), "wn")


def each_tier_and_direction(fn):
    """Parametrise a test over the three tiers and both directions."""
    return pytest.mark.parametrize("direction", DIRS)(pytest.mark.parametrize("tier", TIERS)(fn))


def jump_clip(src, category, tier, direction):
    """Render the jump-trajectory clip of ``src``; returns (x, span, result, schedule, start, end)."""
    item, x, span = src
    res, sched = clip(item, x, span, category, tier, "jump", direction)
    return (x, span, res, sched, *expected_tier(category, tier, direction))


def expected_tier(category, tier, direction):
    lo, hi = REC.category(category).tiers[tier]
    return (lo, hi) if direction == "increase" else (hi, lo)


def block_db(y, ref, starts, ends):
    out = []
    for s, e in zip(starts, ends):
        den = np.mean(np.square(ref[s:e], dtype=float))
        out.append(10 * np.log10(np.mean(np.square(y[s:e], dtype=float)) / den) if den > 0 else np.nan)
    return np.array(out)


# ---- volume: gain per step within 0.1 dB of the schedule, every trajectory shape ---------------
@pytest.mark.parametrize("trajectory", vg.TRAJECTORIES)
@each_tier_and_direction
def test_volume_gain_per_step(tone, tier, direction, trajectory):
    item, x, span = tone
    res, sched = clip(item, x, span, "volume", tier, trajectory, direction)
    lay = sched.layout
    measured = block_db(res.y, x, lay.starts, lay.ends)
    n = lay.n
    t = np.arange(n) / (n - 1)
    g = {"linear": t, "quad_first_flat": t**2, "quad_last_flat": 1 - (1 - t) ** 2,
         "jump": (t >= 0.5).astype(float)}[trajectory]
    a, b = expected_tier("volume", tier, direction)
    ok = np.isfinite(measured)                      # blocks of digital silence carry no gain
    assert ok.sum() >= lay.n - 1
    np.testing.assert_allclose(measured[ok], (a + (b - a) * g)[ok], atol=0.1)
    # the end value is held after the offset
    tail = slice(span.offset + 10, len(x))
    if np.any(x[tail]):
        assert abs(block_db(res.y, x, [tail.start], [tail.stop])[0] - b) < 0.1


# ---- pitch: f0 of a harmonic tone in the flat regions of the jump trajectory ------------------
def f0_estimate(seg, fmin=100, fmax=500):
    seg = seg - seg.mean()
    ac = fftconvolve(seg, seg[::-1])[len(seg) - 1:]
    lo, hi = int(SR / fmax), int(SR / fmin)
    k = lo + int(np.argmax(ac[lo:hi]))
    # parabolic interpolation of the peak
    a, b, c = ac[k - 1], ac[k], ac[k + 1]
    k = k + 0.5 * (a - c) / (a - 2 * b + c)
    return SR / k


@each_tier_and_direction
def test_pitch_shift_semitones(tone, tier, direction):
    x, span, res, _, a, b = jump_clip(tone, "pitch", tier, direction)
    mid = (res.onset + res.offset) // 2
    first = res.y[res.onset + 4800: mid - 9600]
    second = res.y[mid + 9600: res.offset - 4800]
    for seg, want in ((first, a), (second, b)):
        got = 12 * np.log2(f0_estimate(seg) / 200.0)
        assert abs(got - want) < 0.3, (got, want)
    # outside the span the audio is untouched
    np.testing.assert_array_equal(res.y[: span.onset], x[: span.onset])
    np.testing.assert_array_equal(res.y[res.offset:], x[span.offset:])


# ---- speed: burst rate of a pulse train, and output duration ----------------------------------
@pytest.fixture(scope="module")
def pulses():
    period = int(0.25 * SR)
    sig = np.zeros(int(3.0 * SR))
    burst = harmonic(220.0, 0.15) * np.hanning(int(0.15 * SR))
    for s in range(0, len(sig) - len(burst), period):
        sig[s:s + len(burst)] = burst
    return make(padded(sig), "pulses")


def burst_interval(seg):
    env = np.abs(hilbert(seg))
    env = np.convolve(env, np.ones(240) / 240, mode="same")
    spec = np.abs(np.fft.rfft(env - env.mean(), n=1 << 20))
    freqs = np.fft.rfftfreq(1 << 20, 1 / SR)
    band = (freqs > 1.5) & (freqs < 12)
    return 1.0 / freqs[band][np.argmax(spec[band])]


@each_tier_and_direction
def test_speed_rate(pulses, tier, direction):
    x, span, res, sched, a, b = jump_clip(pulses, "speed", tier, direction)
    assert span.found
    n = sched.layout.n
    loss = 240 / (span.length / n)            # each uncompensated cross-fade eats 240 samples a chunk
    half_out = int(span.length / 2 * (1 / a - loss))
    first = res.y[res.onset + 2400: res.onset + half_out - 4800]
    second = res.y[res.onset + half_out + 4800: res.offset - 2400]
    # burst spacing grows by 1/rate (minus the cross-fade time warp of the reference)
    assert abs(burst_interval(first) / 0.25 - (1 / a - loss)) < 0.04
    assert abs(burst_interval(second) / 0.25 - (1 / b - loss)) < 0.04
    # span duration: sum of chunk durations / rate, minus the uncompensated cross-fades
    expect = span.length * (0.5 / a + 0.5 / b) - 240 * (n - 1)
    assert abs((res.offset - res.onset) - expect) < 0.01 * span.length


# ---- noise: added-noise RMS / speech RMS per block --------------------------------------------
@each_tier_and_direction
def test_noise_ratio(tone, tier, direction):
    item, x, span = tone
    res, sched = clip(item, x, span, "noise", tier, "linear", direction)
    speech_rms = np.sqrt(np.mean(x[span.onset:span.offset] ** 2, dtype=float))
    resid = res.y - x
    lay = sched.layout
    ratios = np.array([np.sqrt(np.mean(resid[s:e] ** 2)) / speech_rms for s, e in zip(lay.starts, lay.ends)])
    a, b = expected_tier("noise", tier, direction)
    t = np.arange(lay.n) / (lay.n - 1)
    want = a + (b - a) * t
    np.testing.assert_allclose(ratios[:-1], want[:-1], rtol=0.08, atol=1e-4)
    # white: flat spectrum (upper half carries ~half the energy)
    spec = np.abs(np.fft.rfft(resid[span.onset:span.offset])) ** 2
    share = spec[len(spec) // 2:].sum() / spec.sum()
    assert 0.4 < share < 0.6


def test_noise_is_seeded_per_clip(tone):
    item, x, span = tone
    a, _ = clip(item, x, span, "noise", "high", "linear", "increase")
    b, _ = clip(item, x, span, "noise", "high", "linear", "increase")
    c, _ = clip(item, x, span, "noise", "high", "jump", "increase")
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.allclose(a.y - x, c.y - x)


# ---- distortion: effective hold length (run length of repeated samples) -----------------------
def clean_block(res, sched, i):
    """Output samples of step i that no cross-fade touches (each join shifts later steps by 240)."""
    n = sched.layout.n
    i = i % n
    start = res.onset + i * (2400 - 240)
    return np.asarray(res.y)[start + 240: start + 2400 - 240]


def hold_of(seg):
    changes = np.flatnonzero(np.diff(seg) != 0)
    runs = np.diff(changes)
    return int(np.bincount(runs).argmax()) if len(runs) else len(seg)


@each_tier_and_direction
def test_distortion_hold(noise_src, tier, direction):
    x, span, res, sched, a, b = jump_clip(noise_src, "distortion", tier, direction)
    y = np.asarray(res.y)
    first, last = clean_block(res, sched, 2), clean_block(res, sched, -3)
    assert hold_of(first) == max(1, round(SR / a))
    assert hold_of(last) == max(1, round(SR / b))
    # RMS matched per chunk
    assert abs(np.sqrt(np.mean(y[res.onset:res.offset] ** 2)) / np.sqrt(np.mean(x[span.onset:span.offset] ** 2)) - 1) < 0.05


# ---- roughness: number of quantisation levels ------------------------------------------------
@each_tier_and_direction
def test_roughness_levels(noise_src, tier, direction):
    x, span, res, sched, a, b = jump_clip(noise_src, "roughness", tier, direction)
    coarse_bits = min(a, b)
    first, last = clean_block(res, sched, 2), clean_block(res, sched, -3)
    coarse, fine = (first, last) if a < b else (last, first)
    assert len(np.unique(coarse)) <= 2 ** int(coarse_bits) - 1
    assert len(np.unique(fine)) > 500


# ---- clarity: energy above the cut-off ---------------------------------------------------------
def hf_share(seg, cutoff):
    spec = np.abs(np.fft.rfft(seg * np.hanning(len(seg)))) ** 2
    freqs = np.fft.rfftfreq(len(seg), 1 / SR)
    return spec[freqs > cutoff + 400].sum() / spec.sum()


@each_tier_and_direction
def test_clarity_bandwidth(noise_src, tier, direction):
    x, span, res, _, a, b = jump_clip(noise_src, "clarity", tier, direction)
    y = np.asarray(res.y)
    first = y[res.onset + 4800: res.onset + 4800 + 24000]
    last = y[res.offset - 4800 - 24000: res.offset - 4800]
    muffled, clear = (first, last) if a < b else (last, first)
    cut = min(a, b)
    assert hf_share(muffled, cut) < 1e-3          # nothing left above the cut-off
    assert hf_share(clear, cut) > 0.5             # white noise: most energy above it when clear


# ---- vibration: LFO depth and rate ----------------------------------------------------------------
@each_tier_and_direction
def test_vibration_depth_and_rate(tone, tier, direction):
    x, span, res, _, a, b = jump_clip(tone, "vibration", tier, direction)
    gain = np.asarray(res.y)[span.onset:span.offset] / np.where(x[span.onset:span.offset] == 0, np.nan,
                                                               x[span.onset:span.offset])
    half = span.length // 2
    strong, weak = (gain[half + 2400:], gain[:half - 2400]) if a < b else (gain[:half - 2400], gain[half + 2400:])
    depth = max(a, b)
    good = np.abs(x[span.onset:span.offset]) > 0.02
    s_good = good[half + 2400:] if a < b else good[:half - 2400]
    w_good = good[:half - 2400] if a < b else good[half + 2400:]
    assert abs((1 - np.nanmin(strong[s_good])) - depth) < 0.02
    assert np.nanmax(np.abs(weak[w_good] - 1)) < 1e-6
    g = np.nan_to_num(strong, nan=1.0)
    spec = np.abs(np.fft.rfft(g - g.mean(), n=1 << 20))
    freqs = np.fft.rfftfreq(1 << 20, 1 / SR)
    assert abs(freqs[np.argmax(spec[: len(spec) // 100])] - 20.0) < 1.0


# ---- echo: wet mix by least squares, and the reverb tail after the offset --------------------
@each_tier_and_direction
def test_echo_wet_mix(tone, tier, direction):
    x, span, res, sched, a, b = jump_clip(tone, "echo", tier, direction)
    p = REC.category("echo").params
    ir = schroeder_ir(SR, seconds=p["ir_sec"], comb_ms=p["comb_ms"], comb_feedback=p["comb_feedback"],
                      allpass_ms=p["allpass_ms"], allpass_gain=p["allpass_gain"], room=p["room"][tier])
    wet = fftconvolve(x, ir)[: len(x)]
    wet *= np.sqrt(np.mean(x**2) / np.mean(wet**2))
    d = wet - x
    r = np.asarray(res.y, dtype=float) - x
    half = span.onset + span.length // 2
    for sl, want in ((slice(span.onset + 4800, half - 4800), a), (slice(half + 4800, span.offset - 4800), b)):
        w_hat = np.dot(r[sl], d[sl]) / np.dot(d[sl], d[sl])
        assert abs(w_hat - want) < 0.01
    tail = np.asarray(res.y)[span.offset + 2400:]
    if b > 0:
        assert np.sqrt(np.mean(tail**2)) > 1e-3        # reverb tail after the tone
    else:
        assert np.max(np.abs(tail)) < 1e-6             # dry: silence stays silent


# ---- shared mechanics ----------------------------------------------------------------------------
@pytest.mark.parametrize("category", ["pitch", "distortion", "roughness", "clarity"])
def test_crossfades_shorten_span(tone, category):
    item, x, span = tone
    res, sched = clip(item, x, span, category, "low", "linear", "increase")
    n = sched.layout.n
    assert (res.offset - res.onset) == span.length - 240 * (n - 1)
    assert len(res.y) == len(x) - 240 * (n - 1)


def test_untouched_categories_keep_length(tone):
    item, x, span = tone
    for cat in ("volume", "noise", "vibration", "echo"):
        res, _ = clip(item, x, span, cat, "high", "linear", "decrease")
        assert len(res.y) == len(x) and (res.onset, res.offset) == (span.onset, span.offset)
