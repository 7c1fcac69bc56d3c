"""Installed attributes: the paper's nine, the shipped extension set and third-party plugins.

:func:`installed` is the one registry: name -> :class:`~.base.Attribute`, in this order

1. the paper's nine (:mod:`.paper`, :data:`vocalgrad.CATEGORY_NAMES` order): the benchmark;
2. the extension set shipped with the toolkit (:data:`EXTENSION_MODULES`: brightness, formants);
3. every entry point of the group ``vocalgrad.attributes`` (:data:`ENTRY_POINT_GROUP`) of the
   installed distributions, sorted by name. An entry point names an :class:`~.base.Attribute`,
   a sequence of them, or a function returning either (docs/attributes.md).

Extensions (2 and 3) are never part of the paper's benchmark: they get their own Hub configs and
the ``vocalgrad_ext`` task group. A plugin that cannot be loaded, whose name is taken, or that
registers (or assigns) a taken transform, measure or source name at import, is left out with a
:class:`PluginWarning` naming it (``vocalgrad attributes`` lists it as a problem), and everything it
registered is undone (:mod:`generation.registry`); the nine, their transforms and the shipped set
are never replaced.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import replace

import vocalgrad

from .. import registry
from .. import sources as _sources  # noqa: F401 - its readers are tracked before any plugin is loaded
from ..registry import NameTaken, claim
from ..transforms.base import TRANSFORMS
from .base import Attribute, AttributeDeclarationError

__all__ = ["Attribute", "AttributeDeclarationError", "ENTRY_POINT_GROUP", "EXTENSION_MODULES", "PluginWarning",
           "extension_names", "get", "installed", "is_extension", "problems", "category_recipe"]

#: Entry point group through which other packages add attributes.
ENTRY_POINT_GROUP = "vocalgrad.attributes"
#: Modules of the extension set shipped with the toolkit (each defines ``ATTRIBUTE``).
EXTENSION_MODULES = ("generation.attributes.brightness", "generation.attributes.formants")

_REGISTRY: dict[str, Attribute] = {}
_PROBLEMS: list[str] = []


class PluginWarning(UserWarning):
    """An installed ``vocalgrad.attributes`` entry point was left out (the message says why)."""


def _as_attributes(obj, where: str) -> list[Attribute]:
    if callable(obj) and not isinstance(obj, Attribute):
        obj = obj()
    items = [obj] if isinstance(obj, Attribute) else list(obj) if isinstance(obj, (list, tuple)) else None
    if items is None or not all(isinstance(a, Attribute) for a in items):
        raise AttributeDeclarationError(f"{where}: must name a generation.attributes.Attribute, a list of them, "
                                        f"or a function returning either; got {type(obj).__name__}")
    return items


def _register_transform(attr: Attribute, where: str) -> None:
    t = attr.transform
    try:
        claim(TRANSFORMS, t.name, t, what="transform")
    except NameTaken as exc:
        raise AttributeDeclarationError(f"{where}: {exc}") from None


def _entry_points():
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def _load() -> None:
    from . import paper

    reg: dict[str, Attribute] = {a.name: a for a in paper.declare()}
    for mod in EXTENSION_MODULES:
        a = importlib.import_module(mod).ATTRIBUTE
        _register_transform(a, mod)
        reg[a.name] = a
    problems = []
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        package = dist.metadata["Name"] if dist is not None else ep.value.split(":")[0].split(".")[0]
        where = f"entry point {ep.name} = {ep.value} ({package})"
        saved = registry.snapshot()  # a plugin left out leaves no trace in any registry
        try:
            added = {}
            for a in _as_attributes(ep.load(), where):
                if a.name in reg or a.name in added:
                    owner = reg.get(a.name) or added[a.name]
                    raise AttributeDeclarationError(f"{where}: attribute name {a.name!r} is taken "
                                                    f"({'the paper' if owner.paper else owner.package})")
                if a.paper:
                    raise AttributeDeclarationError(f"{where}: {a.name!r} sets paper=True; only the nine are the paper's")
                _register_transform(a, where)
                added[a.name] = replace(a, package=package, builtin=False)
            changed = registry.replaced(saved)
            if changed:
                raise AttributeDeclarationError(f"{where}: replaced the installed {', '.join(changed)}; a plugin "
                                                "adds names and never changes one")
            reg.update(added)
        except (Exception, SystemExit) as exc:  # a broken plugin must not take the benchmark down (nor exit it)
            registry.restore(saved)
            if isinstance(exc, AttributeDeclarationError):
                msg = str(exc)
            elif isinstance(exc, SystemExit):
                msg = f"{where}: called sys.exit({exc.code!r}) while loading"
            else:
                msg = f"{where}: {type(exc).__name__}: {exc}"
            problems.append(msg)
            warnings.warn(PluginWarning(f"vocalgrad: attribute plugin left out: {msg}"), stacklevel=3)
    _REGISTRY.clear()
    _REGISTRY.update(reg)
    _PROBLEMS[:] = problems


def installed() -> dict[str, Attribute]:
    """Every installed attribute, name -> declaration (the nine first; loaded once per process)."""
    if not _REGISTRY:
        _load()
    return dict(_REGISTRY)


def problems() -> list[str]:
    """Why installed entry points were left out (empty when all loaded)."""
    installed()
    return list(_PROBLEMS)


def get(name: str) -> Attribute:
    """The declaration of an installed attribute (a paper category's internal id works too).

    Raises
    ------
    ValueError
        Unknown name, with the installed names.
    """
    reg = installed()
    if name in reg:
        return reg[name]
    for c in vocalgrad.CATEGORIES:
        if name == c.id:
            return reg[c.name]
    raise AttributeDeclarationError(f"unknown attribute {name!r}; installed: {', '.join(reg)} "
                                    "(`vocalgrad attributes` lists them)")


def extension_names() -> tuple[str, ...]:
    """Installed attributes that are not the paper's nine, in registry order."""
    return tuple(n for n, a in installed().items() if not a.paper)


def is_extension(name: str) -> bool:
    """Whether ``name`` is an installed extension attribute."""
    return name not in vocalgrad.CATEGORY_NAMES and name in installed()


def category_recipe(recipe, name: str):
    """Settings of ``name`` for a render with ``recipe``: the recipe's own for the nine, built from
    the declaration for an extension (its tiers, unit, layout, transform and parameters).

    Returns
    -------
    generation.recipe.CategoryRecipe
    """
    from ..recipe import CategoryRecipe

    if name in vocalgrad.CATEGORY_NAMES:
        return recipe.category(name)
    a = get(name)
    params = {**dict(a.params), **({"covary": {k: list(v) for k, v in a.covary.items()}} if a.covary else {})}
    return CategoryRecipe(a.name, a.transform.name, a.unit, a.layout,
                          {t: (float(a.tiers[t][0]), float(a.tiers[t][1])) for t in vocalgrad.TIERS},
                          params, a.tier_params(crossfade=recipe.crossfade))
