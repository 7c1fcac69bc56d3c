"""Time limits in the tests are hang guards scaled by the machine's load (tests/_timing.py), and no test
asserts how fast something ran."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import _timing

TESTS = Path(__file__).resolve().parent


def test_a_guard_grows_with_the_load_and_never_shrinks(monkeypatch):
    monkeypatch.setattr(_timing, "contention", lambda: 1.0)
    monkeypatch.setattr(_timing, "load_per_core", lambda: 0.0)
    assert _timing.hang_guard(60) == 60             # a free machine: the written limit
    monkeypatch.setattr(_timing, "load_per_core", lambda: 0.99)
    assert _timing.hang_guard(60) == 60             # never below it
    monkeypatch.setattr(_timing, "load_per_core", lambda: 9.5)   # load 19 on 2 cores
    assert _timing.hang_guard(60) == 570
    monkeypatch.setattr(_timing, "contention", lambda: 12.0)
    assert _timing.hang_guard(60) == 720            # the larger of the two measurements


def test_contention_is_measured_here():
    assert 0.5 < _timing.contention() < 1e4 and _timing.contention() == _timing.contention()  # once per process


@pytest.mark.timeout(7)
def test_the_per_test_limit_is_scaled_before_it_is_set(request):
    """conftest puts the scaled limit in front of the test's own marker (which pytest-timeout then reads)."""
    first, *rest = list(request.node.iter_markers("timeout"))
    assert [m.args[0] for m in rest] == [7] and first.args[0] >= 7


def test_no_test_asserts_how_long_something_took():
    """An elapsed-time assert (``assert time.perf_counter() - t0 < 5``) makes a verdict of the machine's speed:
    speed targets live in benchmarks/ (ratios), a test asserts the result."""
    elapsed = re.compile(r"assert\b[^\n]*(?:perf_counter|monotonic|time\.time)\(\)\s*-")
    bad = [f"{p.name}:{n}" for p in sorted(TESTS.glob("*.py")) if p.name != Path(__file__).name
           for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if elapsed.search(line)]
    assert bad == []
    assert elapsed.search("    assert time.perf_counter() - t0 < 5")   # the rule sees the old form
    assert not elapsed.search("    assert time.time() < deadline")     # a deadline (hang guard) is fine


def test_a_subprocess_limit_is_scaled_too(monkeypatch):
    """``subprocess.run(timeout=N)`` waits N x the slowdown (conftest): a slow child is waited for, a hung
    one still ends."""
    import subprocess
    import sys

    monkeypatch.setattr(_timing, "contention", lambda: 1.0)
    monkeypatch.setattr(_timing, "load_per_core", lambda: 2000.0)  # a machine 2000 x slower than a free one
    done = subprocess.run([sys.executable, "-c", "import time; time.sleep(0.5)"], timeout=0.05)
    assert done.returncode == 0                                     # 0.5 s (and start-up) < 0.05 s x 2000
    monkeypatch.setattr(_timing, "load_per_core", lambda: 2.0)
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", "import time; time.sleep(600)"], timeout=0.5)   # 1 s: a hang ends
