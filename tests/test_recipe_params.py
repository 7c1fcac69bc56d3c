"""Recipe parameters: checked transform parameter dataclasses, errors at load, the Transform contract."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import vocalgrad as vg
from generation import render as render_mod
from generation import render_unit
from generation.recipe import RECIPE_DIR, RecipeError, load_recipe
from generation.span import Span
from generation.sources import SourceItem
from generation.transforms import TRANSFORMS, ClipKey, Params, Transform, get_transform

FAITHFUL = (RECIPE_DIR / "faithful-v1.toml").read_text()


def variant(tmp_path, old: str, new: str, name: str = "typo.toml"):
    """A copy of faithful-v1 with one line changed (the line must exist)."""
    assert old in FAITHFUL, old
    path = tmp_path / name
    path.write_text(FAITHFUL.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old,new,field,why", [
    ('transition_hz = 800.0', 'transiton_hz = 800.0', "categories.clarity.transiton_hz", "unknown parameter"),
    ('seed_prefix = "42"', 'seed_prefx = "42"', "categories.noise.seed_prefx", "unknown parameter"),
    ('transform = "gain"', 'transform = "gian"', "categories.volume.transform", "unknown transform 'gian'"),
    ('res_type = "soxr_hq"\n', '', "categories.pitch.res_type", "missing"),
    ('ir_sec = 1.5', 'ir_sec = "1.5"', "categories.echo.ir_sec", "must be a number"),
    ('n_fft = 512\nhop_length = 128\nres_type', 'n_fft = 512.0\nhop_length = 128\nres_type',
     "categories.pitch.n_fft", "must be an integer"),
    ('hop_length = 128\ntransition_hz', 'hop_length = 1024\ntransition_hz', "categories.clarity.hop_length",
     "must lie in"),
    ('room = { low = 0.55, medium = 0.75, high = 0.90 }', 'room = { low = 0.55, medium = 0.75, high = 1.5 }',
     "categories.echo.room", "must lie in (0, 1]"),
    ('room = { low = 0.55, medium = 0.75, high = 0.90 }', 'room = { low = 0.55, medium = 0.75 }',
     "categories.echo.room", "per-tier table"),
    ('comb_feedback = [0.805, 0.827, 0.783, 0.764]', 'comb_feedback = [0.805, 0.827, 0.783]',
     "categories.echo.comb_feedback", "one value per comb_ms"),
    ('seed_directions = { increase = "up", decrease = "down" }', 'seed_directions = { increase = "up" }',
     "categories.noise.seed_directions", "increase, decrease"),
    ('covary = { rate_hz = [0.0, 20.0] }', 'covary = { rate = [0.0, 20.0] }',
     "categories.vibration.covary.rate_hz", "missing"),
    ('res_type = "soxr_hq"', 'res_type = "soxr_best"', "categories.pitch.res_type", "must be one of"),
    ('comb_ms = [29.7, 37.1, 41.1, 43.7]', 'comb_ms = [29.7, "a", 41.1, 43.7]', "categories.echo.comb_ms[1]",
     "must be a number, got 'a'"),
])
def test_bad_parameter_fails_at_load_naming_file_and_field(tmp_path, old, new, field, why):
    path = variant(tmp_path, old, new)
    with pytest.raises(RecipeError) as info:
        load_recipe(str(path))
    msg = str(info.value)
    assert msg.startswith(f"{path}: "), msg
    assert field in msg and why in msg, msg
    assert isinstance(info.value, ValueError) and isinstance(info.value, vg.VocalGradError)


def test_unknown_parameter_message_lists_the_known_ones(tmp_path):
    path = variant(tmp_path, 'transition_hz = 800.0', 'transiton_hz = 800.0')
    with pytest.raises(RecipeError, match=r"LowpassParams takes n_fft, hop_length, transition_hz, min_fft"):
        load_recipe(str(path))


def test_engine_fields_cannot_be_set_by_a_recipe(tmp_path):
    """crossfade comes from [blocks] and the noise seed from the clip: neither is a category parameter."""
    path = variant(tmp_path, 'transition_hz = 800.0', 'transition_hz = 800.0\ncrossfade = 10')
    with pytest.raises(RecipeError, match=r"categories.clarity.crossfade: unknown parameter"):
        load_recipe(str(path))
    path = variant(tmp_path, 'seed_prefix = "42"', 'seed_prefix = "42"\nseed = 7')
    with pytest.raises(RecipeError, match=r"categories.noise.seed: unknown parameter"):
        load_recipe(str(path))


@pytest.mark.parametrize("old,new,field", [
    ('transition_hz = 800.0', 'transiton_hz = 800.0', "categories.clarity.transiton_hz"),
    ('transform = "reverb"', 'transform = "reverbb"', "categories.echo.transform"),
])
def test_render_fails_before_reading_any_audio(tmp_path, monkeypatch, capsys, old, new, field):
    """`vocalgrad render --recipe BAD.toml` stops at load: no source read, no output folder."""
    from vocalgrad_commands.cli import main

    def no_sources(*a, **k):
        raise AssertionError("sources were read before the recipe was checked")

    monkeypatch.setattr(render_mod, "read_sources", no_sources)
    monkeypatch.setattr(render_unit, "prepare_source", no_sources)  # what a unit reads its source with
    path = variant(tmp_path, old, new)
    out = tmp_path / "out"
    rc = main(["render", "--source", "tones", "--out", str(out), "--sources", "1", "--categories", "volume",
               "--jobs", "1", "--quiet", "--recipe", str(path)])
    err = capsys.readouterr().err
    assert rc == 2 and str(path) in err and field in err, err
    assert not out.exists()


def test_faithful_parameters_per_tier():
    rec = load_recipe()
    echo = {t: rec.category("echo").params_for(t) for t in vg.TIERS}
    assert [echo[t].room for t in vg.TIERS] == [0.55, 0.75, 0.90]
    assert echo["low"].comb_ms == (29.7, 37.1, 41.1, 43.7) and echo["low"].ir_sec == 1.5
    noise = rec.category("noise").params_for("medium")
    assert (noise.seed_tier, noise.seed_prefix, noise.seed) == ("mid", "42", None)
    clarity = rec.category("clarity").params_for("high")
    assert (clarity.n_fft, clarity.hop_length, clarity.transition_hz, clarity.min_fft, clarity.crossfade) == \
        (512, 128, 800.0, 32, rec.crossfade)
    for cat in rec.categories.values():
        p = cat.params_for("low")
        assert type(p) is get_transform(cat.transform).params_type
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.crossfade = 1


def test_noise_seed_is_bound_by_the_effect():
    rec = load_recipe()
    p = rec.category("noise").params_for("medium")
    a = p.for_clip(ClipKey("p226_01", "p226_106", "linear", "medium", "increase"))
    b = p.for_clip(ClipKey("p226_01", "p226_106", "linear", "medium", "decrease"))
    assert isinstance(a.seed, int) and a.seed != b.seed and p.seed is None
    vol = rec.category("volume").params_for("medium")
    assert vol.for_clip(ClipKey("a", "a", "linear", "medium", "increase")) is vol
    x = np.zeros(4800, np.float32)
    from generation.schedule import make_schedule

    sched = make_schedule(rec, rec.category("noise"), Span(0, 4800), tier="medium", trajectory="linear",
                          direction="increase")
    with pytest.raises(ValueError, match="for_clip"):
        get_transform("white_noise")(x, rec.sample_rate, sched, p)


def test_registry_satisfies_the_transform_protocol_and_output_dtypes():
    """Every transform is a Transform; a rendered clip of each category has the declared dtype."""
    rec = load_recipe()
    from generation import attributes

    extension = {attributes.get(n).transform.name for n in attributes.extension_names()}  # brightness, formants
    assert {c.transform for c in rec.categories.values()} | extension == set(TRANSFORMS)
    rng = np.random.default_rng(0)
    n = 48000
    x = np.zeros(n, np.float32)
    x[6000:42000] = (0.1 * rng.standard_normal(36000)).astype(np.float32)
    item = SourceItem("src", None)
    for name in vg.CATEGORY_NAMES:
        t = get_transform(rec.category(name).transform)
        assert isinstance(t, Transform) and issubclass(t.params_type, Params) and t.name in TRANSFORMS
        res, _ = render_mod.render_clip(x, item, rec, Span(6000, 42000), category=name, tier="high",
                                        trajectory="linear", direction="increase", cache={})
        assert res.y.dtype == t.output_dtype, (name, res.y.dtype, t.output_dtype)
        assert res.y.ndim == 1 and 0 < res.onset < res.offset <= len(res.y)
