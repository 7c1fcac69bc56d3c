"""The pitch trackers' decoded-f0 layer and its pooling (docs/probe.md, "Encoders").

The pooling (:func:`pool_voiced_f0`) is checked on hand-made sequences at its near misses (a
segment with one voiced frame, none, an even count, fewer frames than segments); the layer is
checked on the weights the wheels ship: it equals each package's own end-to-end decoding at the
true rate (a wrong rate or a layer off by one fails), it sits at the tone's absolute pitch, a
harmonic glide up gives a rising sequence of 16 values and one down a falling one, silence and
noise give zeros. Clips are short (0.6 s): the whole file takes about half a minute on one core.
"""

from __future__ import annotations

import numpy as np
import pytest

import _probe_helpers as ph
from analysis.probe.pooling import pool_segments, pool_voiced_f0

NAN = np.nan


# ----------------------------------------------------------------------------- pooling (no torch)
def test_pool_voiced_f0_at_its_near_misses():
    # 48 frames -> 16 segments of three frames
    x = np.full(48, NAN)
    x[[0, 1, 2]] = [1.0, 2.0, 9.0]      # segment 0: three voiced, median 2 (their mean would be 4)
    x[4] = 6.0                          # segment 1: exactly one voiced frame (6), two unvoiced
    #                                     segment 2: none voiced -> 0
    x[[9, 11]] = [10.0, 12.0]           # segment 3: two voiced, a tie -> their mean 11
    x[[45, 46, 47]] = [14.0, 14.0, 15.0]  # segment 15: 14
    got = pool_voiced_f0(x)
    clip = np.median([1, 2, 9, 6, 10, 12, 14, 14, 15])                  # 10 over all voiced frames
    want = np.zeros(16, dtype=np.float32)
    want[[0, 1, 3, 15]] = np.array([2, 6, 11, 14]) - clip
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32 and got.shape == (16,)
    np.testing.assert_array_equal(pool_voiced_f0(x[:, None]), want)      # (T, 1) as the layer gives it
    # the numbers the planted mistakes would give differ: unvoiced frames in a median, no clip
    # median, the segment means, the median of the segment medians instead of the clip's
    assert clip != np.median(np.nan_to_num(x)) and clip != np.median([2, 6, 11, 14]) and want[0] != 4 - clip


def test_pool_voiced_f0_even_counts_take_the_mean_of_the_middle_two():
    x = np.full(32, NAN)                # 16 segments of two frames
    x[[0, 1]] = [2.0, 4.0]              # a tie within the segment: 3
    x[[30, 31]] = [6.0, 10.0]           # 8; the clip's four voiced frames: median (4 + 6) / 2 = 5
    np.testing.assert_array_equal(pool_voiced_f0(x), np.array([-2] + [0] * 14 + [3], dtype=np.float32))


def test_pool_voiced_f0_without_voiced_frames_and_short_clips():
    np.testing.assert_array_equal(pool_voiced_f0(np.full(40, NAN)), np.zeros(16, np.float32))
    one = np.full(40, NAN)
    one[17] = 7.5                        # a clip with one voiced frame: every value 0 (it is its own median)
    np.testing.assert_array_equal(pool_voiced_f0(one), np.zeros(16, np.float32))
    short = np.array([1.0, NAN, 3.0, 5.0])                             # fewer frames than segments
    got = pool_voiced_f0(short)
    assert [float(v) for v in got] == [-2.0] * 4 + [0.0] * 4 + [0.0] * 4 + [2.0] * 4
    with pytest.raises(ValueError, match="empty sequence"):
        pool_voiced_f0(np.zeros(0))
    with pytest.raises(ValueError, match=r"shape \(T,\) or \(T, 1\)"):
        pool_voiced_f0(np.zeros((10, 2)))


def test_the_pitch_tracker_hook_pools_only_the_f0_layer_by_voiced_medians():
    from analysis.probe.encoders.f0 import F0_LAYER, PitchTracker

    class Fake(PitchTracker):
        name, sample_rate, layer_names = "fake", 100, ("latent", F0_LAYER)

        def weights_files(self):
            return []

        def _load(self):
            pass

        def sequences(self, y, layers):
            f0 = np.where(y > 0, np.log2(1 + np.abs(y)), NAN).astype(np.float32)[:, None]
            return {1: np.stack([y, -y], axis=1), 2: f0}

    y = np.linspace(-1, 2, 48).astype(np.float32)
    feats = Fake().features(y, 100, [1, 2])
    seqs = Fake().sequences(y, [1, 2])
    np.testing.assert_array_equal(feats[1], pool_segments(seqs[1]))        # the layer before: mean-pooled
    np.testing.assert_array_equal(feats[2], pool_voiced_f0(seqs[2]))
    assert feats[2].shape == (16,) and feats[2][0] == 0 and feats[2][-1] > 0


# ----------------------------------------------------------------------------- real weights
torch = pytest.importorskip("torch")

