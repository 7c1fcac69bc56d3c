"""Direction alignment between categories (paper Table 21, Figure 9; benchmark.md §11).

Torch-free. For each category, features at the final input position (the position that predicts
the first answer token) of the test clips are paired: the ``increase`` and the ``decrease`` clip
with the same source, tier and trajectory. The pair difference (increase - decrease) is averaged
over the pairs of a source (12 with the full grid of 3 tiers x 4 trajectories), then the sources
are averaged with equal weight, giving one direction per category and layer. The alignment of
two categories is the cosine of their directions.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

import vocalgrad

__all__ = ["category_direction", "cosine_matrix", "alignment_rows", "PAPER_LAYERS"]

#: Layers reported in the paper's Table 21 (0-based hidden-state indices as there).
PAPER_LAYERS: tuple[int, ...] = (5, 10, 15, 20, 25, 28)


def category_direction(ids, features) -> tuple[np.ndarray, dict]:
    """Source-balanced mean paired difference ``increase - decrease``.

    Parameters
    ----------
    ids : sequence of str
        Clip ids (``{source}__{category}__{trajectory}__{tier}__{direction}``), one per row.
    features : np.ndarray [shape=(n_clips, ..., dim)]
        Features per clip (e.g. ``(n_clips, n_layers, dim)``).

    Returns
    -------
    direction : np.ndarray [shape=(..., dim)], float64
    info : dict
        ``sources``, ``pairs`` and ``unpaired`` (clip ids without a partner, skipped).

    Raises
    ------
    ValueError
        If the lengths differ, an id repeats, or no pair is found.
    """
    x = np.asarray(features, dtype=np.float64)
    ids = list(ids)
    if len(ids) != len(x):
        raise ValueError(f"{len(ids)} clip ids but {len(x)} feature rows")
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate clip ids")
    cells: dict[tuple[str, str, str], dict[str, int]] = {}
    for i, cid in enumerate(ids):
        p = vocalgrad.parse_clip_id(cid)
        cells.setdefault((p["source_id"], p["tier"], p["trajectory"]), {})[p["direction"]] = i
    by_source: dict[str, list[np.ndarray]] = {}
    unpaired = []
    for (src, _tier, _traj), d in sorted(cells.items()):
        if set(d) != {"increase", "decrease"}:
            unpaired.extend(ids[i] for i in d.values())
            continue
        by_source.setdefault(src, []).append(x[d["increase"]] - x[d["decrease"]])
    if not by_source:
        raise ValueError("no increase/decrease pair with the same source, tier and trajectory")
    per_source = np.stack([np.mean(v, axis=0) for _, v in sorted(by_source.items())])
    info = {"sources": len(by_source), "pairs": sum(len(v) for v in by_source.values()), "unpaired": unpaired}
    return per_source.mean(axis=0), info


def cosine_matrix(directions: np.ndarray) -> np.ndarray:
    """Signed cosine between every two directions.

    Parameters
    ----------
    directions : np.ndarray [shape=(n_categories, ..., dim)]

    Returns
    -------
    np.ndarray [shape=(..., n_categories, n_categories)]
        NaN where a direction has (near) zero norm.
    """
    d = np.moveaxis(np.asarray(directions, dtype=np.float64), 0, -2)       # (..., C, dim)
    n = np.linalg.norm(d, axis=-1, keepdims=True)
    u = np.divide(d, n, out=np.full_like(d, np.nan), where=n > 1e-12)
    return np.einsum("...cd,...ed->...ce", u, u)


def alignment_rows(categories, cos: np.ndarray, layers, *, model: str = "base") -> list[dict]:
    """One row per (layer, unordered category pair): the 36 pairs of Table 21 for 9 categories.

    ``cos`` has shape ``(n_layers, C, C)`` in the order of ``layers`` and ``categories``.
    """
    rows = []
    for li, layer in enumerate(layers):
        for (a, ca), (b, cb) in combinations(enumerate(categories), 2):
            rows.append({"model": model, "layer": int(layer), "category_a": ca, "category_b": cb,
                         "cosine": float(cos[li, a, b])})
    return rows
