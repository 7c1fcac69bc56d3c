"""Does a pitch tracker follow the shift a pitch clip was rendered with? (a label-free check)

The probe's positive control asks a linear probe to read a clip's direction from a tracker's
layers. Two things can defeat it that have nothing to do with the probe: the tracker may lose
the voice in the shifted audio, and the voice's own intonation (speech falls in pitch over a
sentence) may outweigh a small shift. This module tells them apart on a render folder, clip by
clip, without any probe:

- ``clip``: the tracker's decoded f0 over the clip's speech span, median of the late half minus
  median of the early half (voiced frames only), in semitones;
- ``source``: the same on the unshifted source's span (the voice's own intonation);
- ``planned``: the same change of the shift the render applied (from the manifest's
  ``value_start``, ``value_end`` and ``trajectory``);
- a tracker follows the shift where ``clip - source`` agrees with ``planned``; the label alone
  is readable from ``clip`` only where ``planned`` outweighs ``source``.

Run it as ``python -m analysis.probe.tracking RENDER [RENDER ...] [--trackers LIST] [--limit N]
[--csv FILE]`` (:func:`main`); docs/probe.md has its figures for the demo build.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import sys
from pathlib import Path

import numpy as np

__all__ = ["half_change", "main", "planned_half_change", "track_render", "summarise"]

#: Cells of the normalised time grid (value at each cell's centre) on which the planned shift's half medians are taken.
_GRID = 2000


def planned_half_change(value_start: float, value_end: float, trajectory: str) -> float:
    """Median of the rendered value over the late half of the span minus over the early half.

    ``a(t) = value_start + (value_end - value_start) * g(t)`` (:func:`generation.trajectory.g`):
    half the range for ``linear`` and both quadratic trajectories, all of it for ``jump``.
    """
    from generation.trajectory import g

    t = (np.arange(_GRID) + 0.5) / _GRID
    a = value_start + (value_end - value_start) * g(trajectory, t)
    return float(np.median(a[_GRID // 2:]) - np.median(a[:_GRID // 2]))


def half_change(log2_f0: np.ndarray, frame_rate: float, onset: float, offset: float) -> tuple[float, float]:
    """Semitones from the early to the late half of a span, and the span's voiced share.

    Parameters
    ----------
    log2_f0 : np.ndarray, shape (frames,) or (frames, 1)
        A tracker's decoded f0 (:mod:`analysis.probe.encoders.f0`): log2 Hz, NaN where unvoiced.
    frame_rate : float
        Frames per second; frame ``i`` is at ``i / frame_rate`` s.
    onset, offset : float
        The speech span in seconds; frames outside it are left out.

    Returns
    -------
    change : float
        ``12 * (median(late voiced) - median(early voiced))``; NaN when a half has no voiced frame.
    voiced : float
        Share of the span's frames that are voiced (0 for an empty span).
    """
    f = np.asarray(log2_f0, dtype=np.float64).reshape(-1)
    t = np.arange(len(f)) / float(frame_rate)
    span = f[(t >= onset) & (t <= offset)]
    if not len(span):
        return math.nan, 0.0
    early, late = span[: len(span) // 2], span[len(span) // 2:]
    early, late = early[~np.isnan(early)], late[~np.isnan(late)]
    voiced = float(np.mean(~np.isnan(span)))
    if not len(early) or not len(late):
        return math.nan, voiced
    return 12.0 * float(np.median(late) - np.median(early)), voiced


def _decoded(enc, path: Path) -> np.ndarray:
    from generation.audio import read_audio

    return enc.clip_sequences(*read_audio(path), [enc.f0_layer])[enc.f0_layer]


def track_render(render, encoder, *, category: str = "pitch", limit: int | None = None,
                 progress: bool = True) -> list[dict]:
    """One row per clip of ``category`` in a render folder: the tracker's ``clip``, ``source`` and
    ``planned`` changes (semitones), its voiced shares, the median voiced f0 of the whole source
    (Hz, ``source_hz``), and the clip's label, tier and speaker.

    Parameters
    ----------
    render : path or :class:`generation.render_dir.RenderDir`
        A folder made by ``vocalgrad render`` (with ``sources/``).
    encoder : str or :class:`analysis.probe.encoders.f0.PitchTracker`
        A pitch tracker (``pesto``, ``torchcrepe:tiny``, ``torchcrepe:full``, ``fcpe``).
    limit : int, optional
        First ``limit`` clips only (in clip-id order).
    """
    from generation.render_dir import RenderDir

    from .encoders import get_encoder
    from .encoders.f0 import PitchTracker
    from .run import progress_bar

    rd = render if isinstance(render, RenderDir) else RenderDir(render)
    enc = get_encoder(encoder) if isinstance(encoder, str) else encoder
    if not isinstance(enc, PitchTracker):
        raise ValueError(f"encoder {enc.name}: not a pitch tracker (no decoded-f0 layer); "
                         "use pesto, torchcrepe:tiny, torchcrepe:full or fcpe")
    rows = rd.rows([category])[:limit]
    if not rows:
        raise ValueError(f"{rd.path}: no {category} clips in its manifest")
    sources: dict[str, tuple[float, float, float]] = {}
    out = []
    with progress_bar(len(rows), 0, f"{enc.name} {category}", progress) as bar:
        for r in rows:
            bar.update(1)
            sid = r["source_id"]
            if sid not in sources:
                path = rd.source_path(sid)
                if not path.is_file():
                    raise FileNotFoundError(f"{path}: source of clip {r['clip_id']} is missing (re-run the render)")
                f0 = _decoded(enc, path)
                sources[sid] = (*half_change(f0, enc.frame_rate, float(r["source_onset_sec"]),
                                             float(r["source_offset_sec"])),
                                float(2.0 ** np.nanmedian(f0)) if not np.isnan(f0).all() else math.nan)
            clip, voiced = half_change(_decoded(enc, rd.clip_path(r)), enc.frame_rate,
                                       float(r["onset_sec"]), float(r["offset_sec"]))
            out.append({"tracker": enc.name, "clip_id": r["clip_id"], "speaker": r["speaker_id"], "tier": r["tier"],
                        "trajectory": r["trajectory"], "label": r["direction"], "clip": clip, "source": sources[sid][0],
                        "planned": planned_half_change(float(r["value_start"]), float(r["value_end"]), r["trajectory"]),
                        "voiced": voiced, "source_voiced": sources[sid][1], "source_hz": sources[sid][2]})
    return out


def _share(flags: list[bool]) -> float:
    return float(np.mean(flags)) if flags else math.nan


def summarise(rows: list[dict], by: str = "speaker") -> list[dict]:
    """Per tracker and group (``by``: a row field, e.g. ``speaker`` or ``tier``): how often the
    tracked change follows the shift and how often it alone gives the label.

    Each summary has ``n``; ``follows`` (share of clips where ``clip - source`` has the sign of
    ``planned``; a clip with a NaN counts as not following); ``reads_label`` (share where ``clip`` alone
    has the label's sign); ``slope`` (least squares of ``clip - source`` on ``planned`` over the
    clips where both are numbers; 1 is a perfect tracker); ``source`` (mean intonation change,
    semitones); ``voiced`` and ``source_voiced`` (mean voiced shares); ``source_hz`` (median of the
    sources' median voiced f0, where rows have it).
    """
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["tracker"], r[by]), []).append(r)
    out = []
    for (tracker, key), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        diff = np.array([r["clip"] - r["source"] for r in rs], dtype=float)
        plan = np.array([r["planned"] for r in rs], dtype=float)
        ok = ~np.isnan(diff)
        slope = float(np.polyfit(plan[ok], diff[ok], 1)[0]) if ok.sum() >= 2 and np.ptp(plan[ok]) > 0 else math.nan
        out.append({
            "tracker": tracker, by: key, "n": len(rs),
            "follows": _share([bool(o and np.sign(d) == np.sign(p)) for d, p, o in zip(diff, plan, ok)]),
            "reads_label": _share([bool(np.sign(r["clip"]) == (1 if r["label"] == "increase" else -1)) for r in rs]),
            "slope": slope, "source": float(np.nanmean([r["source"] for r in rs])),
            "voiced": float(np.mean([r["voiced"] for r in rs])),
            "source_voiced": float(np.mean([r["source_voiced"] for r in rs])),
            "source_hz": float(np.nanmedian([r.get("source_hz", math.nan) for r in rs]))
            if any(not math.isnan(r.get("source_hz", math.nan)) for r in rs) else math.nan,
        })
    return out


def _print_table(summary: list[dict], by: str) -> None:
    print(f"  {by:<16}{'n':>5}{'follows':>9}{'slope':>7}{'reads label':>13}{'source st':>11}"
          f"{'voiced':>8}{'src voiced':>12}{'src Hz':>8}")
    for s in summary:
        print(f"  {str(s[by]):<16}{s['n']:>5}{s['follows']:>9.3f}{s['slope']:>7.2f}{s['reads_label']:>13.3f}"
              f"{s['source']:>11.2f}{s['voiced']:>8.2f}{s['source_voiced']:>12.2f}{s['source_hz']:>8.0f}")


def main(argv=None) -> int:
    """Print, per tracker, the summaries over all clips, by tier and by speaker (columns: ``follows``,
    ``slope``, ``reads label``, ``source st`` the mean intonation change in semitones, the voiced
    shares of clips and sources, ``src Hz`` the sources' median f0); ``--csv`` writes every row."""
    ap = argparse.ArgumentParser(prog="python -m analysis.probe.tracking",
                                 description="Do the pitch trackers follow the shift of each pitch clip?")
    ap.add_argument("renders", nargs="+", help="render folders (vocalgrad render) with pitch clips and sources/")
    ap.add_argument("--trackers", default="pesto,torchcrepe:tiny,fcpe", help="comma-separated pitch trackers")
    ap.add_argument("--limit", type=int, default=None, help="first N pitch clips of each folder")
    ap.add_argument("--csv", type=Path, default=None, help="write one row per clip and tracker here")
    args = ap.parse_args(argv)
    from vocalgrad import VocalGradError

    rows = []
    try:
        for name in [n.strip() for n in args.trackers.split(",") if n.strip()]:
            for render in args.renders:
                rows += track_render(render, name, limit=args.limit)
    except (ValueError, OSError, VocalGradError) as exc:     # a wrong name, folder or file: one line
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for tracker in dict.fromkeys(r["tracker"] for r in rows):
        mine = [dict(r, all="all") for r in rows if r["tracker"] == tracker]
        print(f"{tracker}: {len(mine)} pitch clips of {', '.join(map(str, args.renders))}")
        for by in ("all", "tier", "speaker"):
            _print_table(summarise(mine, by=by), by)
    if args.csv:
        from generation.audio import atomic_write_text

        buf = io.StringIO(newline="")
        w = csv.DictWriter(buf, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
        atomic_write_text(args.csv, buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
