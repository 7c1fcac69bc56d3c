"""Background noise: seeded white Gaussian noise whose level follows the schedule (benchmark.md §4 noise).

The effect owns its seed rule (benchmark.md §4a): :meth:`NoiseParams.for_clip` derives the seed of
a clip from its identity, so the render engine needs no knowledge of it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

import numpy as np

from vocalgrad import DIRECTIONS

from .base import ClipKey, ParamError, Params, Result, ValueRange, per_sample, register, rms

__all__ = ["NoiseParams", "noise_seed", "white_noise"]


@dataclass(frozen=True, kw_only=True)
class NoiseParams(Params):
    """Seed-string spelling of the noise effect (benchmark.md §4a).

    Attributes
    ----------
    seed_prefix : str
        Text before the colon of the seed string (the reference's ``"42"``).
    seed_tier : str
        The tier as spelled in the seed string (a per-tier table in the recipe: ``mid`` for medium).
    seed_directions : dict[str, str]
        Direction -> spelling in the seed string (``increase = "up"``, ``decrease = "down"``).
    seed : int or None
        The clip's seed, set by :meth:`for_clip` (engine field, not in the recipe).

    Step values are noise/speech RMS ratios in [0, 10] (10 = an SNR of -20 dB).
    """

    value_name = "noise/speech RMS ratio"

    seed_prefix: str
    seed_tier: str
    seed_directions: dict[str, str]
    seed: int | None = field(default=None, metadata={"engine": True})

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(0.0, 10.0)

    def check(self) -> None:
        if set(self.seed_directions) != set(DIRECTIONS):
            raise ParamError("seed_directions", f"needs exactly the keys {', '.join(DIRECTIONS)}, "
                                                f"got {', '.join(self.seed_directions) or 'none'}")

    def for_clip(self, clip: ClipKey) -> NoiseParams:
        """These parameters with the clip's :func:`noise_seed`."""
        seed = noise_seed(self, item_id=clip.item_id, clip_ref=clip.clip_ref, trajectory=clip.trajectory,
                          tier=clip.tier, direction=clip.direction)
        return dataclasses.replace(self, seed=seed)


def noise_seed(params: NoiseParams, *, item_id: str, clip_ref: str, trajectory: str, tier: str,
               direction: str) -> int:
    """Seed of a noise clip: first 8 bytes (big-endian) of sha256 of the reference seed string.

    The string is ``"{prefix}:{item}__{clip}__{trajectory}__{tier}__{direction}"`` with the
    reference's tier (``params.seed_tier``, already resolved to ``tier``: ``low|mid|high``) and
    direction (``up|down``) spellings (benchmark.md §4a).
    """
    key = "__".join((item_id, clip_ref, trajectory, params.seed_tier, params.seed_directions[direction]))
    digest = hashlib.sha256(f"{params.seed_prefix}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@register("white_noise", NoiseParams, np.float64)
def white_noise(x, sr, schedule, params: NoiseParams, *, cache=None) -> Result:
    """Background noise: unit-RMS white Gaussian noise x speech-span RMS x ratio envelope (float64 out).

    ``params.seed`` (see :meth:`NoiseParams.for_clip`) seeds a standard-normal stream of the clip
    length, stored as float32. See also :func:`generation.transforms.volume.gain`.
    """
    if params.seed is None:
        raise ValueError("white_noise needs a seed: bind the parameters to the clip with params.for_clip(clip)")
    noise = np.random.default_rng(int(params.seed)).standard_normal(len(x)).astype(np.float32)
    noise_rms = rms(noise)
    if noise_rms > 0:
        noise = noise / np.float32(noise_rms)
    span_rms = rms(x[schedule.span.onset:schedule.span.offset])
    y = x + noise * (span_rms * per_sample(schedule, len(x)))
    return Result(y, schedule.span.onset, schedule.span.offset)
