"""Shared pytest setup.

1. Suite-wide checks of the machine's system libraries.

Decoding the Hub's ``Audio`` column (datasets >= 4) goes through torchcodec, which needs FFmpeg's shared
libraries. When torchcodec is installed but cannot load them, a test that fails *because of that* is reported
as skipped with the reason and the fix (``scripts/test.sh`` installs them as root), instead of as a failure.
Any other failure stays a failure, and nothing is skipped on a machine where torchcodec loads.

2. The answer log (every adapter logs its answers by default).

Each test (and, before it, the session's wider fixtures) gets its own ``$VOCALGRAD_CACHE``, and the
log is off unless a test passes ``answer_log=...`` itself: otherwise a test that compares two runs
(batch sizes, processes) would get the second run's answers from the first run's log, and a module
fixture could replay answers from the user's ``~/.cache/vocalgrad``.

3. Time limits that guard against hangs, not against slowness: every test's pytest-timeout limit (its
``timeout`` marker, else pyproject's ``timeout``) is multiplied by ``_timing.slowdown()`` when the test starts,
and so is every subprocess ``timeout`` (``subprocess.run(..., timeout=N)``, ``Popen.communicate`` and
``Popen.wait``: the limit in the code is the one for a free machine), so a loaded machine makes a test
slower, never red (tests/_timing.py; other waits call ``_timing.hang_guard``).

4. The session's demo (``demo_session``) and parallel runs (pytest-xdist, ``-n N --dist loadfile``): the
files that read the demo run on one worker, and the demo is built once and must stay unchanged.

5. One compute thread per process: ``OMP_NUM_THREADS`` defaults to 1 and ``MKL_NUM_THREADS`` to the same (a
value set by the caller is kept) and torch's intra-op pool follows, in the test processes and every command they
start. The suite runs one process per core (``-n 2`` on 2 cores); a second torch thread per process only
competes with the other worker (or with other jobs on a busy machine), and its spin-waiting costs CPU
time: the tiny-model training test took 62 CPU-s with torch's default two threads, 8 with one.
"""

from __future__ import annotations

import functools
import os
import sys

import pytest

TORCHCODEC_MISSING_LIBS = "Could not load libtorchcodec"
FFMPEG_HINT = ("needs FFmpeg 5.1's shared libraries for torchcodec (Debian/Ubuntu: apt-get install libavutil57 "
               "libavcodec59 libavformat59 libavdevice59 libavfilter8 libswscale6 libswresample4; "
               "scripts/test.sh does this as root)")


@functools.lru_cache(maxsize=1)
def torchcodec_load_error() -> str | None:
    """The loading error of torchcodec's FFmpeg-backed core, or None when it loads (or is not installed)."""
    try:
        import torchcodec  # noqa: F401
    except ImportError:
        return None
    except (RuntimeError, OSError) as exc:  # torchcodec raises at import when no FFmpeg can be loaded
        return str(exc).splitlines()[0]
    try:
        from torchcodec.decoders import AudioDecoder  # noqa: F401
    except (RuntimeError, OSError) as exc:
        return str(exc).splitlines()[0]
    return None


#: Compute threads of the test processes and of the commands they start, unless the caller set them.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure(config):
    threads = os.environ.get(THREAD_VARIABLES[0]) or "1"      # unset or empty: 1
    for name in THREAD_VARIABLES:           # MKL's the same number (torch takes the smaller of the two)
        if not os.environ.get(name):
            os.environ[name] = threads
    if "torch" in sys.modules and threads.isdigit() and int(threads) > 0:   # imported before this hook
        sys.modules["torch"].set_num_threads(int(threads))


def pytest_report_header(config):
    err = torchcodec_load_error()
    if err:
        return [f"torchcodec cannot load FFmpeg ({err}): tests that decode audio are skipped; {FFMPEG_HINT}"]
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.outcome != "failed" or call.excinfo is None or not torchcodec_load_error():
        return
    text = str(report.longrepr)
    if TORCHCODEC_MISSING_LIBS in text:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {FFMPEG_HINT}")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Scale the test's pytest-timeout limit by the machine's slowdown before pytest-timeout sets its timer."""
    from _timing import slowdown

    marker = item.get_closest_marker("timeout")
    limit = marker.args[0] if marker is not None and marker.args else marker.kwargs.get("timeout") if marker else None
    if limit is None:
        limit = getattr(item.config, "_env_timeout", None)
    if isinstance(limit, (int, float)) and limit > 0:
        kwargs = {k: v for k, v in (marker.kwargs.items() if marker is not None else ()) if k != "timeout"}
        rest = marker.args[1:] if marker is not None else ()
        item.add_marker(pytest.mark.timeout(limit * slowdown(), *rest, **kwargs), append=False)
    yield


