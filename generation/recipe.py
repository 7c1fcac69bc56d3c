"""Recipes: versioned files holding every setting of a render (``generation/recipes/*.toml``).

A recipe is loaded once, validated up front (clear ``ValueError`` naming the file and field), and
passed to the engine; transforms read their parameters from it, never from literals.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from vocalgrad import CATEGORY_NAMES, TIERS

__all__ = ["Recipe", "CategoryRecipe", "load_recipe", "available_recipes", "DEFAULT_RECIPE"]

RECIPE_DIR = Path(__file__).parent / "recipes"
DEFAULT_RECIPE = "faithful-v1"
LAYOUTS = ("blocks", "even_chunks", "samples")


@dataclass(frozen=True)
class CategoryRecipe:
    """Settings of one category: transform name, unit, layout, tier ranges and free parameters."""

    category: str
    transform: str
    unit: str
    layout: str
    tiers: dict  # tier -> (lo, hi)
    params: dict  # every other key of the category table

    def span_values(self, tier: str) -> tuple[float, float]:
        return self.tiers[tier]


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
            raise ValueError(f"recipe {self.name} has no category {name!r}") from None


def available_recipes() -> list[str]:
    """Names of the recipes shipped with the toolkit."""
    return sorted(p.stem for p in RECIPE_DIR.glob("*.toml"))


def load_recipe(name_or_path: str = DEFAULT_RECIPE) -> Recipe:
    """Load and validate a recipe by shipped name or by path to a TOML file.

    Raises
    ------
    ValueError
        Unknown recipe name, or a missing/invalid field (the message names the file and field).
    """
    path = Path(name_or_path)
    if not path.suffix:
        path = RECIPE_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise ValueError(f"unknown recipe {name_or_path!r}; shipped recipes: {', '.join(available_recipes())}")
    with open(path, "rb") as fh:
        raw = tomllib.load(fh)

    def need(table: dict, key: str, where: str):
        if key not in table:
            raise ValueError(f"{path}: missing field {where}{key}")
        return table[key]

    cats = {}
    for cname, table in need(raw, "categories", "").items():
        where = f"categories.{cname}."
        if cname not in CATEGORY_NAMES:
            raise ValueError(f"{path}: unknown category [{where[:-1]}]; valid: {', '.join(CATEGORY_NAMES)}")
        layout = need(table, "layout", where)
        if layout not in LAYOUTS:
            raise ValueError(f"{path}: {where}layout must be one of {LAYOUTS}, got {layout!r}")
        tiers_raw = need(table, "tiers", where)
        tiers = {}
        for tier in TIERS:
            pair = need(tiers_raw, tier, where + "tiers.")
            if len(pair) != 2:
                raise ValueError(f"{path}: {where}tiers.{tier} must be [start, end], got {pair!r}")
            tiers[tier] = (float(pair[0]), float(pair[1]))
        params = {k: v for k, v in table.items() if k not in ("transform", "unit", "layout", "tiers")}
        cats[cname] = CategoryRecipe(cname, need(table, "transform", where), need(table, "unit", where),
                                     layout, tiers, params)
    missing = [c for c in CATEGORY_NAMES if c not in cats]
    if missing:
        raise ValueError(f"{path}: no settings for categories {missing}")
    blocks = need(raw, "blocks", "")
    return Recipe(
        name=need(raw, "name", ""),
        description=raw.get("description", ""),
        sample_rate=int(need(raw, "processing_sample_rate", "")),
        span=dict(need(raw, "span", "")),
        block=int(need(blocks, "size", "blocks.")),
        context=int(need(blocks, "context", "blocks.")),
        crossfade=int(need(blocks, "crossfade", "blocks.")),
        categories=cats,
        path=str(path),
    )