from analysis.probe.encoders import get_encoder  # noqa: E402
from analysis.probe.encoders.f0 import F0_LAYER  # noqa: E402

SR_IN = 48000
TRACKERS = ["pesto", "torchcrepe:tiny", "torchcrepe:full", "fcpe"]
LOW, HIGH = 180.0, 270.0                 # a fifth: 0.585 octaves


def _glide(f_start, f_end, seconds=0.6, sr=SR_IN):
    """Harmonic tone (3 partials) whose f0 moves exponentially from ``f_start`` to ``f_end``."""
    t = np.arange(int(seconds * sr)) / sr
    phase = 2 * np.pi * np.cumsum(f_start * (f_end / f_start) ** (t / seconds)) / sr
    return (0.3 * sum(np.sin(k * phase) / k for k in (1, 2, 3))).astype(np.float32)


@pytest.mark.parametrize("name", TRACKERS)
def test_f0_layer_is_the_last_after_the_unchanged_network_layers(name):
    enc = get_encoder(name)
    n_net = {"pesto": 8, "torchcrepe:tiny": 7, "torchcrepe:full": 7, "fcpe": 8}[name]
    assert enc.n_layers == n_net + 1 and enc.layer_names[-1] == F0_LAYER and enc.f0_layer == n_net + 1


@pytest.mark.parametrize("name", TRACKERS)
def test_f0_layer_follows_a_glide_up_and_down(name):
    enc = ph.loaded_encoder(name)
    f0 = enc.f0_layer
    per_segment = np.log2(HIGH / LOW) / 16                               # octaves per segment
    for start, end, sign in ((LOW, HIGH, 1), (HIGH, LOW, -1)):
        got = enc.features(_glide(start, end), SR_IN, [f0])[f0]
        assert got.shape == (16,)
        if name != "torchcrepe:full":    # deterministic (torchcrepe's own f0 is dithered at random); full: same code
            np.testing.assert_array_equal(enc.features(_glide(start, end), SR_IN, [f0])[f0], got)
        slope = np.polyfit(np.arange(16), got, 1)[0]
        assert sign * slope == pytest.approx(per_segment, rel=0.25), f"{name} {start}->{end}: {np.round(got, 3)}"
        assert abs(np.median(got)) < 0.05                                  # the clip median is subtracted


def _package_log2_f0(name, enc, y16, monkeypatch):
    """The package's own end-to-end f0 of a 16-kHz clip, thresholded as the docs say: (frames,) log2 Hz or NaN."""
    audio = torch.as_tensor(y16)
    if name == "pesto":
        import pesto

        _, hz, conf, _ = pesto.predict(audio, 16000)                     # reduction "alwa", 10-ms steps
        hz, voiced = hz.numpy(), conf.numpy() >= 0.5
    elif name.startswith("torchcrepe"):
        tc = enc._tc
        monkeypatch.setattr(tc.convert, "dither", lambda cents: cents)     # its random dither: the bin centre
        pitch, per = tc.predict(audio[None], 16000, 320, 50.0, 550.0, model=name.split(":")[1],
                                return_periodicity=True)                 # its README's range for speech
        per = tc.threshold.Silence(-60.0)(per, audio[None], 16000, 320)
        hz = tc.threshold.At(0.21)(pitch, per)[0].numpy()
        voiced = ~np.isnan(hz)
    else:
        hz = enc.infer.infer(audio[None, :, None], 16000)[0, :, 0].numpy()   # its defaults; unvoiced: 0 Hz
        voiced = hz > 0
    return np.where(voiced, np.log2(np.where(voiced, hz, 1.0)), np.nan)


@pytest.mark.parametrize("name", ["pesto", "torchcrepe:tiny", "fcpe"])
def test_f0_layer_equals_the_package_decoding_at_the_true_rate(name, monkeypatch):
    enc = ph.loaded_encoder(name)
    y16 = ph.to_16k(_glide(LOW, HIGH), SR_IN)
    got = enc.sequences(y16, [enc.f0_layer])[enc.f0_layer]
    want = _package_log2_f0(name, enc, y16, monkeypatch)
    assert got.shape == (len(want), 1)
    np.testing.assert_array_equal(np.isnan(got[:, 0]), np.isnan(want))
    np.testing.assert_allclose(got[:, 0], want, rtol=0, atol=1e-4)
    voiced = got[~np.isnan(got[:, 0]), 0]
    assert len(voiced) >= 0.6 * len(got)
    # absolute pitch: the glide's median f0 is their geometric mean (220 Hz), within 50 cents
    assert abs(1200 * (np.median(voiced) - np.log2(np.sqrt(LOW * HIGH)))) < 50


