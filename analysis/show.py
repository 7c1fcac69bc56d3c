"""``vocalgrad show``: what a clip does, as a picture.

For one clip the figure has two columns, the clip and (render folders only) its source:

* top: log-frequency spectrogram with the speech span marked (outside shaded);
* bottom, clip: the value schedule of the changed attribute (from the manifest and the recipe:
  :func:`generation.schedule.make_schedule`) and a measurement of the same quantity on the audio,
  in the schedule's unit where one exists (:func:`generation.measures.curve`, which lists them);
* bottom, source: the same measurement on the source in its natural unit.

Uses matplotlib's Agg backend; never opens a window.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np

import vocalgrad
from generation.audio import atomic_write_bytes
from generation import attributes
from generation.measures import curve

__all__ = ["figure_png", "schedule_curve", "show_clip", "source_data", "register_cli"]

def _decode(data) -> tuple[np.ndarray, int]:
    from generation.audio import decode_mono

    return decode_mono(data, dtype=np.float64)


def schedule_curve(info, *, points: int = 400) -> tuple[np.ndarray, np.ndarray, str]:
    """Value schedule of a clip on the clip's time axis.

    Uses the clip's recipe (``faithful-v1`` when unknown) and :func:`generation.schedule.make_schedule`
    on the source span; the steps are laid over the output span (``onset_sec``..``offset_sec``).
    Before the onset and after the offset the value is held, except for speed and pitch, which
    leave that audio untouched (rate 1, 0 semitones).

    Returns
    -------
    (times, values, unit)
    """
    from generation.recipe import DEFAULT_RECIPE, load_recipe
    from generation.schedule import make_schedule
    from generation.span import Span
    from generation.trajectory import g

    get = info.get if hasattr(info, "get") else info.__getitem__
    known = get("value_start") is not None and get("value_end") is not None
    start, end = (float(get("value_start")), float(get("value_end"))) if known else (0.0, 1.0)
    on, off, dur = float(get("onset_sec")), float(get("offset_sec")), float(get("duration_sec"))
    cat = info.category
    try:
        recipe = load_recipe(str(get("recipe") or DEFAULT_RECIPE))
        crec = attributes.category_recipe(recipe, cat)  # an extension attribute: its declaration
        sr = recipe.sample_rate
        span = Span(int(round(float(get("source_onset_sec")) * sr)), int(round(float(get("source_offset_sec")) * sr)))
        sched = make_schedule(recipe, crec, span, tier=info.tier, trajectory=info.trajectory,
                              direction=info.direction)
        if not known:  # the authors' release records no values: take the recipe's (faithful-v1 = theirs)
            start, end = float(sched.start), float(sched.end)
        if not (np.isclose(sched.start, start) and np.isclose(sched.end, end)):
            raise ValueError("recipe does not match the manifest values")
        vals = np.asarray(sched.values, dtype=float)
        if vals.size > points:
            vals = vals[np.linspace(0, vals.size - 1, points).astype(int)]
        unit = crec.unit
    except Exception:  # unknown recipe or fields: the trajectory alone gives the shape
        vals = start + (end - start) * g(info.trajectory, np.linspace(0, 1, points))
        unit = str(get("unit") or get("value_unit") or "")
    edges = np.linspace(on, off, vals.size + 1)
    neutral = {"speed": 1.0, "pitch": 0.0}.get(cat)
    before = neutral if neutral is not None else start
    after = neutral if neutral is not None else end
    times = np.concatenate([[0.0, on], np.column_stack([edges[:-1], edges[1:]]).ravel(), [off, max(dur, off)]])
    values = np.concatenate([[before, before], np.repeat(vals, 2), [after, after]])
    return times, values, unit


def _curve(category: str, y, sr, *, source=None, on_off=None):
    """The measured curve of a clip: :func:`generation.measures.curve` for the nine, the attribute's
    declared ``curve`` for an extension attribute (None when it declares none)."""
    if category in vocalgrad.CATEGORY_NAMES:
        return curve(category, y, sr, source=source, on_off=on_off)
    fn = attributes.get(category).curve
    return None if fn is None else fn(y, sr, source)


#: Rows of the drawn spectrogram: the STFT's bins are merged (their maximum) into bands at least
#: 1/LOG_ROWS of the log-frequency axis wide; below ~1.7 kHz at 48 kHz every bin stays its own row. A
#: picture is a few hundred pixels tall, so the merged bands look the same and draw about 4x faster.
LOG_ROWS: int | None = 512  # None: one row per bin (benchmarks/report_html_speed.py's "before")
#: Columns of the drawn spectrogram at most (a panel is ~450 pixels wide at 80 dpi): longer clips have
#: their frames merged (maximum) in twos, threes...
MAX_COLUMNS = 300
#: Fixed margins (the figure's size is fixed); False: matplotlib's constrained layout, which measures
#: every label and takes a third of the drawing time (the "before" of benchmarks/report_html_speed.py).
FIXED_LAYOUT = True


def _log_bands(n_bins: int, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """Start index of each merged band of an STFT's ``n_bins`` bins, and the band edges in Hz."""
    hz = np.linspace(0, sr / 2, n_bins)
    step = hz[1]
    starts, k = [0], 1
    ratio = (sr / 2 / step) ** (1 / LOG_ROWS)
    while k < n_bins:
        starts.append(k)
        k = max(k + 1, int(np.ceil(hz[k] * ratio / step)))
    starts = np.asarray(starts)
    edges = np.append(np.maximum(hz[starts] - step / 2, 0.0), sr / 2)
    return starts, edges


