"""The clip pictures of the HTML report: drawn in parallel, never drawn twice.

A picture (what :func:`analysis.show.figure_data` gathers, drawn by :mod:`.clip_picture` at the page's
size or by matplotlib's :func:`analysis.show.figure_png` at another resolution, its colours reduced by
:func:`small_png`) depends only on
the clip's audio, its source's audio, its metadata and the drawing settings. Its cache key is the
sha256 of all of them (:func:`picture_key`); pictures are kept under ``$VOCALGRAD_CACHE/pictures``
(``~/.cache/vocalgrad/pictures``), so a second report of the same clips draws nothing. The pictures a
report lacks are drawn by worker processes (one per CPU the process may use), each clip independently
of the others: the output does not depend on the number of workers or their order.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

from generation.audio import atomic_write_bytes

__all__ = ["PICTURE_COLOURS", "PICTURE_DPI", "PICTURE_STYLE", "picture_cache_dir", "picture_key", "pictures",
           "small_png"]

#: Resolution of the clip pictures (a 13 x 6.5 inch figure: 1040 x 520 pixels at 80 dpi), and the
#: colours they are reduced to (a third of the bytes of the full-colour PNG, no visible change).
PICTURE_DPI = 80
PICTURE_COLOURS = 128
#: Version of the drawing (part of every cache key): raise it when :mod:`analysis.show` draws differently.
PICTURE_STYLE = 4
#: Draw the page's pictures with Pillow alone (:mod:`.clip_picture`, about 0.2 CPU-seconds a picture); False:
#: matplotlib's figure of ``vocalgrad show`` (about 0.7; the "matplotlib" row of benchmarks/report_html_speed.py).
PILLOW = True


def small_png(png: bytes, colours: int = PICTURE_COLOURS) -> bytes:
    """``png`` with its colours reduced to a palette of ``colours`` (Pillow, which matplotlib requires);
    unchanged when Pillow is missing."""
    try:
        from PIL import Image
    except ImportError:
        return png
    img = Image.open(io.BytesIO(png)).convert("RGB")
    buf = io.BytesIO()
    img.quantize(colors=colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        buf, format="PNG", optimize=True)
    return buf.getvalue() if buf.tell() < len(png) else png


def picture_cache_dir() -> Path:
    """``$VOCALGRAD_CACHE/pictures``, else ``~/.cache/vocalgrad/pictures``."""
    root = os.environ.get("VOCALGRAD_CACHE")
    return (Path(root).expanduser() if root else Path.home() / ".cache" / "vocalgrad") / "pictures"


def _versions() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in ("vocalgrad", "matplotlib", "librosa", "pillow"):
        try:
            out.append(f"{name}={version(name)}")
        except PackageNotFoundError:
            out.append(f"{name}=none")
    return out


def picture_key(catalog, clip_id: str, *, dpi: int = PICTURE_DPI, colours: int = PICTURE_COLOURS) -> str:
    """sha256 of what the picture of ``clip_id`` is drawn from: the clip's and its source's audio
    (their sha256), the clip's metadata, the drawing settings and the drawing libraries' versions."""
    from analysis.show import source_data

    info = catalog.clips[clip_id]
    src, why = source_data(catalog, info.source_id)
    blob = json.dumps({
        "style": PICTURE_STYLE, "drawer": _drawer(dpi), "versions": _versions(), "dpi": dpi, "colours": colours,
        "clip": clip_id,
        "meta": [info.category, info.direction, info.tier, info.trajectory, info.source_id, info.extra],
        "audio": hashlib.sha256(catalog.audio_bytes(clip_id)).hexdigest(),
        "source": hashlib.sha256(src).hexdigest() if src is not None else why,
    }, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _drawer(dpi: int) -> str:
    """Who draws a picture at ``dpi``: Pillow at the page's own size (:data:`PICTURE_DPI`), else matplotlib."""
    return "pillow" if PILLOW and dpi == PICTURE_DPI else "matplotlib"


def _draw(catalog, clip_id: str, dpi: int, colours: int) -> tuple[bytes, str]:
    from analysis.show import figure_data, figure_png

    from .clip_picture import draw_png

    try:
        if _drawer(dpi) == "pillow":
            return draw_png(figure_data(catalog, clip_id), colours), ""
        return small_png(figure_png(catalog, clip_id, dpi=dpi, compress_level=1), colours), ""
    except Exception as exc:  # a picture that cannot be drawn must not cost the clip its player
        return b"", f"picture not drawn: {type(exc).__name__}: {exc}"


def pictures(catalog, clip_ids: list[str], *, dpi: int = PICTURE_DPI, colours: int = PICTURE_COLOURS,
             jobs: int | None = None, cache: Path | None = None, progress: bool | None = None
             ) -> dict[str, tuple[bytes, str]]:
    """The picture of every clip of ``clip_ids``: clip id -> ``(png, error)``.

    Pictures found in the cache (:func:`picture_cache_dir`, or ``cache``) are read; the others are
    drawn by ``jobs`` worker processes (default: the CPUs this process may use) and stored. A picture
    that cannot be drawn gives ``b""`` and the reason. ``progress`` (default: when stderr is a
    terminal) shows a bar on stderr.
    """
    from tqdm.auto import tqdm

    cache = Path(cache) if cache is not None else picture_cache_dir()
    keys = {cid: picture_key(catalog, cid, dpi=dpi, colours=colours) for cid in dict.fromkeys(clip_ids)}
    out: dict[str, tuple[bytes, str]] = {}
    for cid, key in keys.items():
        path = cache / key[:2] / f"{key}.png"
        if path.is_file():
            out[cid] = (path.read_bytes(), "")
    todo = [cid for cid in keys if cid not in out]
    bar = tqdm(total=len(keys), initial=len(out), desc="report: clip pictures", unit="clip",
               disable=(None if progress is None else not progress), leave=False)
    try:
        for cid, png, error in _drawn(catalog, todo, dpi, colours, jobs):
            out[cid] = (png, error)
            if png:
                key = keys[cid]
                try:
                    atomic_write_bytes(cache / key[:2] / f"{key}.png", png)
                except OSError:  # a read-only or full cache costs the next run time, never this report
                    pass
            bar.update()
    finally:
        bar.close()
    return out


def _drawn(catalog, todo: list[str], dpi: int, colours: int, jobs: int | None):
    """``(clip id, png, error)`` of every clip of ``todo``, drawn here or by forked worker processes."""
    from .parallel import run_tasks

    for i, (png, error) in run_tasks([(_draw, (catalog, cid, dpi, colours)) for cid in todo], jobs=jobs,
                                     ordered=False):
        yield todo[i], png, error
