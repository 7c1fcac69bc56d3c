"""Time limits in the tests are hang guards scaled by the machine's load (tests/_timing.py), and no test
asserts how fast something ran."""

from __future__ import annotations

import ast
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


# ----------------------------------------------------------------------------- short fixed limits
#: Calls whose ``timeout`` conftest scales (``Popen.communicate``/``Popen.wait``, and through them
#: ``subprocess.run``): a literal there is already a hang guard.
SCALED_CALLS = {"run", "communicate", "wait", "check_output", "check_call"}
#: Calls that take a limit in seconds as a positional argument: the argument's index.
POSITIONAL_LIMITS = {"settimeout": 0, "set_page_load_timeout": 0, "join": 0, "create_connection": 1,
                     "WebDriverWait": 1, "HTTPConnection": 2}
CLOCKS = {"time", "monotonic", "perf_counter"}
#: A limit below this many seconds, written as a number, would end a slow (not hung) wait on a busy machine.
SHORT = 30
#: Short literal limits that are not limits on a wait that should succeed: (file, call, value) -> why.
ALLOWED = {
    ("provider_servers.py", "settimeout", 0.2): "the accept loop's poll interval (it checks for close)",
    ("test_models_openai.py", "make", 9): "the answer comes from the answer log; nothing is sent",
    ("test_models_provider_profiles.py", "OpenAIAudioLM", 3): "the deadline under test: the reply never ends",
    ("test_models_provider_profiles.py", "OpenAIAudioLM", 0.001): "the range's lowest value; nothing is sent",
}


def _number(node) -> float | None:
    ok = isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    return node.value if ok else None


def _callee(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def short_fixed_limits(source: str, name: str = "x.py") -> list[tuple[str, str, float, int]]:
    """(file, call, seconds, line) of every limit below :data:`SHORT` s written as a bare number: a
    ``timeout=`` or a positional limit of a call conftest does not scale, or a deadline ``time.time() + N``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and _callee(node) not in SCALED_CALLS:
            args = [k.value for k in node.keywords if k.arg == "timeout"]
            at = POSITIONAL_LIMITS.get(_callee(node))
            if at is not None and len(node.args) > at:
                args.append(node.args[at])
            found += [(name, _callee(node), v, node.lineno) for v in map(_number, args) if v is not None and 0 < v < SHORT]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Call) \
                and _callee(node.left) in CLOCKS and (v := _number(node.right)) is not None and 0 < v < SHORT:
            found.append((name, "deadline", v, node.lineno))
    return found


def test_no_wait_that_should_succeed_has_a_short_fixed_limit():
    """An HTTP client, a socket, a browser wait or a deadline with a limit of a few seconds fails a slow
    machine, not a hung one: such limits go through ``hang_guard`` (subprocess limits are scaled by conftest)."""
    found = [hit for p in sorted(TESTS.glob("*.py")) if p.name != Path(__file__).name
             for hit in short_fixed_limits(p.read_text(encoding="utf-8"), p.name)]
    bad = [f"{f}:{line}: {call}(... {v})" for f, call, v, line in found if (f, call, v) not in ALLOWED]
    assert bad == []
    assert {(f, c, v) for f, c, v, _ in found} == set(ALLOWED)          # each exception is still needed


def test_the_limit_scan_sees_each_form_and_its_neighbours():
    def hits(code):
        return [(call, v) for _, call, v, _ in short_fixed_limits(code)]

    assert hits("c = http.client.HTTPConnection(h, timeout=10)") == [("HTTPConnection", 10)]
    assert hits("c = http.client.HTTPConnection(h, p, 10)") == [("HTTPConnection", 10)]        # positional
    assert hits("c = http.client.HTTPConnection(h, timeout=hang_guard(10))") == []
    assert hits("urllib.request.urlopen(u, timeout=29.5)") == [("urlopen", 29.5)]
    assert hits("urllib.request.urlopen(u, timeout=30)") == []                                # not short
    assert hits("s.settimeout(5)\nt.join(5)") == [("settimeout", 5), ("join", 5)]
    assert hits("t.join()\nt.join(timeout=None)") == []
    assert hits("deadline = time.time() + 29") == [("deadline", 29)]
    assert hits("deadline = time.monotonic() + 30\nend = time.time() + hang_guard(5)") == []
    assert hits("subprocess.run(cmd, timeout=5)\np.communicate(timeout=5)\np.wait(timeout=0.5)") == []  # scaled
    assert hits("lm = OpenAIAudioLM(model='m', timeout=0)") == []                             # no limit at all


def test_the_tests_and_their_commands_run_one_compute_thread_unless_told_otherwise():
    """conftest sets OMP_NUM_THREADS/MKL_NUM_THREADS (1, unless the caller set them) for the test processes and
    the commands they start, and torch's pool follows: two workers on two cores never spin-wait on each other."""
    import os
    import subprocess
    import sys

    import conftest

    torch = pytest.importorskip("torch")
    threads = {os.environ[name] for name in conftest.THREAD_VARIABLES}
    assert len(threads) == 1                                        # the same number for both
    threads = int(threads.pop())
    assert 1 <= torch.get_num_threads() <= threads                  # torch caps it at the cores
    assert threads > 1 or torch.get_num_threads() == 1              # the test command's case: exactly one
    child = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                           capture_output=True, text=True, timeout=120)
    assert child.stdout.strip() == str(torch.get_num_threads()), child.stderr[-2000:]
