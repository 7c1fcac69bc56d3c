"""The HTML report's clip pictures, drawn with Pillow alone.

The picture shows what ``vocalgrad show`` draws with matplotlib (:func:`analysis.show.figure_data`: the
clip's and its source's log-frequency spectrograms with the speech span marked, the value schedule
with the measured curve, the source's own measurement), in the same 1040 x 520 pixels the report
used, but drawn straight into an image: no figure, axes or text objects. A page of 70 clips was
mostly matplotlib's bookkeeping (about 0.6 CPU-seconds a picture, against about 0.1 here); the
report's page is the one place where many pictures are drawn at once. ``vocalgrad show`` keeps
matplotlib (any resolution, print quality).
"""

from __future__ import annotations

import io
import math
from functools import lru_cache

import numpy as np

__all__ = ["draw_png", "nice_ticks"]

#: Picture size of two columns (clip and source) and of one column (no source), in pixels.
HEIGHT, COLUMN = 520, 520
BLUE, ORANGE, GREEN, GREY, CYAN = (31, 119, 180), (255, 127, 14), (44, 160, 44), (128, 128, 128), (0, 255, 255)
#: Frequency range of the spectrograms (log axis), and the ticks written on it.
FMIN = 32.0
FREQ_TICKS = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
#: The spectrograms' dB range (their floor: ``top_db`` of :func:`analysis.show.spectrogram`).
DB_FLOOR = -90.0


@lru_cache(maxsize=None)
def _font(size: int):
    """DejaVu Sans (shipped with matplotlib) at ``size`` pixels; Pillow's own font when it is missing."""
    from PIL import ImageFont

    try:
        import matplotlib

        return ImageFont.truetype(f"{matplotlib.get_data_path()}/fonts/ttf/DejaVuSans.ttf", size)
    except (ImportError, OSError):
        return ImageFont.load_default(size)


@lru_cache(maxsize=None)
def _magma() -> np.ndarray:
    """matplotlib's ``magma`` colour map as a (256, 3) uint8 table."""
    from matplotlib import colormaps

    return (colormaps["magma"](np.linspace(0.0, 1.0, 256))[:, :3] * 255 + 0.5).astype(np.uint8)


