"""Batched pitch, speed and clarity: the same arithmetic as the per-chunk librosa calls, done for
all chunks of a clip at once and sharing the source's STFTs between the clips of a source.

Where the time goes in the per-chunk form (profile of one 3.4-s source, all 24 conditions):
``phase_vocoder``'s Python loop over frames (~45 %), ``istft`` (~30 %, mostly per-call set-up),
``stft`` of the same context segment recomputed for every condition (~15 %). Here:

* the STFT of every context segment is computed once per source (segments of equal length in one
  batched ``librosa.stft`` call) and kept in ``cache`` for all 24 conditions (and shared by pitch
  and clarity, which use the same blocks);
* magnitudes, phases and the wrapped phase increments of every STFT column are precomputed once;
  the phase-vocoder loop then runs over frames for all chunks of a clip together, reproducing
  librosa's float32 phase accumulation step by step;
* inverse STFTs are batched per frame count (``librosa.istft`` on stacked rows; rows of equal frame
  count but different target length are cut from the longest, which is exact because later frames
  do not reach the shorter rows' samples).

Results equal :mod:`.chunked`'s per-chunk functions to float rounding (checked by the tests and
by ``benchmarks/render_speed.py``).
"""

from __future__ import annotations

import numpy as np

from .base import Result, chunk_segments, match_rms, register, render_chunked
from .chunked import lowpass_mask, lowpass_segment

__all__ = ["time_stretch", "pitch_shift", "lowpass"]


class _SegmentSTFT:
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


def _segment_stft(x, layout, params, cache) -> _SegmentSTFT:
    key = ("segment_stft", layout.kind, int(layout.starts[0]), int(layout.ends[-1]), len(x),
           params["n_fft"], params["hop_length"])
    if cache is not None and key in cache:
        return cache[key]
    st = _SegmentSTFT(x, layout, params["n_fft"], params["hop_length"])
    if cache is not None:
        cache[key] = st
    return st


def _stretch_rows(st: _SegmentSTFT, chunks: np.ndarray, rates: np.ndarray) -> list[np.ndarray]:
    """Time-stretch the context segments ``chunks`` by ``rates``; returns each full stretched signal.

    Equals ``librosa.effects.time_stretch(segment, rate=r, n_fft=..., hop_length=...)`` per row.
    """
    import librosa

    out: list = [None] * len(chunks)
    for gi in np.unique(st.group_of[chunks]):
        sel = np.flatnonzero(st.group_of[chunks] == gi)
        mag, ang, inc = st.vocoder_tables(gi)
        n_frames = st.groups[gi]["D"].shape[-1]
        steps = [np.arange(0, n_frames, rates[i], dtype=np.float64) for i in sel]
        lens = np.array([len(s) for s in steps])
        order = np.argsort(-lens, kind="stable")
        sel, lens = sel[order], lens[order]
        t_max = int(lens[0])
        step_mat = np.zeros((len(sel), t_max))
        for r, i in enumerate(order):
            step_mat[r, : lens[r]] = steps[i]
        rows = st.row_of[chunks[sel]]
        phase = ang[rows, 0].copy()
        phases = np.zeros((len(sel), t_max, mag.shape[-1]), dtype=np.float32)
        mags = np.zeros((len(sel), t_max, mag.shape[-1]), dtype=np.float64)
        active = len(sel)
        for t in range(t_max):
            while lens[active - 1] <= t:
                active -= 1
            step = step_mat[:active, t]
            k = step.astype(np.intp)
            alpha = np.mod(step, 1.0)[:, None]
            rr = rows[:active]
            mags[:active, t] = (1.0 - alpha) * mag[rr, k] + alpha * mag[rr, k + 1]
            phases[:active, t] = phase[:active]
            phase[:active] = phase[:active] + inc[rr, k]
        stretched = librosa.util.phasor(phases, mag=mags).astype(np.complex64, copy=False).transpose(0, 2, 1)
        seg_len = st.groups[gi]["length"]
        targets = [int(round(seg_len / rates[i])) for i in sel]
        for n_t in np.unique(lens):
            rsel = np.flatnonzero(lens == n_t)
            length = max(targets[r] for r in rsel)
            y = librosa.istft(stretched[rsel, :, :n_t], n_fft=st.n_fft, hop_length=st.hop, length=length,
                              dtype=np.float32)
            for j, r in enumerate(rsel):
                out[sel[r]] = y[j, : targets[r]]
    return out


def _memo(cache, key, fn):
    if cache is None:
        return fn()
    if key not in cache:
        cache[key] = fn()
    return cache[key]


