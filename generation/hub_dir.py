"""The Hub folder: the one reader of the layout ``vocalgrad hub`` writes.

Layout (written by :mod:`generation.hub`)::

    DIR/README.md                                   the dataset card (YAML header: pretty_name VocalGrad)
    DIR/<config>/<split>-0000N-of-0000M.parquet     one folder per config (a category, all, beep, train, sources)

The harness (:func:`harness_tasks.utils.load_split`), ``vocalgrad verify``, ``listen``/``show`` and
``vocalgrad hub`` itself find configs and shards through :class:`HubDir`; how each reads the rows
(``datasets``, whole tables, or row groups on demand) stays with it.

Examples
--------
>>> HubDir("hub/").shards("pitch", "test")  # doctest: +SKIP
[PosixPath('hub/pitch/test-00000-of-00001.parquet')]
"""

from __future__ import annotations

from pathlib import Path

import vocalgrad

from .render_dir import RenderDir, known_categories

__all__ = ["PRETTY_NAME", "HubBuildError", "HubDir", "HubDirError"]

#: ``pretty_name`` of the card's YAML header: marks a folder as one that ``vocalgrad hub`` wrote.
PRETTY_NAME = "VocalGrad"


class HubBuildError(vocalgrad.VocalGradError, ValueError):
    """The input renders or the output folder are unusable; the message lists every problem."""


class HubDirError(vocalgrad.VocalGradError, FileNotFoundError):
    """A folder read as a Hub folder lacks what is asked for (it is none, or lacks a config or split);
    the message says what it is and what to do."""


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
