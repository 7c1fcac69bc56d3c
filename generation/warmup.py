"""Compile librosa's numba kernels before a render's progress bar starts, and keep them on disk.

On a fresh installation the first ``librosa.stft`` / ``istft`` / phase-vocoder call compiles numba
kernels, which on a small machine takes a minute or more; inside a render this looked like a bar stuck at
0 % with an absurd ETA. :func:`warm_up` instead renders one tiny synthetic clip per category before the
bar exists (so every worker forked afterwards inherits the compiled kernels), saying so when the kernels
are not cached yet, and :func:`enable_numba_cache` points numba's on-disk cache at a user cache folder so
that only the very first run pays (numba's own default, ``__pycache__`` next to librosa, is often not
writable inside a system or read-only installation).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["cache_is_warm", "numba_cache_dir", "enable_numba_cache", "warm_up", "FIRST_RUN_MESSAGE"]

FIRST_RUN_MESSAGE = "first run: compiling audio kernels, about a minute (cached for later runs)"
#: Transforms that call librosa's numba-compiled STFT / phase-vocoder code (the others are numpy/scipy only).
KERNEL_TRANSFORMS = frozenset({"time_stretch", "pitch_shift", "lowpass"})
#: Length of the synthetic warm-up signal in seconds (long enough for a span of several 50 ms steps).
WARMUP_SECONDS = 0.6


def numba_cache_dir() -> Path:
    """Numba's cache folder: ``$NUMBA_CACHE_DIR``, else ``$XDG_CACHE_HOME/vocalgrad/numba`` (``~/.cache``)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "vocalgrad" / "numba"


def enable_numba_cache() -> Path | None:
    """Set ``NUMBA_CACHE_DIR`` to :func:`numba_cache_dir` (unless set) before numba is imported.

    Returns the folder, or None when it cannot be created (numba then keeps its own default). A value the
    user already set is kept. If numba is already imported the setting is passed to its live config too;
    functions librosa decorated before that keep numba's default locations.
    """
    path = numba_cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    os.environ.setdefault("NUMBA_CACHE_DIR", str(path))
    config = getattr(sys.modules.get("numba.core.config"), "__dict__", None)
    if config is not None and not config.get("CACHE_DIR"):
        config["CACHE_DIR"] = os.environ["NUMBA_CACHE_DIR"]
    return path


def cache_is_warm(path: Path | None) -> bool:
    """Whether numba has already cached librosa's kernels in ``path``."""
    return path is not None and path.is_dir() and any(path.rglob("*.nbi"))


def warm_up(recipe, categories, *, render_clip=None, progress: bool = True, stream=None) -> float:
    """Render one short synthetic clip per kernel-using category so that numba compiles (or loads) them now.

    Parameters
    ----------
    recipe : generation.recipe.Recipe
        The render's recipe (its processing rate and transforms are the ones warmed up).
    categories : list of str
        Config names the render will use.
    render_clip : callable
        :func:`generation.render.render_clip` (the renderer passes itself, so this module does not
        import the renderer back); needed when a category uses a kernel.
    progress : bool
        Print :data:`FIRST_RUN_MESSAGE` when the kernels are not cached yet.
    stream : file, optional
        Where the message goes (default ``sys.stderr``).

    Returns
    -------
    float
        Seconds spent.
    """
    t0 = time.perf_counter()
    cache = enable_numba_cache()
    categories = [c for c in categories if c in recipe.categories and recipe.category(c).transform in KERNEL_TRANSFORMS]
    if not categories:
        return time.perf_counter() - t0
    if progress and not cache_is_warm(cache):
        print(FIRST_RUN_MESSAGE, file=stream or sys.stderr, flush=True)
    if render_clip is None:
        raise TypeError("warm_up: pass render_clip=generation.render.render_clip")
    from .sources import SourceItem
    from .span import detect_span

    sr = recipe.sample_rate
    n = int(WARMUP_SECONDS * sr)
    t = np.arange(n) / sr
    rng = np.random.default_rng(0)
    x = (0.3 * np.sin(2 * np.pi * 220.0 * t) * (t > 0.1) + 1e-3 * rng.standard_normal(n)).astype(np.float32)
    span = detect_span(x, sr, **recipe.span)
    item = SourceItem(source_id="warmup", audio="")
    for category in categories:
        render_clip(x, item, recipe, span, category=category, tier="high", trajectory="linear",
                    direction="increase", cache={})
    return time.perf_counter() - t0
