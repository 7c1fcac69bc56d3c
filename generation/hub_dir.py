"""The Hub folder: the one reader of the layout ``vocalgrad hub`` writes.

Layout (written by :mod:`generation.hub`)::

    DIR/README.md                                   the dataset card (YAML header: pretty_name VocalGrad)
    DIR/build.json                                  the build digest of every config (:class:`BuildInfo`)
    DIR/<config>/<split>-0000N-of-0000M.parquet     one folder per config (a category, all, beep, train, sources)

The harness (:func:`harness_tasks.utils.load_split`), ``vocalgrad verify``, ``listen``/``show`` and
``vocalgrad hub`` itself find configs and shards through :class:`HubDir`; how each reads the rows
(``datasets``, whole tables, or row groups on demand) stays with it. :class:`HubConfig` is one
config as the builder writes it (the card's YAML header lists them).

Examples
--------
>>> HubDir("hub/").shards("pitch", "test")  # doctest: +SKIP
[PosixPath('hub/pitch/test-00000-of-00001.parquet')]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import vocalgrad

from .render_dir import RenderDir, known_categories

__all__ = ["PRETTY_NAME", "BuildInfo", "HubBuildError", "HubConfig", "HubDir", "HubDirError"]

#: ``pretty_name`` of the card's YAML header: marks a folder as one that ``vocalgrad hub`` wrote.
PRETTY_NAME = "VocalGrad"


class HubBuildError(vocalgrad.VocalGradError, ValueError):
    """The input renders or the output folder are unusable; the message lists every problem."""


class HubDirError(vocalgrad.VocalGradError, FileNotFoundError):
    """A folder read as a Hub folder lacks what is asked for (it is none, or lacks a config or split);
    the message says what it is and what to do."""


@dataclass(frozen=True)
class BuildInfo:
    """What a Hub folder's ``build.json`` says about one config (:meth:`HubDir.build_info`).

    Attributes
    ----------
    name, split : str
        The config and its Hub split.
    digest : str
        :func:`generation.identity.build_digest` over the config's ``(id, sha256)`` pairs.
    n_clips : int
    source_kind : str
        The ``--source`` kind of the render it came from: ``demo``, ``vctk``, ``folder``, ``hf``,
        ``tones``, ``loquacious``, ``cv-spontaneous`` ("" when unknown).
    source, recipe, recipe_digest : str or None
        The render's ``--source``, recipe name and recipe content digest.
    render_digest : str or None
        The build digest of the whole render the config came from (render.json's ``build_digest``).
    """

    name: str
    split: str
    digest: str
    n_clips: int
    source_kind: str = ""
    source: str | None = None
    recipe: str | None = None
    recipe_digest: str | None = None
    render_digest: str | None = None


class HubDir:
    """One Hub folder (a local copy of the dataset repo).

    Parameters
    ----------
    path : path-like
        The folder. Nothing is read until asked for.
    """

    def __init__(self, path):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"HubDir({str(self.path)!r})"

    @property
    def card_path(self) -> Path:
        return self.path / "README.md"

    @classmethod
    def looks_like(cls, path) -> bool:
        """Whether ``path`` holds a card and at least one ``<config>/*.parquet`` shard."""
        return (Path(path) / "README.md").is_file() and any(Path(path).glob("*/*.parquet"))

    def has_vocalgrad_card(self) -> bool:
        """Whether the card is a VocalGrad card (its YAML header names :data:`PRETTY_NAME`)."""
        if not self.card_path.is_file():
            return False
        head = self.card_path.read_text(encoding="utf-8", errors="replace")[:4000]
        return head.startswith("---") and f"pretty_name: {PRETTY_NAME}" in head

    @property
    def build_record_path(self) -> Path:
        """``build.json``: the build digest of every config (:mod:`generation.hub_build_record`)."""
        return self.path / "build.json"

    def build_record(self) -> dict | None:
        """Contents of ``build.json``; ``None`` for a folder built before it was written (or not by us).

        Raises
        ------
        HubDirError
            The file is there but no JSON object.
        """
        import json

        path = self.build_record_path
        if not path.is_file():
            return None
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise HubDirError(f"{path}: not valid JSON ({exc}); rebuild the folder with `vocalgrad hub`") from None
        if not isinstance(record, dict) or not isinstance(record.get("configs"), dict):
            raise HubDirError(f"{path}: no 'configs' table; rebuild the folder with `vocalgrad hub`")
        return record

    def build_info(self, config: str = "all") -> BuildInfo | None:
        """The recorded identity of ``config`` (:class:`BuildInfo`); ``None`` when ``build.json`` is absent
        or does not list the config."""
        record = self.build_record()
        entry = (record or {}).get("configs", {}).get(config)
        if not entry:
            return None
        render = (record.get("renders") or {}).get(entry.get("render", "test")) or {}
        return BuildInfo(config, entry.get("split", ""), entry["build_digest"], int(entry.get("n_clips", 0)),
                         render.get("source_kind") or "", render.get("source"), render.get("recipe"),
                         render.get("recipe_digest"), render.get("build_digest"))

    def build_digest(self, config: str = "all") -> str | None:
        """The recorded build digest of ``config`` (``None`` when not recorded)."""
        info = self.build_info(config)
        return info.digest if info else None

    def identity_problems(self, rows: list[dict]) -> list[str]:
        """Configs whose recorded digest differs from the one of ``rows`` (dicts with ``config``, ``id``,
        ``sha256``: what ``vocalgrad verify`` reads from the shards). Configs not among ``rows`` are not
        checked; ``all`` is checked against the category configs it lists."""
        from .identity import build_digest, short

        record = self.build_record()
        if record is None:
            return []
        by_config: dict[str, list] = {}
        for r in rows:
            by_config.setdefault(r["config"], []).append((r["id"], r["sha256"]))
        problems = []
        for name, entry in sorted(record["configs"].items()):
            if name == "all":
                pairs = [p for c, ps in by_config.items() if c in vocalgrad.CATEGORY_NAMES for p in ps]
            else:
                pairs = by_config.get(name)
            if not pairs:
                continue
            try:
                now = build_digest(pairs)
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
                continue
            if now != entry.get("build_digest"):
                problems.append(f"{name}: its shards give {short(now)}, {self.build_record_path} records "
                                f"{short(entry.get('build_digest'))} (shards replaced or edited after `vocalgrad hub`)")
        return problems

    def shards(self, config: str, split: str | None = None) -> list[Path]:
        """Sorted shards of ``config`` (only those of ``split`` when given); empty when it has none."""
        folder = self.path / config
        if not folder.is_dir():
            return []
        return sorted(folder.glob(f"{split}-*.parquet" if split else "*.parquet"))

    def category_shards(self) -> dict[str, list[Path]]:
        """Category config -> its shards, for the nine categories present (the test set; ``all`` not read),
        then the configs of installed extension attributes (``vocalgrad attributes``), sorted."""
        others = set(vocalgrad.builder_config_specs()) | {"all"}
        here = sorted(p.name for p in self.path.iterdir() if p.is_dir() and p.name not in others) \
            if self.path.is_dir() else []
        files = {cat: self.shards(cat) for cat in known_categories(here)}  # the nine, then extension attributes
        return {k: v for k, v in files.items() if v}

    def split_files(self, config: str, split: str, *, env: str = "VOCALGRAD_DATASET") -> list[str]:
        """Shard paths of one config and split, for ``datasets.load_dataset("parquet", data_files=...)``.

        Raises
        ------
        HubDirError
            (a ``FileNotFoundError``) The folder is no Hub folder (a render folder is named as such),
            or lacks the config (the message lists those found) or the split's shards; ``env`` is the
            variable the message suggests pointing elsewhere.
        """
        cdir = self.path / config
        if not cdir.is_dir():
            raise HubDirError(self._lacking(config, env))
        files = [str(p) for p in self.shards(config, split)]
        if not files:
            raise HubDirError(f"{cdir}: no '{split}-*.parquet' shards for split {split!r}; rebuild the folder with "
                              f"`vocalgrad hub` or point {env} elsewhere")
        return files

    def not_a_hub_folder(self, env: str = "VOCALGRAD_DATASET") -> str | None:
        """Why the folder cannot be read as a Hub folder (missing, a render folder, no ``<config>/*.parquet``
        shard), else ``None``."""
        if not self.path.is_dir():
            what = "not a folder" if self.path.exists() else "no such folder"
            return f"{env}={self.path}: {what}; give a Hub folder made by `vocalgrad hub` (or a Hub repo id)"
        if RenderDir.looks_like(self.path):
            return (f"{env}={self.path}: a render folder (the output of `vocalgrad render`), not a Hub folder; "
                    f"build one with `vocalgrad hub {self.path} --out HUB_DIR` and set {env}=HUB_DIR")
        if not any(self.path.glob("*/*.parquet")):  # a card is not needed to read the shards
            return (f"{env}={self.path}: not a Hub folder (no <config>/*.parquet shards); build one "
                    f"with `vocalgrad hub RENDER_DIR --out {self.path}` or point {env} elsewhere")
        return None

    def _lacking(self, config: str, env: str) -> str:
        """The message for a missing config folder: what the folder is instead, or which configs it has."""
        problem = self.not_a_hub_folder(env)
        if problem:
            return problem
        have = sorted(p.name for p in self.path.iterdir() if p.is_dir() and not p.name.startswith("."))
        return (f"{self.path}: no config folder {config!r} (found: {', '.join(have) or 'none'}); rebuild the Hub "
                f"folder with `vocalgrad hub` from the renders that give that config, ask only for tasks of the configs "
                f"it has, or point {env} elsewhere")


@dataclass
class HubConfig:
    """One config of a Hub folder as it is written: its shards (``data_files`` globs), counts and categories."""

    name: str
    split: str
    data_files: list
    rows: int = 0
    num_bytes: int = 0
    download_size: int = 0
    categories: tuple = ()