def nice_ticks(lo: float, hi: float, count: int = 6) -> tuple[np.ndarray, int]:
    """About ``count`` round tick values (steps of 1, 2, 2.5 or 5 x 10^k) within ``[lo, hi]``, and the
    decimals their labels need."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return np.array([lo]) if math.isfinite(lo) else np.array([]), 0
    raw = (hi - lo) / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    first = math.ceil(lo / step - 1e-9)
    ticks = (first + np.arange(int(math.floor(hi / step + 1e-9)) - first + 1)) * step
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (1 if round(step / power, 6) == 2.5 else 0)
    return ticks, decimals


def _limits(*arrays, pad: float = 0.05) -> tuple[float, float]:
    """The finite range of ``arrays`` with ``pad`` of it added on each side (a flat curve: +-1)."""
    vals = np.concatenate([np.asarray(a, float).ravel() for a in arrays]) if arrays else np.array([])
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return 0.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    if hi - lo < 1e-12:
        return lo - 1.0, hi + 1.0
    return lo - pad * (hi - lo), hi + pad * (hi - lo)


class _Panel:
    """A plotting box: data limits and the pixel box they map to."""

    def __init__(self, draw, box, xlim, ylim, *, log_y: bool = False):
        self.draw, self.box, self.xlim, self.log_y = draw, box, xlim, log_y
        self.ylim = (math.log(ylim[0]), math.log(ylim[1])) if log_y else ylim

    def px(self, x):
        x0, _, x1, _ = self.box
        return x0 + (np.asarray(x, float) - self.xlim[0]) / (self.xlim[1] - self.xlim[0]) * (x1 - x0)

    def py(self, y):
        _, y0, _, y1 = self.box
        y = np.log(np.asarray(y, float)) if self.log_y else np.asarray(y, float)
        return y1 - (y - self.ylim[0]) / (self.ylim[1] - self.ylim[0]) * (y1 - y0)

    def frame(self):
        self.draw.rectangle(self.box, outline=(0, 0, 0), width=1)

    def x_ticks(self, labels: bool):
        ticks, dec = nice_ticks(*self.xlim, count=8)
        y1 = self.box[3]
        for t in ticks:
            x = float(self.px(t))
            self.draw.line([(x, y1), (x, y1 + 4)], fill=(0, 0, 0))
            if labels:
                self.draw.text((x, y1 + 6), f"{t:.{dec}f}", fill=(0, 0, 0), font=_font(11), anchor="ma")

    def y_ticks(self, values=None, texts=None, *, right: bool = False, colour=(0, 0, 0)):
        if values is None:
            values, dec = nice_ticks(*self.ylim, count=6)
            texts = [f"{v:.{dec}f}" for v in values]
        x = self.box[2] if right else self.box[0]
        for v, text in zip(values, texts):
            y = float(self.py(v))
            self.draw.line([(x, y), (x + (4 if right else -4), y)], fill=colour)
            self.draw.text((x + (6 if right else -6), y), text, fill=colour, font=_font(11),
                           anchor="lm" if right else "rm")

    def vline(self, x, colour, *, dash: int = 5, width: int = 1):
        xp = float(self.px(x))
        if not self.box[0] <= xp <= self.box[2]:
            return
        _, y0, _, y1 = self.box
        for a in range(int(y0), int(y1), 2 * dash):
            self.draw.line([(xp, a), (xp, min(a + dash, y1))], fill=colour, width=width)

    def _clip(self, x, y):
        x0, y0, x1, y1 = self.box
        return np.clip(self.px(x), x0, x1), np.clip(self.py(y), y0, y1)

    def line(self, x, y, colour, width: int = 2):
        ok = np.isfinite(np.asarray(x, float)) & np.isfinite(np.asarray(y, float))
        for run in np.split(np.arange(ok.size), np.flatnonzero(np.diff(ok.astype(int))) + 1):
            if run.size > 1 and ok[run[0]]:
                xs, ys = self._clip(np.asarray(x)[run], np.asarray(y)[run])
                self.draw.line(list(zip(xs.tolist(), ys.tolist())), fill=colour, width=width)

    def pixels(self, x, y, *, step: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Pixel positions of the finite points of a curve (``step``: its segments filled in, 200 points each)."""
        x, y = np.asarray(x, float), np.asarray(y, float)
        if step and x.size > 1:
            f = np.linspace(0.0, 1.0, 200)[:, None]
            x, y = (x[:-1] + f * np.diff(x)).ravel(), (y[:-1] + f * np.diff(y)).ravel()
        ok = np.isfinite(x) & np.isfinite(y)
        return self._clip(x[ok], y[ok])

    def dots(self, x, y, colour, r: float = 1.2):
        x, y = np.asarray(x, float), np.asarray(y, float)
        ok = np.isfinite(x) & np.isfinite(y)
        for a, b in zip(*(v.tolist() for v in self._clip(x[ok], y[ok]))):
            self.draw.ellipse((a - r, b - r, a + r, b + r), fill=colour)


def _title(draw, centre_x: float, y: float, text: str, size: int = 12):
    draw.text((centre_x, y), text, fill=(0, 0, 0), font=_font(size), anchor="mb")


def _vertical_text(img, x: float, centre_y: float, text: str, colour=(0, 0, 0), size: int = 11,
                   room: float = 1e9):
    """``text`` written bottom to top, centred on ``centre_y``, its left edge at ``x``; a smaller font (down to
    8 pixels), then the text cut with "...", where it is longer than ``room`` pixels."""
    from PIL import Image, ImageDraw

    while size > 8 and _font(size).getlength(text) > room:
        size -= 1
    font = _font(size)
    while len(text) > 4 and font.getlength(text) > room:
        text = text[:-4] + "..."
    w = int(math.ceil(font.getlength(text))) + 2
    strip = Image.new("L", (w, size + 4), 0)
    ImageDraw.Draw(strip).text((1, 1), text, fill=255, font=font)
    strip = strip.rotate(90, expand=True)
    img.paste(Image.new("RGB", strip.size, colour), (int(x), int(centre_y - strip.size[1] / 2)), strip)