def _low_voice(f0=100.0, seconds=2.0, sr=16000):
    """A 100-Hz harmonic tone (20 partials) in 200-ms bursts, 100-ms pauses of faint noise between: a low voice."""
    t = np.arange(int(seconds * sr)) / sr
    y = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 21)) * ((t % 0.3) < 0.2)
    y = y + 0.01 * np.random.default_rng(0).standard_normal(len(t))
    return (0.2 * y / np.abs(y).max()).astype(np.float32)


def test_crepe_f0_of_a_low_voice_with_pauses_and_the_range_that_lost_it(monkeypatch):
    """Over predict's full range (to 2,006 Hz) the Viterbi path of a low voice with pauses sits at the
    top bin with nothing voiced (the demo's low voices did this); over the README's speech range it reads 100 Hz."""
    from analysis.probe.encoders import crepe

    enc = ph.loaded_encoder("torchcrepe:tiny")
    y = _low_voice()
    got = enc.sequences(y, [enc.f0_layer])[enc.f0_layer][:, 0]
    voiced = got[~np.isnan(got)]
    assert len(voiced) >= 0.6 * len(got)
    assert abs(1200 * (np.median(voiced) - np.log2(100.0))) < 50
    key = enc.identity()
    monkeypatch.setattr(crepe, "FMAX", 2006.0)
    assert np.isnan(enc.sequences(y, [enc.f0_layer])[enc.f0_layer][:, 0]).all()
    assert enc.identity() != key and enc.provenance()["decoder"]["fmax"] == 2006.0   # a new range: new cache key


def test_voicing_thresholds_at_their_near_misses(monkeypatch):
    """Each tracker's voicing decision just below, at and just above its documented threshold."""
    # PESTO: confidence >= 0.5 (its confidence classifier replaced by fixed values)
    enc = ph.loaded_encoder("pesto")
    conf = torch.tensor([0.4999, 0.5, 0.5001, 0.9, 0.1])
    monkeypatch.setattr(enc.model.confidence, "forward", lambda energy: conf)
    act = torch.zeros(5, 384)
    act[:, 200] = 1.0
    got = enc.decode(act, torch.ones(5, 10))[:, 0]
    assert np.isnan(got).tolist() == [True, False, False, False, True]
    assert got[1] == pytest.approx(np.log2(440 * 2 ** ((200 / 3 - 69) / 12)), abs=1e-5)   # 3 bins per semitone
    # CREPE: periodicity (the posterior at the decoded bin) >= 0.21 where the audio is not silent
    enc = ph.loaded_encoder("torchcrepe:tiny")
    y = (0.3 * np.random.default_rng(0).standard_normal(1600)).astype(np.float32)   # loud: 1 + 1600 // 320 frames
    probs = torch.full((6, 360), -5.0)                                  # the Viterbi path stays on bin 150
    probs[:, 150] = torch.tensor([0.209, 0.211, 0.5, 0.209, 0.9, 0.211])
    got = enc.decode(probs, y)[:, 0]
    assert np.isnan(got).tolist() == [True, False, False, True, False, False]
    assert got[1] == pytest.approx((150 * 20 + 1997.3794084376191) / 1200 + np.log2(10), abs=1e-5)
    got = enc.decode(probs, np.zeros_like(y))[:, 0]                   # silent audio: all unvoiced
    assert np.isnan(got).all()
    # FCPE: the latent's peak > 0.006 (the package masks <= threshold), f0 >= the checkpoint's f0_min
    enc = ph.loaded_encoder("fcpe")
    latent = torch.zeros(1, 4, 360)
    latent[0, :, 180] = torch.tensor([0.006, 0.0061, 0.5, 0.0059])
    got = enc.decode(latent)[:, 0]
    assert np.isnan(got).tolist() == [True, False, False, True]


@pytest.mark.parametrize("name", ["pesto", "torchcrepe:tiny", "fcpe"])
def test_f0_layer_of_silence_and_noise_is_zero(name):
    enc = ph.loaded_encoder(name)
    f0 = enc.f0_layer
    silence = np.zeros(int(0.6 * SR_IN), np.float32)
    np.testing.assert_array_equal(enc.features(silence, SR_IN, [f0])[f0], np.zeros(16, np.float32))
    noise = (0.1 * np.random.default_rng(0).standard_normal(int(0.6 * SR_IN))).astype(np.float32)
    seq = enc.sequences(ph.to_16k(noise, SR_IN), [f0])[f0][:, 0]
    pooled = enc.features(noise, SR_IN, [f0])[f0]
    if name == "fcpe":                   # FCPE calls white noise voiced at a steady ~215 Hz: near zero
        assert np.nanstd(seq) < 0.02 and np.abs(pooled).max() < 0.05
    elif name.startswith("torchcrepe"):  # over the speech range CREPE calls 2 of 31 noise frames voiced (118 Hz)
        assert np.mean(~np.isnan(seq)) <= 0.1 and np.abs(pooled).max() < 0.05
    else:
        assert np.isnan(seq).all()
        np.testing.assert_array_equal(pooled, np.zeros(16, np.float32))
