"""Docs that run: the commands and snippets of README.md and docs/*.md do what the text says.

Each document's ```bash``` and ```python``` blocks run **as written**, in reader order, in one fresh folder
(as a reader following the page would): a view of the checkout (links to its top-level files and folders,
so that ``tests/``, ``benchmarks/`` and ``scripts/`` are where the docs say) plus ``demo_out``, the output
of ``vocalgrad demo --out demo_out --sources 1`` shared by the session (the README says so next to its demo
command; ``conftest.demo_session`` runs it once, from the built wheel, for this test and the wheel test). Nothing is substituted or appended: no ``VOCALGRAD_DATASET`` is set (a command that should read
the demo's Hub folder says ``VOCALGRAD_DATASET=demo_out/hub`` in the text), no ``--sources``/``--limit`` is
added. What a block may not do on a test machine (network, GPU, weights, a corpus) is left out by rule or
by a marker, with the reason (``tests/_docs_blocks.py``; ``python tests/_docs_blocks.py`` lists every block
and command), and the document shows the offline form beside it. A renamed flag, sub-command or output
folder makes a block fail here.

Two shortcuts, which change no result: a ``vocalgrad render --source demo --sources 1 --out DIR`` into a
new folder starts from a copy of a finished render of the same clips (the test split: the demo's; the train
split: the first one a document or the demo's next commands made in this session), so the render only
checks and completes it (renders are deterministic and resumable); and the documents share one
``$VOCALGRAD_CACHE``, as a reader's commands share ``~/.cache/vocalgrad`` (the report's clip pictures,
cached by content, are drawn once; the answer log is off).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import _docs_blocks as db
from _demo_session import DEMO_ARGS

pytestmark = pytest.mark.slow

ROOT = db.ROOT
DOCS = [p for p in db.documents() if any(b.runner for b in db.blocks(p))]
CHECKOUT_ENTRIES = ("README.md", "pyproject.toml", "dataset_card.md", "vocalgrad.py", "generation", "harness_tasks",
                    "analysis", "vocalgrad_commands", "benchmarks", "scripts", "tests", "docs")
FENCE_LANGS = {"bash", "sh", "shell", "python", "text", "json", "bibtex", "yaml", "toml", "csv", "markdown", "console"}


def _env(sandbox: Path, demo: Path, cache: Path) -> dict:
    """The environment of a document's commands; ``cache`` is ``$VOCALGRAD_CACHE``, one for all documents
    (as a reader has one ``~/.cache/vocalgrad``: the report's clip pictures are drawn once; answers are not
    logged)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOCALGRAD_")}
    env.update(PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}", PYTHONPATH=str(ROOT),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MPLBACKEND="Agg",
               VOCALGRAD_CACHE=str(cache),
               VOCALGRAD_ANSWER_LOG="none", OMP_NUM_THREADS="1")
    return env


