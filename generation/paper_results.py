"""The paper's published numbers (benchmark.md §9), shipped as data for the
Hub card, the report's and the leaderboard's comparison tables and the demo's summary.

Source: Ryu & Yanaka, "VocalGrad: Evaluating Acoustic Perception in Audio Language Models"
(:data:`vocalgrad.PAPER`). Every value is an accuracy in percent on the full VCTK test set
(21,600 clips); ``avg`` is the paper's unweighted mean over the nine categories. These are the
paper's numbers, not results of this toolkit: the report labels them "(paper)".
"""

from __future__ import annotations

import vocalgrad

__all__ = ["PAPER_CATEGORY_ACC", "PAPER_TRAJECTORY_ACC", "PAPER_SOURCE", "paper_rows"]

#: Where the numbers come from.
PAPER_SOURCE = vocalgrad.PAPER

# Category order of the paper's table (also the order of vocalgrad.CATEGORY_NAMES).
_ORDER = ("speed", "pitch", "volume", "distortion", "roughness", "noise", "echo", "clarity", "vibration")


def _row(*vals: float) -> dict[str, float]:
    if len(vals) != len(_ORDER) + 1:
        raise ValueError(f"a paper row needs {len(_ORDER)} categories + avg, got {len(vals)} values")
    return dict(zip(_ORDER + ("avg",), vals))


#: System -> {category: accuracy %, ..., "avg": accuracy %} (benchmark.md §9).
PAPER_CATEGORY_ACC: dict[str, dict[str, float]] = {
    "Human": _row(95.3, 84.7, 100.0, 86.0, 99.3, 100.0, 94.7, 90.7, 99.3, 94.4),
    "Gemini 3 Flash": _row(50.0, 51.5, 49.9, 48.1, 44.8, 55.5, 50.3, 54.0, 47.6, 50.2),
    "Kimi-Audio": _row(53.1, 50.5, 50.5, 51.6, 48.0, 56.5, 54.5, 53.6, 47.6, 51.8),
    "MiMo-Audio": _row(50.7, 50.5, 52.9, 49.8, 43.2, 53.2, 50.0, 52.2, 50.3, 50.3),
    "Step-Audio 2 mini": _row(49.9, 50.2, 49.9, 50.2, 49.9, 49.9, 50.0, 49.8, 49.8, 50.0),
    "Audio Flamingo 3": _row(50.0, 50.0, 50.0, 50.0, 46.7, 50.0, 50.0, 49.9, 50.0, 49.6),
}

#: System -> {trajectory: accuracy %} (paper Table 5, human row: annotators averaged per category and
#: trajectory, then the nine categories equally).
PAPER_TRAJECTORY_ACC: dict[str, dict[str, float]] = {
    "Human": {"jump": 98.46, "linear": 93.73, "quad_first_flat": 92.02, "quad_last_flat": 93.83},
}

if set(_ORDER) != set(vocalgrad.CATEGORY_NAMES) or any(
        set(v) != set(vocalgrad.TRAJECTORIES) for v in PAPER_TRAJECTORY_ACC.values()):
    raise RuntimeError("generation.paper_results is out of sync with vocalgrad's categories/trajectories")


def paper_rows(*, label_suffix: str = " (paper)") -> dict[str, dict[str, float]]:
    """The category table with each system labelled as the paper's number (``"Human (paper)"``)."""
    return {f"{name}{label_suffix}": dict(row) for name, row in PAPER_CATEGORY_ACC.items()}
