"""`vocalgrad show`: the figure, the schedule curve and the measurements."""

from __future__ import annotations

import numpy as np
import pytest

import vocalgrad
from vocalgrad_commands.cli import main as cli_main
from analysis.listen import open_catalog
from analysis.show import schedule_curve
from generation.measures import curve as measure

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def volume_render(tmp_path_factory):
    from generation.render import render

    out = tmp_path_factory.mktemp("show") / "render"
    render("tones", out, categories=["volume"], n_sources=1, jobs=1, progress=False)
    return out


def _png_ok(path, *, columns=2):
    import matplotlib.image as mpimg

    img = mpimg.imread(path)
    assert img.shape[0] >= 600 and img.shape[1] >= 600 * columns  # clip (and source) side by side
    rgb = img[..., :3]
    assert rgb.std() > 0.1  # not a blank canvas
    assert (rgb.min(axis=-1) < 0.9).mean() > 0.3  # spectrograms and curves cover much of the canvas
    blue = np.all(np.abs(rgb - np.array([0.12, 0.47, 0.71])) < 0.08, axis=-1)  # the schedule line
    orange = np.all(np.abs(rgb - np.array([1.0, 0.5, 0.05])) < 0.1, axis=-1)  # the measurement
    assert blue.sum() > 300 and orange.sum() > 100
    return img


