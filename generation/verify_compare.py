"""``vocalgrad verify --against OTHER``: every clip compared with the clip of the same id in another build.

Per category: how many clips were compared, how many are exact, how many differ in length, and
the median and worst SDR (dB, OTHER as reference); clips on one side only, length differences and
an SDR below the threshold are problems of the :class:`generation.verify.Verification`.
"""

from __future__ import annotations

import numpy as np

import vocalgrad as vg

__all__ = ["compare", "sdr_db"]


def sdr_db(ref: np.ndarray, est: np.ndarray) -> float:
    """Signal-to-distortion ratio of ``est`` against ``ref`` in dB (inf when equal; over the common length)."""
    n = min(len(ref), len(est))
    ref, est = np.asarray(ref[:n], np.float64), np.asarray(est[:n], np.float64)
    err = float(np.sum((ref - est) ** 2))
    sig = float(np.sum(ref ** 2))
    if err == 0.0:
        return float("inf")
    return 10.0 * np.log10(max(sig, 1e-30) / err)


def _decode(data: bytes) -> tuple[np.ndarray, int]:
    from .audio import decode_mono

    return decode_mono(data, dtype=np.float64)


def compare(side, other, res, min_sdr: float) -> None:
    """Compare ``side`` with ``other`` (two :class:`generation.verify_sides.Side`) clip by clip into ``res``."""
    mine, theirs = {r["id"]: r for r in side.rows}, {r["id"]: r for r in other.rows}
    res.add(f"clip only in {side.path}", sorted(set(mine) - set(theirs)))
    res.add(f"clip only in {other.path}", sorted(set(theirs) - set(mine)))
    common = set(mine) & set(theirs)
    stats: dict[str, dict] = {}
    low, length = [], []
    if side.kind == "render":  # read each own clip when its counterpart comes by
        def own(cid):
            return next(side.iter_bytes([cid]))[1]
    else:  # two Hub folders: this side's audio is read once, up front
        cache = dict(side.iter_bytes(sorted(common)))
        own = cache.get
    for cid, ref_bytes in other.iter_bytes(sorted(common)):
        est_bytes = own(cid)
        if ref_bytes is None or est_bytes is None:
            continue
        cat = mine[cid]["category"]
        s = stats.setdefault(cat, {"compared": 0, "exact": 0, "sdr": [], "length_diff": 0})
        s["compared"] += 1
        ref, sr_ref = _decode(ref_bytes)
        est, sr_est = _decode(est_bytes)
        if len(ref) != len(est) or sr_ref != sr_est:
            s["length_diff"] += 1
            length.append(f"{cid}: {len(est)} vs {len(ref)} samples at {sr_est}/{sr_ref} Hz")
        v = sdr_db(ref, est)
        if v == float("inf") and len(ref) == len(est):
            s["exact"] += 1
        s["sdr"].append((v, cid))
        if v < min_sdr:
            low.append(f"{cid}: {v:.1f} dB")
    res.against = {}
    for cat in [c for c in vg.CATEGORY_NAMES if c in stats] + [c for c in stats if c not in vg.CATEGORY_NAMES]:
        s = stats[cat]
        worst = min(s["sdr"]) if s["sdr"] else (None, None)
        res.against[cat] = {"compared": s["compared"], "exact": s["exact"],
                            "median_sdr": float(np.median([v for v, _ in s["sdr"]])) if s["sdr"] else None,
                            "worst_sdr": worst[0], "worst_clip": worst[1], "length_diff": s["length_diff"]}
    res.add(f"SDR below {min_sdr:g} dB against {other.path}", low)
    res.add(f"length differs from {other.path}", length)

