"""Named registries (transforms, measures, source readers): a taken name is never replaced.

The toolkit looks pieces up by name: a recipe's ``transform = "gain"`` in
:data:`generation.transforms.TRANSFORMS`, the oracle's measure in :data:`generation.measures.MEASURES`,
``--source folder:`` in the source readers. Plugins add names; they never change what a name
already means, so a render with ``faithful-v1`` always runs the paper's transforms.

:func:`claim` is the one way to add a name: a taken name is refused with :class:`NameTaken` (the
same definition again, e.g. a reloaded module, is accepted). :func:`snapshot` and :func:`restore`
let a plugin loader undo everything a refused plugin registered, and :func:`replaced` finds built-in
entries a plugin changed by assigning to a registry directly.

Examples
--------
>>> reg = {}
>>> claim(reg, "gain", len, what="transform")
>>> claim(reg, "gain", abs, what="transform")  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
NameTaken: transform name 'gain' is taken by builtins.len; ...
"""

from __future__ import annotations

from vocalgrad import VocalGradError

__all__ = ["NameTaken", "claim", "origin", "registries", "replaced", "restore", "snapshot", "track"]


class NameTaken(VocalGradError, ValueError):
    """A name is already registered for another definition; the message names both."""


def origin(obj) -> str:
    """``module.qualname`` of a registered object (of its class for an instance)."""
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"


def claim(registry: dict, name: str, obj, *, what: str) -> None:
    """Register ``obj`` under ``name`` unless the name is taken by another definition.

    Raises
    ------
    NameTaken
        ``name`` is registered for another object (one with another module or qualified name);
        the registry is unchanged.
    """
    known = registry.get(name)
    if known is not None and known is not obj and origin(known) != origin(obj):
        raise NameTaken(f"{what} name {name!r} is taken by {origin(known)}; register {origin(obj)} under "
                        "another name (built-in and installed names are never replaced)")
    registry[name] = obj


#: label -> registry dict, as the owning modules announce them (:func:`track`).
_TRACKED: dict[str, dict] = {}


def track(label: str, reg: dict) -> dict:
    """Announce a registry (``label`` names its kind in messages); returns ``reg``. The modules that own
    one call this when imported (transforms, source readers); measures are a leaf module and are added here."""
    _TRACKED[label] = reg
    return reg


def registries() -> dict[str, dict]:
    """The toolkit's named registries: label -> the dict itself (those of the modules imported so far,
    and the measures)."""
    from .measures import MEASURES  # a leaf module: it imports no registry

    return {**_TRACKED, "measure": MEASURES}


def snapshot() -> dict[str, dict]:
    """A copy of every registry (:func:`registries`), to :func:`restore` or compare with later."""
    return {label: dict(reg) for label, reg in registries().items()}


def restore(saved: dict[str, dict]) -> None:
    """Put every registry back as it was when ``saved`` was taken (names added since are removed; a
    registry announced since is left alone: its module's own names are in it)."""
    for label, reg in registries().items():
        if label in saved:
            reg.clear()
            reg.update(saved[label])


def replaced(saved: dict[str, dict]) -> list[str]:
    """``"<kind> '<name>'"`` for every entry of ``saved`` that is now missing or another object."""
    now = registries()
    return [f"{label} {name!r}" for label, before in saved.items() for name, obj in before.items()
            if now.get(label, {}).get(name) is not obj]
