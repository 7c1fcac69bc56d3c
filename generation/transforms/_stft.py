"""Batched STFT machinery shared by speed, pitch and clarity (private to the transforms).

The same arithmetic as the per-chunk librosa calls, done for all chunks of a clip at once and
sharing the source's STFTs between the clips of a source. Where the time goes in the per-chunk form
(profile of one 3.4-s source, all 24 conditions): ``phase_vocoder``'s Python loop over frames
(~45 %), ``istft`` (~30 %, mostly per-call set-up), ``stft`` of the same context segment recomputed
for every condition (~15 %). Here:

* the STFT of every context segment is computed once per source (segments of equal length in one
  batched ``librosa.stft`` call) and kept in ``cache`` for all 24 conditions (and shared by pitch
  and clarity, which use the same blocks): :func:`segment_stft`;
* magnitudes, phases and the wrapped phase increments of every STFT column are precomputed once;
  the phase-vocoder loop then runs over frames for all chunks of a clip together, reproducing
  librosa's float32 phase accumulation step by step: :func:`stretch_rows`;
* the inverse STFT of all chunks of a clip is one batched overlap-add (:func:`istft_rows`) that
  keeps librosa's float32 accumulation order; per-call set-up of ``librosa.istft`` (window, window
  sum, numba dispatch) was the largest single cost.

Results equal the plain per-chunk librosa calls of ``benchmarks/reference_impl.py`` sample for
sample (checked by ``tests/test_reference_match.py`` and ``benchmarks/render_speed.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ChunkedParams, ParamError, chunk_segments

__all__ = ["STFTParams", "SegmentSTFT", "segment_stft", "istft_rows", "stretch_rows", "fix_length", "memo"]


@dataclass(frozen=True, kw_only=True)
class STFTParams(ChunkedParams):
    """STFT settings of the batched effects: ``n_fft`` (2..65536) and ``hop_length`` (1..n_fft), Hann window."""

    n_fft: int
    hop_length: int

    def check(self) -> None:
        super().check()
        if not 2 <= self.n_fft <= 65536:
            raise ParamError("n_fft", f"must lie in [2, 65536], got {self.n_fft}")
        if not 1 <= self.hop_length <= self.n_fft:
            raise ParamError("hop_length", f"must lie in [1, n_fft = {self.n_fft}], got {self.hop_length}")


class SegmentSTFT:
    """STFTs of a layout's context segments, grouped by segment length, with vocoder tables."""

    def __init__(self, x, layout, n_fft: int, hop: int):
        import librosa

        self.n_fft, self.hop = n_fft, hop
        self.segments = chunk_segments(x, layout)
        lengths = np.array([len(s) for s, _, _ in self.segments])
        self.group_of = np.empty(len(lengths), dtype=np.intp)
        self.row_of = np.empty(len(lengths), dtype=np.intp)
        self.groups = []  # list of dicts: length, D (rows, bins, frames)
        for gi, length in enumerate(np.unique(lengths)):
            idx = np.flatnonzero(lengths == length)
            self.group_of[idx] = gi
            self.row_of[idx] = np.arange(len(idx))
            stack = np.stack([self.segments[i][0] for i in idx])
            D = librosa.stft(stack, n_fft=n_fft, hop_length=hop)
            self.groups.append({"length": int(length), "D": D, "tables": None})
        self.freqs = librosa.fft_frequencies(sr=2 * np.pi, n_fft=n_fft)

    def vocoder_tables(self, gi: int):
        """|D|, angle(D) and phase increments of group ``gi``, frame-major, padded by 2 frames."""
        grp = self.groups[gi]
        if grp["tables"] is None:
            D = grp["D"]
            P = np.pad(D, [(0, 0), (0, 0), (0, 2)])
            mag = np.ascontiguousarray(np.abs(P).transpose(0, 2, 1))
            ang = np.ascontiguousarray(np.angle(P).transpose(0, 2, 1))
            phi_advance = self.hop * self.freqs
            dphase = (ang[:, 1:] - ang[:, :-1]) - phi_advance
            dphase = dphase - 2.0 * np.pi * np.round(dphase / (2.0 * np.pi))
            grp["tables"] = (mag, ang, phi_advance + dphase)
        return grp["tables"]


def segment_stft(x, layout, n_fft: int, hop: int, cache) -> SegmentSTFT:
    """The :class:`SegmentSTFT` of ``layout``'s context segments, memoised in ``cache``."""
    key = ("segment_stft", layout.kind, int(layout.starts[0]), int(layout.ends[-1]), len(x), n_fft, hop)
    if cache is not None and key in cache:
        return cache[key]
    st = SegmentSTFT(x, layout, n_fft, hop)
    if cache is not None:
        cache[key] = st
    return st


