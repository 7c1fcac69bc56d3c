"""Magnitude sweeps: the ordered sizes of change at which an attribute's psychometric function is measured.

A :class:`Sweep` is declared with each attribute (:attr:`generation.attributes.Attribute.sweep`; the
paper's nine take theirs from :data:`PAPER_SWEEPS`, the extension set declares its own). It lists
*magnitudes*: the size of the change over a clip on the scale the attribute is perceived on
(semitones of pitch change, dB of level change, octaves of band limit...), from a zero-change
control through values well below the paper's low tier to beyond its high tier, and a function
``pair(magnitude) -> (start, end)`` giving the schedule ends of an *increase* clip in the
attribute's own unit (a decrease clip runs from end to start, as for the tiers).

Magnitudes are on the physical scale: what the transform does, not what its parameters say. The
paper's three tiers are points of every sweep: :meth:`Sweep.levels` finds, for each tier, the
magnitude whose pair the transform renders as the tier's ``(start, end)`` (the same values, or
values the effect makes the same: distortion's 18 kHz tier holds 3 samples at 48 kHz, as an
effective 16 kHz does, so it is the level of 1.585 octaves) and uses the tier's own pair and
transform parameters there, so those clips are byte-identical to the paper set's (docs/sweep.md).

Every sweep clip also records what it realised (:mod:`generation.sweep_measures`): its magnitude as
measured (:attr:`Sweep.realised`, or the attribute's paired measure), whether the level can change
its source at all (``level_null``), and the level change that comes with it.

Each level has a token ``m<magnitude>`` (``.`` written ``p``: ``m1p5`` = 1.5) that takes the
tier's place in clip ids (``{source}__{category}__{trajectory}__m1p5__{direction}``) and in the
``tier`` column of a sweep's manifest and Hub config, so an id carries its magnitude.

The zero-change control (magnitude 0) has ``start == end``: its clip does not change, so neither
label is right. It is rendered for both requested directions (its label is the requested
direction) and enters no fit: an observer's expected score there is 50 % whatever it does, so it
is reported apart, as a check of the response bias (share of "increase" answers) and of chance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

import vocalgrad

from ..sweep_measures import realised_bandwidth_octaves, realised_hold_octaves

# ``Attribute`` in annotations is generation.attributes.base.Attribute, not imported: it imports this module
# (annotations are not evaluated: ``from __future__ import annotations``).

__all__ = ["DEFAULT_TRAJECTORIES", "HOLDS", "MAX_LEVELS", "MIN_LEVELS", "PAPER_SWEEPS", "PROCESSING_RATE",
           "SWEEP_CONFIG_PREFIX", "Sweep", "SweepLevel", "level_token", "sweep_category", "sweep_config",
           "token_magnitude"]

#: Bounds on the number of levels (zero control included) a declared sweep may have.
MIN_LEVELS, MAX_LEVELS = 6, 12
#: The rate the recipes process at (Hz): where a tier's values are compared with a level's as the effect renders them.
PROCESSING_RATE = 48000
SCALES = ("linear", "log")


def level_token(magnitude: float) -> str:
    """The clip-id token of a magnitude: ``m`` + 4 significant digits, ``.`` as ``p`` (``m2p263``)."""
    text = f"{magnitude:.4g}"
    if "e" in text or magnitude < 0:
        raise ValueError(f"sweep magnitude {magnitude!r}: give magnitudes >= 0 without exponent notation")
    return "m" + text.replace(".", "p")


def token_magnitude(token: str) -> float | None:
    """The magnitude a level token carries (``"m1p5"`` -> 1.5), ``None`` for a paper tier or other text."""
    if not token or token[0] != "m" or token in vocalgrad.TIERS:
        return None
    try:
        return float(token[1:].replace("p", "."))
    except ValueError:
        return None


@dataclass(frozen=True)
class SweepLevel:
    """One magnitude of a sweep as rendered: token, magnitude, increase-clip ends, paper tier (or None)."""

    token: str
    magnitude: float
    start: float
    end: float
    tier: str | None = None

    @property
    def zero(self) -> bool:
        """The zero-change control (no right answer)."""
        return self.magnitude == 0.0


@dataclass(frozen=True)
class Sweep:
    """The magnitude sweep of one attribute.

    Attributes
    ----------
    magnitudes : tuple of float
        Increasing, starting with 0 (the zero-change control).
    unit : str
        Unit of a magnitude (the size of the change), e.g. ``"semitones"``, ``"dB"``, ``"octaves"``.
    pair : callable
        ``pair(magnitude) -> (start, end)``: schedule ends of an increase clip, in the attribute's unit.
    scale : {"linear", "log"}
        The scale the non-zero magnitudes are (near-)evenly spaced on: linear in ``unit``, or
        logarithmic (constant ratios, e.g. noise level in dB re speech).
    note : str
        Why these magnitudes (docs/sweep.md prints it).
    realised : callable, optional
        ``realised(ref, ref_span, y, onset, offset, sr, schedule, fade) -> float``: the clip's change
        of the attribute in ``unit`` (end minus start, positive = the attribute grew), measured on the
        clip ``y`` against the zero-change clip ``ref`` of the same source, trajectory and direction
        (:mod:`generation.sweep_measures`). Default: the attribute's paired measure (against the
        source), in its own unit.
    """

    magnitudes: tuple[float, ...]
    unit: str
    pair: Callable[[float], tuple[float, float]]
    scale: str = "linear"
    note: str = ""
    realised: Callable[..., float] | None = None

    def levels(self, attr: Attribute, *, sample_rate: int = PROCESSING_RATE) -> list[SweepLevel]:
        """The levels of ``attr``'s sweep; a paper tier's point carries the tier and its exact pair.

        A tier is the point whose pair gives the tier's values, or values the transform renders the
        same at ``sample_rate`` (its ``value_level``: distortion's hold lengths).

        Raises
        ------
        ValueError
            A tier that is no point of the sweep (the message names it).
        """
        level = attr.transform.params_type.value_level
        out = []
        tier_at = {}
        for tier in vocalgrad.TIERS:
            pair = tuple(float(v) for v in attr.tiers[tier])
            done = tuple(level(v, sample_rate) for v in pair)
            hits = [m for m in self.magnitudes if np.allclose(self.pair(m), pair, rtol=1e-9, atol=1e-9)
                    or tuple(level(float(v), sample_rate) for v in self.pair(m)) == done]
            if len(hits) != 1:
                raise ValueError(f"tier {tier} {pair} is not exactly one point of the sweep "
                                 f"(pair(m) for m in {list(self.magnitudes)})")
            tier_at[hits[0]] = (tier, pair)
        for m in self.magnitudes:
            tier, pair = tier_at.get(m, (None, tuple(float(v) for v in self.pair(m))))
            out.append(SweepLevel(level_token(m), float(m), pair[0], pair[1], tier))
        return out

    def problems(self, attr: Attribute, *, sample_rate: int) -> list[str]:
        """What is wrong with the sweep of ``attr`` (empty when it is usable), each as ``field: message``."""
        from ..transforms.base import ParamError

        mags = list(self.magnitudes)
        if not MIN_LEVELS <= len(mags) <= MAX_LEVELS:
            return [f"sweep.magnitudes: give {MIN_LEVELS}-{MAX_LEVELS} levels, got {len(mags)}"]
        if mags[0] != 0 or any(not (b > a) for a, b in zip(mags, mags[1:])):
            return [f"sweep.magnitudes: must start at 0 (the zero-change control) and increase, got {mags}"]
        if self.scale not in SCALES:
            return [f"sweep.scale: must be one of {', '.join(SCALES)}, got {self.scale!r}"]
        try:
            tokens = [level_token(m) for m in mags]
            levels = self.levels(attr)
        except ValueError as exc:
            return [f"sweep: {exc}"]
        if len(set(tokens)) != len(tokens):
            return [f"sweep.magnitudes: two levels share a clip-id token ({tokens}); space them further apart"]
        by_tier = {lv.tier: lv.magnitude for lv in levels if lv.tier}
        out = []
        if not any(0 < m < by_tier["low"] for m in mags):
            out.append("sweep.magnitudes: no level between the zero control and the low tier")
        if not any(m > by_tier["high"] for m in mags):
            out.append("sweep.magnitudes: no level beyond the high tier")
        params = attr.transform.params_type
        zero = levels[0]
        if zero.start != zero.end:
            out.append(f"sweep.pair(0) must give start == end (no change), got ({zero.start:g}, {zero.end:g})")
        for lv in levels[1:]:
            try:
                params.check_tier([lv.start, lv.end], sample_rate=sample_rate)
            except ParamError as exc:
                out.append(f"sweep level {lv.token} ({lv.start:g} -> {lv.end:g}): {exc.message}")
        if zero.start not in params.value_range(sample_rate):
            out.append(f"sweep.pair(0) = {zero.start:g} is outside {params.value_range(sample_rate)}")
        return out


def _octaves_below(top: float):
    """Pair of a downward band limit: magnitude = octaves below ``top`` (increase clip: start low, end at top)."""
    return lambda m: (top / 2.0 ** m, top)


def _centred(centre: float):
    """Pair symmetric about ``centre``: magnitude = end minus start."""
    return lambda m: (centre - m / 2.0, centre + m / 2.0)


def _from_zero(m: float) -> tuple[float, float]:
    return (0.0, m)


#: Hold lengths (samples at 48 kHz) of the distortion sweep's levels.
HOLDS = (1, 2, 3, 4, 5, 6, 8, 12, 16)

#: Sweeps of the paper's nine (their tiers: recipe faithful-v1).
PAPER_SWEEPS: dict[str, Sweep] = {
    "speed": Sweep(tuple(round(0.1 * k, 1) for k in range(10)), "rate difference", _centred(1.0),
                   note="rate runs 1 - m/2 -> 1 + m/2; tiers 0.4, 0.6, 0.8 on a 0.1 grid (the paper's tiers are "
                        "even in rate, not in log rate)"),
    "pitch": Sweep(tuple(float(k) for k in range(9)), "semitones", _centred(0.0),
                   note="-m/2 -> +m/2 semitones; tiers 2, 4, 6 on a 1-semitone grid"),
    "volume": Sweep(tuple(6.0 * k for k in range(8)), "dB", _centred(0.0),
                    note="-m/2 -> +m/2 dB; tiers 12, 24, 36 on a 6-dB grid (the loud end clips from 18-24 dB on, "
                         "docs/sweep.md)"),
    "distortion": Sweep(tuple(math.log2(h) for h in HOLDS), "octaves", lambda m: (48000.0, 48000.0 / 2.0 ** m),
                        note="the effect holds h samples at 48 kHz (h = 1, 2, 3, 4, 5, 6, 8, 12, 16): its effective "
                             "rate 48 kHz / h lies m = log2(h) octaves below 48 kHz, so 24 kHz (hold 2) is the smallest "
                             "change there is; tiers 18, 12, 6 kHz hold 3, 4, 8 samples (1.585, 2, 3 octaves: the 18 kHz "
                             "tier renders as 16 kHz)",
                        realised=realised_hold_octaves),
    "roughness": Sweep(tuple(2.0 * k for k in range(8)), "bits removed", lambda m: (16.0, 16.0 - m),
                       note="bit depth falls from 16 by m bits (about 6 dB of quantisation noise per bit); "
                            "tiers 8, 10, 12 on a 2-bit grid"),
    "noise": Sweep((0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.12, 0.2), "noise/speech RMS", _from_zero,
                   scale="log",
                   note="noise rises from none to m x the speech RMS; about 3-6 dB steps of noise level "
                        "(-46 to -14 dB re speech) through the tiers 0.03, 0.07, 0.12"),
    "echo": Sweep((0.0, 0.04, 0.16, 0.28, 0.40, 0.52, 0.64, 0.76), "wet", _from_zero,
                  note="wet mix rises from 0 to m; tiers 0.28, 0.40, 0.52 on a 0.12 grid; the room size is the "
                       "low tier's below it, the high tier's above it and interpolated between the tiers"),
    "clarity": Sweep(tuple(math.log2(24000.0 / c) for c in
                           (24000.0, 17000.0, 12000.0, 8000.0, 5000.0, 3500.0, 2500.0, 1700.0, 1200.0, 600.0)),
                     "octaves", _octaves_below(24000.0),
                     note="low-pass cut-off rises to 24 kHz from m octaves below it; about half-octave steps "
                          "through the tiers 5, 2.5 and 1.2 kHz (2.26, 3.26, 4.32 octaves); a cut-off above a "
                          "source's band limit changes nothing (level_null)",
                     realised=realised_bandwidth_octaves),
    "vibration": Sweep((0.0, 0.15, 0.30, 0.45, 0.60, 0.75, 0.90, 1.0), "depth", _from_zero,
                       note="tremolo depth rises from 0 to m (rate 0 -> 20 Hz as in every tier); tiers 0.6, 0.75, "
                            "0.9 on a 0.15 grid, then full depth"),
}


# ---- a sweep as rendered and published ----------------------------------------------------------
#: Hub config (and render-folder role) of an attribute's sweep: ``sweep_<attribute>``. Attribute
#: names have no underscore, so no sweep config is ever a category config.
SWEEP_CONFIG_PREFIX = "sweep_"
#: Trajectories a sweep render uses unless told otherwise (all four, as the paper's tiers).
DEFAULT_TRAJECTORIES = vocalgrad.TRAJECTORIES


def sweep_config(category: str) -> str:
    """Hub config of ``category``'s sweep (``sweep_pitch``)."""
    return SWEEP_CONFIG_PREFIX + category


def sweep_category(config: str) -> str | None:
    """The attribute of a sweep config (``"sweep_pitch"`` -> ``"pitch"``), None for any other name."""
    if not config.startswith(SWEEP_CONFIG_PREFIX):
        return None
    rest = config[len(SWEEP_CONFIG_PREFIX):]
    return rest if rest and "_" not in rest else None
