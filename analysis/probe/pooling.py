"""Pooling of a feature sequence into a fixed number of equal time segments (benchmark.md §10).

:func:`pool_segments` mean-pools (every stage and encoder layer); :func:`pool_voiced_f0` is the
pooling of a pitch tracker's decoded-f0 layer, where a mean would mix in unvoiced frames.
"""

from __future__ import annotations

import numpy as np

__all__ = ["N_SEGMENTS", "pool_segments", "pool_voiced_f0", "segment_bounds"]

#: Segments per sequence (benchmark.md §10).
N_SEGMENTS = 16


def segment_bounds(n_frames: int, n_segments: int = N_SEGMENTS) -> list[tuple[int, int]]:
    """Start/stop frame of each of ``n_segments`` equal segments of ``n_frames`` frames.

    Segment ``i`` covers frames ``floor(i*T/n)`` to ``floor((i+1)*T/n)``; a segment that would be
    empty (``T < n``) holds the single frame it falls on, so every segment has at least one frame.

    Raises
    ------
    ValueError
        If ``n_frames`` or ``n_segments`` is smaller than 1.
    """
    if n_frames < 1:
        raise ValueError(f"cannot pool an empty sequence (0 frames) into {n_segments} segments")
    if n_segments < 1:
        raise ValueError(f"n_segments must be >= 1, got {n_segments}")
    out = []
    for i in range(n_segments):
        start = (i * n_frames) // n_segments
        stop = max(start + 1, ((i + 1) * n_frames) // n_segments)
        out.append((start, stop))
    return out


def pool_segments(x: np.ndarray, n_segments: int = N_SEGMENTS) -> np.ndarray:
    """Mean-pool the time axis (second to last) into segments and flatten segment-major.

    Parameters
    ----------
    x : np.ndarray, shape (..., T, D)
        Feature sequence(s); time is the second-to-last axis.
    n_segments : int

    Returns
    -------
    np.ndarray, shape (..., n_segments * D)
        float32; ``out[..., s*D:(s+1)*D]`` is the mean of segment ``s``.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim < 2:
        raise ValueError(f"expected an array (..., time, dim), got shape {x.shape}")
    t = x.shape[-2]
    segs = [x[..., a:b, :].mean(axis=-2) for a, b in segment_bounds(t, n_segments)]
    return np.concatenate(segs, axis=-1)


def pool_voiced_f0(log_f0: np.ndarray, n_segments: int = N_SEGMENTS) -> np.ndarray:
    """Per segment, the median log-f0 of its voiced frames minus the clip's median over all voiced frames.

    Parameters
    ----------
    log_f0 : np.ndarray, shape (T,) or (T, 1)
        One value per frame (e.g. log2 Hz); NaN marks an unvoiced frame.
    n_segments : int
        Segments as :func:`segment_bounds`.

    Returns
    -------
    np.ndarray, shape (n_segments,)
        float32; 0 for a segment without a voiced frame, all zeros for a clip without one. A median
        of an even count is the mean of the middle two (``numpy.median``).
    """
    x = np.asarray(log_f0, dtype=np.float64)
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise ValueError(f"expected one value per frame, shape (T,) or (T, 1), got {np.shape(log_f0)}")
    bounds = segment_bounds(len(x), n_segments)         # refuses an empty sequence, as pool_segments
    out = np.zeros(n_segments, dtype=np.float32)
    voiced = ~np.isnan(x)
    if not voiced.any():
        return out
    clip = np.median(x[voiced])
    for s, (a, b) in enumerate(bounds):
        seg = x[a:b][voiced[a:b]]
        if len(seg):
            out[s] = np.median(seg) - clip
    return out
