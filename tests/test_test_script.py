"""scripts/test.sh (the README's test command) installs the system packages it can, or names them in one line."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("libavutil57 libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 libswresample4 "
            "libsndfile1 chromium chromium-driver")


def _fake_bin(tmp_path, uid):
    """dpkg-query / apt-get / id stand-ins: nothing installed until the fake apt-get 'installs' it."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    state = tmp_path / "installed"
    state.write_text("")
    (bin_ / "dpkg-query").write_text(
        f'#!/bin/bash\npkg="${{@: -1}}"\ngrep -qx "$pkg" {state} && echo "install ok installed" && exit 0\nexit 1\n')
    (bin_ / "apt-get").write_text(
        f'#!/bin/bash\necho "apt-get $*" >> {tmp_path}/apt.log\n'
        f'[ "$1" = install ] && for a in "$@"; do case "$a" in -*|install) ;; *) echo "$a" >> {state};; esac; done\n'
        'exit 0\n')
    (bin_ / "id").write_text(f"#!/bin/bash\necho {uid}\n")
    for f in bin_.iterdir():
        f.chmod(0o755)
    return bin_


def _run(tmp_path, uid):
    env = dict(os.environ, PATH=f"{_fake_bin(tmp_path, uid)}:{os.environ['PATH']}", VOCALGRAD_SKIP_PIP="1",
               PYTHONPATH=str(ROOT))
    env.pop("VOCALGRAD_SKIP_APT", None)  # the script's apt step is what these tests try, whoever launched them
    return subprocess.run(["bash", "scripts/test.sh", "-p", "no:cacheprovider", "--collect-only", "-q",
                           "tests/test_docs_benchmark.py"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_not_root_prints_one_line_naming_every_missing_package(tmp_path):
    proc = _run(tmp_path, uid=1000)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "missing system packages" in ln]
    assert len(lines) == 1 and lines[0].endswith(f"sudo apt-get install {PACKAGES}")
    assert not (tmp_path / "apt.log").exists()            # never tried apt without root
    assert "test_docs_benchmark.py" in proc.stdout  # and still ran pytest


def test_root_installs_the_missing_packages_with_apt(tmp_path):
    proc = _run(tmp_path, uid=0)
    assert proc.returncode == 0, proc.stderr
    log = (tmp_path / "apt.log").read_text().splitlines()
    assert log[0] == "apt-get update -qq"
    assert log[1] == f"apt-get install -y -qq --no-install-recommends {PACKAGES}"
    assert "missing system packages" not in proc.stderr    # all present afterwards: no complaint


def test_ci_only_calls_the_readme_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci and "apt-get" not in ci and "pip install" not in ci
    assert "bash scripts/test.sh" in (ROOT / "README.md").read_text()


def _pytest_args(tmp_path, workers):
    """The arguments scripts/test.sh gives ``python3 -m pytest`` (a stand-in python3 records them)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python3").write_text(f'#!/bin/bash\nprintf "%s\\n" "$@" > {tmp_path}/args\n')
    (bin_ / "python3").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", VOCALGRAD_SKIP_PIP="1", VOCALGRAD_SKIP_APT="1")
    env.pop("VOCALGRAD_TEST_WORKERS", None)
    if workers is not None:
        env["VOCALGRAD_TEST_WORKERS"] = workers
    proc = subprocess.run(["bash", "scripts/test.sh", "tests/test_card.py", "-x"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    args = (tmp_path / "args").read_text().splitlines() if (tmp_path / "args").exists() else None
    return proc, args


def test_workers_come_from_vocalgrad_test_workers(tmp_path):
    two = ["-n", "2", "--dist", "loadfile"]
    for workers, expected in ((None, two), ("", two), ("0", []), ("2", two), ("1", ["-n", "1", "--dist", "loadfile"])):
        (tmp_path / "w").mkdir()
        proc, args = _pytest_args(tmp_path / "w", workers)
        assert proc.returncode == 0, proc.stderr
        assert args == ["-m", "pytest", "-q", *expected, "tests/test_card.py", "-x"], (workers, args)
        shutil.rmtree(tmp_path / "w")
    proc, args = _pytest_args(tmp_path, "two")
    assert proc.returncode == 2 and args is None
    assert "VOCALGRAD_TEST_WORKERS=two" in proc.stderr and "number of processes" in proc.stderr


def _pip_run(tmp_path, fail_step: str = ""):
    """scripts/test.sh with a stand-in python3: ``-m pip install`` prints pip-like lines (and fails on the
    install whose arguments contain ``fail_step``); ``-m pytest`` records that it ran."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python3").write_text(f'''#!/bin/bash
if [ "$1" = -c ]; then exit 0; fi
if [ "$2" = pip ]; then
  echo "$*" >> {tmp_path}/pip.log
  echo "Collecting pkg-for-$#"
  echo "  Downloading pkg-for-$#-1.0.tar.gz (12 kB)"
  echo "Requirement already satisfied: numpy in /site-packages"
  if [ -n "{fail_step}" ] && [[ "$*" == *"{fail_step}"* ]]; then
    echo "  × subprocess-exited-with-error"; echo "ERROR: boom in {fail_step}"; exit 1
  fi
  [[ "$*" == *upgrade* ]] || echo "Successfully installed pkg-for-$#-1.0"
  exit 0
fi
echo ran > {tmp_path}/pytest.ran
''')
    (bin_ / "python3").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_}:{os.environ['PATH']}", VOCALGRAD_SKIP_APT="1", VOCALGRAD_TEST_WORKERS="0")
    env.pop("VOCALGRAD_SKIP_PIP", None)
    return subprocess.run(["bash", "scripts/test.sh", "tests/test_card.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def test_pip_phase_says_each_step_and_what_it_installs(tmp_path):
    proc = _pip_run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    steps = [ln for ln in lines if ln.startswith("scripts/test.sh: pip step ")]
    assert [s.split(":")[1].strip() for s in steps] == [f"pip step {n}/6" for n in range(1, 7)]
    assert "torch 2.13.0" in steps[1] and "every extra" in steps[2] and "lmms-eval" in steps[4]
    # each step's own lines follow it, indented: what pip collects and installs, not its download noise
    after_torch = lines[lines.index(steps[1]) + 1:lines.index(steps[2])]
    assert after_torch[0].startswith("  Collecting pkg-for-") and after_torch[-1].startswith("  Successfully installed")
    assert not any("Downloading" in ln or "already satisfied" in ln for ln in lines)
    after_pip = lines[lines.index(steps[0]) + 1:lines.index(steps[1])]
    assert after_pip[-1] == "  nothing to install: already there"   # no "Successfully installed" line
    assert (tmp_path / "pytest.ran").exists()
    pip_log = (tmp_path / "pip.log").read_text().splitlines()
    assert len(pip_log) == 6
    assert "--no-deps" in pip_log[5] and "torchcrepe==0.0.24" in pip_log[5] and "encoders" in steps[5]


def test_a_failing_pip_step_stops_with_pips_own_lines(tmp_path):
    proc = _pip_run(tmp_path, fail_step="mistral-common")
    assert proc.returncode == 1
    assert "pip step 4/6 (mistral-common 1.13.1 without its dependencies) failed with exit status 1" in proc.stderr
    assert "subprocess-exited-with-error" in proc.stderr        # the lines the filter hid are shown now
    assert "  ERROR: boom in mistral-common" in proc.stdout
    assert "pip step 5/6" not in proc.stdout and not (tmp_path / "pytest.ran").exists()


def test_readme_names_every_package_the_test_command_installs_without_its_dependencies():
    """`pip check` complains about each --no-deps install: the README says which and why, for every one."""
    import re

    script = (ROOT / "scripts" / "test.sh").read_text().replace("\\\n", " ")  # continuation lines joined
    nodeps = [pin for line in script.splitlines() if "--no-deps" in line
              for pin in re.findall(r'"([A-Za-z0-9_.-]+)==([0-9.]+)"', line.split("--no-deps", 1)[1])]
    assert {name for name, _ in nodeps} == {"mistral-common", "lmms-eval", "pesto-pitch", "torchcrepe", "torchfcpe",
                                            "resemblyzer"}
    readme = (ROOT / "README.md").read_text()
    para = next(p for p in readme.split("\n\n") if p.startswith("`pip check`"))
    for name, version in nodeps:
        assert f"**{name} {version}**" in para, (name, version)
    assert "numpy<2.4" in para and "torchvision" in para
