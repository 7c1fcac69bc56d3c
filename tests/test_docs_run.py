"""Docs that run: the commands and snippets of README.md and docs/*.md do what the text says.

Each document's ```bash``` and ```python``` blocks run in order in one fresh folder (as a reader
following the page would): a view of the checkout (links to its top-level files and folders, so that
``tests/``, ``benchmarks/`` and ``scripts/`` are where the docs say) plus ``demo_out``, one
``vocalgrad demo --sources 1`` output shared by the session. What a block may not do on a test machine is left out by rule or by a marker, with the reason
(``tests/_docs_blocks.py``; ``python tests/_docs_blocks.py`` lists every block and command). A renamed
flag, sub-command or output folder makes a block fail here.

To stay small: the Hub dataset (``VOCALGRAD_DATASET``) is the demo's Hub folder unless a command names
its own; ``vocalgrad render`` and ``vocalgrad demo`` get ``--sources 1`` when they name no count;
``vocalgrad-eval`` gets ``--limit 8`` when it has no ``--limit``; and a test-split render of the demo
voices into a new folder starts from a copy of the demo's render, so it only checks and completes it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import _docs_blocks as db

pytestmark = pytest.mark.slow

ROOT = db.ROOT
DOCS = [p for p in db.documents() if any(b.runner for b in db.blocks(p))]
CHECKOUT_ENTRIES = ("README.md", "pyproject.toml", "dataset_card.md", "vocalgrad.py", "generation", "harness_tasks",
                    "analysis", "benchmarks", "scripts", "tests", "docs")
FENCE_LANGS = {"bash", "sh", "shell", "python", "text", "json", "bibtex", "yaml", "toml", "csv", "markdown", "console"}


def _env(sandbox: Path, demo: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOCALGRAD_")}
    env.update(PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}", PYTHONPATH=str(ROOT),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MPLBACKEND="Agg",
               VOCALGRAD_DATASET=str(demo / "hub"), VOCALGRAD_CACHE=str(sandbox.parent / "cache"),
               VOCALGRAD_ANSWER_LOG="none", OMP_NUM_THREADS="1")
    return env


def _run(cmd: list[str], cwd: Path, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory) -> Path:
    """``vocalgrad demo --sources 1``; first with ``--no-eval``, which must stop after the Hub folder.

    ``DOCS_TEST_DEMO_OUT=DIR`` reuses a finished ``vocalgrad demo --sources 1`` output (while editing docs).
    """
    if os.environ.get("DOCS_TEST_DEMO_OUT"):
        return Path(os.environ["DOCS_TEST_DEMO_OUT"]).resolve()
    root = tmp_path_factory.mktemp("docs-demo")
    out = root / "demo_out"
    env = _env(root, out)
    p = _run(["vocalgrad", "demo", "--out", str(out), "--sources", "1", "--no-eval"], root, env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (out / "hub" / "README.md").is_file()
    assert not (out / "summary.md").exists() and not (out / "results").exists()
    last = p.stderr.strip().splitlines()[-1]
    assert "Hub folder in" in last and "lm-eval results" not in last and "report" not in last
    p = _run(["vocalgrad", "demo", "--out", str(out), "--sources", "1"], root, env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (out / "report" / "report.md").is_file() and (out / "summary.md").is_file()
    return out


def _shrink(cmd: str) -> str:
    if re.match(r"(\S+=\S+\s+)*vocalgrad (render|demo)\b", cmd) and not re.search(r"--sources\b|--full\b", cmd):
        cmd += " --sources 1"
    if re.match(r"(\S+=\S+\s+)*vocalgrad-eval\b", cmd) and "--tasks" in cmd and "--limit" not in cmd:
        cmd += " --limit 8"
    return cmd


def _seed_render(cmd: str, sandbox: Path, demo: Path) -> None:
    """A test-split render of the demo voices into a new folder starts from the demo's render."""
    m = re.match(r"vocalgrad render --source demo(?: --split test)? --out (\S+?)/?(?: --sources 1)?$", cmd)
    if m and not (sandbox / m.group(1)).exists():
        (sandbox / m.group(1)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(demo / "render", sandbox / m.group(1), copy_function=os.link)


def _bash_script(block: db.Block, sandbox: Path, demo: Path) -> tuple[str, list[str]]:
    lines = ["set -eo pipefail", "trap 'echo \"docs-test: failed: $BASH_COMMAND\" >&2' ERR"]
    left_out = []
    for cmd, why in db.plan(block):
        if why:
            left_out.append(f"{cmd[:100]}  <- {why}")
            continue
        cmd = _shrink(cmd)
        _seed_render(cmd, sandbox, demo)
        lines.append(cmd)
    return "\n".join(lines) + "\n", left_out


@pytest.mark.timeout(2400)
@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_the_commands_of_a_document_run(doc, demo_out, tmp_path):
    sandbox = tmp_path / "work"
    sandbox.mkdir()
    for name in CHECKOUT_ENTRIES:    # not the reader's own outputs (results/, hub/ ...) that a checkout may hold
        if (ROOT / name).exists():
            (sandbox / name).symlink_to(ROOT / name)
    (sandbox / "demo_out").symlink_to(demo_out)
    env = _env(sandbox, demo_out)
    ran, skipped = [], []
    for block in db.blocks(doc):
        if not block.runner:
            continue
        if block.skip:
            skipped.append(f"{block.id}: {block.skip}")
            continue
        if block.runner == "python":
            p = subprocess.run([sys.executable, "-"], input=block.prepared(), cwd=sandbox, env=env,
                               capture_output=True, text=True, timeout=900)
        else:
            script, left_out = _bash_script(block, sandbox, demo_out)
            skipped += [f"{block.id}: {x}" for x in left_out]
            if script.count("\n") <= 2:
                continue
            p = _run(["bash", "-c", script], sandbox, env)
        assert p.returncode == 0, (f"{block.id} ({block.lang}) failed:\n{block.prepared()}\n--- stderr (end):\n"
                                   f"{p.stderr[-4000:]}\n--- stdout (end):\n{p.stdout[-1500:]}")
        ran.append(block.id)
    if not ran:
        pytest.skip("; ".join(skipped))


def test_every_fenced_block_says_what_it_is():
    """A block without a language is never run: a command block must be tagged (bash, python) to be checked."""
    untagged = [b.id for b in db.all_blocks() if not b.lang]
    assert not untagged, f"tag these blocks (```bash / ```python to run them, ```text for synopses): {untagged}"
    unknown = [f"{b.id} ({b.lang})" for b in db.all_blocks() if b.lang not in FENCE_LANGS]
    assert not unknown, f"blocks in a language the docs test does not know: {unknown}"


def test_markers_match_their_blocks():
    for b in db.all_blocks():
        b.prepared()          # a replace marker whose text the block lacks raises, naming the block


def test_the_rules_leave_out_what_a_test_machine_cannot_do():
    b = db.Block("x.md", 1, "bash", "")
    assert db.skip_reason("vocalgrad publish hub/ --repo me/x", b) == "uploads to the Hugging Face Hub"
    assert "Qwen/Qwen2-Audio-7B-Instruct" in db.skip_reason(
        "vocalgrad-eval --model vocalgrad-hf --model_args pretrained=Qwen/Qwen2-Audio-7B-Instruct", b)
    assert "HUB" in db.skip_reason("vocalgrad finetune --data HUB --category volume", b)
    assert db.skip_reason("vocalgrad render --source vctk:/data/VCTK --out b/", b).startswith("needs /data/VCTK")
    assert db.skip_reason("VOCALGRAD_DATASET=hub/ vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad", b) is None
    assert db.skip_reason("vocalgrad finetune --model tiny --data $HUB --out runs/a", b) is None
    assert db.commands("a \\\n  --b c  # note\nd && e\n") == ["a --b c", "d", "e"]
