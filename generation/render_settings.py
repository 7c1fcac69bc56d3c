"""What a render folder's ``render.json`` records about its render, and the check that a rerun matches it.

:func:`settings` gathers the recipe (name and content digest), output rate, split, source, the kind of
source selection (:data:`SELECTION_NOTES`) and domain; :func:`check_or_write_settings` writes them
into a new folder or refuses a rerun that asks for other settings (a later run may add categories,
and with a sweep their levels). The content digests added at the end of a run are
:mod:`generation.render_identity`'s.
"""

from __future__ import annotations

import json
from pathlib import Path

import vocalgrad as vg

from . import audio as aio
from . import render_identity as ident
from .recipe import Recipe
from .render_dir import RenderDir
from .sources import SourceItem

__all__ = ["RenderError", "SELECTION_NOTES", "TOOLKIT_VERSION", "check_or_write_settings", "selection_kind",
           "settings", "source_domain"]

TOOLKIT_VERSION = "0.1.0"

#: What render.json's ``selection`` says about each kind of source selection (the card repeats it).
SELECTION_NOTES = {
    "frozen": "the paper's frozen selection with its recorded speech bounds (the instance the paper evaluated)",
    "frozen-redetected": "the paper's frozen utterance ids with re-detected speech spans (VCTK 0.92's "
                         "silence-trimmed files): a different dataset instance from the published one",
    "sample": "a new seeded selection (--selection sample): a new dataset instance, not the paper's",
    "as-is": "the source's own files as given: a new dataset instance, not the paper's",
    "tones": "the toolkit's synthetic tones (pure and harmonic sines; the beep ablation uses the pure ones)",
}


class RenderError(vg.VocalGradError, RuntimeError):
    """A render cannot proceed (incompatible output folder, bad source with ``strict``...)."""


def check_or_write_settings(out_dir: Path, settings: dict, recipe: Recipe) -> None:
    """Write ``settings`` as ``render.json`` into a new folder, or check them against the one there.

    Raises
    ------
    RenderError
        The folder holds a render of another recipe, rate, split, source, selection or sweep, or a
        manifest without ``render.json``.
    """
    rd = RenderDir(out_dir)
    path = rd.meta_path
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise RenderError(f"{path} is not valid JSON ({exc}); remove it or use another --out") from exc
        ident.check_recipe(out_dir, old, recipe)  # same name, other content: refused naming both digests
        for key in ("recipe", "sample_rate", "split", "source", "selection", "sweep"):
            if key == "selection" and key not in old:  # written before selections were recorded
                continue
            if _comparable(key, old.get(key)) != _comparable(key, settings.get(key)):
                raise RenderError(
                    f"{out_dir} holds a render with {key}={old.get(key)!r}, this run asks for "
                    f"{key}={settings.get(key)!r}; nothing was written. Use another --out folder."
                )
        cats = sorted(set(old.get("categories") or []) | set(settings.get("categories") or []))
        new = {**old, "categories": cats}
        if old.get("sweep"):  # the levels of the categories added now
            new["sweep"] = {**old["sweep"], "levels": {**settings["sweep"]["levels"], **old["sweep"]["levels"]}}
        if "categories" in settings and new != old:  # a later run may add categories
            aio.atomic_write_bytes(path, (json.dumps(new, indent=2, sort_keys=True) + "\n").encode())
        return
    if rd.manifest_path.exists():
        raise RenderError(f"{out_dir} holds a manifest but no render.json; refusing to mix renders. Use another --out.")
    aio.atomic_write_bytes(path, (json.dumps(settings, indent=2, sort_keys=True) + "\n").encode())


def _comparable(key: str, value):
    """What must agree between render.json and a rerun: the value itself, for ``sweep`` its kind and
    trajectories (categories, and with them their levels, may be added by a later run)."""
    if key != "sweep" or not value:
        return value
    return {"trajectories": value.get("trajectories")}


def source_domain(source: str, items: list[SourceItem]) -> str:
    """The source domain of a render: ``vctk``, ``loquacious``, ``cv-spontaneous``, or the source kind."""
    named = sorted({it.extra["domain"] for it in items if it.extra.get("domain")})
    return "+".join(named) if named else source.partition(":")[0]


def selection_kind(items: list[SourceItem]) -> str:
    """The kind of selection the items come from (a key of :data:`SELECTION_NOTES`, or several joined by +)."""
    return "+".join(sorted({it.extra.get("selection", "as-is") for it in items})) or "as-is"


def settings(items: list[SourceItem], rec: Recipe, *, source: str, split: str, categories: list,
              sample_rate: int) -> dict:
    """What render.json records (and a rerun must match): recipe, rate, split, source, selection."""
    kind = selection_kind(items)
    seeds = sorted({it.extra["selection_seed"] for it in items if "selection_seed" in it.extra})
    note = " + ".join(SELECTION_NOTES.get(k, k) for k in kind.split("+"))
    domain = source_domain(source, items)
    if domain in ("loquacious", "cv-spontaneous"):
        note = f"{domain}, an alternate source domain of the paper's Table 15: {note}"
    if seeds:
        note += f" (seed {', '.join(map(str, seeds))})"
    return {"recipe": rec.name, "recipe_digest": rec.digest, "sample_rate": sample_rate, "split": split,
            "source": source,
            "toolkit_version": TOOLKIT_VERSION, "selection": kind, "selection_note": note,
            "categories": sorted(categories), "domain": domain}

