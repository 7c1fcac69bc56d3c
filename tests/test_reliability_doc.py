"""docs/reliability.md lists the faults that were tried and what each gives; the tests named there try them.

Two directions: every test the page names exists, and every test of the fault modules
(``tests/test_faults_*.py``) is named on the page, so the list and the suite cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reliability.md"
REF = re.compile(r"`(test_\w+\.py)::(test_\w+)`")


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


def _references() -> list[tuple[str, str]]:
    return REF.findall(PAGE.read_text(encoding="utf-8"))


def test_every_test_the_page_names_exists():
    refs = _references()
    assert len(refs) >= 40, f"{PAGE.name} names only {len(refs)} tests"
    missing = [f"{f}::{t}" for f, t in refs
               if not (ROOT / "tests" / f).is_file() or t not in _test_functions(ROOT / "tests" / f)]
    assert not missing, f"{PAGE.name} names tests that do not exist: {missing}"


def test_every_fault_test_is_on_the_page():
    named = set(_references())
    fault_modules = sorted((ROOT / "tests").glob("test_faults_*.py"))
    assert fault_modules
    unlisted = [f"{m.name}::{t}" for m in fault_modules for t in sorted(_test_functions(m)) if (m.name, t) not in named]
    assert not unlisted, f"fault tests missing from {PAGE.name}: {unlisted}"
