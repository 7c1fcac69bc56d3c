"""What ``vocalgrad render --sweep`` renders for one attribute: its levels as a category recipe.

A sweep render uses the render engine unchanged (:func:`generation.render.render_source_category`);
only the conditions differ. :func:`sweep_plan` turns an attribute's sweep
(:mod:`generation.attributes.sweep`) into a :class:`~generation.recipe.CategoryRecipe` whose
"tiers" are the sweep's level tokens:

* at a paper tier's point the level has the tier's own ``(start, end)`` and the tier's checked
  transform parameters, and the clip is keyed by the tier's name, so its bytes equal the paper
  set's clip of that tier (a test compares sha256);
* at any other level, a parameter the recipe gives per tier is taken along the sweep: a number is
  interpolated linearly in magnitude between the tiers' points and held at the nearest tier
  outside them (echo's room size); a text is the level token (noise's seed-string tier spelling,
  so every level draws its own noise). Everything else is the recipe's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import vocalgrad

from . import attributes
from .attributes import category_recipe
from .attributes.sweep import DEFAULT_TRAJECTORIES, SweepLevel, token_magnitude
from .recipe import CATEGORY_KEYS, CategoryRecipe, Recipe

__all__ = ["SweepPlan", "magnitude_of", "sweep_levels", "sweep_plan", "sweep_trajectories"]


@dataclass(frozen=True)
class SweepPlan:
    """The conditions of one attribute's sweep render.

    Attributes
    ----------
    crec : CategoryRecipe
        Tiers keyed by level token -> ``(start, end)``; ``tier_params`` the same keys.
    levels : tuple of SweepLevel
    trajectories : tuple of str
    """

    crec: CategoryRecipe
    levels: tuple[SweepLevel, ...]
    trajectories: tuple[str, ...]

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(lv.token for lv in self.levels)

    def level(self, token: str) -> SweepLevel:
        """The level of ``token``."""
        return next(lv for lv in self.levels if lv.token == token)

    def clip_tier(self, token: str) -> str:
        """The tier name a clip of ``token`` is keyed by: the paper tier at its points, else the token."""
        return next((lv.tier or lv.token for lv in self.levels if lv.token == token), token)

    @property
    def conditions(self) -> int:
        return len(self.levels) * len(self.trajectories) * len(vocalgrad.DIRECTIONS)


def sweep_trajectories(names=None) -> tuple[str, ...]:
    """Checked trajectories of a sweep (``None``: all four), in :data:`vocalgrad.TRAJECTORIES` order.

    Raises
    ------
    ValueError
        An unknown name, or an empty list (leave it out for all four).
    """
    if names is None:
        return tuple(DEFAULT_TRAJECTORIES)
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not names:
        raise ValueError(f"--trajectories: names none; choose from {', '.join(vocalgrad.TRAJECTORIES)}, "
                         "or leave it out for all four")
    bad = [n for n in names if n not in vocalgrad.TRAJECTORIES]
    if bad:
        raise ValueError(f"--trajectories: unknown {', '.join(bad)}; choose from {', '.join(vocalgrad.TRAJECTORIES)}")
    return tuple(t for t in vocalgrad.TRAJECTORIES if t in names)


def sweep_levels(category: str) -> list[SweepLevel]:
    """The levels of an installed attribute's sweep.

    Raises
    ------
    ValueError
        The attribute is unknown or declares no sweep (the message says how to add one).
    """
    attr = attributes.get(category)
    if attr.sweep is None:
        raise ValueError(f"attribute {attr.name!r} declares no sweep; add sweep=Sweep(...) to its declaration "
                         "(docs/sweep.md) or leave it out of --categories")
    return attr.sweep.levels(attr)


def magnitude_of(category: str, token: str) -> float | None:
    """Magnitude of a level token of ``category``'s sweep (from the declaration when installed, else the token)."""
    try:
        for lv in sweep_levels(category):
            if lv.token == token:
                return lv.magnitude
    except ValueError:
        pass
    return token_magnitude(token)


def _level_table(params: dict, levels: list[SweepLevel], level: SweepLevel) -> dict:
    """The recipe's parameter table of ``level``: per-tier entries resolved along the sweep."""
    tier_mag = {lv.tier: lv.magnitude for lv in levels if lv.tier}
    xs = [tier_mag[t] for t in vocalgrad.TIERS]
    order = np.argsort(xs)
    out = {}
    for key, raw in params.items():
        if isinstance(raw, dict) and set(raw) == set(vocalgrad.TIERS):
            vals = [raw[t] for t in vocalgrad.TIERS]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                raw = float(np.interp(level.magnitude, np.asarray(xs)[order], np.asarray(vals, float)[order]))
            else:
                raw = level.token
        out[key] = raw
    return out


def sweep_plan(recipe: Recipe, category: str, trajectories=None) -> SweepPlan:
    """The sweep of ``category`` under ``recipe`` (see the module docstring).

    Raises
    ------
    ValueError
        The attribute declares no sweep, or a level's parameters are out of the transform's range.
    """
    from .transforms import TRANSFORMS, ParamError

    base = category_recipe(recipe, category)
    levels = sweep_levels(category)
    ptype = TRANSFORMS[base.transform].params_type
    own = {k: v for k, v in base.params.items() if k not in CATEGORY_KEYS}
    tiers, tier_params = {}, {}
    for lv in levels:
        if lv.tier is not None:
            tiers[lv.token] = tuple(base.tiers[lv.tier])
            tier_params[lv.token] = base.params_for(lv.tier)
            continue
        tiers[lv.token] = (lv.start, lv.end)
        try:
            tier_params[lv.token] = ptype.from_table(_level_table(own, levels, lv), engine={"crossfade": recipe.crossfade})
        except ParamError as exc:
            raise ValueError(f"{category} sweep level {lv.token}: {exc}") from None
    crec = CategoryRecipe(base.category, base.transform, base.unit, base.layout, tiers, base.params, tier_params)
    return SweepPlan(crec, tuple(levels), sweep_trajectories(trajectories))