def istft_rows(S: np.ndarray, n_frames: np.ndarray, lengths: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    """Inverse STFT of stacked rows that differ in frame count and target length.

    Reproduces ``librosa.istft(S[r, :n_frames[r]].T, n_fft=..., hop_length=..., window="hann",
    length=lengths[r], dtype=np.float32)`` for every row ``r`` (centered frames, the same float32
    overlap-add order: the head frames first, then frame by frame).

    Parameters
    ----------
    S : np.ndarray, shape (rows, frames, n_fft // 2 + 1), complex64
        Frame-major spectra; frames at or past ``n_frames[r]`` must be zero.

    Returns
    -------
    np.ndarray, shape (rows, max(lengths)), float32; row ``r`` is valid up to ``lengths[r]``.
    """
    import librosa
    from scipy.signal import get_window

    rows, t_max, _ = S.shape
    half = n_fft // 2
    # librosa trims frames that cannot reach the output; later frames never touch [0, length).
    used = np.minimum(n_frames, np.ceil((lengths + 2 * half) / hop).astype(np.intp))
    frames = get_window("hann", n_fft, fftbins=True) * np.fft.irfft(S, n=n_fft, axis=-1)  # float64
    length = int(lengths.max())
    start_frame = -(-half // hop)
    head = np.zeros((rows, n_fft + hop * (start_frame - 1)), dtype=np.float32)
    for f in range(min(start_frame, t_max)):
        head[:, f * hop: f * hop + n_fft] += frames[:, f]
    y = np.zeros((rows, max(length, head.shape[1])), dtype=np.float32)
    y[:, : head.shape[1] - half] = head[:, half:]
    offset = start_frame * hop - half
    for f in range(start_frame, t_max):
        pos = (f - start_frame) * hop + offset
        n = min(n_fft, y.shape[1] - pos)
        if n <= 0:
            break
        y[:, pos:pos + n] += frames[:, f, :n]
    y = y[:, :length]
    for n_used in np.unique(used):
        wss = librosa.filters.window_sumsquare(window="hann", n_frames=int(n_used), win_length=n_fft,
                                               n_fft=n_fft, hop_length=hop, dtype=np.float32)
        wss = librosa.util.fix_length(wss[half:], size=length)
        nz = np.flatnonzero(wss > librosa.util.tiny(wss))
        sel = np.flatnonzero(used == n_used)
        if len(sel) == rows:
            y[:, nz] /= wss[nz]
        else:
            y[np.ix_(sel, nz)] /= wss[nz]
    return y


def stretch_rows(st: SegmentSTFT, chunks: np.ndarray, rates: np.ndarray) -> list[np.ndarray]:
    """Time-stretch the context segments ``chunks`` by ``rates``; returns each full stretched signal.

    Equals ``librosa.effects.time_stretch(segment, rate=r, n_fft=..., hop_length=...)`` per row:
    magnitudes are interpolated for all frames at once, only the float32 phase accumulation runs
    frame by frame (for a batch of rows together).
    """
    out: list = [None] * len(chunks)
    for gi in np.unique(st.group_of[chunks]):
        members = np.flatnonzero(st.group_of[chunks] == gi)
        n_frames = st.groups[gi]["D"].shape[-1]
        steps = {i: np.arange(0, n_frames, rates[i], dtype=np.float64) for i in members}
        members = sorted(members, key=lambda i: len(steps[i]))
        # Rows go through in small batches of similar length: the working set stays in cache.
        for b in range(0, len(members), _ROW_BATCH):
            sel = np.array(members[b:b + _ROW_BATCH])
            _stretch_batch(st, gi, chunks, sel, [steps[i] for i in sel], rates, out)
    return out


_ROW_BATCH = 16


def _stretch_batch(st, gi, chunks, sel, steps, rates, out):
    import librosa

    mag, ang, inc = st.vocoder_tables(gi)
    lens = np.array([len(s) for s in steps])
    t_max = int(lens.max())
    step_mat = np.zeros((len(sel), t_max))
    for r, s in enumerate(steps):
        step_mat[r, : len(s)] = s
    rows = st.row_of[chunks[sel]][:, None]
    k = step_mat.astype(np.intp)
    alpha = np.mod(step_mat, 1.0)[:, :, None]
    mags = (1.0 - alpha) * mag[rows, k] + alpha * mag[rows, k + 1]
    incs = inc[rows, k]
    phases = np.empty(mags.shape, dtype=np.float32)
    phase = ang[rows[:, 0], 0].copy()
    for t in range(t_max):
        phases[:, t] = phase
        phase = (phase + incs[:, t]).astype(np.float32)
    stretched = librosa.util.phasor(phases, mag=mags).astype(np.complex64, copy=False)
    stretched[np.arange(t_max)[None, :] >= lens[:, None]] = 0
    seg_len = st.groups[gi]["length"]
    targets = np.array([int(round(seg_len / rates[i])) for i in sel])
    y = istft_rows(stretched, lens, targets, st.n_fft, st.hop)
    for r, i in enumerate(sel):
        out[i] = y[r, : targets[r]]


def memo(cache, key, fn):
    """``cache[key]``, computed by ``fn()`` on first use (no memoising when ``cache`` is None)."""
    if cache is None:
        return fn()
    if key not in cache:
        cache[key] = fn()
    return cache[key]


def fix_length(y: np.ndarray, n: int) -> np.ndarray:
    """``y`` cut or zero-padded to ``n`` samples."""
    return y[:n] if len(y) >= n else np.pad(y, (0, n - len(y)))
