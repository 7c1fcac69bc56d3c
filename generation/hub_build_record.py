"""``build.json`` of a Hub folder: the build digest of every config, written by ``vocalgrad hub``.

A config's digest is :func:`generation.identity.build_digest` over its rows' ``(id, sha256)``
pairs, the same value a render folder's ``render.json`` gives for the same clips and a sample log
of a model run on every clip of the config. The file is read through
:meth:`generation.hub_dir.HubDir.build_record` / :meth:`~generation.hub_dir.HubDir.build_info`::

    {"format": 1,
     "configs": {"pitch": {"split": "test", "render": "test", "n_clips": 2400, "build_digest": "..."},
                 "all": {...}, "sources": {...}, "beep": {...}, "train": {...}},
     "renders": {"test": {"build_digest": "...", "n_clips": 21600, "recipe": "faithful-v1",
                          "recipe_digest": "...", "source": "vctk:/data/VCTK", "source_kind": "vctk",
                          "domain": "vctk", "selection": "frozen"}}}

``renders.<split>.build_digest`` covers every clip of that render (extension attributes included);
it equals the render folder's ``render.json`` ``build_digest``.
"""

from __future__ import annotations

import json
from pathlib import Path

import vocalgrad

from .identity import build_digest, sha256_file
from .render_dir import RenderDir

__all__ = ["BUILD_RECORD", "FORMAT", "build_record", "write_build_record"]

#: File name of the record in the Hub folder (published with it: it is no hidden file).
BUILD_RECORD = "build.json"
FORMAT = 1


def _config_pairs(cfg, by_split: dict) -> tuple[str, list[tuple[str, str]]]:
    """The render split a config comes from and its ``(id, sha256)`` pairs."""
    if cfg.name == vocalgrad.SOURCES_CONFIG:
        rd = RenderDir(by_split["test"].path)
        sids = sorted({r["source_id"] for r in by_split["test"].rows})
        return "test", [(f"{sid}__source", sha256_file(rd.source_path(sid))) for sid in sids]
    if cfg.name in by_split and cfg.name != "test":
        split = cfg.name  # beep, train: a config of their own
    elif "sweep" in by_split and cfg.name.startswith("sweep_"):
        split = "sweep"  # sweep_<attribute> configs come from the sweep render
    else:
        split = "test"
    cats = set(cfg.categories)
    return split, [(r["clip_id"], r["sha256"]) for r in by_split[split].rows if r["category"] in cats]


def build_record(by_split: dict, configs: list) -> dict:
    """The record of a Hub folder built from the checked renders ``by_split`` into ``configs``."""
    out = {"format": FORMAT, "configs": {}, "renders": {}}
    for cfg in configs:
        split, pairs = _config_pairs(cfg, by_split)
        out["configs"][cfg.name] = {"split": cfg.split, "render": split, "n_clips": len(pairs),
                                    "build_digest": build_digest(pairs)}
    for split, check in sorted(by_split.items()):
        meta = check.meta
        source = str(meta.get("source", ""))
        out["renders"][split] = {
            "build_digest": RenderDir(check.path).build_digest(check.rows), "n_clips": len(check.rows),
            "recipe": meta.get("recipe"), "recipe_digest": meta.get("recipe_digest"), "source": source,
            "source_kind": source.partition(":")[0], "domain": meta.get("domain"),
            "selection": meta.get("selection")}
        if meta.get("categories"):  # rendered with --categories: the others were not asked for
            out["renders"][split]["categories"] = list(meta["categories"])
        if getattr(check, "missing", None):  # a partial render, built with --allow-partial: verify says partial, not failed
            out["renders"][split]["missing_conditions"] = len(check.missing)
    return out


def write_build_record(stage: Path, by_split: dict, configs: list) -> str:
    """Write :data:`BUILD_RECORD` into the staged Hub folder; return its relative path."""
    record = build_record(by_split, configs)
    (stage / BUILD_RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return BUILD_RECORD