def _legend(draw, box, entries, points=()):
    """A small boxed legend of ``(colour, kind 'line'|'dots', text)`` in the corner of ``box`` that covers
    the fewest of ``points`` (pixel ``(xs, ys)`` arrays; ties: top right, top left, bottom right, bottom left)."""
    font = _font(11)
    w = max(font.getlength(text) for _, _, text in entries) + 34
    h = 16 * len(entries) + 6
    corners = [(box[2] - w - 6, box[1] + 6), (box[0] + 6, box[1] + 6), (box[2] - w - 6, box[3] - h - 6),
               (box[0] + 6, box[3] - h - 6)]

    def covered(c):
        return sum(int(np.count_nonzero((xs >= c[0]) & (xs <= c[0] + w) & (ys >= c[1]) & (ys <= c[1] + h)))
                   for xs, ys in points)

    x, y = min(corners, key=covered)
    draw.rectangle((x, y, x + w, y + h), fill=(255, 255, 255), outline=(200, 200, 200))
    for i, (colour, kind, text) in enumerate(entries):
        cy = y + 11 + 16 * i
        if kind == "line":
            draw.line([(x + 5, cy), (x + 25, cy)], fill=colour, width=2)
        else:
            for dx in (9, 15, 21):
                draw.ellipse((x + dx - 1.5, cy - 1.5, x + dx + 1.5, cy + 1.5), fill=colour)
        draw.text((x + 30, cy), text, fill=(0, 0, 0), font=font, anchor="lm")


def _spectrogram(img, draw, box, sp, *, x_labels: bool) -> _Panel:
    """The spectrogram ``sp`` (:class:`analysis.show.Spectrogram`) into ``box`` on a log-frequency axis."""
    x0, y0, x1, y1 = (int(v) for v in box)
    w, h = x1 - x0, y1 - y0
    top = sp.sr / 2
    panel = _Panel(draw, (x0, y0, x1, y1), (0.0, sp.duration), (FMIN, top), log_y=True)
    db = np.asarray(sp.db, float)
    edges = sp.edges if sp.edges is not None else np.append(
        np.maximum(np.linspace(0, top, db.shape[0]) - top / (db.shape[0] - 1) / 2, 0.0), top)
    if sp.times is not None:
        times = sp.times
    else:
        from analysis.show import HOP_LENGTH

        times = np.arange(db.shape[1] + 1) * HOP_LENGTH / sp.sr
    freq = np.exp(math.log(FMIN) + (1 - (np.arange(h) + 0.5) / h) * (math.log(top) - math.log(FMIN)))
    rows = np.clip(np.searchsorted(edges, freq, side="right") - 1, 0, db.shape[0] - 1)
    t = (np.arange(w) + 0.5) / w * sp.duration
    cols = np.clip(np.searchsorted(times, t, side="right") - 1, 0, db.shape[1] - 1)
    level = np.clip((db[rows][:, cols] - DB_FLOOR) / -DB_FLOOR, 0.0, 1.0)
    rgb = _magma()[np.round(level * 255).astype(int)].astype(float)
    outside = (t < sp.span[0]) | (t > sp.span[1])
    rgb[:, outside] = rgb[:, outside] * 0.65 + 255 * 0.35
    from PIL import Image

    img.paste(Image.fromarray(rgb.round().astype(np.uint8), "RGB"), (x0, y0))
    for x in sp.span:
        panel.vline(x, CYAN, dash=4, width=1)
    panel.frame()
    ticks = [f for f in FREQ_TICKS if FMIN < f < top]
    panel.y_ticks(ticks, [str(f) for f in ticks])
    panel.x_ticks(x_labels)
    _vertical_text(img, x0 - 62, (y0 + y1) / 2, "Hz")
    _title(draw, (x0 + x1) / 2, y0 - 5, sp.title)
    return panel


