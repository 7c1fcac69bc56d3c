"""``vocalgrad show``: what a clip does, as a picture.

For one clip the figure has two columns, the clip and (render folders only) its source:

* top: log-frequency spectrogram with the speech span marked (outside shaded);
* bottom, clip: the value schedule of the changed attribute (from the manifest and the recipe:
  :func:`generation.schedule.make_schedule`) and a measurement of the same quantity on the audio,
  in the schedule's unit where one exists (F0 in semitones re the source for pitch, RMS in dB re
  the source for volume, local rate by DTW against the source for speed, noise/speech RMS, hold
  length as an effective sample rate, distinct levels as bits, -60 dB bandwidth for clarity,
  envelope depth for vibration; echo has no such measure and shows the residual re the source);
* bottom, source: the same measurement on the source in its natural unit.

Uses matplotlib's Agg backend; never opens a window.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np

import vocalgrad

__all__ = ["figure_png", "measure", "schedule_curve", "show_clip", "register_cli"]

_HOP = 0.010  # measurement hop, s


def _decode(data) -> tuple[np.ndarray, int]:
    import soundfile as sf

    y, sr = sf.read(io.BytesIO(data) if isinstance(data, bytes) else data, dtype="float64", always_2d=True)
    return y.mean(axis=1), sr


def _frames(y: np.ndarray, sr: int, win_sec: float, hop_sec: float = _HOP) -> tuple[np.ndarray, np.ndarray]:
    win, hop = max(1, int(win_sec * sr)), max(1, int(hop_sec * sr))
    if y.size < win:
        y = np.pad(y, (0, win - y.size))
    idx = np.arange(0, y.size - win + 1, hop)
    frames = np.lib.stride_tricks.sliding_window_view(y, win)[idx]
    return frames, (idx + win / 2) / sr


def _rms(frames: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(frames**2, axis=-1))


def _db(x):
    return 20 * np.log10(np.maximum(x, 1e-8))


def _f0(y, sr):
    import librosa

    hop = int(_HOP * sr)
    f0 = librosa.yin(y, fmin=50, fmax=1000, sr=sr, frame_length=int(0.05 * sr), hop_length=hop, center=True)
    rms = librosa.feature.rms(y=y, frame_length=int(0.05 * sr), hop_length=hop, center=True)[0][:f0.size]
    f0 = f0[:rms.size].astype(float)
    f0[rms < 0.1 * rms.max()] = np.nan  # unvoiced / silent frames
    return np.arange(f0.size) * hop / sr, f0


def _hold_rate(frames, sr):
    same = np.mean(frames[:, 1:] == frames[:, :-1], axis=1)
    rate = sr * (1 - same)
    rate[_rms(frames) < 1e-4] = np.nan
    return rate


def _bits(frames):
    # levels met at least twice: the samples blended by a 5 ms cross-fade are (nearly) all unique
    q = np.round(frames * 32768).astype(np.int64)
    n = np.array([np.count_nonzero(np.unique(f, return_counts=True)[1] >= 2) for f in q])
    out = np.log2(n + 1.0)
    out[_rms(frames) < 1e-4] = np.nan
    return out


def _bandwidth(frames, sr):
    spec = np.abs(np.fft.rfft(frames * np.hanning(frames.shape[1]), axis=1)) ** 2
    freqs = np.fft.rfftfreq(frames.shape[1], 1 / sr)
    db = 10 * np.log10(spec + 1e-20)
    above = db > (db.max(axis=1, keepdims=True) - 60)
    last = np.where(above.any(axis=1), above.shape[1] - 1 - np.argmax(above[:, ::-1], axis=1), 0)
    out = freqs[last].astype(float)
    out[_rms(frames) < 1e-4] = np.nan
    return out


def _dtw_rate(y, src, sr):
    import librosa

    hop = int(_HOP * sr)
    a = librosa.feature.mfcc(y=y, sr=sr, n_mfcc=20, hop_length=hop, n_fft=2048)
    b = librosa.feature.mfcc(y=src, sr=sr, n_mfcc=20, hop_length=hop, n_fft=2048)
    _, path = librosa.sequence.dtw(X=a, Y=b, metric="cosine")
    path = path[::-1]
    src_of_clip = np.zeros(a.shape[1])
    for i, j in path:
        src_of_clip[i] = j
    k = 15  # slope over +-150 ms
    rate = np.full(a.shape[1], np.nan)
    for i in range(k, a.shape[1] - k):
        rate[i] = (src_of_clip[i + k] - src_of_clip[i - k]) / (2 * k)
    rate[(rate < 0.25) | (rate > 4)] = np.nan  # no alignment (silence, stationary sounds)
    return np.arange(a.shape[1]) * hop / sr, rate


def measure(category: str, y: np.ndarray, sr: int, *, source: np.ndarray | None = None,
            on_off: tuple[float, float] | None = None):
    """A measurement of the varied quantity on a clip.

    Parameters
    ----------
    category : str
    y : np.ndarray
        The clip (mono float).
    sr : int
    source : np.ndarray, optional
        The source at the same rate. Needed for the relative measures (volume, pitch, speed,
        noise, vibration, echo).
    on_off : (float, float), optional
        Speech span of the source in seconds (noise is measured re the span's RMS).

    Returns
    -------
    (times, values, label, same_unit) or None
        Frame times (s), values, axis label, and whether ``values`` is in the unit of the
        value schedule. None when the measure needs the source and none is given.
    """
    cat = vocalgrad.category(category).name
    n = min(y.size, source.size) if source is not None else y.size
    if cat == "pitch":
        t, f0 = _f0(y, sr)
        if source is None:
            return t, f0, "F0 (Hz)", False
        ref = np.nanmedian(_f0(source, sr)[1])
        return t, 12 * np.log2(f0 / ref), "F0 re source median (semitones)", True
    if cat == "speed":
        if source is None:
            return None
        t, rate = _dtw_rate(y, source, sr)
        return t, rate, "local rate (DTW vs source)", True
    frames, t = _frames(y, sr, 0.05)
    if cat == "distortion":
        return t, _hold_rate(frames, sr), "effective rate from held samples (Hz)", True
    if cat == "roughness":
        f20, t20 = _frames(y, sr, 0.02)
        return t20, _bits(f20), "log2(repeated levels + 1), a lower bound (bits)", True
    if cat == "clarity":
        return t, _bandwidth(frames, sr), "-60 dB bandwidth (Hz)", True
    if source is None:
        if cat == "volume":
            level = _db(_rms(frames))
            level[_rms(frames) < 1e-5] = np.nan
            return t, level, "RMS (dBFS)", False
        return None
    cf, t = _frames(y[:n], sr, 0.05)
    sf_, _ = _frames(source[:n], sr, 0.05)
    src_rms = _rms(sf_)
    span = source[:n]
    if on_off is not None:
        span = span[int(on_off[0] * sr): int(on_off[1] * sr)]
    span_rms = (np.sqrt(np.mean(span**2)) if span.size else 0.0) or 1.0
    if cat == "noise":
        rf, _ = _frames(y[:n] - source[:n], sr, 0.05)
        return t, _rms(rf) / span_rms, "residual RMS / source speech RMS", True
    if cat == "volume":
        out = _db(_rms(cf)) - _db(src_rms)
        out[src_rms < 1e-4] = np.nan
        return t, out, "RMS re source (dB)", True
    if cat == "vibration":
        ce, te = _frames(y[:n], sr, 0.005, 0.0025)
        se, _ = _frames(source[:n], sr, 0.005, 0.0025)
        gain = _rms(ce) / np.maximum(_rms(se), 1e-8)
        gain[_rms(se) < 1e-4] = np.nan
        w = 80  # 200-ms windows
        depth = np.full(gain.size, np.nan)
        for i in range(w // 2, gain.size - w // 2):
            seg = gain[i - w // 2: i + w // 2]
            if np.isfinite(seg).sum() > w // 2:
                depth[i] = 1 - np.nanmin(seg) / np.nanmax(seg)
        return te, depth, "envelope depth re source (1 - min/max over 200 ms)", True
    if cat == "echo":  # no direct measure of the wet mix: the residual grows with it
        from scipy.ndimage import median_filter

        rf, _ = _frames(y[:n] - source[:n], sr, 0.05)
        out = median_filter(_rms(rf) / span_rms, size=21, mode="nearest")
        return t, out, "residual RMS / source speech RMS (200 ms median)", False
    return None


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
        crec = recipe.category(cat)
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


def _spectrogram(ax, y, sr, span, title):
    import librosa
    import librosa.display

    s = librosa.amplitude_to_db(np.abs(librosa.stft(y, n_fft=2048, hop_length=256)), ref=np.max, top_db=90)
    librosa.display.specshow(s, sr=sr, hop_length=256, x_axis="time", y_axis="log", ax=ax, cmap="magma")
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


def _figure(catalog, clip_id: str):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    info = catalog.clips[clip_id]
    y, sr = _decode(catalog.audio_bytes(clip_id))
    src_path = catalog.source_path(info.source_id)
    src = None
    src_data, no_source = (str(src_path), "") if src_path is not None else _hub_source(catalog, info.source_id)
    if src_data is not None:
        src, src_sr = _decode(src_data)
        if src_sr != sr:
            from generation.audio import resample

            src = resample(src, src_sr, sr)
    cat = vocalgrad.category(info.category)
    ncols = 1 if src is None else 2
    fig, axes = plt.subplots(2, ncols, figsize=(6.5 * ncols, 6.5), sharex="col",
                             gridspec_kw={"height_ratios": [3, 2]}, squeeze=False, constrained_layout=True)
    on, off = float(info.get("onset_sec", 0.0)), float(info.get("offset_sec", y.size / sr))
    _spectrogram(axes[0, 0], y, sr, (on, off), f"clip: {clip_id}")
    t, v, unit = schedule_curve(info)
    ax = axes[1, 0]
    ax.plot(t, v, color="tab:blue", lw=2, label=f"schedule ({unit})")
    m = measure(cat.name, y, sr, source=src,
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
        raw = measure(cat.name, src, sr)
        ax = axes[1, 1]
        if raw is not None and not (cat.name == "vibration"):
            ax.plot(raw[0], raw[1], ".", ms=2.5, color="tab:green", label=f"source: {raw[2]}")
            ax.legend(loc="upper left", fontsize=8)
        else:
            ax.text(0.5, 0.5, "the clip's measure is taken relative to this source", ha="center", va="center",
                    transform=ax.transAxes, fontsize=9)
        for x in (s_on, s_off):
            ax.axvline(x, color="0.5", lw=1, ls="--")
        ax.set_xlabel("time (s)")
    else:
        fig.suptitle(f"source not shown: {no_source}", fontsize=8)
    return fig


def figure_png(catalog, clip_id: str, *, dpi: int = 100) -> bytes:
    """PNG bytes of the inspector figure of ``clip_id`` (see the module docstring)."""
    import matplotlib.pyplot as plt

    fig = _figure(catalog, clip_id)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return buf.getvalue()


def show_clip(clip_id: str, data, out, *, config: str | None = None, dpi: int = 100) -> Path:
    """Write the inspector figure of one clip to ``out`` (PNG; temp name then rename).

    Raises
    ------
    KeyError
        Unknown clip id (the message suggests close ids).
    """
    import difflib
    import os

    from .listen.catalog import open_catalog

    catalog = open_catalog(data, config=config)
    if clip_id not in catalog:
        close = difflib.get_close_matches(clip_id, list(catalog.clips), n=3, cutoff=0.6)
        raise KeyError(f"clip {clip_id!r} is not in {data}" + (f"; did you mean {', '.join(close)}?" if close else ""))
    png = figure_png(catalog, clip_id, dpi=dpi)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_bytes(png)
    os.replace(tmp, out)
    return out


def register_cli(sub) -> None:
    """Add the ``show`` sub-command."""
    p = sub.add_parser("show", help="picture of one clip: spectrogram, value schedule, measurement",
                       description="Draw a clip's spectrogram with its speech span, the value schedule of the "
                                   "changed attribute and a matching measurement, next to its source.")
    p.add_argument("clip_id", metavar="CLIP_ID", help="clip id, e.g. p226_01__pitch__jump__high__increase")
    p.add_argument("--data", required=True, help="render folder (manifest.parquet), Hub folder or a local copy of "
                   "the authors' published release (metadata.csv)")
    p.add_argument("--out", default=None, help="PNG to write (default CLIP_ID.png)")
    p.add_argument("--config", help="Hub folder only: config holding the clip (default: the categories)")
    p.add_argument("--dpi", type=int, default=100, help="resolution of the PNG in dots per inch (default %(default)d)")
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
