"""The built wheel carries everything a command needs, and the demo runs from it outside the checkout.

How the wheel is built and installed, and the session's one demo run from it: ``tests/_demo_session.py``
(the docs test reads the same demo output).
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from _demo_session import ROOT, clean_env, tracked_files

pytestmark = pytest.mark.slow

PACKAGES = ("generation", "harness_tasks", "analysis", "vocalgrad_commands")


def test_the_wheel_carries_every_file_of_the_packages_and_the_card_template(demo_session):
    wheel = demo_session.wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = [p for p in tracked_files() if p.split("/")[0] in PACKAGES or p == "vocalgrad.py"]
    missing = sorted(p for p in tracked if p not in names)
    assert not missing, f"files of the packages that the wheel lacks (pyproject package-data): {missing}"
    # The card template travels as generation/dataset_card.md; its one source is the top-level file.
    card = zipfile.ZipFile(wheel).read("generation/dataset_card.md").decode()
    assert card == (ROOT / "dataset_card.md").read_text()
    assert "{{repo_id}}" in card
    assert not any(n.startswith(("tests/", "docs/", "benchmarks/", "scripts/")) for n in names)


WHERE = """
import importlib.metadata as md, json, vocalgrad, generation, harness_tasks, analysis, vocalgrad_commands
import generation.hub as hub
d = md.distribution("vocalgrad")
print(json.dumps({"vocalgrad": vocalgrad.__file__, "generation": generation.__file__,
                  "harness_tasks": harness_tasks.__file__, "analysis": analysis.__file__,
                  "vocalgrad_commands": vocalgrad_commands.__file__,
                  "card": str(hub.CARD_TEMPLATE), "dist": str(d.locate_file("")),
                  "files": [str(f) for f in d.files if f.name == "dataset_card.md"]}))
"""


def test_installed_wheel_runs_the_demo_outside_the_checkout(demo_session):
    venv, work = demo_session.venv, demo_session.work
    env = clean_env(venv, demo_session.home)
    where = subprocess.run([str(venv / "bin" / "python"), "-c", WHERE], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
    assert where.returncode == 0, where.stderr
    found = json.loads(where.stdout)
    for key in ("vocalgrad", "generation", "harness_tasks", "analysis", "vocalgrad_commands", "card", "dist"):
        assert Path(found[key]).resolve().is_relative_to(venv.resolve()), (key, found[key])
        assert not Path(found[key]).resolve().is_relative_to(ROOT), (key, found[key])
    assert found["files"] == ["generation/dataset_card.md"]

    # `vocalgrad demo --out demo_out --sources 1` ran with the venv's `vocalgrad` (conftest.demo_session)
    out = work / "demo_out"
    card = (out / "hub" / "README.md").read_text()
    assert card.startswith("---\n") and "# VocalGrad" in card and "{{" not in card
    report = json.loads((out / "report" / "report.json").read_text())
    assert sorted(m["label"] for m in report["models"]) == ["always-increase", "chance", "oracle"]
    assert (out / "report" / "report.md").is_file() and any((out / "report" / "plots").glob("*.png"))
    assert "oracle" in (out / "summary.md").read_text()
    # The evaluation ran the venv's harness_tasks (the demo starts it with the venv's python).
    (results,) = (out / "results" / "oracle").rglob("results_*.json")
    assert json.loads(results.read_text())["results"]["vocalgrad_pitch"]["acc,none"] >= 0.5