@pytest.fixture(scope="session", autouse=True)
def _subprocess_limits_scale_with_the_load():
    """``Popen.communicate``/``Popen.wait`` (and through them ``subprocess.run``) take their ``timeout`` times
    the machine's slowdown, measured at the call."""
    import subprocess

    from _timing import slowdown

    communicate, wait = subprocess.Popen.communicate, subprocess.Popen.wait

    def scaled_communicate(self, input=None, timeout=None):
        return communicate(self, input, None if timeout is None else timeout * slowdown())

    def scaled_wait(self, timeout=None):
        return wait(self, None if timeout is None else timeout * slowdown())

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(subprocess.Popen, "communicate", scaled_communicate)
        mp.setattr(subprocess.Popen, "wait", scaled_wait)
        yield


@pytest.fixture(scope="session", autouse=True)
def _session_answer_log(tmp_path_factory):
    """The same isolation for fixtures wider than a test (module-scoped pipelines run before the
    per-test fixture below): never the user's ``~/.cache/vocalgrad`` answers."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VOCALGRAD_CACHE", str(tmp_path_factory.mktemp("vocalgrad-session-cache")))
        mp.setenv("VOCALGRAD_ANSWER_LOG", "none")
        yield


@pytest.fixture(autouse=True)
def _isolated_answer_log(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("VOCALGRAD_CACHE", str(tmp_path_factory.mktemp("vocalgrad-cache")))
    monkeypatch.setenv("VOCALGRAD_ANSWER_LOG", "none")


@pytest.fixture(scope="session")
def demo_session(tmp_path_factory):
    """``vocalgrad demo --out demo_out --sources 1`` run once per session from the built wheel, outside the
    checkout (``tests/_demo_session.py``): read by the wheel test and the docs test.

    Shared by every xdist worker, so read-only: a test that wrote into it fails at teardown."""
    from _demo_session import shared_demo_session, unchanged

    demo = shared_demo_session(tmp_path_factory)
    with unchanged(demo.work):
        yield demo


# 3. Parallel runs (pytest-xdist: `-n N --dist loadfile`, scripts/test.sh with VOCALGRAD_TEST_WORKERS=N).
# loadfile keeps each test file on one worker (its module fixtures are built once); the files of a group
# below also share a worker: those that read the session's demo, which one worker then builds and keeps
# while the other runs everything else (the file lock in tests/_demo_session.py makes a split safe, not free).
XDIST_FILE_GROUPS = {"tests/test_wheel.py": "demo-session", "tests/test_docs_run.py": "demo-session"}
# Work units handed out first, longest first (xdist otherwise orders them by their number of tests, so a
# long file of few tests came last and left the other worker idle at the end): the demo readers, then the
# files that took 20 s or more in a run of the test command on the shared 2-core machine (Dec 2026; 2 workers,
# one thread each; wall seconds, CPU seconds in the comment).
XDIST_FIRST = (
    "demo-session",                            # 756 s (351 CPU-s): the session's demo, then every document
    "tests/test_finetune.py",                  # 120 s (59)
    "tests/test_answer_log.py",                # 107 s (52)
    "tests/test_reference_match.py",           # 63 s (12)
    "tests/test_render.py",                    # 62 s (32)
    "tests/test_warmup.py",                    # 57 s (29)
    "tests/test_sweep.py",                     # 55 s (14)
    "tests/test_models_worker.py",             # 38 s (12)
    "tests/test_distributed.py",               # 34 s (24)
    "tests/test_attributes.py",                # 33 s (17)
    "tests/test_lmms_eval.py",                 # 33 s (16)
    "tests/test_models_provider_profiles.py",  # 30 s (3)
    "tests/test_hub_build.py",                 # 30 s (15)
    "tests/test_authors_mechanics.py",         # 29 s (14)
    "tests/test_probe.py",                     # 26 s (13)
    "tests/test_attributes_tutorial.py",       # 25 s (13)
    "tests/test_eval_cli.py",                  # 25 s (13)
    "tests/test_hub_publish.py",               # 24 s (11)
    "tests/test_models_hf_variants.py",        # 24 s (12)
    "tests/test_models_openai.py",             # 22 s (4)
    "tests/test_model_families.py",            # 21 s (6)
    "tests/test_label_validity.py",            # 20 s (11)
)


def load_file_groups_scheduler():
    """xdist's ``loadfile`` scheduler, with the files of one ``XDIST_FILE_GROUPS`` group as one work unit."""
    from xdist.scheduler import LoadFileScheduling

    class LoadFileGroups(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return XDIST_FILE_GROUPS.get(scope, scope)

        def _assign_work_unit(self, node) -> None:
            for scope in reversed(XDIST_FIRST):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return LoadFileGroups


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    return load_file_groups_scheduler()(config, log)
