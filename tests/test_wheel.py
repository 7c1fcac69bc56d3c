"""The built wheel carries everything a command needs, and the demo runs from it outside the checkout.

The wheel is built from a copy of the tracked files (a stale ``build/`` folder of the checkout could
otherwise slip deleted files into it), installed without dependencies into a fresh virtual environment
outside the checkout, and that environment sees the outer environment's third-party packages through a
``.pth`` line. Paths added by a ``.pth`` line are not searched for ``.pth`` files, so the outer editable
install of vocalgrad (``__editable__*.pth``) stays inactive; its metadata is still on the path, so the
tests check that ``vocalgrad``, ``generation`` and ``importlib.metadata`` all resolve to the wheel's copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("generation", "harness_tasks", "analysis")


def _tracked_files() -> list[str]:
    """The checkout's tracked files (relative paths), or None outside a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the wheel test builds from the tracked files")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and (ROOT / p).exists()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for rel in _tracked_files():
        dst = src / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / rel).is_symlink():
            dst.symlink_to(os.readlink(ROOT / rel))
        else:
            shutil.copy2(ROOT / rel, dst)
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (whl,) = out.glob("vocalgrad-*.whl")
    return whl


def test_the_wheel_carries_every_file_of_the_packages_and_the_card_template(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = [p for p in _tracked_files() if p.split("/")[0] in PACKAGES or p == "vocalgrad.py"]
    missing = sorted(p for p in tracked if p not in names)
    assert not missing, f"files of the packages that the wheel lacks (pyproject package-data): {missing}"
    # The card template travels as generation/dataset_card.md; its one source is the top-level file.
    card = zipfile.ZipFile(wheel).read("generation/dataset_card.md").decode()
    assert card == (ROOT / "dataset_card.md").read_text()
    assert "{{repo_id}}" in card
    assert not any(n.startswith(("tests/", "docs/", "benchmarks/", "scripts/")) for n in names)


def _venv_with_the_wheel(wheel: Path, root: Path) -> Path:
    """A fresh venv with only the wheel installed; the outer third-party packages visible by one .pth."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    inner = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(inner) / "outer_environment.pth").write_text("".join(f"{p}\n" for p in sorted(outer)))
    return venv


def _clean_env(venv: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HOME=str(home), VOCALGRAD_CACHE=str(home / "cache"))
    return env


WHERE = """
import importlib.metadata as md, json, vocalgrad, generation, harness_tasks, analysis, generation.hub as hub
d = md.distribution("vocalgrad")
print(json.dumps({"vocalgrad": vocalgrad.__file__, "generation": generation.__file__,
                  "harness_tasks": harness_tasks.__file__, "analysis": analysis.__file__,
                  "card": str(hub.CARD_TEMPLATE), "dist": str(d.locate_file("")),
                  "files": [str(f) for f in d.files if f.name == "dataset_card.md"]}))
"""


def test_installed_wheel_runs_the_demo_outside_the_checkout(wheel, tmp_path):
    venv = _venv_with_the_wheel(wheel, tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = _clean_env(venv, tmp_path)
    where = subprocess.run([str(venv / "bin" / "python"), "-c", WHERE], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
    assert where.returncode == 0, where.stderr
    found = json.loads(where.stdout)
    for key in ("vocalgrad", "generation", "harness_tasks", "analysis", "card", "dist"):
        assert Path(found[key]).resolve().is_relative_to(venv.resolve()), (key, found[key])
        assert not Path(found[key]).resolve().is_relative_to(ROOT), (key, found[key])
    assert found["files"] == ["generation/dataset_card.md"]

    demo = subprocess.run([str(venv / "bin" / "vocalgrad"), "demo", "--out", "demo_out", "--sources", "1",
                           "--jobs", "2"], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-4000:]
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
