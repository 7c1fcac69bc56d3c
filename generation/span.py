"""Speech onset/offset detection (benchmark.md §5).

The detector works on frame energies of a pre-emphasised signal and returns the first and last
sample of the speech span; the time axis of every trajectory runs over this span only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Span", "detect_span"]


@dataclass(frozen=True)
class Span:
    """Speech span in samples: ``onset`` inclusive, ``offset`` exclusive.

    ``found`` is False when no active segment was detected and the whole clip is used.
    """

    onset: int
    offset: int
    found: bool = True

    @property
    def length(self) -> int:
        return self.offset - self.onset


def detect_span(y: np.ndarray, sr: int, *, preemphasis: float = 0.97, frame_sec: float = 0.010,
                hop_sec: float = 0.010, floor_sec: float = 0.200, floor_factor: float = 1.8,
                peak_factor: float = 0.003, min_threshold: float = 5e-5, min_frames: int = 10) -> Span:
    """Detect the speech span of a mono signal.

    Parameters
    ----------
    y : np.ndarray, shape (n,)
        Mono audio in [-1, 1].
    sr : int
        Sample rate in Hz.
    preemphasis : float
        First-order pre-emphasis coefficient; ``y'[i] = y[i] - c*y[i-1]``, ``y'[0] = y[0]``.
    frame_sec, hop_sec : float
        RMS frame length and hop in seconds (frames start at 0, only whole frames are used).
    floor_sec : float
        The noise floor is the median frame RMS over this initial duration.
    floor_factor, peak_factor, min_threshold : float
        Threshold = max(floor_factor * floor, peak_factor * peak frame RMS, min_threshold); a frame
        is active when its RMS is strictly above it.
    min_frames : int
        Active segments shorter than this many consecutive frames are ignored.

    Returns
    -------
    Span
        ``onset`` = first sample of the first kept segment, ``offset`` = end of the last kept
        segment's last frame, capped at ``len(y)``. Without any kept segment the whole clip,
        with ``found=False``.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[-1]
    frame, hop = int(round(frame_sec * sr)), int(round(hop_sec * sr))
    whole = Span(0, n, False)
    if n < frame:
        return whole
    pe = np.empty_like(y)
    pe[0] = y[0]
    pe[1:] = y[1:] - preemphasis * y[:-1]
    n_frames = 1 + (n - frame) // hop
    idx = np.arange(frame)[None, :] + hop * np.arange(n_frames)[:, None]
    rms = np.sqrt(np.mean(pe[idx] ** 2, axis=1))
    n_floor = max(1, min(n_frames, int(round(floor_sec / hop_sec))))
    floor = float(np.median(rms[:n_floor]))
    threshold = max(floor_factor * floor, peak_factor * float(rms.max()), min_threshold)
    active = rms > threshold
    # Run-length encode the active frames and keep runs of at least min_frames.
    edges = np.flatnonzero(np.diff(np.concatenate(([0], active.astype(np.int8), [0]))))
    starts, stops = edges[0::2], edges[1::2]
    keep = (stops - starts) >= min_frames
    if not keep.any():
        return whole
    first, last = starts[keep][0], stops[keep][-1] - 1
    return Span(int(first * hop), int(min(n, last * hop + frame)), True)