@register("time_stretch")
def time_stretch(x, sr, schedule, params, *, cache=None) -> Result:
    """Speaking speed: per-chunk phase-vocoder stretch (rate > 1 = faster); clip length changes.

    Keeps ``[int(c / r), int((c + k) / r))`` of each stretched chunk-with-context (c = left context,
    k = chunk length); audio outside the span is untouched. Batched equivalent of
    :func:`generation.transforms.chunked.time_stretch_loop`. See also :func:`pitch_shift`.
    """
    st = _segment_stft(x, schedule.layout, params, cache)
    rates = np.asarray(schedule.values, dtype=np.float64)
    full = _stretch_rows(st, np.arange(len(rates)), rates)
    pieces = []
    for (seg, c, k), r, y in zip(st.segments, rates, full):
        pieces.append(y[int(c / r): int((c + k) / r)])
    return render_chunked(x, schedule, params, pieces, outside="keep")


@register("pitch_shift")
def pitch_shift(x, sr, schedule, params, *, cache=None) -> Result:
    """Voice pitch: per-chunk shift in semitones (stretch by ``2**(-n/12)``, soxr resampling back).

    Audio outside the span is untouched. Batched equivalent of
    :func:`generation.transforms.chunked.pitch_shift_loop`. See also :func:`time_stretch`.
    """
    import soxr

    st = _segment_stft(x, schedule.layout, params, cache)
    semis = np.asarray(schedule.values, dtype=np.float64)
    memo = cache.setdefault(("pitch_pieces", id(st)), {}) if cache is not None else {}
    need = [i for i, v in enumerate(semis) if (i, float(v)) not in memo]
    if need:
        rates = np.array([2.0 ** (-float(semis[i]) / 12) for i in need])
        stretched = _stretch_rows(st, np.array(need), rates)
        # soxr's per-call set-up dominates; rows sharing a ratio and length go through one
        # multi-channel call (bit-identical per channel to separate calls).
        by_ratio: dict = {}
        for j, ys in enumerate(stretched):
            by_ratio.setdefault((float(rates[j]), len(ys)), []).append(j)
        for (rate, _), js in by_ratio.items():
            orig_sr = float(sr) / rate
            stack = np.stack([stretched[j] for j in js], axis=1)
            res = np.asarray(soxr.resample(stack, orig_sr, sr, quality=params["res_type"]), dtype=np.float32)
            n_samples = int(np.ceil(stack.shape[0] * (float(sr) / orig_sr)))
            for col, j in enumerate(js):
                i = need[j]
                seg, c, k = st.segments[i]
                y = _fix_length(_fix_length(res[:, col], n_samples), len(seg))
                memo[(i, float(semis[i]))] = y[c:c + k]
    pieces = [memo[(i, float(v))] for i, v in enumerate(semis)]
    return render_chunked(x, schedule, params, pieces, outside="keep")


def _fix_length(y: np.ndarray, n: int) -> np.ndarray:
    return y[:n] if len(y) >= n else np.pad(y, (0, n - len(y)))


@register("lowpass")
def lowpass(x, sr, schedule, params, *, cache=None) -> Result:
    """Clarity: STFT low-pass with a raised-cosine transition; higher cut-off = clearer. RMS-matched.

    Batched equivalent of :func:`generation.transforms.chunked.lowpass_loop`; pieces and the
    processed audio outside the span are memoised per (chunk, cut-off) across a source's clips.
    See also :func:`generation.transforms.chunked.sample_hold`.
    """
    import librosa

    st = _segment_stft(x, schedule.layout, params, cache)
    n_fft, hop, width = params["n_fft"], params["hop_length"], params["transition_hz"]
    freqs = librosa.fft_frequencies(sr=sr, n_fft=n_fft)
    cut = np.asarray(schedule.values, dtype=np.float64)
    memo = cache.setdefault(("lowpass_pieces", id(st)), {}) if cache is not None else {}
    need = [i for i, v in enumerate(cut) if (i, float(v)) not in memo]
    for gi in np.unique(st.group_of[need]) if need else []:
        sel = [i for i in need if st.group_of[i] == gi]
        D = st.groups[gi]["D"][st.row_of[sel]]
        masks = np.stack([lowpass_mask(freqs, cut[i], width) for i in sel])[:, :, None]
        y = librosa.istft(D * masks, n_fft=n_fft, hop_length=hop, window="hann",
                          length=st.groups[gi]["length"])
        for j, i in enumerate(sel):
            seg, c, k = st.segments[i]
            memo[(i, float(cut[i]))] = match_rms(y[j, c:c + k], seg[c:c + k])
    pieces = [memo[(i, float(v))] for i, v in enumerate(cut)]
    on, off = schedule.span.onset, schedule.span.offset

    def outside(seg, v, tag):
        if not len(seg):
            return seg
        return _memo(memo, (tag, float(v)), lambda: match_rms(
            lowpass_segment(seg, sr, v, n_fft=n_fft, hop_length=hop, transition=width), seg))

    pre, post = outside(x[:on], schedule.start, "pre"), outside(x[off:], schedule.end, "post")
    return render_chunked(x, schedule, params, pieces, outside="processed", pre=pre, post=post)