def test_cli_writes_the_figure_for_a_render_and_a_hub_folder(volume_render, tmp_path, capsys):
    cid = vocalgrad.clip_id("tone00_pure_220hz", "volume", "quad_first_flat", "high", "decrease")
    out = tmp_path / "figs" / "clip.png"
    assert cli_main(["show", cid, "--data", str(volume_render), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    _png_ok(out)

    from generation.hub import build_hub

    build_hub(volume_render, tmp_path / "hub", allow_partial=True)
    out2 = tmp_path / "hub.png"
    assert cli_main(["show", cid, "--data", str(tmp_path / "hub"), "--out", str(out2)]) == 0
    _png_ok(out2)  # the source panel comes from the Hub folder's `sources` config

    build_hub(volume_render, tmp_path / "hub-nosrc", allow_partial=True, sources=False)
    from analysis.listen.catalog import open_catalog
    from analysis.show import _figure
    fig = _figure(open_catalog(tmp_path / "hub-nosrc"), cid)
    assert not any(ax.get_title().startswith("source:") for ax in fig.axes)
    assert "has no `sources` config" in fig._suptitle.get_text()
    import matplotlib.pyplot as plt
    plt.close(fig)
    out3 = tmp_path / "hub-nosrc.png"
    assert cli_main(["show", cid, "--data", str(tmp_path / "hub-nosrc"), "--out", str(out3)]) == 0
    _png_ok(out3, columns=1)  # no source panel, still a full figure

    assert cli_main(["show", cid.replace("decrease", "decreas"), "--data", str(volume_render),
                     "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "is not in" in err and "did you mean" in err and cid in err
    assert not (tmp_path / "x.png").exists()


def test_volume_measurement_follows_the_schedule(volume_render):
    cat = open_catalog(volume_render)
    from analysis.show import _decode

    for cid in (vocalgrad.clip_id("tone00_pure_220hz", "volume", "linear", "low", d) for d in vocalgrad.DIRECTIONS):
        info = cat.clips[cid]
        t, v, unit = schedule_curve(info)
        assert unit == "dB"
        assert v[0] == info.get("value_start") and v[-1] == info.get("value_end")  # held outside the span
        y, sr = _decode(cat.audio_bytes(cid))
        src, _ = _decode(str(cat.source_path(info.source_id)))
        mt, mv, label, same = measure("volume", y, sr, source=src)
        assert same and "dB" in label
        inside = (mt > info.get("onset_sec") + 0.05) & (mt < info.get("offset_sec") - 0.05)
        expected = np.interp(mt[inside], t, v)
        assert np.nanmax(np.abs(mv[inside] - expected)) < 1.0  # within 1 dB of the gain steps
        assert np.sign(mv[inside][-1] - mv[inside][0]) == (1 if info.direction == "increase" else -1)


def test_schedule_curve_of_pitch_leaves_audio_outside_the_span_untouched(volume_render):
    info = next(iter(open_catalog(volume_render).clips.values()))
    pitch = type(info)(info.clip_id, "pitch", "increase", "high", "jump", info.source_id,
                       {**info.extra, "value_start": -3.0, "value_end": 3.0, "recipe": "faithful-v1"})
    t, v, unit = schedule_curve(pitch)
    assert unit == "semitones" and v[0] == 0.0 and v[-1] == 0.0
    inside = (t > pitch.get("onset_sec")) & (t < pitch.get("offset_sec"))
    assert set(np.unique(v[inside])) == {-3.0, 3.0}  # a jump: start value, then end value
    assert np.all(np.diff(t) >= 0)


def test_measurements_on_synthetic_signals():
    sr = 16000
    t = np.arange(sr) / sr
    src = 0.3 * np.sin(2 * np.pi * 220 * t)
    clip = 0.3 * np.sin(2 * np.pi * 220 * 2 ** (2 / 12) * t)
    _, st, label, same = measure("pitch", clip, sr, source=src)
    assert same and abs(np.nanmedian(st) - 2.0) < 0.1
    held = np.repeat(src[::4], 4)[: src.size]  # sample-and-hold by 4 samples -> sr / 4
    _, rate, _, _ = measure("distortion", held, sr)
    assert abs(np.nanmedian(rate) - sr / 4) < sr * 0.01
    noisy = src + 0.05 * np.random.default_rng(0).standard_normal(src.size) * np.sqrt(np.mean(src**2))
    _, ratio, _, _ = measure("noise", noisy, sr, source=src)
    assert abs(np.nanmedian(ratio) - 0.05) < 0.01
    assert measure("speed", clip, sr) is None  # needs the source


def test_a_slow_step_says_what_it_does_and_a_quick_one_says_nothing():
    """``vocalgrad show`` names a step that outlasts its limit; no verdict here depends on the machine's speed:
    the slow block waits for the notice itself, the quick one has an hour."""
    import threading

    from analysis.show import slow_step

    lines = []
    with slow_step("reading x", say=lines.append, after=3600):
        pass
    assert lines == []
    seen = threading.Event()
    with slow_step("measuring (first run: compiling)", say=lambda ln: (lines.append(ln), seen.set()), after=0.0):
        assert seen.wait(120)  # a hang guard only
    assert lines[0] == "vocalgrad show: measuring (first run: compiling) ..."
    assert lines[1].startswith("vocalgrad show: measuring: done in ") and lines[1].endswith(" s") and len(lines) == 2


def test_show_names_its_steps_and_uses_the_renders_kernel_cache(volume_render, tmp_path, monkeypatch, capsys):
    """Every step past the limit is named on stderr (the limit set to 0 s here), the picture path alone goes
    to stdout, and numba's cache is the render's (``NUMBA_CACHE_DIR``), so librosa's kernels compile once."""
    import os

    import analysis.show as show

    monkeypatch.setattr(show, "SLOW_AFTER", 0.0)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cid = vocalgrad.clip_id("tone00_pure_220hz", "volume", "linear", "low", "increase")
    assert cli_main(["show", cid, "--data", str(volume_render), "--out", str(tmp_path / "c.png")]) == 0
    cap = capsys.readouterr()
    assert cap.out.strip() == str(tmp_path / "c.png")
    assert f"vocalgrad show: reading {volume_render} ..." in cap.err
    assert "vocalgrad show: measuring the clip and drawing the picture (first run: compiling audio kernels" in cap.err
    assert "vocalgrad show: measuring the clip and drawing the picture: done in" in cap.err
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "cache" / "vocalgrad" / "numba")
