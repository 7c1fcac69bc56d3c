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

__all__ = ["PRETTY_NAME", "HubBuildError", "HubDir"]

#: ``pretty_name`` of the card's YAML header: marks a folder as one that ``vocalgrad hub`` wrote.
PRETTY_NAME = "VocalGrad"


class HubBuildError(vocalgrad.VocalGradError, ValueError):
    """The input renders or the output folder are unusable; the message lists every problem."""


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
        files = {cat: self.shards(cat) for cat in vocalgrad.CATEGORY_NAMES}
        files.update((name, self.shards(name)) for name in here if _is_attribute(name))
        return {k: v for k, v in files.items() if v}

    def split_files(self, config: str, split: str, *, env: str = "VOCALGRAD_DATASET") -> list[str]:
        """Shard paths of one config and split, for ``datasets.load_dataset("parquet", data_files=...)``.

        Raises
        ------
        FileNotFoundError
            No such config folder (the message lists those found) or no shards of the split; ``env``
            is the variable the message suggests pointing elsewhere.
        """
        cdir = self.path / config
        if not cdir.is_dir():
            have = sorted(p.name for p in self.path.iterdir() if p.is_dir() and not p.name.startswith("."))
            raise FileNotFoundError(
                f"{self.path}: no config folder {config!r} (found: {', '.join(have) or 'none'}); "
                f"build the folder with `vocalgrad hub` or point {env} elsewhere"
            )
        files = [str(p) for p in self.shards(config, split)]
        if not files:
            raise FileNotFoundError(f"{cdir}: no '{split}-*.parquet' shards for split {split!r}")
        return files


def _is_attribute(name: str) -> bool:
    """Whether ``name`` is an installed extension attribute (:func:`vocalgrad.category` knows it)."""
    try:
        return vocalgrad.category(name).name == name
    except ValueError:
        return False
