"""The HTML report's clip pictures drawn with Pillow (analysis.report.clip_picture): what is drawn where,
checked on the pixels of pictures of made-up data whose content is known."""

from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from PIL import Image  # noqa: E402

from analysis.report import clip_picture as cp  # noqa: E402
from analysis.show import FigureData, Spectrogram  # noqa: E402

SR = 48_000


def _spec(db_of_hz, *, duration=2.0, span=(0.5, 1.5), title="clip: x"):
    """A spectrogram on 400 log-spaced bands (40 Hz - 24 kHz) and 100 frames, ``db_of_hz(hz) -> dB``."""
    edges = np.append(0.0, np.geomspace(40.0, SR / 2, 400))
    centres = np.sqrt(np.maximum(edges[:-1], 20.0) * edges[1:])
    db = np.repeat(np.asarray([db_of_hz(f) for f in centres], float)[:, None], 100, axis=1)
    return Spectrogram(db, edges, np.linspace(0.0, duration, 101), duration, SR, span, title)


def _data(**kw):
    base = dict(clip=_spec(lambda f: 0.0 if 1000 <= f <= 2000 else -90.0), source=None,
                schedule=(np.array([0.0, 0.5, 1.5, 2.0]), np.array([0.0, 0.0, 10.0, 10.0]), "dB"),
                measured=None, span=(0.5, 1.5), curve_title="volume: increase", curve_ylabel="volume (dB)",
                no_source="no source here")
    base.update(kw)
    return FigureData(**base)


def _rgb(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def _row_of(hz: float, box=(68, 34, 506, 292)) -> int:
    """The pixel row of ``hz`` on the clip spectrogram's log axis (32 Hz .. 24 kHz) in ``box``."""
    y0, y1 = box[1], box[3]
    frac = (np.log(hz) - np.log(cp.FMIN)) / (np.log(SR / 2) - np.log(cp.FMIN))
    return int(round(y1 - frac * (y1 - y0)))


def test_nice_ticks_are_round_and_cover_the_range():
    ticks, dec = cp.nice_ticks(0.0, 3.6, count=8)
    assert ticks.tolist() == pytest.approx([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]) and dec == 1
    ticks, dec = cp.nice_ticks(-12.3, 31.0, count=6)
    assert ticks.tolist() == pytest.approx([-10.0, 0.0, 10.0, 20.0, 30.0]) and dec == 0
    ticks, dec = cp.nice_ticks(0.0, 0.031, count=6)
    assert ticks.tolist() == pytest.approx([0.0, 0.01, 0.02, 0.03]) and dec == 2
    ticks, dec = cp.nice_ticks(0.0, 1.0, count=4)  # step 0.25 needs two decimals
    assert ticks.tolist() == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0]) and dec == 2
    assert cp.nice_ticks(2.0, 2.0)[0].tolist() == [2.0]  # no range: the one value, never a division by zero


def test_a_band_of_energy_is_drawn_at_its_frequency_and_nowhere_else():
    img = _rgb(cp.draw_png(_data()))
    assert img.shape == (520, 520, 3)  # no source: one column
    col = 68 + int(0.9 * (506 - 68))  # inside the speech span (0.5-1.5 s of 2 s): not shaded
    bright, dark = cp._magma()[255], cp._magma()[0]
    for hz in (1200, 1400, 1800):
        assert np.abs(img[_row_of(hz), col - 250] - bright).max() <= 2, hz
    for hz in (100, 400, 5000, 12000):
        assert np.abs(img[_row_of(hz), col - 250] - dark).max() <= 2, hz


def test_outside_the_speech_span_the_spectrogram_is_shaded_towards_white():
    img = _rgb(cp.draw_png(_data()))
    row = _row_of(300)  # a dark band
    before, inside = img[row, 68 + 20], img[row, 68 + 219]  # 0.09 s and 1.0 s of 2 s
    dark = cp._magma()[0].astype(float)
    assert np.abs(inside - dark).max() <= 2
    assert np.abs(before - (dark * 0.65 + 255 * 0.35)).max() <= 2


def test_the_schedule_line_is_drawn_at_its_values():
    img = _rgb(cp.draw_png(_data()))
    box = (68, 318, 506, 472)
    lo, hi = cp._limits(np.array([0.0, 10.0]))
    blue = np.all(np.abs(img - np.array(cp.BLUE)) <= 30, axis=-1)

    def y_of(v):
        return box[3] - (v - lo) / (hi - lo) * (box[3] - box[1])

    x_early, x_late = 68 + int(0.1 * (506 - 68)), 68 + int(0.95 * (506 - 68))
    rows_early = np.flatnonzero(blue[:, x_early])
    rows_late = np.flatnonzero(blue[:, x_late])
    assert rows_early.size and abs(rows_early.mean() - y_of(0.0)) <= 2
    assert rows_late.size and abs(rows_late.mean() - y_of(10.0)) <= 2


def test_a_measure_in_another_unit_gets_its_own_axis_and_colour():
    t = np.linspace(0.0, 2.0, 50)
    same = _rgb(cp.draw_png(_data(measured=(t, np.linspace(0, 10, 50), "RMS re source (dB)", True))))
    twin = _rgb(cp.draw_png(_data(measured=(t, np.linspace(0, 0.8, 50), "residual RMS", False))))
    orange = lambda im: np.all(np.abs(im - np.array(cp.ORANGE)) <= 25, axis=-1)  # noqa: E731
    # the twin axis writes its tick labels right of the panel, in orange; the shared axis writes none there
    assert orange(twin)[318:472, 452:520].sum() > 40
    assert orange(same)[318:472, 510:520].sum() == 0
    # in both, the measured dots are drawn inside the curve panel
    assert orange(same)[318:472, 68:506].sum() > 50 and orange(twin)[318:472, 68:452].sum() > 50


def test_with_a_source_the_picture_has_its_column():
    src = _spec(lambda f: -90.0, title="source: s1")
    data = _data(source=src, no_source="", source_curve=(np.linspace(0, 2, 20), np.linspace(-30, -20, 20), "RMS"))
    img = _rgb(cp.draw_png(data))
    assert img.shape == (520, 1040, 3)
    green = np.all(np.abs(img - np.array(cp.GREEN)) <= 30, axis=-1)
    assert green[:, 520:].sum() > 20 and green[:, :520].sum() == 0
    note = _data(source=src, no_source="", source_note="speed: relative to this source")
    blank = _rgb(cp.draw_png(note))[330:460, 600:1000]  # the source's curve panel: text only, no frame
    assert (blank < 128).any() and not np.all(np.abs(blank - np.array(cp.GREEN)) <= 30, axis=-1).any()


def test_palette_pictures_keep_the_colours_and_are_smaller():
    t = np.linspace(0.0, 2.0, 50)
    data = _data(measured=(t, np.linspace(0, 10, 50), "RMS", True))
    full, small = cp.draw_png(data), cp.draw_png(data, colours=128)
    img = Image.open(io.BytesIO(small))
    assert img.mode == "P" and len(img.getcolors()) <= 128 and len(small) < len(full)
    assert np.abs(_rgb(small) - _rgb(full)).mean() < 3
