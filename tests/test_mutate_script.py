"""scripts/mutate.sh (docs/testing.md): its module -> tests map names files that exist, and it says how
to call it. The mutation runs themselves are not part of the test command (minutes per module)."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_listed_module_and_test_file_exists():
    rows = [line.split() for line in (ROOT / "scripts" / "mutate_targets.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(rows) >= 14
    missing = [f for row in rows for f in row if not (ROOT / f.split("::")[0]).is_file()]
    assert not missing, f"scripts/mutate_targets.txt names files that do not exist: {missing}"
    assert all(len(row) >= 2 and row[0].endswith(".py") and all(f.startswith("tests/") for f in row[1:])
               for row in rows)
    # every module docs/testing.md counts is listed
    listed = {row[0] for row in rows}
    assert {"harness_tasks/parsing.py", "generation/ownership.py", "generation/verify.py",
            "analysis/leaderboard/runs.py", "harness_tasks/models/chat.py"} <= listed


def test_without_a_module_it_prints_how_to_call_it():
    p = subprocess.run(["bash", str(ROOT / "scripts" / "mutate.sh")], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "scripts/mutate.sh MODULE..." in p.stderr and "MUTATE_SAMPLE" in p.stderr


def test_mutants_in_annotations_are_found_only_where_annotations_are_never_evaluated():
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from mutate_annotations import annotation_spans, inside

    src = ("from __future__ import annotations\n"
           "x: int | None = None\n"
           "def f(a: str | None, b=1 | 2) -> list[int] | None:\n"
           "    return a | b\n")
    spans = annotation_spans(src)
    assert inside((2, 3), (2, 13), spans)            # `int | None` of the variable
    assert inside((3, 9), (3, 19), spans)            # `str | None` of an argument
    assert inside((3, 33), (3, 49), spans)           # the return annotation
    assert not inside((3, 23), (3, 28), spans)       # `1 | 2`: a default, evaluated
    assert not inside((4, 11), (4, 16), spans)       # `a | b` in the body
    assert annotation_spans(src.split("\n", 1)[1]) == []  # without the future import annotations are evaluated
