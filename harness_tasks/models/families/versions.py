"""The transformers release each family needs (:attr:`Family.min_transformers`), checked before a
checkpoint is read, so a too-old transformers stops in one line naming the family and the fix."""

from __future__ import annotations

from typing import Any

from vocalgrad import VocalGradError

__all__ = ["FamilyUnavailable", "check_transformers", "version_tuple"]


class FamilyUnavailable(VocalGradError, ValueError):
    """A checkpoint this environment cannot serve (transformers too old, or a refused checkpoint): one line."""


def version_tuple(text: str) -> tuple[int, ...]:
    """``"5.5.0.dev0"`` -> ``(5, 5, 0)`` (the leading numeric parts)."""
    out = []
    for part in str(text).split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        out.append(int(digits))
        if not part.isdigit():
            break
    return tuple(out)


def check_transformers(family: Any, installed: str | None = None) -> None:
    """Raise :class:`FamilyUnavailable` when the installed transformers (or ``installed``) is older
    than the family's floor, or lacks the family's default class."""
    import transformers

    have = installed or transformers.__version__
    need = getattr(family, "min_transformers", None)
    if need and version_tuple(have) < version_tuple(need):
        raise FamilyUnavailable(
            f"model family {family.name} needs transformers >= {need} (installed {have}): "
            f"pip install 'transformers>={need}' (the transformers_worker lock's 4.57.6 cannot serve it)")
    cls = getattr(family, "default_class", None)
    if installed is None and cls and getattr(transformers, cls, None) is None:
        raise FamilyUnavailable(f"model family {family.name} needs transformers.{cls}, which transformers {have} "
                                f"does not have: pip install -U 'transformers>={need}'")
