"""Locked environments of the worker routes (one requirements file per route, in this folder).

Each ``<route>.txt`` is a pip requirements file in which **every** line is an exact pin (the
whole resolved set, dependencies included), preceded by a header of ``# key: value`` comment
lines that say what else the environment needs:

``route``      the route's name (the file's stem)
``python``     the Python minor version the pins were resolved for (``3.10``)
``upstream``   ``URL COMMIT`` of the authors' repository the worker imports (cloned at that commit,
               with its submodules), or ``this checkout`` for :mod:`..transformers_worker`
``after``      requirements installed after the lock without build isolation (flash-attn builds
               against the locked torch); may be absent
``direct``     the requirements the lock was resolved from (pip's resolver, ``--dry-run --report``)
``worker``     the command line that runs the worker in the made environment

``scripts/worker_env.sh ROUTE DIR`` makes the environment; ``tests/test_worker_envs.py`` checks that
the pins resolve together against the registry (pip's resolver in dry-run) and that the ``after``
versions exist there. docs/models.md has the table of routes.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass

__all__ = ["ENV_DIR", "PLATFORMS", "ROUTES", "Recipe", "dry_run_args", "read", "same_python"]

#: The folder of the environment files.
ENV_DIR = os.path.dirname(os.path.abspath(__file__))
#: Routes that have an environment file, in the order of docs/models.md.
ROUTES = ("kimi_audio", "mimo_audio", "step_audio2", "transformers_worker")
#: Linux x86-64 wheel tags the locks are resolved for (the GPU machines the routes run on).
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64")


@dataclass(frozen=True)
class Recipe:
    """One route's environment file, read.

    Attributes
    ----------
    route, path : str
        Route name and the file.
    python : str
        Python minor version (``"3.10"``).
    upstream : str
        ``URL COMMIT`` of the authors' repository, or ``this checkout``.
    pins : dict
        Normalised package name -> exact version, every requirement line of the file.
    after : tuple of str
        Requirements installed after the lock without build isolation (flash-attn).
    direct : tuple of str
        The requirements the lock was resolved from.
    worker : str
        How the worker is started in the environment.
    sha256 : str
        Digest of the file's bytes (recorded in results files beside the route).
    """

    route: str
    path: str
    python: str
    upstream: str
    pins: dict
    after: tuple
    direct: tuple
    worker: str
    sha256: str

    @property
    def upstream_commit(self) -> str | None:
        """The commit of the upstream repository (None for ``this checkout``)."""
        parts = self.upstream.split()
        return parts[1] if len(parts) == 2 and parts[0].startswith("https://") else None


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def read(route: str) -> Recipe:
    """The environment file of ``route`` (one of :data:`ROUTES`).

    Raises
    ------
    ValueError
        An unknown route, a header field missing, or a requirement line that is not ``name==version``.
    """
    if route not in ROUTES:
        raise ValueError(f"no worker environment {route!r}; routes: {', '.join(ROUTES)}")
    path = os.path.join(ENV_DIR, f"{route}.txt")
    raw = open(path, "rb").read()
    header: dict[str, str] = {}
    pins: dict[str, str] = {}
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition(": ")
            if sep and key.isidentifier():
                header[key] = value.strip()
            continue
        name, sep, version = line.partition("==")
        if not sep or not version or any(c in version for c in "<>=!~*,; "):
            raise ValueError(f"{path}:{n}: {line!r} is not an exact pin (name==version)")
        pins[_norm(name)] = version
    missing = [k for k in ("route", "python", "upstream", "direct", "worker") if k not in header]
    if missing or header.get("route") != route:
        raise ValueError(f"{path}: header needs '# route: {route}' and # {', # '.join(missing) or 'route'} lines")
    split = lambda v: tuple(w for w in (v or "").split() if w)   # noqa: E731
    return Recipe(route=route, path=path, python=header["python"], upstream=header["upstream"], pins=pins,
                  after=split(header.get("after")), direct=split(header["direct"]), worker=header["worker"],
                  sha256=hashlib.sha256(raw).hexdigest())


def same_python(recipe: Recipe) -> bool:
    """Whether the running interpreter is the recipe's Python version."""
    return recipe.python == f"{sys.version_info[0]}.{sys.version_info[1]}"


def dry_run_args(recipe: Recipe, *, report: str, target: str) -> list[str]:
    """pip arguments that resolve the lock without installing anything (``pip install --dry-run
    --ignore-installed --report``). Under the recipe's own Python version, for this interpreter;
    under another one, for that version and Linux x86-64 wheels (pip then wants ``--target`` and
    wheels only, so a lock holding a package published only as source needs its own Python)."""
    args = ["install", "--dry-run", "--ignore-installed", "--quiet", "--report", report]
    if not same_python(recipe):
        args += ["--target", target, "--python-version", recipe.python, "--implementation", "cp",
                 "--only-binary=:all:"]
        for tag in PLATFORMS:
            args += ["--platform", tag]
    return args + ["-r", recipe.path]
