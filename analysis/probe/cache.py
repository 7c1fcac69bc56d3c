"""On-disk feature cache: one float16 ``.npy`` matrix (clips x features) per key.

A key is ``(stage, layer, split, category)``; ``layer`` is ``None`` for the mel and pre_lm
stages. Next to every matrix a small JSON file records what it was computed from (the
*fingerprint*: model, data source, prompt, settings) and the SHA-1 of its clip ids; a matrix is
reused only when both match. Features computed in one pass are written into ``*.partial.npy``
memory maps and a progress file counts the finished clips after every batch, so an interrupted
run resumes where it stopped; finished matrices are renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from generation.audio import atomic_write_text

__all__ = ["FeatureCache", "FeatureKey", "PassWriter", "fingerprint_digest"]

CACHE_VERSION = 1


@dataclass(frozen=True, order=True)
class FeatureKey:
    """What a cached matrix holds."""

    stage: str
    layer: int | None
    split: str
    category: str

    @property
    def stem(self) -> str:
        return self.stage if self.layer is None else f"{self.stage}_L{self.layer:03d}"


def fingerprint_digest(fingerprint: dict[str, Any]) -> str:
    """Stable short hash of a fingerprint dict."""
    blob = json.dumps(fingerprint, sort_keys=True, default=str).encode()
    return hashlib.sha1(blob).hexdigest()[:16]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "x"


class FeatureCache:
    """Feature matrices under ``root/<group>/<split>/<category>/<stage>[_Lnnn].npy``.

    Parameters
    ----------
    root : path-like
        Cache folder (created when needed).
    group : str
        Sub-folder for one feature producer (``"mel"`` or a model tag).
    fingerprint : dict
        JSON-able description of everything the features depend on.
    """

    def __init__(self, root, group: str, fingerprint: dict[str, Any]) -> None:
        self.root = Path(root) / _safe(group)
        self.fingerprint = {"cache_version": CACHE_VERSION, **fingerprint}
        self.digest = fingerprint_digest(self.fingerprint)

    def folder(self, split: str, category: str) -> Path:
        return self.root / split / category

    def path(self, key: FeatureKey) -> Path:
        return self.folder(key.split, key.category) / f"{key.stem}.npy"

    def _meta_path(self, key: FeatureKey) -> Path:
        return self.folder(key.split, key.category) / f"{key.stem}.json"

    def has(self, key: FeatureKey, ids_digest: str) -> bool:
        """Whether a complete matrix for ``key`` and these clip ids is cached."""
        meta, path = self._meta_path(key), self.path(key)
        if not (meta.is_file() and path.is_file()):
            return False
        try:
            info = json.loads(meta.read_text())
        except (OSError, ValueError):
            return False
        return info.get("fingerprint") == self.digest and info.get("ids_sha1") == ids_digest

    def load(self, key: FeatureKey, ids_digest: str) -> np.ndarray:
        """The cached matrix (float16, memory-mapped), shape (clips, features).

        Raises
        ------
        FileNotFoundError
            If no matching matrix is cached.
        """
        if not self.has(key, ids_digest):
            raise FileNotFoundError(f"{self.path(key)}: no cached features for {key} (run the extraction)")
        return np.load(self.path(key), mmap_mode="r")

    def writer(self, keys: list[FeatureKey], n_clips: int, ids_digest: str) -> "PassWriter":
        """A :class:`PassWriter` filling ``keys`` (one split and category) in one pass."""
        return PassWriter(self, keys, n_clips, ids_digest)

    def _finish(self, key: FeatureKey, partial: Path, n: int, dim: int, ids_digest: str) -> None:
        os.replace(partial, self.path(key))
        info = {"fingerprint": self.digest, "ids_sha1": ids_digest, "clips": n, "dim": dim,
                "dtype": "float16", "key": key.__dict__, "settings": self.fingerprint}
        atomic_write_text(self._meta_path(key), json.dumps(info, indent=1, sort_keys=True, default=str))


class PassWriter:
    """Streams rows of several matrices (same clips) to disk; resumable.

    Use :attr:`start` to know the first clip still to compute, :meth:`write` for each batch
    (rows ``start``, ``start+1``, ... in order) and :meth:`close` at the end.
    """

    def __init__(self, cache: FeatureCache, keys: list[FeatureKey], n_clips: int, ids_digest: str) -> None:
        if not keys:
            raise ValueError("PassWriter needs at least one key")
        splits = {(k.split, k.category) for k in keys}
        if len(splits) != 1:
            raise ValueError(f"one pass covers one split and category, got {sorted(splits)}")
        self.cache, self.keys, self.n, self.ids_digest = cache, sorted(keys), n_clips, ids_digest
        folder = cache.folder(keys[0].split, keys[0].category)
        folder.mkdir(parents=True, exist_ok=True)
        tag = fingerprint_digest({"keys": [k.stem for k in self.keys], "fp": cache.digest, "ids": ids_digest})
        self._progress = folder / f".progress-{tag}.json"
        self._partials = {k: folder / f"{k.stem}.{tag}.partial.npy" for k in self.keys}
        self._maps: dict[FeatureKey, np.ndarray] = {}
        self.start = 0
        if self._progress.is_file():
            try:
                info = json.loads(self._progress.read_text())
                done = int(info["done"])
                maps = {k: np.load(p, mmap_mode="r+") for k, p in self._partials.items()}
                if all(m.shape[0] == n_clips for m in maps.values()) and 0 <= done <= n_clips:
                    self._maps, self.start = maps, done
            except (OSError, ValueError, KeyError):
                self._maps, self.start = {}, 0

    @property
    def position(self) -> int:
        """Next row to write."""
        return self.start

    def write(self, rows: dict[FeatureKey, np.ndarray]) -> None:
        """Append one batch: ``rows[key]`` has shape (batch, dim) for every key."""
        sizes = {len(v) for v in rows.values()}
        if set(rows) != set(self.keys) or len(sizes) != 1:
            raise ValueError("write() needs the same number of rows for every key of the pass")
        b = sizes.pop()
        if self.start + b > self.n:
            raise ValueError(f"too many rows: {self.start + b} > {self.n}")
        for key, value in rows.items():
            value = np.asarray(value)
            if key not in self._maps:
                self._maps[key] = np.lib.format.open_memmap(self._partials[key], mode="w+", dtype=np.float16,
                                                            shape=(self.n, value.shape[1]))
            m = self._maps[key]
            if value.shape[1] != m.shape[1]:
                raise ValueError(f"{key}: feature size changed from {m.shape[1]} to {value.shape[1]}")
            m[self.start:self.start + b] = value.astype(np.float16)
        for m in self._maps.values():
            m.flush()
        self.start += b
        atomic_write_text(self._progress, json.dumps({"done": self.start, "clips": self.n}))

    def close(self) -> None:
        """Move finished matrices into place (requires every clip written)."""
        if self.start != self.n:
            raise RuntimeError(f"pass stopped after {self.start} of {self.n} clips")
        for key, m in self._maps.items():
            dim = m.shape[1]
            m.flush()
            del m
            self.cache._finish(key, self._partials[key], self.n, dim, self.ids_digest)
        self._maps.clear()
        self._progress.unlink(missing_ok=True)