def _run(cmd: list[str], cwd: Path, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    """``cmd``'s run; ``timeout`` (for a free machine, scaled by its load: tests/conftest.py) only ends a hang."""
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _checkout_demo(root: Path) -> SimpleNamespace:
    runs = []
    for extra in (["--no-eval"], []):
        p = _run(["vocalgrad", *DEMO_ARGS, *extra], root, _env(root, root / "demo_out", root / "cache"))
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(p.stderr)
        if extra:
            runs.append(sorted(x.name for x in (root / "demo_out").iterdir()))
    return SimpleNamespace(out=root / "demo_out", no_eval_stderr=runs[0], no_eval_left=runs[1], stderr=runs[2])


@pytest.fixture(scope="session")
def demo_run(request) -> tuple[Path, str]:
    """The session's ``vocalgrad demo --out demo_out --sources 1`` (``conftest.demo_session``, run from the
    built wheel; first with ``--no-eval``, which must stop after the Hub folder) and what it printed.

    ``DOCS_TEST_DEMO_OUT=DIR`` reuses a finished output (while editing docs; its stderr is then empty).
    """
    if os.environ.get("DOCS_TEST_DEMO_OUT"):
        return Path(os.environ["DOCS_TEST_DEMO_OUT"]).resolve(), ""
    try:
        demo = request.getfixturevalue("demo_session")
    except pytest.skip.Exception:        # not a git checkout (no wheel to build): the checkout's own demo
        demo = _checkout_demo(request.getfixturevalue("tmp_path_factory").mktemp("docs-demo"))
    out = demo.out
    assert "hub" in demo.no_eval_left and "summary.md" not in demo.no_eval_left
    assert "results" not in demo.no_eval_left
    last = demo.no_eval_stderr.strip().splitlines()[-1]
    assert "Hub folder in" in last and "lm-eval results" not in last and "report" not in last
    assert (out / "report" / "report.md").is_file() and (out / "summary.md").is_file()
    return out, demo.stderr


@pytest.fixture(scope="session")
def demo_out(demo_run) -> Path:
    return demo_run[0]


@pytest.fixture(scope="session")
def docs_cache(tmp_path_factory) -> Path:
    """``$VOCALGRAD_CACHE`` of every document's commands."""
    return tmp_path_factory.mktemp("docs-cache")


RENDER_ONE_SOURCE = re.compile(r"vocalgrad render --source demo(?: --split (test|train))? --sources 1 "
                               r"--out (\S+?)/?(?: --split (test|train))?$")
#: Finished train-split renders of one demo source made in this session (all the same clips).
TRAIN_RENDERS: list[Path] = []


def _seed_render(cmd: str, sandbox: Path, demo: Path) -> tuple[str, Path] | None:
    """A render of one demo source into a new folder starts from a finished render of the same clips: the
    demo's (test split) or the session's first train-split render. Returns (split, folder) of such a render."""
    m = RENDER_ONE_SOURCE.match(cmd)
    if not m or (m.group(1) and m.group(3)):
        return None
    split, out = m.group(1) or m.group(3) or "test", sandbox / m.group(2)
    seed = demo / "render" if split == "test" else next(iter(TRAIN_RENDERS), None)
    if seed is not None and not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(seed, out, copy_function=os.link)
    return split, out


def _keep_train_renders(renders: list) -> None:
    """After the commands that made them succeeded: the train-split renders seed later ones."""
    TRAIN_RENDERS.extend(out for split, out in renders if split == "train")


def _sandbox(tmp_path: Path, demo: Path) -> Path:
    sandbox = tmp_path / "work"
    sandbox.mkdir()
    for name in CHECKOUT_ENTRIES:    # not the reader's own outputs (results/, hub/ ...) that a checkout may hold
        if (ROOT / name).exists():
            (sandbox / name).symlink_to(ROOT / name)
    (sandbox / "demo_out").symlink_to(demo)
    return sandbox


def _bash_script(block: db.Block, sandbox: Path, demo: Path) -> tuple[str, list[str], list]:
    """The block's script, the commands left out (with why) and its renders of one demo source."""
    lines = ["set -eo pipefail", "trap 'echo \"docs-test: failed: $BASH_COMMAND\" >&2' ERR"]
    left_out, renders = [], []
    for cmd, why in db.plan(block):
        if why:
            left_out.append(f"{cmd[:100]}  <- {why}")
            continue
        renders += [r for r in [_seed_render(cmd, sandbox, demo)] if r]
        lines.append(cmd)
    return "\n".join(lines) + "\n", left_out, renders


@pytest.mark.timeout(2400)
@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_the_commands_of_a_document_run(doc, demo_out, docs_cache, tmp_path):
    sandbox = _sandbox(tmp_path, demo_out)
    env = _env(sandbox, demo_out, docs_cache)
    ran, skipped = [], []
    printed = None  # what the last run block printed (stdout and stderr)
    for block in db.blocks(doc):
        if block.output:
            assert printed is not None, f"{block.id}: an output block without a run block before it"
            missing = db.missing_output(block, printed)
            assert not missing, f"{block.id}: the docs show lines the command did not print: {missing}\n{printed[-3000:]}"
            continue
        if not block.runner:
            printed = None
            continue
        printed = None
        if block.skip:
            skipped.append(f"{block.id}: {block.skip}")
            continue
        if block.runner == "python":
            p = subprocess.run([sys.executable, "-"], input=block.prepared(), cwd=sandbox, env=env,
                               capture_output=True, text=True, timeout=900)
        else:
            script, left_out, renders = _bash_script(block, sandbox, demo_out)
            skipped += [f"{block.id}: {x}" for x in left_out]
            if script.count("\n") <= 2:
                continue
            p = _run(["bash", "-c", script], sandbox, env)
        assert p.returncode == 0, (f"{block.id} ({block.lang}) failed:\n{block.prepared()}\n--- stderr (end):\n"
                                   f"{p.stderr[-4000:]}\n--- stdout (end):\n{p.stdout[-1500:]}")
        if block.runner == "bash":
            _keep_train_renders(renders)
        ran.append(block.id)
        printed = p.stdout + p.stderr
    if not ran:
        pytest.skip("; ".join(skipped))


@pytest.mark.timeout(900)
def test_the_demo_ends_with_next_commands_that_run(demo_run, docs_cache, tmp_path, monkeypatch):
    """The demo's last lines are the next commands, offline on its Hub folder; they run as printed."""
    from vocalgrad_commands.demo import next_commands

    demo, stderr = demo_run
    if not stderr:
        pytest.skip("DOCS_TEST_DEMO_OUT: no demo output to read")
    tail = stderr[stderr.index("Next, offline"):].splitlines()[1:]
    printed = [line.strip() for line in tail if line.strip() and not line.strip().startswith("#")]
    monkeypatch.chdir(demo.parent)      # where the demo ran: the commands name its folders relative to it
    assert printed == [cmd for _, cmd in next_commands(Path("demo_out"))]
    assert "awb_01__pitch__jump__high__increase" in printed[2]
    assert printed[0].startswith("VOCALGRAD_DATASET=demo_out/hub vocalgrad-eval") and "--limit 8" in printed[0]
    assert all("--sources" in c for c in printed if "vocalgrad render" in c)
    sandbox = _sandbox(tmp_path, demo)
    renders = [r for r in (_seed_render(cmd, sandbox, demo) for cmd in printed) if r]
    p = _run(["bash", "-c", "set -eo pipefail\n" + "\n".join(printed)], sandbox, _env(sandbox, demo, docs_cache))
    assert p.returncode == 0, p.stderr[-3000:]
    _keep_train_renders(renders)
    assert (sandbox / "report" / "report.md").is_file() and (sandbox / "clip.png").is_file()
    assert len(list((sandbox / "build-train" / "clips").rglob("*.flac"))) == 216


def test_every_demo_render_in_the_docs_has_a_size():
    """``--source demo`` without ``--sources N`` renders all 100 sources (21,600 clips, about an hour)."""
    bad = []
    for path in db.documents():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"vocalgrad render\b[^`]*--source demo\b", line) and not re.search(r"--sources \d", line):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not bad, "give these a size (--sources N):\n" + "\n".join(bad)


