"""Time limits in the tests guard against hangs, never against slowness: they grow with the machine's load.

No test's verdict may depend on the machine's speed or load (a busy CI machine, the suite beside other
jobs). A limit in a test (pytest-timeout's per-test limit, a subprocess ``timeout=``, a deadline while
waiting for a process) only ends a process that hangs; it is written for a free machine and multiplied
by :func:`slowdown`, a measurement of how much slower this machine runs now:

* the **contention** of this process: wall-clock over CPU seconds of a short busy loop, measured once per
  process (about 0.05 CPU seconds: a process that gets half a core runs it in twice the wall time);
* the **load per core** now: the 1-minute load average over the CPU count (it catches load that starts
  after the measurement, e.g. CPU hogs started next to the suite).

``tests/conftest.py`` scales every test's pytest-timeout limit this way; tests with limits of their own
call :func:`hang_guard`.
"""

from __future__ import annotations

import functools
import os
import time

__all__ = ["contention", "hang_guard", "load_per_core", "slowdown"]

#: CPU seconds of the busy loop that measures contention.
PROBE_CPU_SECONDS = 0.05


@functools.lru_cache(maxsize=1)
def contention() -> float:
    """Wall-clock seconds per CPU second of a short busy loop in this process (1.0 on a free core)."""
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    while time.process_time() - c0 < PROBE_CPU_SECONDS:
        n += 1
    return (time.perf_counter() - t0) / max(time.process_time() - c0, 1e-9)


def load_per_core() -> float:
    """The 1-minute load average over the CPU count (0.0 where the system has no load average)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        return 0.0


def slowdown() -> float:
    """How many times slower than a free machine this one runs now: at least 1."""
    return max(1.0, contention(), load_per_core())


def hang_guard(seconds: float) -> float:
    """A time limit written for a free machine, scaled by :func:`slowdown`: ends a hung process, never a slow one."""
    return seconds * slowdown()
