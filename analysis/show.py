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
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

import vocalgrad
from generation.audio import atomic_write_bytes
from generation import attributes
from generation.measures import curve

__all__ = ["FigureData", "Spectrogram", "figure_data", "figure_png", "schedule_curve", "show_clip", "source_data",
           "slow_step", "spectrogram", "register_cli"]

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
#: STFT hop of the spectrograms, in samples.
HOP_LENGTH = 256


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


@dataclass
class Spectrogram:
    """A drawn spectrogram: ``db`` (rows x frames, dB re its maximum, floor -90), the rows' band edges in Hz
    (``edges``, rows + 1; None: one row per STFT bin, drawn by librosa's own axes), the frames' time edges
    (``times``, frames + 1; None likewise), the audio's duration and rate, and the speech span in seconds."""

    db: np.ndarray
    edges: np.ndarray | None
    times: np.ndarray | None
    duration: float
    sr: int
    span: tuple[float, float]
    title: str


def spectrogram(y, sr, span, title) -> Spectrogram:
    """The log-frequency spectrogram of ``y`` as drawn (bins merged into :data:`LOG_ROWS` bands, frames into
    at most :data:`MAX_COLUMNS` columns, each the maximum of what it merges)."""
    import librosa

    s = librosa.amplitude_to_db(np.abs(librosa.stft(y, n_fft=2048, hop_length=HOP_LENGTH)), ref=np.max, top_db=90)
    edges = frames = None
    if LOG_ROWS is not None:
        starts, edges = _log_bands(s.shape[0], sr)
        s = np.maximum.reduceat(s, starts, axis=0)
        step = max(1, s.shape[1] // MAX_COLUMNS)  # frames merged in pairs (or more) beyond the panel's pixels
        s = np.maximum.reduceat(s, np.arange(0, s.shape[1], step), axis=1)
        frames = librosa.frames_to_time(np.append(np.arange(0, s.shape[1] * step, step), s.shape[1] * step),
                                        sr=sr, hop_length=HOP_LENGTH)
    return Spectrogram(s, edges, frames, y.size / sr, sr, (float(span[0]), float(span[1])), title)


def _spectrogram(ax, sp: Spectrogram):
    import librosa.display

    librosa.display.specshow(sp.db, sr=sp.sr, hop_length=HOP_LENGTH, x_axis="time", y_axis="log", ax=ax,
                             cmap="magma", x_coords=sp.times, y_coords=sp.edges)  # None: librosa's own, per bin
    ax.axvspan(0, sp.span[0], color="white", alpha=0.35, lw=0)
    ax.axvspan(sp.span[1], sp.duration, color="white", alpha=0.35, lw=0)
    for x in sp.span:
        ax.axvline(x, color="cyan", lw=1.2, ls="--")
    ax.set_xlim(0, sp.duration)
    ax.set_title(sp.title, fontsize=9)
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


def _source_audio(catalog, source_id: str, sr: int) -> tuple[np.ndarray | None, str]:
    """The source's samples at ``sr`` (None and why not), decoded once per catalog."""
    memo = catalog.__dict__.setdefault("_show_source_audio", {})
    if (source_id, sr) not in memo:
        data, why = source_data(catalog, source_id)
        src = None
        if data is not None:
            src, src_sr = _decode(data)
            if src_sr != sr:
                from generation.audio import resample

                src = resample(src, src_sr, sr)
        memo[(source_id, sr)] = (src, why)
    return memo[(source_id, sr)]


@dataclass
class FigureData:
    """What the picture of a clip shows (:func:`figure_data`), drawn by matplotlib (:func:`figure_png`) or
    by Pillow alone (:mod:`analysis.report.clip_picture`, the HTML report's pictures).

    ``schedule``: (times, values, unit) of the value schedule; ``measured``: (times, values, label,
    same unit as the schedule) or None; ``source_curve``: (times, values, label) or None, then
    ``source_note`` says why; ``no_source``: why the source is not shown (its column is then absent)."""

    clip: Spectrogram
    source: Spectrogram | None
    schedule: tuple
    measured: tuple | None
    span: tuple[float, float]
    curve_title: str
    curve_ylabel: str
    source_curve: tuple | None = None
    source_note: str = ""
    no_source: str = ""


def figure_data(catalog, clip_id: str) -> FigureData:
    """Everything the picture of ``clip_id`` shows: spectrograms, the value schedule and the measured curves."""
    info = catalog.clips[clip_id]
    y, sr = _decode(catalog.audio_bytes(clip_id))
    cat = vocalgrad.category(info.category)
    src, no_source = _source_audio(catalog, info.source_id, sr)
    on, off = float(info.get("onset_sec", 0.0)), float(info.get("offset_sec", y.size / sr))
    t, v, unit = schedule_curve(info)
    m = _curve(cat.name, y, sr, source=src,
               on_off=(float(info.get("source_onset_sec", 0.0)), float(info.get("source_offset_sec", 0.0)))
               if src is not None else None)
    means = cat.increase_means if info.direction == "increase" else cat.decrease_means
    data = FigureData(spectrogram(y, sr, (on, off), f"clip: {clip_id}"), None, (t, v, unit), m, (on, off),
                      f"{cat.attribute}: {info.direction} ({means}), {info.tier}, {info.trajectory}",
                      f"{cat.attribute} ({unit})", no_source=no_source if src is None else "")
    if src is not None:
        s_on = float(info.get("source_onset_sec", 0.0))
        s_off = float(info.get("source_offset_sec", src.size / sr))
        memo = catalog.__dict__.setdefault("_show_source_views", {})  # the same for every clip of the source
        if (info.source_id, sr) not in memo:
            memo[(info.source_id, sr)] = spectrogram(src, sr, (0.0, 0.0), f"source: {info.source_id}")
        if (info.source_id, sr, cat.name) not in memo:
            memo[(info.source_id, sr, cat.name)] = _curve(cat.name, src, sr)
        data.source = replace(memo[(info.source_id, sr)], span=(s_on, s_off))
        raw = memo[(info.source_id, sr, cat.name)]
        if raw is not None and not (cat.name == "vibration"):
            data.source_curve = (raw[0], raw[1], raw[2])
        else:  # a relative measure (speed, vibration): nothing to plot for the source alone
            data.source_note = (f"{cat.attribute}: the clip's measure is taken relative to this source\n"
                                "(no curve of the source alone)")
    return data


def _figure(catalog, clip_id: str):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    d = figure_data(catalog, clip_id)
    ncols = 1 if d.source is None else 2
    grid = {"height_ratios": [3, 2]}
    if FIXED_LAYOUT:
        grid.update(left=0.065 if ncols == 2 else 0.12, right=0.985 if ncols == 2 else 0.9, bottom=0.08, top=0.93,
                    wspace=0.25, hspace=0.15)
    fig, axes = plt.subplots(2, ncols, figsize=(6.5 * ncols, 6.5), sharex="col", squeeze=False, gridspec_kw=grid,
                             constrained_layout=not FIXED_LAYOUT)
    _spectrogram(axes[0, 0], d.clip)
    t, v, unit = d.schedule
    ax = axes[1, 0]
    ax.plot(t, v, color="tab:blue", lw=2, label=f"schedule ({unit})")
    if d.measured is not None:
        mt, mv, label, same = d.measured
        target = ax if same else ax.twinx()
        target.plot(mt, mv, ".", ms=2.5, color="tab:orange", label=f"measured: {label}")
        if not same:
            target.set_ylabel(label, fontsize=8, color="tab:orange")
            target.legend(loc="upper right", fontsize=8)
    for x in d.span:
        ax.axvline(x, color="0.5", lw=1, ls="--")
    ax.set_ylabel(d.curve_ylabel, fontsize=8)
    ax.set_xlabel("time (s)")
    ax.legend(loc="best", fontsize=8)
    ax.set_title(d.curve_title, fontsize=9)
    if d.source is not None:
        _spectrogram(axes[0, 1], d.source)
        ax = axes[1, 1]
        if d.source_curve is not None:
            ax.plot(d.source_curve[0], d.source_curve[1], ".", ms=2.5, color="tab:green",
                    label=f"source: {d.source_curve[2]}")
            ax.legend(loc="upper left", fontsize=8)
            for x in d.source.span:
                ax.axvline(x, color="0.5", lw=1, ls="--")
            ax.set_xlabel("time (s)")
        else:
            ax.axis("off")
            ax.text(0.5, 0.5, d.source_note, ha="center", va="center", transform=ax.transAxes, fontsize=9)
    else:
        fig.suptitle(f"source not shown: {d.no_source}", fontsize=8)
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


def show_clip(clip_id: str, data, out, *, config: str | None = None, dpi: int = 100, say=None,
              force: bool = False) -> Path:
    """Write the inspector figure of one clip to ``out`` (PNG; temp name then rename); ``out`` a
    folder: ``out/CLIP_ID.png``. Returns the path written. A step that takes longer than
    :data:`SLOW_AFTER` seconds says what it does (:func:`slow_step`; ``say`` receives the lines).

    An existing file there is replaced only when ``show`` wrote it and nobody changed it since
    (:mod:`analysis.show_out`), or with ``force``; holding the same bytes, it is left untouched.

    Raises
    ------
    KeyError
        Unknown clip id (the message suggests close ids).
    generation.option_types.OutFolderError
        ``out`` may not be written (one line naming the user's path), before the drawing.
    """
    import difflib

    from generation.option_types import OutFolderError
    from generation.warmup import enable_numba_cache

    from .listen.catalog import open_catalog
    from .show_out import mark_png, png_path, replace_problem

    enable_numba_cache()  # librosa's kernels from the render's cache, not compiled again (before librosa loads)
    with slow_step(f"reading {data}", say=say):
        catalog = open_catalog(data, config=config)
    if clip_id not in catalog:
        close = difflib.get_close_matches(clip_id, list(catalog.clips), n=3, cutoff=0.6)
        raise KeyError(f"clip {clip_id!r} is not in {data}" + (f"; did you mean {', '.join(close)}?" if close else ""))
    given = out
    out = png_path(Path(out), clip_id)
    problem = replace_problem(out, given, force=force)
    if problem:
        raise OutFolderError(problem)
    with slow_step(_drawing_message(), say=say):
        png = mark_png(figure_png(catalog, clip_id, dpi=dpi))
    if not (out.is_file() and out.stat().st_size == len(png) and out.read_bytes() == png):  # the same: no-op
        atomic_write_bytes(out, png)
    return out


#: Seconds a step of ``vocalgrad show`` may take before it says what it is doing.
SLOW_AFTER = 2.0


@contextmanager
def slow_step(what: str, *, say=None, after: float | None = None):
    """Say ``vocalgrad show: WHAT ...`` (through ``say``, default a line on stderr) when the block runs
    longer than ``after`` seconds (default :data:`SLOW_AFTER`), and how long it took once it ends; a quick
    block says nothing."""
    import threading
    import time

    after = SLOW_AFTER if after is None else after
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    said = threading.Event()

    def _notice():
        said.set()
        say(f"vocalgrad show: {what} ...")

    t0 = time.monotonic()
    timer = threading.Timer(after, _notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            timer.join()  # its line is out before the closing one
            say(f"vocalgrad show: {what.split(' (')[0]}: done in {time.monotonic() - t0:.0f} s")


def _drawing_message() -> str:
    """What the drawing step says it does; on a first run, that librosa's kernels are being compiled."""
    from generation.warmup import FIRST_RUN_MESSAGE, cache_is_warm, numba_cache_dir

    if cache_is_warm(numba_cache_dir()):
        return "measuring the clip and drawing the picture"
    return f"measuring the clip and drawing the picture ({FIRST_RUN_MESSAGE})"


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
    p.add_argument("--force", action="store_true",
                   help="replace an existing file at --out that `vocalgrad show` did not write (or that was edited "
                        "since); a picture it wrote is replaced without it")
    p.add_argument("--config", help="Hub folder only: config holding the clip (default: the categories)")
    p.add_argument("--dpi", type=dpi, default=100,
                   help=f"resolution of the PNG in dots per inch, 10-{MAX_DPI} (default %(default)d)")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    from .listen.catalog import CatalogError

    try:
        out = show_clip(args.clip_id, args.data, args.out or f"{args.clip_id}.png", config=args.config,
                        dpi=args.dpi, force=args.force)
    except KeyError as exc:
        print(f"vocalgrad show: error: {exc.args[0]}", file=sys.stderr)
        return 2
    except (CatalogError, ValueError, OSError) as exc:
        print(f"vocalgrad show: error: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0
