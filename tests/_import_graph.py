"""The toolkit's import graph, read from the source (docs/code-layout.md, "Layers").

An edge ``a -> b`` is any way module ``a`` can make ``b`` load:

- an ``import`` / ``from ... import`` statement anywhere in ``a``: at the top, inside a function or a class,
  under ``if TYPE_CHECKING:`` (an annotation-only import is still a dependency of the design);
- a string constant of ``a`` that is exactly a toolkit module's dotted name (``"analysis.report"``) or an
  entry-point style ``"module:attribute"`` target: the lists of modules loaded by name
  (``importlib.import_module(name)``), such as a command list or the shipped extension set.

Plain words (``"vocalgrad"`` is also the command's name) are not module names here: a string counts only
when it has a dot or a colon.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The layers, lowest first: a module may import its own layer and the ones before it, never a later one.
LAYERS = ("vocalgrad", "generation", "harness_tasks", "analysis", "vocalgrad_commands")


def layer_of(module: str) -> int:
    """Index in :data:`LAYERS` of a toolkit module (its top-level name)."""
    return LAYERS.index(module.split(".")[0])


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every toolkit module, dotted name -> file: ``vocalgrad`` and each module of the packages."""
    out = {"vocalgrad": root / "vocalgrad.py"}
    for pkg in LAYERS[1:]:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if all(p.isidentifier() for p in parts):
                out[".".join(parts)] = path
    return out


def _resolve(dotted: str, modules) -> str | None:
    """The toolkit module a dotted name belongs to (``a.b.func`` -> ``a.b``), or None."""
    while dotted and dotted not in modules:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def module_imports(name: str, source: str, modules, *, is_package: bool = False) -> set[str]:
    """Toolkit modules that module ``name`` (whose text is ``source``) imports, by statement or by name."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str | None] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(_resolve(a.name, modules) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.add(sub if sub in modules else _resolve(base, modules))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                "." in node.value or ":" in node.value):
            target = node.value.split(":")[0] if node.value.count(":") == 1 else node.value
            if target in modules:
                out.add(target)
    out.discard(None)
    out.discard(name)
    return out  # type: ignore[return-value]


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the toolkit modules it imports, for every toolkit module under ``root``."""
    files = module_files(root)
    return {name: module_imports(name, path.read_text(encoding="utf-8"), files,
                                 is_package=path.name == "__init__.py")
            for name, path in files.items()}


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for each import of a later layer, sorted."""
    return sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps if layer_of(b) > layer_of(a))


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other at some depth (strongly connected, more than one), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):  # iterative Tarjan: deep graphs need no recursion limit
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return sorted(groups)


def cycle_path(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """One concrete loop through a cycle group, ``[a, b, ..., a]`` (for the failure message)."""
    members = set(group)
    start = group[0]
    prev = {start: None}
    todo = [start]
    while todo:  # breadth first from start back to start, inside the group
        v = todo.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if w not in prev:
                prev[w] = v
                todo.append(w)
    return group
