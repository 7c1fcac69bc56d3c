"""docs/attributes.md "Add your own attribute", executed as written.

The files of the tutorial's package are written from the document's ``file=`` blocks and its
``sh`` block is run line by line (``bash -e``) in a temporary folder: the package is installed with
pip into a folder of that temporary directory (``--target``; the shared environment is untouched),
then rendered, published, scored by the oracle through ``vocalgrad-eval --tasks vocalgrad_ext``
and reported. No file of the repository may change.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "attributes.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.S | re.M)


def tutorial_blocks() -> tuple[dict[str, str], list[str]]:
    """The tutorial's files (path -> text) and its shell blocks, in document order."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Add your own attribute"):]
    files, shell = {}, []
    for lang, info, body in BLOCK.findall(section):
        m = re.search(r"file=(\S+)", info)
        if m:
            files[m.group(1)] = body
        elif lang == "sh":
            shell.append(body)
    return files, shell


def _git_state() -> str | None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    proc = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def test_the_tutorial_has_a_package_and_commands():
    files, shell = tutorial_blocks()
    assert set(files) == {"vocalgrad-hum/pyproject.toml", "vocalgrad-hum/vocalgrad_hum.py"}
    assert '"vocalgrad.attributes"' in files["vocalgrad-hum/pyproject.toml"]
    commands = "\n".join(shell)
    for step in ("pip install", "vocalgrad render --source demo --categories hum", "vocalgrad hub",
                 "vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad_ext", "vocalgrad report"):
        assert step in commands, step


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    work = tmp_path_factory.mktemp("tutorial")
    before = _git_state()
    files, shell = tutorial_blocks()
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text, encoding="utf-8")
    bindir = str(Path(sys.executable).parent)  # pip, vocalgrad, vocalgrad-eval of this environment
    # module-scoped: conftest's per-test answer-log isolation is not in place yet, so set it here (an
    # oracle answer logged by another run for the same clip would be replayed)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_INDEX="1", VOCALGRAD_ANSWER_LOG="none", VOCALGRAD_CACHE=str(work / "cache"))
    script = "set -e\n" + "\n".join(shell)
    proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return work, before


def test_the_plugin_is_listed_as_a_plugin(tutorial):
    work, _ = tutorial
    listed = {a["name"]: a for a in json.loads((work / "attributes.json").read_text())["attributes"]}
    assert listed["hum"]["kind"] == "plugin" and listed["hum"]["package"] == "vocalgrad-hum"
    assert listed["hum"]["set"] == "extension" and listed["hum"]["phrase"] == "mains hum"
    assert {"brightness", "formants", "pitch"} <= set(listed)


def test_the_plugin_renders_with_label_checks(tutorial):
    work, _ = tutorial
    rows = list(csv.DictReader(open(work / "hum-render" / "label_checks.csv", encoding="utf-8")))
    assert len(rows) == 48 and {r["category"] for r in rows} == {"hum"}
    right = sum((float(r["effect_measured"]) > 0) == (r["direction"] == "increase") for r in rows)
    assert right / len(rows) >= 0.99 and not any(r["label_warnings"] for r in rows)


def test_the_plugin_is_published_scored_and_reported(tutorial):
    work, _ = tutorial
    assert list((work / "hum-hub" / "hum").glob("test-*.parquet"))
    card = (work / "hum-hub" / "README.md").read_text(encoding="utf-8")
    assert "not part of the paper's benchmark" in card and "plugin (vocalgrad-hum)" in card
    res = json.loads(next((work / "hum-results").rglob("results_*.json")).read_text())["results"]
    assert res["vocalgrad_ext_hum"]["acc,none"] > 0.75  # the oracle beats chance (0.5) on the plugin
    assert "vocalgrad_ext_brightness" not in res  # the group lists what the Hub folder holds
    report = (work / "hum-report" / "report.md").read_text(encoding="utf-8")
    assert "## Extension attributes (not part of the paper's benchmark)" in report and "| hum |" in report


def test_no_repository_file_changed(tutorial):
    _, before = tutorial
    if before is None:
        pytest.skip("not a git checkout")
    assert _git_state() == before
