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