def _spectrogram(ax, y, sr, span, title):
    import librosa
    import librosa.display

    s = librosa.amplitude_to_db(np.abs(librosa.stft(y, n_fft=2048, hop_length=256)), ref=np.max, top_db=90)
    if LOG_ROWS is None:
        librosa.display.specshow(s, sr=sr, hop_length=256, x_axis="time", y_axis="log", ax=ax, cmap="magma")
    else:
        starts, edges = _log_bands(s.shape[0], sr)
        s = np.maximum.reduceat(s, starts, axis=0)
        step = max(1, s.shape[1] // MAX_COLUMNS)  # frames merged in pairs (or more) beyond the panel's pixels
        s = np.maximum.reduceat(s, np.arange(0, s.shape[1], step), axis=1)
        frames = np.append(np.arange(0, s.shape[1] * step, step), s.shape[1] * step)
        librosa.display.specshow(s, sr=sr, hop_length=256, x_axis="time", y_axis="log", ax=ax, cmap="magma",
                                 x_coords=librosa.frames_to_time(frames, sr=sr, hop_length=256), y_coords=edges)
    dur = y.size / sr
    ax.axvspan(0, span[0], color="white", alpha=0.35, lw=0)
    ax.axvspan(span[1], dur, color="white", alpha=0.35, lw=0)
    for x in span:
        ax.axvline(x, color="cyan", lw=1.2, ls="--")
    ax.set_xlim(0, dur)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("")


def _hub_source(catalog, source_id: str) -> tuple[bytes | None, str]:
    """FLAC bytes of a source from a Hub folder's ``sources`` config, or None and why not."""
    if catalog.kind != "hub":
        return None, f"the render folder has no sources/{source_id}.flac (re-run the render to restore it)"
    files = sorted((catalog.root / "sources").glob("*.parquet"))
    if not files:
        return None, ("this Hub folder has no `sources` config (built with --no-sources or without the test "
                      "render); pass the render folder, or rebuild with `vocalgrad hub`")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    for path in files:
        table = pq.read_table(path, columns=["source_id", "audio"])
        hit = table.filter(pc.equal(table["source_id"], source_id))
        if hit.num_rows:
            return hit.column("audio")[0].as_py()["bytes"], ""
    return None, (f"source {source_id} is not in this Hub folder's `sources` config (it holds the test "
                  "split's sources only); pass the render folder")


def source_data(catalog, source_id: str) -> tuple[bytes | None, str]:
    """The encoded audio of a clip's source (``sources/<id>.flac`` of a render folder, the ``sources``
    config of a Hub folder), or None and why not; kept on ``catalog`` for the next clip of the source."""
    memo = catalog.__dict__.setdefault("_show_sources", {})
    if source_id not in memo:
        path = catalog.source_path(source_id)
        memo[source_id] = (path.read_bytes(), "") if path is not None else _hub_source(catalog, source_id)
    return memo[source_id]


def _figure(catalog, clip_id: str):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    info = catalog.clips[clip_id]
    y, sr = _decode(catalog.audio_bytes(clip_id))
    src = None
    src_data, no_source = source_data(catalog, info.source_id)
    if src_data is not None:
        src, src_sr = _decode(src_data)
        if src_sr != sr:
            from generation.audio import resample

            src = resample(src, src_sr, sr)
    cat = vocalgrad.category(info.category)
    ncols = 1 if src is None else 2
    grid = {"height_ratios": [3, 2]}
    if FIXED_LAYOUT:
        grid.update(left=0.065 if ncols == 2 else 0.12, right=0.985 if ncols == 2 else 0.9, bottom=0.08, top=0.93,
                    wspace=0.25, hspace=0.15)
    fig, axes = plt.subplots(2, ncols, figsize=(6.5 * ncols, 6.5), sharex="col", squeeze=False, gridspec_kw=grid,
                             constrained_layout=not FIXED_LAYOUT)
    on, off = float(info.get("onset_sec", 0.0)), float(info.get("offset_sec", y.size / sr))
    _spectrogram(axes[0, 0], y, sr, (on, off), f"clip: {clip_id}")
    t, v, unit = schedule_curve(info)
    ax = axes[1, 0]
    ax.plot(t, v, color="tab:blue", lw=2, label=f"schedule ({unit})")
    m = _curve(cat.name, y, sr, source=src,
                on_off=(float(info.get("source_onset_sec", 0.0)), float(info.get("source_offset_sec", 0.0)))
                if src is not None else None)
    if m is not None:
        mt, mv, label, same = m
        target = ax if same else ax.twinx()
        target.plot(mt, mv, ".", ms=2.5, color="tab:orange", label=f"measured: {label}")
        if not same:
            target.set_ylabel(label, fontsize=8, color="tab:orange")
            target.legend(loc="upper right", fontsize=8)
    for x in (on, off):
        ax.axvline(x, color="0.5", lw=1, ls="--")
    ax.set_ylabel(f"{cat.attribute} ({unit})", fontsize=8)
    ax.set_xlabel("time (s)")
    ax.legend(loc="best", fontsize=8)
    ax.set_title(f"{cat.attribute}: {info.direction} ({cat.increase_means if info.direction == 'increase' else cat.decrease_means}), "
                 f"{info.tier}, {info.trajectory}", fontsize=9)
    if src is not None:
        s_on = float(info.get("source_onset_sec", 0.0))
        s_off = float(info.get("source_offset_sec", src.size / sr))
        _spectrogram(axes[0, 1], src, sr, (s_on, s_off), f"source: {info.source_id}")
        raw = _curve(cat.name, src, sr)
        ax = axes[1, 1]
        if raw is not None and not (cat.name == "vibration"):
            ax.plot(raw[0], raw[1], ".", ms=2.5, color="tab:green", label=f"source: {raw[2]}")
            ax.legend(loc="upper left", fontsize=8)
            for x in (s_on, s_off):
                ax.axvline(x, color="0.5", lw=1, ls="--")
            ax.set_xlabel("time (s)")
        else:  # a relative measure (speed, vibration): nothing to plot for the source alone, no empty axis
            ax.axis("off")
            ax.text(0.5, 0.5, f"{cat.attribute}: the clip's measure is taken relative to this source\n"
                    "(no curve of the source alone)", ha="center", va="center", transform=ax.transAxes, fontsize=9)
    else:
        fig.suptitle(f"source not shown: {no_source}", fontsize=8)
    return fig


def figure_png(catalog, clip_id: str, *, dpi: int = 100, compress_level: int = 6) -> bytes:
    """PNG bytes of the inspector figure of ``clip_id`` (see the module docstring); ``compress_level``
    (0-9, zlib's) 1 is for a PNG about to be re-encoded (the report's pictures: :mod:`analysis.report.html_pictures`)."""
    import matplotlib.pyplot as plt

    fig = _figure(catalog, clip_id)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, pil_kwargs={"compress_level": compress_level})
    finally:
        plt.close(fig)
    return buf.getvalue()


