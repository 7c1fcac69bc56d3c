"""Speech span detection (benchmark.md §5), trajectories and value schedules (benchmark.md §3), recipe loading."""

import numpy as np
import pytest

import vocalgrad as vg
from generation import trajectory as tj
from generation.recipe import load_recipe
from generation.schedule import make_layout, make_schedule
from generation.span import Span, detect_span

SR = 48000


def burst(lead, dur, tail, amp=0.2, f=300.0, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    n = int((lead + dur + tail) * SR)
    y = noise * rng.standard_normal(n)
    a, b = int(lead * SR), int((lead + dur) * SR)
    y[a:b] += amp * np.sin(2 * np.pi * f * np.arange(b - a) / SR)
    return y.astype(np.float32)


def test_span_of_a_tone_burst_is_frame_accurate():
    y = burst(0.5, 2.0, 0.4, noise=1e-4)
    sp = detect_span(y, SR)
    assert sp.found
    assert abs(sp.onset - 0.5 * SR) <= 480 and sp.onset % 480 == 0
    assert abs(sp.offset - 2.5 * SR) <= 480


def test_span_ignores_short_clicks_and_needs_ten_frames():
    y = burst(0.5, 2.0, 0.6, noise=1e-4)
    y[int(0.25 * SR): int(0.25 * SR) + 400] += 0.3   # a 8-ms click before the speech
    y[int(2.8 * SR): int(2.8 * SR) + 4 * 480] += 0.2  # 4 frames after it
    sp = detect_span(y, SR)
    assert abs(sp.onset - 0.5 * SR) <= 480 and abs(sp.offset - 2.5 * SR) <= 480


def test_span_falls_back_to_whole_clip():
    y = (1e-3 * np.random.default_rng(1).standard_normal(SR)).astype(np.float32)  # stationary noise only
    sp = detect_span(np.zeros(SR, np.float32), SR)
    assert sp == Span(0, SR, False)
    assert detect_span(y[:100], SR) == Span(0, 100, False)


def test_span_offset_capped_at_clip_length():
    y = burst(0.3, 1.0, 0.0, noise=1e-4)
    sp = detect_span(y, SR)
    assert sp.offset == len(y)


@pytest.mark.parametrize("t,lin,qf,ql,jump", [(0.0, 0, 0, 0, 0), (0.25, .25, .0625, .4375, 0),
                                              (0.5, .5, .25, .75, 1), (1.0, 1, 1, 1, 1)])
def test_trajectory_shapes(t, lin, qf, ql, jump):
    for name, want in zip(vg.TRAJECTORIES, (lin, qf, ql, jump)):
        assert tj.g(name, np.array([t]))[0] == pytest.approx(want)


def test_values_and_times():
    t = tj.step_times(5)
    np.testing.assert_array_equal(t, [0, .25, .5, .75, 1])
    np.testing.assert_array_equal(tj.step_times(1), [1.0])
    up = tj.values("linear", "increase", t, -3, 3)
    down = tj.values("linear", "decrease", t, -3, 3)
    np.testing.assert_allclose(up, [-3, -1.5, 0, 1.5, 3])
    np.testing.assert_allclose(down, [3, 1.5, 0, -1.5, -3])
    with pytest.raises(ValueError, match="trajectory"):
        tj.g("cubic", t)
    with pytest.raises(ValueError, match="direction"):
        tj.values("linear", "sideways", t, 0, 1)


def test_block_layouts():
    sp = Span(1000, 1000 + 2400 * 3 + 100)
    lay = make_layout("blocks", sp, size=2400, context=2400)
    assert lay.n == 4 and list(lay.ends - lay.starts) == [2400, 2400, 2400, 100]
    assert lay.ctx_starts[0] == 1000 and lay.ctx_ends[-1] == sp.offset      # context clipped to the span
    assert lay.ctx_starts[2] == lay.starts[2] - 2400
    ev = make_layout("even_chunks", sp, size=2400, context=2400)
    assert ev.n == 4 and ev.starts[0] == 1000 and ev.ends[-1] == sp.offset
    assert set(ev.ends - ev.starts) <= {1825, 1826}


def test_schedule_holds_start_and_end_values():
    rec = load_recipe()
    sp = Span(4800, 4800 + 24000)
    s = make_schedule(rec, rec.category("pitch"), sp, tier="high", trajectory="quad_last_flat", direction="decrease")
    assert (s.start, s.end) == (3.0, -3.0) and s.values[0] == 3.0 and s.values[-1] == -3.0
    v = make_schedule(rec, rec.category("vibration"), sp, tier="low", trajectory="linear", direction="increase")
    assert v.layout is None and len(v.values) == sp.length
    rate, r0, r1 = v.covary["rate_hz"]
    assert (r0, r1) == (0.0, 20.0) and rate[-1] == 20.0


def test_recipe_has_every_spec_number():
    rec = load_recipe("faithful-v1")
    assert rec.sample_rate == 48000 and (rec.block, rec.context, rec.crossfade) == (2400, 2400, 240)
    assert rec.category("distortion").tiers["high"] == (48000.0, 6000.0)
    assert rec.category("clarity").tiers["low"] == (5000.0, 24000.0)
    assert rec.category("echo").params["room"] == {"low": 0.55, "medium": 0.75, "high": 0.90}
    assert rec.category("speed").layout == "even_chunks"


def test_recipe_errors_name_file_and_field(tmp_path):
    with pytest.raises(ValueError, match="unknown recipe"):
        load_recipe("nope-v9")
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nprocessing_sample_rate = 48000\n[span]\n[blocks]\nsize = 1\ncontext = 1\n'
                   'crossfade = 1\n[categories.volume]\ntransform = "gain"\nunit = "dB"\nlayout = "blocks"\n'
                   'tiers = { low = [1, 2], medium = [1, 2] }\n')
    with pytest.raises(ValueError, match=r"bad.toml.*categories.volume.tiers.high"):
        load_recipe(str(bad))
