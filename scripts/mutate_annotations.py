"""Where a module's annotations are, for ``scripts/mutate.sh``: a mutant inside one is left out.

Under ``from __future__ import annotations`` an annotation is a string that nothing evaluates, so a
mutant that only changes one (``str | None`` to ``str & None``) cannot be told from the original: it is
an equivalent mutant by construction, and counting it would lower a module's share for nothing.
"""

from __future__ import annotations

import ast

Position = tuple[int, int]  # (line from 1, column from 0), as cosmic-ray reports a mutation's place


def annotation_spans(source: str) -> list[tuple[Position, Position]]:
    """The (start, end) of every argument, return and variable annotation of ``source``; none when the
    module does not have ``from __future__ import annotations`` (its annotations are evaluated)."""
    tree = ast.parse(source)
    future = any(isinstance(s, ast.ImportFrom) and s.module == "__future__" and
                 any(a.name == "annotations" for a in s.names) for s in tree.body)
    if not future:
        return []
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.arg, ast.AnnAssign)):
            found = [node.annotation]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = [node.returns]
        else:
            continue
        spans += [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in found if a is not None]
    return spans


def inside(start: Position, end: Position, spans) -> bool:
    """Whether the source range ``start``..``end`` lies within one of ``spans``."""
    return any(a <= tuple(start) and tuple(end) <= b for a, b in spans)
