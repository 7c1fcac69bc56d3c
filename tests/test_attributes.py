"""The attribute interface: the nine declared, the two shipped extension attributes, the registry.

The acoustic effect of each extension transform is checked by measurement on a demo voice, and
the extension set is taken end to end: render (label checks), Hub configs and card, the
``vocalgrad_ext`` tasks scored by the oracle through ``vocalgrad-eval``, and the report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import vocalgrad
from generation import attributes
from generation.attributes import brightness, formants
from generation.attributes.base import Attribute, AttributeDeclarationError
from generation.schedule import Schedule
from generation.span import Span
from generation.transforms import TRANSFORMS, ParamError
from generation.transforms.formant import FormantParams, formant_shift
from generation.transforms.tilt import TiltParams, spectral_tilt

ROOT = Path(__file__).resolve().parents[1]
DEMO_VOICE = ROOT / "generation" / "demo_data" / "test" / "awb_01.flac"
EXT = ("brightness", "formants")


def _env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", **extra)


def _run(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, *args], env=env or _env(), cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


# ---- registry and command -------------------------------------------------------------------
def test_attributes_json_lists_the_nine_and_the_extension_set():
    out = json.loads(_run("-m", "vocalgrad_commands.cli", "attributes", "--json").stdout)
    rows = {a["name"]: a for a in out["attributes"]}
    assert list(rows)[:9] == list(vocalgrad.CATEGORY_NAMES)
    for name in vocalgrad.CATEGORY_NAMES:
        assert rows[name]["set"] == "paper" and rows[name]["kind"] == "built-in"
        assert rows[name]["phrase"] == vocalgrad.category(name).attribute
    for name in EXT:
        assert rows[name]["set"] == "extension" and rows[name]["kind"] == "built-in"
        assert rows[name]["package"] == "vocalgrad" and set(rows[name]["tiers"]) == set(vocalgrad.TIERS)
    assert rows["brightness"]["unit"] == "dB/octave" and rows["brightness"]["min_bandwidth_hz"] == 4000.0
    assert out["problems"] == []
    table = _run("-m", "vocalgrad_commands.cli", "attributes").stdout
    assert "formant frequency" in table and "not part of the paper's benchmark" in table


def test_the_nine_are_declared_from_the_benchmark_tables():
    from generation import label_validity as lv
    from generation.measures import MEASURES
    from generation.recipe import load_recipe

    recipe = load_recipe()
    reg = attributes.installed()
    for c in vocalgrad.CATEGORIES:
        a = reg[c.name]
        crec = recipe.category(c.name)
        assert a.paper and not a.extension and a.category() == c
        assert (a.unit, a.tiers, a.transform.name, a.layout) == (crec.unit, crec.tiers, crec.transform, crec.layout)
        assert a.tier_params(crossfade=recipe.crossfade) == crec.tier_params
        assert a.measure is MEASURES[c.name]
        assert (a.effect_unit, a.min_change) == (lv.EFFECT_UNITS[c.name], lv.MIN_CHANGE[c.name])
    assert attributes.extension_names() == EXT
    assert vocalgrad.CATEGORY_NAMES == tuple(n for n, a in reg.items() if a.paper)  # the benchmark stays nine


def test_vocalgrad_category_knows_installed_extensions_only_as_extensions():
    assert vocalgrad.category("brightness").attribute == "voice brightness"
    assert "brightness" not in vocalgrad.CATEGORY_NAMES
    with pytest.raises(ValueError, match=r"unknown category 'nope'.*extension attributes: brightness, formants"):
        vocalgrad.category("nope")
    from harness_tasks import prompts

    assert prompts.build_prompt("formants") == vocalgrad.DEFAULT_QUESTION.format(
        attribute="formant frequency") + "\n\n" + vocalgrad.DEFAULT_INSTRUCTION


def test_a_broken_or_clashing_plugin_is_left_out_with_a_warning(monkeypatch):
    class EntryPoint:
        def __init__(self, name, value, load):
            self.name, self.value, self.dist, self._load = name, value, None, load

        def load(self):
            return self._load()

    def broken():
        raise ImportError("No module named 'numpyy'")

    clash = _declare(name="pitch")
    good = _declare(name="tilted")
    monkeypatch.setattr(attributes, "_entry_points", lambda: [
        EntryPoint("bad", "bad_pkg:ATTR", broken), EntryPoint("clash", "clash_pkg:ATTR", lambda: clash),
        EntryPoint("good", "good_pkg:make", lambda: [good])])
    monkeypatch.setattr(attributes, "_REGISTRY", {})
    monkeypatch.setattr(attributes, "_PROBLEMS", [])
    with pytest.warns(attributes.PluginWarning) as caught:
        reg = attributes.installed()
    assert list(reg)[:9] == list(vocalgrad.CATEGORY_NAMES) and reg["pitch"].paper  # the nine are never replaced
    assert reg["tilted"].package == "good_pkg" and not reg["tilted"].builtin
    problems = attributes.problems()
    assert len(problems) == 2 and len(caught) == 2
    assert "bad_pkg:ATTR" in problems[0] and "numpyy" in problems[0]
    assert "'pitch' is taken (the paper)" in problems[1]


def test_expected_categories_of_a_render():
    from generation.render_dir import expected_categories, known_categories

    assert expected_categories("test", {"pitch"}) == vocalgrad.CATEGORY_NAMES
    assert expected_categories("test", {"pitch", "brightness"}) == vocalgrad.CATEGORY_NAMES + ("brightness",)
    assert expected_categories("test", {"formants"}) == ("formants",)  # a render of extension attributes only
    assert expected_categories("beep", {"pitch"}) == vocalgrad.BEEP_CATEGORIES
    assert known_categories({"formants", "nosuch"}) == vocalgrad.CATEGORY_NAMES + ("formants",)


def _declare(**change):
    base = dict(name="mine", phrase="my thing", increase_means="more", decrease_means="less", unit="dB/octave",
                tiers={"low": (-1.0, 1.0), "medium": (-2.0, 2.0), "high": (-3.0, 3.0)}, transform=spectral_tilt,
                measure=brightness.tilt_slope, paired=brightness.paired_tilt, effect_unit="dB/octave",
                min_change=0.5)
    return Attribute(**{**base, **change})


@pytest.mark.parametrize("change, field", [
    ({"name": "my_thing"}, "no underscores"),
    ({"name": "sources"}, "name: 'sources' is a Hub config"),
    ({"tiers": {"low": (0, 1), "medium": (0, 2)}}, "tiers: must give exactly"),
    ({"tiers": {"low": (1.0, 1.0), "medium": (0, 2), "high": (0, 3)}}, "tiers.low: start and end are equal"),
    ({"params": {"pivot_hz": 50.0}}, "params.pivot_hz: must be above floor_hz"),
    ({"params": {"pivot": 500.0}}, "params.pivot: unknown parameter"),
    ({"min_change": 0}, "min_change: must be a number > 0"),
    ({"measure": "slope"}, "measure: must be callable"),
    ({"layout": "frames"}, "layout: must be one of"),
])
def test_a_bad_declaration_names_the_field(change, field):
    with pytest.raises(AttributeDeclarationError, match=field.replace("(", r"\(")):
        _declare(**change)
    assert isinstance(AttributeDeclarationError("x"), vocalgrad.VocalGradError)


@pytest.mark.parametrize("cls, table, field", [
    (TiltParams, {"floor_hz": 0.0}, "floor_hz"),
    (TiltParams, {"ceiling_hz": 900.0}, "ceiling_hz"),
    (TiltParams, {"n_fft": 1000}, "n_fft"),
    (FormantParams, {"lifter_ms": 8.0}, "lifter_ms"),
    (FormantParams, {"max_hz": 500.0}, "max_hz"),
])
def test_extension_parameters_are_checked_when_built(cls, table, field):
    with pytest.raises(ParamError) as err:
        cls.from_table(table, tier="low", tiers=vocalgrad.TIERS)
    assert err.value.field == field and str(err.value).startswith(f"{field}: ")
    with pytest.raises(Exception):  # frozen
        setattr(cls.from_table({}, tier="low", tiers=vocalgrad.TIERS), "n_fft", 512)


def test_extension_transforms_are_registered_under_their_names():
    assert TRANSFORMS["spectral_tilt"] is spectral_tilt and TRANSFORMS["formant_shift"] is formant_shift


# ---- acoustic effect, by measurement ---------------------------------------------------------
@pytest.fixture(scope="module")
def voice():
    x, sr = sf.read(DEMO_VOICE, dtype="float32")
    return (x if x.ndim == 1 else x.mean(axis=1)).astype(np.float32), sr


def _constant(x, value) -> Schedule:
    n = x.size
    return Schedule(Span(0, n, True), np.full(n, float(value)), float(value), float(value))


def _rms_db(v) -> float:
    return 10 * np.log10(np.mean(np.square(v, dtype=np.float64)))


@pytest.mark.parametrize("tilt", [-6.0, -2.0, 3.0, 6.0])
def test_tilt_changes_the_spectral_slope_by_the_tilt_and_keeps_the_level(voice, tilt):
    x, sr = voice
    p = TiltParams.from_table({}, tier="low", tiers=vocalgrad.TIERS)
    y = spectral_tilt(x, sr, _constant(x, tilt), p).y
    slope = brightness._ratio_slope(y, x, sr)  # band levels of the output minus the input, dB per octave
    assert abs(slope - tilt) < 0.25 * abs(tilt) + 0.3, (slope, tilt)
    assert abs(brightness.tilt_slope(y, sr) - brightness.tilt_slope(x, sr) - tilt) < 0.25 * abs(tilt) + 0.3
    assert abs(_rms_db(y) - _rms_db(x)) < 1.0  # each frame keeps its energy
    assert y.size == x.size


def test_zero_tilt_and_unit_scale_leave_the_voice(voice):
    x, sr = voice
    y0 = spectral_tilt(x, sr, _constant(x, 0.0), TiltParams.from_table({}, tier="low", tiers=vocalgrad.TIERS)).y
    y1 = formant_shift(x, sr, _constant(x, 1.0), FormantParams.from_table({}, tier="low", tiers=vocalgrad.TIERS)).y
    for y in (y0, y1):
        assert np.max(np.abs(y - x)) < 1e-4


@pytest.mark.parametrize("scale", [0.85, 0.94, 1.06, 1.15])
def test_formant_scale_moves_the_envelope_and_not_the_pitch(voice, scale):
    from generation.measures import MEASURES

    x, sr = voice
    p = FormantParams.from_table({}, tier="low", tiers=vocalgrad.TIERS)
    y = formant_shift(x, sr, _constant(x, scale), p).y
    want = 12 * np.log2(scale)
    got = formants.envelope_shift(y, x, sr)
    assert abs(got - want) < 0.35 * abs(want) + 0.2, (got, want)
    assert np.sign(formants.envelope_centroid(y, sr) - formants.envelope_centroid(x, sr)) == np.sign(want)
    pitch_moved = 12 * (MEASURES["pitch"](y, sr) - MEASURES["pitch"](x, sr))  # median F0 (log2) -> semitones
    assert abs(pitch_moved) < 0.3, pitch_moved
    assert abs(_rms_db(y) - _rms_db(x)) < 1.0


def test_the_schedule_moves_the_effect_over_the_span(voice):
    # a linear increase: the tilt measured against the source grows from the first to the last part
    from generation.trajectory import sample_times, values

    x, sr = voice
    n = x.size
    vals = values("linear", "increase", sample_times(n), -6.0, 6.0)
    y = spectral_tilt(x, sr, Schedule(Span(0, n, True), vals, -6.0, 6.0),
                      TiltParams.from_table({}, tier="high", tiers=vocalgrad.TIERS)).y
    thirds = [slice(k * n // 3, (k + 1) * n // 3) for k in range(3)]
    slopes = [brightness._ratio_slope(y[s], x[s], sr) for s in thirds]
    assert slopes[0] < -2 < slopes[1] + 2 and slopes[1] < slopes[2] and slopes[2] > 2, slopes


def test_band_limited_sources_are_flagged_for_brightness():
    from generation import label_validity as lv
    from generation.recipe import load_recipe
    from scipy.signal import butter, sosfiltfilt

    sr = 48000
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(sr * 2)
    narrow = sosfiltfilt(butter(8, 3000, fs=sr, output="sos"), noise)  # nothing above 4 kHz
    crec = attributes.category_recipe(load_recipe(), "brightness")
    span = Span(0, narrow.size, True)
    a = attributes.get("brightness")
    assert all("band_limited" in c for c in lv.source_warnings(narrow, span, sr, "brightness", crec,
                                                               min_bandwidth_hz=a.min_bandwidth_hz).values())
    assert not any("band_limited" in c for c in lv.source_warnings(noise, span, sr, "brightness", crec,
                                                                   min_bandwidth_hz=a.min_bandwidth_hz).values())


# ---- end to end: render -> Hub -> vocalgrad-eval (oracle) -> report -------------------------
@pytest.fixture(scope="module")
def ext_pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("ext")
    render, hub, results, report = root / "render", root / "hub", root / "results", root / "report"
    # module-scoped: conftest's per-test answer-log isolation is not in place yet
    env = _env(VOCALGRAD_DATASET=str(hub), VOCALGRAD_ANSWER_LOG="none", VOCALGRAD_CACHE=str(root / "cache"))
    _run("-m", "vocalgrad_commands.cli", "render", "--source", "demo", "--categories", ",".join(EXT), "--sources", "2",
         "--jobs", "1", "--quiet", "--out", str(render))
    _run("-m", "vocalgrad_commands.cli", "hub", str(render), "--out", str(hub))
    _run("-m", "harness_tasks.cli", "--model", "vocalgrad-oracle", "--tasks", "vocalgrad_ext", "--output_path",
         str(results), "--log_samples", env=env, cwd=root)
    _run("-m", "vocalgrad_commands.cli", "report", str(results), "--out", str(report))
    return render, hub, results, report


def test_rendered_extension_clips_carry_their_labels(ext_pipeline):
    import csv

    render = ext_pipeline[0]
    rows = list(csv.DictReader(open(render / "label_checks.csv", encoding="utf-8")))
    assert {r["category"] for r in rows} == set(EXT) and len(rows) == 2 * 2 * vocalgrad.CONDITIONS_PER_CATEGORY
    for cat in EXT:
        mine = [r for r in rows if r["category"] == cat]
        right = sum((float(r["effect_measured"]) > 0) == (r["direction"] == "increase") for r in mine)
        assert right / len(mine) >= 0.99, (cat, right, len(mine))
        assert not any(r["label_warnings"] for r in mine)
        assert mine[0]["effect_unit"] == attributes.get(cat).effect_unit
    manifest = json.loads((render / "render.json").read_text())
    assert manifest["categories"] == sorted(EXT)


def test_extension_hub_configs_and_card(ext_pipeline):
    hub = ext_pipeline[1]
    for cat in EXT:
        assert list((hub / cat).glob("test-*.parquet"))
    assert not (hub / "all").exists()  # `all` is the paper's nine only
    card = (hub / "README.md").read_text(encoding="utf-8")
    assert "## Extension attributes (not part of the paper's benchmark)" in card
    assert "config_name: brightness" in card and "| `formants` | formant frequency |" in card


def test_oracle_beats_chance_on_each_extension_attribute(ext_pipeline):
    results = ext_pipeline[2]
    res = json.loads(next(results.rglob("results_*.json")).read_text())["results"]
    assert "vocalgrad_ext" in res
    for cat in EXT:
        assert res[f"vocalgrad_ext_{cat}"]["acc,none"] > 0.75, (cat, res[f"vocalgrad_ext_{cat}"])


def test_report_has_the_extension_table_apart_from_the_paper(ext_pipeline):
    report = ext_pipeline[3]
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "## Extension attributes (not part of the paper's benchmark)" in text
    assert "| model | brightness | formants | avg |" in text
    assert "Accuracy by category, with the paper's numbers" not in text  # no paper table for the extension set
    data = json.loads((report / "report.json").read_text())
    model = next(m for m in data["models"] if m["variant"] == "ext")
    assert set(model["by_category"]) == set(EXT)


def test_the_paper_task_folder_has_no_extension_task():
    from harness_tasks import TASK_DIR
    from harness_tasks.ext_tasks import ext_files

    assert not list(Path(TASK_DIR).glob("*ext*"))
    files = ext_files()
    assert sorted(files) == ["_vocalgrad_ext.yaml", "vocalgrad_ext_brightness.yaml", "vocalgrad_ext_formants.yaml"]
    assert f"include: {Path(TASK_DIR).as_posix()}/_template_yaml" in files["vocalgrad_ext_formants.yaml"]
    assert ext_files(()) == {}


def test_verify_listen_and_show_take_the_extension_clips(ext_pipeline):
    from analysis.listen.catalog import open_catalog
    from analysis.show import _curve, show_clip
    from generation.verify import verify

    render, hub = ext_pipeline[0], ext_pipeline[1]
    for folder in (render, hub):
        assert verify(folder, write_record=False).ok
    clips = open_catalog(hub).clips
    assert len(clips) == 2 * 2 * vocalgrad.CONDITIONS_PER_CATEGORY and {c.category for c in clips.values()} == set(EXT)
    cid = next(c for c in clips if "__brightness__linear__high__increase" in c)
    png = show_clip(cid, render, render.parent / "clip.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    y, sr = sf.read(render / "clips" / "brightness" / f"{cid}.flac")
    x, _ = sf.read(render / "sources" / f"{cid.split('__')[0]}.flac")
    t, v, label, same = _curve("brightness", y, sr, source=x)
    assert same and label.startswith("tilt re source")
    v = v[np.isfinite(v)]
    assert v[:5].mean() < -3 and v[-5:].mean() > 3  # the measured tilt follows the -6 -> +6 schedule