def test_every_fenced_block_says_what_it_is():
    """A block without a language is never run: a command block must be tagged (bash, python) to be checked."""
    untagged = [b.id for b in db.all_blocks() if not b.lang]
    assert not untagged, f"tag these blocks (```bash / ```python to run them, ```text for synopses): {untagged}"
    unknown = [f"{b.id} ({b.lang})" for b in db.all_blocks() if b.lang not in FENCE_LANGS]
    assert not unknown, f"blocks in a language the docs test does not know: {unknown}"


def test_blocks_run_as_written():
    """No marker substitutes text: what runs is what a reader copies (markers only skip, with a reason)."""
    for b in db.all_blocks():
        assert b.prepared() == b.text, b.id
    with pytest.raises(ValueError, match="run as written|runs as written"):
        db._marker(db.Block("x.md", 1, "bash", "a\n"), "replace: a => b")


def test_an_output_block_must_be_what_the_command_printed():
    """``docs-test: output`` on a text block: each of its lines is a whole line of what the command before it
    printed (spaces collapsed, durations free)."""
    shown = db.Block("x.md", 3, "text", "clips   216\n\nok: build/ (2 s)\n", output=True)
    assert db.missing_output(shown, "clips 216\nok: build/ (3.5 s)\n") == []
    assert db.missing_output(shown, "clips 215\nok: build/ (2 s)\n") == ["clips   216"]
    assert db.missing_output(shown, "vocalgrad: clips 216\nok: build/ (2 s) 1.7 MB\n") == ["clips   216",
                                                                                        "ok: build/ (2 s)"]
    with pytest.raises(ValueError, match="goes on the ```text block"):
        db._marker(db.Block("x.md", 1, "bash", "a\n"), "output")
    marked = [b for b in db.all_blocks() if b.output]
    assert marked, "no document shows a command's output under a docs-test: output marker"
    for b in marked:   # each follows a block that runs
        same_doc = [x for x in db.blocks(ROOT / b.doc) if x.line < b.line]
        assert same_doc and same_doc[-1].runner and not same_doc[-1].skip, b.id


