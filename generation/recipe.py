"""Recipes: versioned files holding every setting of a render (``generation/recipes/*.toml``).

A recipe is loaded once, validated up front and passed to the engine; transforms read their
parameters from it, never from literals. Loading checks every field before any audio is processed:
an unknown field, category or transform name, a parameter the transform does not take (a typo), a
missing one, a wrong type or an out-of-range value raises :class:`RecipeError` naming the file and
the field (``categories.noise.seed_prefx``, ``categories.volume.tiers.low``). Each category's
parameters become the transform's frozen parameter dataclass (:class:`generation.transforms.Params`),
one per tier; the ranges live with those dataclasses (tier values: :meth:`Params.check_tier`;
``[span]``: :class:`SpanSettings`; ``[blocks]``: :class:`BlockSettings`), and this
module only adds the file, category and tier to their messages.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path

from vocalgrad import CATEGORY_NAMES, TIERS, VocalGradError

from .identity import content_digest
from .transforms import TRANSFORMS, ParamError, Params

__all__ = ["Recipe", "CategoryRecipe", "BlockSettings", "SpanSettings", "RecipeError", "load_recipe", "available_recipes",
           "DEFAULT_RECIPE", "recipe_settings", "shipped_digest"]

RECIPE_DIR = Path(__file__).parent / "recipes"
DEFAULT_RECIPE = "faithful-v1"
LAYOUTS = ("blocks", "even_chunks", "samples")
#: Keys of a category table that are not transform parameters.
CATEGORY_KEYS = ("transform", "unit", "layout", "tiers", "covary")
#: Top-level fields of a recipe file.
RECIPE_KEYS = ("name", "description", "processing_sample_rate", "span", "blocks", "categories")
#: Lowest processing sample rate a recipe may set (Hz), as for the output rate.
MIN_SAMPLE_RATE = 8000


class RecipeError(VocalGradError, ValueError):
    """A recipe file is unknown, or a field of it is missing or invalid (the message names both)."""


@dataclass(frozen=True, kw_only=True)
class SpanSettings(Params):
    """The detector's settings as a recipe's ``[span]`` table gives them, checked when built.

    Defaults are :func:`generation.span.detect_span`'s. Ranges: ``preemphasis`` in [0, 1), ``frame_sec`` and
    ``hop_sec`` > 0 (at least one sample at the processing rate: :meth:`check_rate`),
    ``floor_sec``, ``floor_factor``, ``min_threshold`` >= 0, ``peak_factor`` in [0, 1],
    ``min_frames`` >= 1.
    """

    preemphasis: float = 0.97
    frame_sec: float = 0.010
    hop_sec: float = 0.010
    floor_sec: float = 0.200
    floor_factor: float = 1.8
    peak_factor: float = 0.003
    min_threshold: float = 5e-5
    min_frames: int = 10

    def check(self) -> None:
        if not 0 <= self.preemphasis < 1:
            raise ParamError("preemphasis", f"must lie in [0, 1), got {self.preemphasis}")
        for name in ("frame_sec", "hop_sec"):
            if not 0 < getattr(self, name) <= 1:
                raise ParamError(name, f"must lie in (0, 1] s, got {getattr(self, name)}")
        for name in ("floor_sec", "floor_factor", "min_threshold"):
            if getattr(self, name) < 0:
                raise ParamError(name, f"must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.peak_factor <= 1:
            raise ParamError("peak_factor", f"must lie in [0, 1], got {self.peak_factor}")
        if self.min_frames < 1:
            raise ParamError("min_frames", f"must be >= 1, got {self.min_frames}")

    def check_rate(self, sample_rate: int) -> None:
        """Frames and hops of at least one sample at ``sample_rate`` (ParamError otherwise)."""
        for name in ("frame_sec", "hop_sec"):
            if int(round(getattr(self, name) * sample_rate)) < 1:
                raise ParamError(name, f"{getattr(self, name)} s is less than one sample at {sample_rate} Hz")


@dataclass(frozen=True, kw_only=True)
class BlockSettings(Params):
    """A recipe's ``[blocks]`` table, in samples at the processing rate, checked when built.

    ``size`` >= 1 (step length), ``context`` >= 0 (each side of a chunk), ``crossfade`` in
    [0, size] (a fade longer than a block would blend more than one step into the next).
    """

    size: int
    context: int
    crossfade: int

    def check(self) -> None:
        if self.size < 1:
            raise ParamError("size", f"must be >= 1 sample, got {self.size}")
        if self.context < 0:
            raise ParamError("context", f"must be >= 0 samples, got {self.context}")
        if not 0 <= self.crossfade <= self.size:
            raise ParamError("crossfade", f"must lie in [0, size = {self.size}] samples, got {self.crossfade}")


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
    #: :func:`generation.identity.content_digest` of :func:`recipe_settings`: the recipe's content,
    #: whatever its name, description, comments or layout (render.json's ``recipe_digest``).
    digest: str = ""

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
        except UnicodeDecodeError as e:
            raise RecipeError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None

    def need(table: dict, key: str, where: str):
        if key not in table:
            raise RecipeError(f"{path}: missing field {where}{key}")
        return table[key]

    unknown = sorted(set(raw) - set(RECIPE_KEYS))
    if unknown:
        raise RecipeError(f"{path}: unknown field(s) {', '.join(unknown)}; a recipe has {', '.join(RECIPE_KEYS)}")
    name = need(raw, "name", "")
    if not isinstance(name, str) or not name.strip():
        raise RecipeError(f"{path}: name must be a non-empty string, got {name!r}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise RecipeError(f"{path}: description must be a string, got {description!r}")
    sr = need(raw, "processing_sample_rate", "")
    if isinstance(sr, bool) or not isinstance(sr, int) or sr < MIN_SAMPLE_RATE:
        raise RecipeError(f"{path}: processing_sample_rate must be a whole number of Hz >= {MIN_SAMPLE_RATE}, "
                          f"got {sr!r}")
    blocks = _settings(path, BlockSettings, need(raw, "blocks", ""), "blocks")
    span = _settings(path, SpanSettings, need(raw, "span", ""), "span")
    try:
        span.check_rate(sr)
    except ParamError as e:
        raise RecipeError(f"{path}: span.{e.field}: {e.message}") from None
    cats = {}
    categories = need(raw, "categories", "")
    if not isinstance(categories, dict):
        raise RecipeError(f"{path}: categories must be tables [categories.NAME], got {categories!r}")
    for cname, table in categories.items():
        if cname not in CATEGORY_NAMES:
            raise RecipeError(f"{path}: unknown category [categories.{cname}]; valid: {', '.join(CATEGORY_NAMES)}")
        cats[cname] = _category(path, cname, table, blocks.crossfade, sr)
    missing = [c for c in CATEGORY_NAMES if c not in cats]
    if missing:
        raise RecipeError(f"{path}: no settings for categories {missing}")
    rec = Recipe(
        name=name,
        description=description,
        sample_rate=sr,
        span=dataclasses.asdict(span),
        block=blocks.size,
        context=blocks.context,
        crossfade=blocks.crossfade,
        categories=cats,
        path=str(path),
    )
    return dataclasses.replace(rec, digest=content_digest(recipe_settings(rec)))


def recipe_settings(rec: Recipe) -> dict:
    """Everything of a loaded recipe that shapes the clips, as plain JSON-able values.

    The processing rate, the span detector's and the blocks' settings, and per category its transform,
    unit, layout, tier ranges, co-varying quantities and the transform's checked parameters at each
    tier (defaults filled in). The name and description are left out: two files that render the same
    clips have the same settings whatever they are called, and an edited copy that keeps the name
    does not.
    """
    return {
        "processing_sample_rate": rec.sample_rate,
        "span": rec.span,
        "blocks": {"size": rec.block, "context": rec.context, "crossfade": rec.crossfade},
        "categories": {
            name: {"transform": c.transform, "unit": c.unit, "layout": c.layout,
                   "tiers": {t: list(c.tiers[t]) for t in TIERS}, "covary": c.params.get("covary", {}),
                   "params": {t: dataclasses.asdict(c.tier_params[t]) for t in TIERS}}
            for name, c in sorted(rec.categories.items())
        },
    }


def shipped_digest(name: str) -> str | None:
    """The content digest of the shipped recipe ``name`` (None when no recipe of that name ships)."""
    path = RECIPE_DIR / f"{name}.toml"
    return load_recipe(str(path)).digest if path.is_file() else None


def _settings(path: Path, cls: type[Params], table, where: str):
    """The checked settings ``cls`` of the table ``[where]`` (RecipeError naming file and field)."""
    if not isinstance(table, dict):
        raise RecipeError(f"{path}: {where} must be a table [{where}], got {table!r}")
    try:
        return cls.from_table(table)
    except ParamError as e:
        raise RecipeError(f"{path}: {where}.{e.field}: {e.message}") from None


def _category(path: Path, cname: str, table: dict, crossfade: int, sample_rate: int) -> CategoryRecipe:
    """Check one ``[categories.NAME]`` table and build its per-tier transform parameters.

    The ranges are the transform's (:meth:`Params.check_tier`, :meth:`Params.check_covary`, the
    parameter dataclass's own checks); this adds the file, category and tier to the message.
    """
    where = f"categories.{cname}."
    if not isinstance(table, dict):
        raise RecipeError(f"{path}: categories.{cname} must be a table [categories.{cname}], got {table!r}")

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
    unit = need("unit")
    if not isinstance(unit, str) or not unit.strip():
        raise RecipeError(f"{path}: {where}unit must be a non-empty string, got {unit!r}")
    params_type = TRANSFORMS[name].params_type
    tiers_raw = need("tiers")
    if not isinstance(tiers_raw, dict):
        raise RecipeError(f"{path}: {where}tiers must be a table {{low = [start, end], ...}}, got {tiers_raw!r}")
    extra = sorted(set(tiers_raw) - set(TIERS))
    if extra:
        raise RecipeError(f"{path}: {where}tiers: unknown tier(s) {', '.join(extra)}; tiers are {', '.join(TIERS)}")
    tiers = {}
    for tier in TIERS:
        if tier not in tiers_raw:
            raise RecipeError(f"{path}: missing field {where}tiers.{tier}")
        try:
            tiers[tier] = params_type.check_tier(tiers_raw[tier], sample_rate=sample_rate)
        except ParamError as e:
            raise RecipeError(f"{path}: {where}tiers.{tier}: {e.message} (transform {name!r})") from None
    params = {k: v for k, v in table.items() if k not in ("transform", "unit", "layout", "tiers")}
    covary = params.get("covary", {})
    if not isinstance(covary, dict):
        raise RecipeError(f"{path}: {where}covary must be a table {{NAME = [start, end]}}, got {covary!r}")
    for q in params_type.needs_covary:
        if q not in covary:
            raise RecipeError(f"{path}: missing field {where}covary.{q} (transform {name!r} reads it)")
    for q, pair in covary.items():
        if q not in params_type.needs_covary:
            raise RecipeError(f"{path}: {where}covary.{q}: transform {name!r} does not read it "
                              f"(it reads {', '.join(params_type.needs_covary) or 'none'})")
        try:
            params_type.check_covary(q, pair, sample_rate=sample_rate)
        except ParamError as e:
            raise RecipeError(f"{path}: {where}covary.{q}: {e.message} (transform {name!r})") from None
    own = {k: v for k, v in params.items() if k not in CATEGORY_KEYS}
    try:
        tier_params = {tier: params_type.from_table(own, tier=tier, tiers=TIERS, engine={"crossfade": crossfade})
                       for tier in TIERS}
    except ParamError as e:
        raise RecipeError(f"{path}: {where}{e.field}: {e.message} (transform {name!r})") from None
    return CategoryRecipe(cname, name, unit, layout, tiers, params, tier_params)
