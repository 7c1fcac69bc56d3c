"""Recipes: versioned files holding every setting of a render (``generation/recipes/*.toml``).

A recipe is loaded once, validated up front and passed to the engine; transforms read their
parameters from it, never from literals. Loading checks every field before any audio is processed:
an unknown category or transform name, a parameter the transform does not take (a typo), a missing
one, a wrong type or an out-of-range value raises :class:`RecipeError` naming the file and the field
(``categories.noise.seed_prefx``). Each category's parameters become the transform's frozen
parameter dataclass (:class:`generation.transforms.Params`), one per tier.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from vocalgrad import CATEGORY_NAMES, TIERS, VocalGradError

from .transforms import TRANSFORMS, ParamError, Params

__all__ = ["Recipe", "CategoryRecipe", "RecipeError", "load_recipe", "available_recipes", "DEFAULT_RECIPE"]

RECIPE_DIR = Path(__file__).parent / "recipes"
DEFAULT_RECIPE = "faithful-v1"
LAYOUTS = ("blocks", "even_chunks", "samples")
#: Keys of a category table that are not transform parameters.
CATEGORY_KEYS = ("transform", "unit", "layout", "tiers", "covary")


class RecipeError(VocalGradError, ValueError):
    """A recipe file is unknown, or a field of it is missing or invalid (the message names both)."""


@dataclass(frozen=True)
class CategoryRecipe:
    """Settings of one category: transform name, unit, layout, tier ranges and parameters.

    ``params`` is the category table's other keys as written (per-tier tables unresolved,
    ``covary`` included); ``tier_params`` the checked parameters of the transform for each tier,
    which is what the transform gets (:meth:`params_for`).
    """

    category: str
    transform: str
    unit: str
    layout: str
    tiers: dict  # tier -> (lo, hi)
    params: dict  # every other key of the category table
    tier_params: dict  # tier -> generation.transforms.Params

    def span_values(self, tier: str) -> tuple[float, float]:
        return self.tiers[tier]

    def params_for(self, tier: str) -> Params:
        """The transform's checked parameters at ``tier`` (crossfade included)."""
        return self.tier_params[tier]


@dataclass(frozen=True)
class Recipe:
    """A loaded recipe (see ``faithful-v1.toml`` for the fields)."""

    name: str
    description: str
    sample_rate: int
    span: dict
    block: int
    context: int
    crossfade: int
    categories: dict  # name -> CategoryRecipe
    path: str

    def category(self, name: str) -> CategoryRecipe:
        try:
            return self.categories[name]
        except KeyError:
            raise RecipeError(f"recipe {self.name} has no category {name!r}") from None


def available_recipes() -> list[str]:
    """Names of the recipes shipped with the toolkit."""
    return sorted(p.stem for p in RECIPE_DIR.glob("*.toml"))


def load_recipe(name_or_path: str = DEFAULT_RECIPE) -> Recipe:
    """Load and validate a recipe by shipped name or by path to a TOML file.

    Every category's parameters are built into the transform's parameter dataclass for every tier
    here, so a bad recipe fails before any audio is processed.

    Raises
    ------
    RecipeError
        Unknown recipe name, or a missing/invalid field (the message names the file and field).
        A subclass of ``ValueError``.
    """
    path = Path(name_or_path)
    if not path.suffix:
        path = RECIPE_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise RecipeError(f"unknown recipe {name_or_path!r}; shipped recipes: {', '.join(available_recipes())}")
    with open(path, "rb") as fh:
        try:
            raw = tomllib.load(fh)
        except tomllib.TOMLDecodeError as e:
            raise RecipeError(f"{path}: not valid TOML ({e})") from None

    def need(table: dict, key: str, where: str):
        if key not in table:
            raise RecipeError(f"{path}: missing field {where}{key}")
        return table[key]

    blocks = need(raw, "blocks", "")
    crossfade = int(need(blocks, "crossfade", "blocks."))
    cats = {}
    for cname, table in need(raw, "categories", "").items():
        if cname not in CATEGORY_NAMES:
            raise RecipeError(f"{path}: unknown category [categories.{cname}]; valid: {', '.join(CATEGORY_NAMES)}")
        cats[cname] = _category(path, cname, table, crossfade)
    missing = [c for c in CATEGORY_NAMES if c not in cats]
    if missing:
        raise RecipeError(f"{path}: no settings for categories {missing}")
    return Recipe(
        name=need(raw, "name", ""),
        description=raw.get("description", ""),
        sample_rate=int(need(raw, "processing_sample_rate", "")),
        span=dict(need(raw, "span", "")),
        block=int(need(blocks, "size", "blocks.")),
        context=int(need(blocks, "context", "blocks.")),
        crossfade=crossfade,
        categories=cats,
        path=str(path),
    )


def _category(path: Path, cname: str, table: dict, crossfade: int) -> CategoryRecipe:
    """Check one ``[categories.NAME]`` table and build its per-tier transform parameters."""
    where = f"categories.{cname}."

    def need(key: str):
        if key not in table:
            raise RecipeError(f"{path}: missing field {where}{key}")
        return table[key]

    name = need("transform")
    if name not in TRANSFORMS:
        raise RecipeError(f"{path}: {where}transform: unknown transform {name!r}; "
                          f"known: {', '.join(sorted(TRANSFORMS))}")
    layout = need("layout")
    if layout not in LAYOUTS:
        raise RecipeError(f"{path}: {where}layout must be one of {LAYOUTS}, got {layout!r}")
    tiers_raw = need("tiers")
    tiers = {}
    for tier in TIERS:
        if tier not in tiers_raw:
            raise RecipeError(f"{path}: missing field {where}tiers.{tier}")
        pair = tiers_raw[tier]
        if len(pair) != 2:
            raise RecipeError(f"{path}: {where}tiers.{tier} must be [start, end], got {pair!r}")
        tiers[tier] = (float(pair[0]), float(pair[1]))
    params = {k: v for k, v in table.items() if k not in ("transform", "unit", "layout", "tiers")}
    params_type = TRANSFORMS[name].params_type
    covary = params.get("covary", {})
    for q in params_type.needs_covary:
        if q not in covary:
            raise RecipeError(f"{path}: missing field {where}covary.{q} (transform {name!r} reads it)")
    for q, pair in covary.items():
        if not isinstance(pair, list) or len(pair) != 2:
            raise RecipeError(f"{path}: {where}covary.{q} must be [start, end], got {pair!r}")
    own = {k: v for k, v in params.items() if k not in CATEGORY_KEYS}
    try:
        tier_params = {tier: params_type.from_table(own, tier=tier, tiers=TIERS, engine={"crossfade": crossfade})
                       for tier in TIERS}
    except ParamError as e:
        raise RecipeError(f"{path}: {where}{e.field}: {e.message} (transform {name!r})") from None
    return CategoryRecipe(cname, name, need("unit"), layout, tiers, params, tier_params)