def test_the_rules_leave_out_what_a_test_machine_cannot_do():
    b = db.Block("x.md", 1, "bash", "")
    assert db.skip_reason("vocalgrad publish hub/ --repo me/x", b) == "uploads to the Hugging Face Hub"
    assert "Qwen/Qwen2-Audio-7B-Instruct" in db.skip_reason(
        "vocalgrad-eval --model vocalgrad-hf --model_args pretrained=Qwen/Qwen2-Audio-7B-Instruct", b)
    assert "HUB" in db.skip_reason("vocalgrad finetune --data HUB --category volume", b)
    assert db.skip_reason("vocalgrad render --source vctk:/data/VCTK --out b/", b).startswith("needs /data/VCTK")
    assert db.skip_reason("VOCALGRAD_DATASET=hub/ vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad", b) is None
    assert "Hub dataset" in db.skip_reason("vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad --limit 2", b)
    assert db.skip_reason("vocalgrad finetune --model tiny --data $HUB --out runs/a", b) is None
    assert db.commands("a \\\n  --b c  # note\nd && e\n") == ["a --b c", "d", "e"]


def test_only_a_render_of_the_same_clips_is_seeded(tmp_path, monkeypatch):
    """The render shortcut: one demo source, test split from the demo's render, train split from the session's
    first finished train render; anything else (another size, split, rate, category set) renders in full."""
    demo = tmp_path / "demo"
    (demo / "render").mkdir(parents=True)
    (demo / "render" / "a.flac").write_bytes(b"test")
    sandbox = tmp_path / "work"
    monkeypatch.setattr(sys.modules[__name__], "TRAIN_RENDERS", [])
    for cmd in ("vocalgrad render --source demo --sources 2 --out b/", "vocalgrad render --source demo --split beep "
                "--sources 1 --out b/", "vocalgrad render --source demo --split test --sources 1 --out b/ --split test",
                "vocalgrad render --source demo --sources 1 --out b/ --sample-rate 16000",
                "vocalgrad render --source tones --sources 1 --out b/"):
        assert _seed_render(cmd, sandbox, demo) is None, cmd
    assert not sandbox.exists()
    assert _seed_render("vocalgrad render --source demo --sources 1 --out t1/", sandbox, demo) == ("test", sandbox / "t1")
    assert (sandbox / "t1" / "a.flac").read_bytes() == b"test"
    assert _seed_render("vocalgrad render --source demo --sources 1 --out tr/ --split train", sandbox, demo) == \
        ("train", sandbox / "tr")
    assert not (sandbox / "tr").exists()                       # no train render yet: this one renders in full
    (sandbox / "tr").mkdir()
    (sandbox / "tr" / "b.flac").write_bytes(b"train")
    _keep_train_renders([("test", sandbox / "t1"), ("train", sandbox / "tr")])
    assert _seed_render("vocalgrad render --source demo --split train --sources 1 --out x/tr2", sandbox, demo) == \
        ("train", sandbox / "x" / "tr2")
    assert [p.name for p in (sandbox / "x" / "tr2").iterdir()] == ["b.flac"]