def draw_png(data, colours: int | None = None) -> bytes:
    """PNG bytes of the picture of :class:`analysis.show.FigureData` ``data``; with ``colours``, a palette
    of at most that many colours (Pillow's fast octree, undithered: a third of the bytes, and ten times
    faster than the median cut of :func:`analysis.report.html_pictures.small_png`)."""
    from PIL import Image, ImageDraw

    ncols = 1 if data.source is None else 2
    img = Image.new("RGB", (COLUMN * ncols, HEIGHT), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    top = 34 if data.no_source else 22
    if data.no_source:
        _title(draw, img.width / 2, 16, f"source not shown: {data.no_source}", size=10)
    twin = data.measured is not None and not data.measured[3]
    spec_box = (68, top, COLUMN - (58 if twin else 14), 292)
    curve_box = (spec_box[0], 318, spec_box[2], 472)
    clip_panel = _spectrogram(img, draw, spec_box, data.clip, x_labels=False)

    t, v, unit = data.schedule
    mt = mv = None
    if data.measured is not None:
        mt, mv, label, same = data.measured
    ylim = _limits(v, mv) if (mv is not None and not twin) else _limits(v)
    panel = _Panel(draw, curve_box, clip_panel.xlim, ylim)
    for x in data.span:
        panel.vline(x, GREY, dash=4)
    panel.line(t, v, BLUE)
    entries, points = [(BLUE, "line", f"schedule ({unit})")], [panel.pixels(t, v, step=True)]
    if mv is not None:
        target = _Panel(draw, curve_box, clip_panel.xlim, _limits(mv)) if twin else panel
        target.dots(mt, mv, ORANGE)
        entries.append((ORANGE, "dots", f"measured: {label}"))
        points.append(target.pixels(mt, mv))
        if twin:
            target.y_ticks(right=True, colour=ORANGE)
            _vertical_text(img, curve_box[2] + 42, (curve_box[1] + curve_box[3]) / 2, label, ORANGE, size=10,
                           room=HEIGHT - curve_box[1] + 10)
    panel.frame()
    panel.y_ticks()
    panel.x_ticks(True)
    _legend(draw, curve_box, entries, points)
    _vertical_text(img, 4, (curve_box[1] + curve_box[3]) / 2, data.curve_ylabel, size=10,
                   room=HEIGHT - curve_box[1] + 10)
    draw.text(((curve_box[0] + curve_box[2]) / 2, curve_box[3] + 22), "time (s)", fill=(0, 0, 0), font=_font(12),
              anchor="ma")
    _title(draw, (curve_box[0] + curve_box[2]) / 2, curve_box[1] - 5, data.curve_title)

    if data.source is not None:
        sbox = (COLUMN + 68, 22, 2 * COLUMN - 14, 292)
        src_panel = _spectrogram(img, draw, sbox, data.source, x_labels=data.source_curve is None)
        cbox = (sbox[0], 318, sbox[2], 472)
        if data.source_curve is not None:
            st, sv, slabel = data.source_curve
            p = _Panel(draw, cbox, src_panel.xlim, _limits(sv))
            for x in data.source.span:
                p.vline(x, GREY, dash=4)
            p.dots(st, sv, GREEN)
            p.frame()
            p.y_ticks()
            p.x_ticks(True)
            _legend(draw, cbox, [(GREEN, "dots", f"source: {slabel}")], [p.pixels(st, sv)])
            draw.text(((cbox[0] + cbox[2]) / 2, cbox[3] + 22), "time (s)", fill=(0, 0, 0), font=_font(12),
                      anchor="ma")
        else:
            draw.multiline_text(((cbox[0] + cbox[2]) / 2, (cbox[1] + cbox[3]) / 2), data.source_note,
                                fill=(0, 0, 0), font=_font(11), anchor="mm", align="center")
    buf = io.BytesIO()
    if colours:
        img.quantize(colors=colours, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(buf, format="PNG")
    else:
        img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()
