"""One ``vocalgrad demo --out demo_out --sources 1`` for the whole test session, run from the built wheel.

The wheel test (the demo runs from an installed wheel outside the checkout) and the docs test (the
documents' commands run after the README's demo) both need a finished demo; the demo is the dearest
step of either (render, Hub folder, three lm-eval runs, report and page), so the session runs it once
(``conftest.demo_session``) and both read it. Renders are deterministic, so the output is the one the
checkout's ``vocalgrad demo`` writes.

The wheel is built from a copy of the tracked files (a stale ``build/`` folder of the checkout could
otherwise slip deleted files into it), installed without dependencies into a fresh virtual environment
outside the checkout, and that environment sees the outer environment's third-party packages through a
``.pth`` line. Paths added by a ``.pth`` line are not searched for ``.pth`` files, so the outer editable
install of vocalgrad (``__editable__*.pth``) stays inactive; its metadata is still on the path, so the
wheel test checks that ``vocalgrad``, ``generation`` and ``importlib.metadata`` all resolve to the wheel's copy.

Under pytest-xdist (``-n N``) the workers share one demo: the first to need it builds it under a file lock
in the session's shared temporary folder and leaves a record there; the others read the record
(:func:`shared_demo_session`). The demo is read-only for the tests: :func:`tree_state` taken after the
build and again at the end of each worker's session must agree (``conftest.demo_session``), so a test
that writes into the shared demo fails instead of passing on whatever the other worker left there.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The demo command of the README, at its small size (the README says the docs test runs this).
DEMO_ARGS = ["demo", "--out", "demo_out", "--sources", "1"]


@dataclass
class DemoSession:
    wheel: Path
    venv: Path
    home: Path         # HOME and cache of the wheel's environment
    work: Path         # the folder the demo ran in (outside the checkout)
    no_eval_stderr: str
    no_eval_left: list  # the entries of demo_out after the --no-eval run
    stderr: str        # of the full run: its last lines are the next commands

    @property
    def out(self) -> Path:
        return self.work / "demo_out"

    def to_json(self) -> str:
        return json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in vars(self).items()})

    @classmethod
    def from_json(cls, text: str) -> "DemoSession":
        d = json.loads(text)
        return cls(**{k: Path(d[k]) if k in ("wheel", "venv", "home", "work") else d[k] for k in d})


def tracked_files() -> list[str]:
    """The checkout's tracked files (relative paths); skips outside a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the wheel test builds from the tracked files")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and (ROOT / p).exists()]


def build_wheel(src: Path, out: Path) -> Path:
    for rel in tracked_files():
        dst = src / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / rel).is_symlink():
            dst.symlink_to(os.readlink(ROOT / rel))
        else:
            shutil.copy2(ROOT / rel, dst)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (whl,) = out.glob("vocalgrad-*.whl")
    return whl


def venv_with_the_wheel(wheel: Path, root: Path) -> Path:
    """A fresh venv with only the wheel installed; the outer third-party packages visible by one .pth."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    # without PYTHONPATH: a checkout on it (its vocalgrad.egg-info) would make pip see the toolkit as installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (venv / "bin" / "vocalgrad").is_file(), f"pip did not install the wheel's commands: {proc.stdout}{proc.stderr}"
    inner = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(inner) / "outer_environment.pth").write_text("".join(f"{p}\n" for p in sorted(outer)))
    return venv


def clean_env(venv: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith("VOCALGRAD_")}
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HOME=str(home), VOCALGRAD_CACHE=str(home / "cache"),
               VOCALGRAD_ANSWER_LOG="none", MPLBACKEND="Agg")
    return env


def run_demo_session(tmp_path_factory) -> DemoSession:
    """Build and install the wheel, then ``vocalgrad demo ... --no-eval`` and the full demo from it."""
    wheel = build_wheel(tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist"))
    root = tmp_path_factory.mktemp("wheel-demo")
    venv = venv_with_the_wheel(wheel, root)
    work = root / "elsewhere"
    work.mkdir()
    env = clean_env(venv, root)
    runs = []
    for extra in (["--no-eval"], []):
        p = subprocess.run([str(venv / "bin" / "vocalgrad"), *DEMO_ARGS, *extra], cwd=work, env=env,
                           capture_output=True, text=True, timeout=1800)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
        runs.append(p.stderr)
        if extra:
            runs.append(sorted(x.name for x in (work / "demo_out").iterdir()))
    return DemoSession(wheel, venv, root, work, *runs)


def shared_demo_session(tmp_path_factory) -> DemoSession:
    """:func:`run_demo_session` once per test session, also when pytest-xdist runs several workers.

    Each xdist worker has its own temporary folder (``.../pytest-N/popen-gwK``); their parent is the
    session's. The first worker to get the lock there builds the demo and writes its record (temporary
    name, then rename); a worker that finds the record reads it. A failed build leaves no record, so the
    next worker tries (and fails) on its own.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return run_demo_session(tmp_path_factory)
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent
    record = shared / "demo-session.json"
    with FileLock(str(shared / "demo-session.lock")):
        if record.is_file():
            return DemoSession.from_json(record.read_text())
        demo = run_demo_session(tmp_path_factory)
        part = record.with_name(record.name + ".part")
        part.write_text(demo.to_json())
        part.replace(record)
        return demo


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    """``{relative path: (size, mtime_ns)}`` of every file and link under ``root`` (links not followed)."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            st = os.lstat(os.path.join(dirpath, name))
            state[os.path.relpath(os.path.join(dirpath, name), root)] = (st.st_size, st.st_mtime_ns)
    return state


def changed_entries(before: dict, after: dict) -> list[str]:
    """The paths added, removed or rewritten between two :func:`tree_state` results."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


@contextlib.contextmanager
def unchanged(root: Path):
    """Fails (``pytest.fail``) on leaving when anything under ``root`` was added, removed or rewritten."""
    before = tree_state(root)
    yield
    changed = changed_entries(before, tree_state(root))
    if changed:
        pytest.fail(f"a test wrote into the session's shared demo ({root}): {changed[:10]}; the demo is "
                    "read-only (other tests and xdist workers read it): copy what you change into tmp_path",
                    pytrace=False)