def show_clip(clip_id: str, data, out, *, config: str | None = None, dpi: int = 100) -> Path:
    """Write the inspector figure of one clip to ``out`` (PNG; temp name then rename); ``out`` a
    folder: ``out/CLIP_ID.png``. Returns the path written.

    Raises
    ------
    KeyError
        Unknown clip id (the message suggests close ids).
    """
    import difflib

    from .listen.catalog import open_catalog

    catalog = open_catalog(data, config=config)
    if clip_id not in catalog:
        close = difflib.get_close_matches(clip_id, list(catalog.clips), n=3, cutoff=0.6)
        raise KeyError(f"clip {clip_id!r} is not in {data}" + (f"; did you mean {', '.join(close)}?" if close else ""))
    from generation.option_types import refuse_symlink_loop

    out = Path(out)
    refuse_symlink_loop(out, what=f"--out {out}")
    if out.is_dir():  # a folder, as cp takes one: the picture goes in it under the clip's name
        out = out / f"{clip_id}.png"
    png = figure_png(catalog, clip_id, dpi=dpi)
    atomic_write_bytes(out, png)
    return out


def register_cli(sub) -> None:
    """Add the ``show`` sub-command."""
    from generation.option_types import MAX_DPI, dpi

    p = sub.add_parser("show", help="picture of one clip: spectrogram, value schedule, measurement",
                       description="Draw a clip's spectrogram with its speech span, the value schedule of the "
                                   "changed attribute and a matching measurement, next to its source.")
    p.add_argument("clip_id", metavar="CLIP_ID", help="clip id, e.g. p226_01__pitch__jump__high__increase")
    p.add_argument("--data", required=True, help="render folder (manifest.parquet), Hub folder or a local copy of "
                   "the authors' published release (metadata.csv)")
    p.add_argument("--out", default=None, help="PNG to write, or a folder to write CLIP_ID.png into "
                   "(default CLIP_ID.png)")
    p.add_argument("--config", help="Hub folder only: config holding the clip (default: the categories)")
    p.add_argument("--dpi", type=dpi, default=100,
                   help=f"resolution of the PNG in dots per inch, 10-{MAX_DPI} (default %(default)d)")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    from .listen.catalog import CatalogError

    try:
        out = show_clip(args.clip_id, args.data, args.out or f"{args.clip_id}.png", config=args.config,
                        dpi=args.dpi)
    except KeyError as exc:
        print(f"vocalgrad show: error: {exc.args[0]}", file=sys.stderr)
        return 2
    except (CatalogError, ValueError, OSError) as exc:
        print(f"vocalgrad show: error: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0
