"""Independent drawing tasks run by forked worker processes (one per CPU this process may use).

Each task is a call ``fn(*args)`` that writes its own file; the results come back in task order, so
the output does not depend on the number of workers. Where ``fork`` is missing (or with one CPU or
one task) the tasks run here, one after another.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from generation.interrupts import worker_pool

__all__ = ["cpu_count", "run_tasks"]

_TASKS: Sequence[tuple[Callable, tuple]] = ()  # the tasks of the forked workers (inherited, never pickled)


def cpu_count() -> int:
    """CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _run(index: int) -> tuple[int, Any]:
    fn, args = _TASKS[index]
    return index, fn(*args)


def run_tasks(tasks: Sequence[tuple[Callable, tuple]], *, jobs: int | None = None,
              ordered: bool = True) -> Iterator[Any]:
    """Yield ``fn(*args)`` of every task (in task order, or as finished with ``ordered=False``, then as
    ``(index, result)``). An exception of a task is raised here."""
    import multiprocessing as mp

    global _TASKS
    n = min(jobs or cpu_count(), len(tasks))
    if n <= 1 or "fork" not in mp.get_all_start_methods():
        for i, (fn, args) in enumerate(tasks):
            yield fn(*args) if ordered else (i, fn(*args))
        return
    _TASKS = tasks
    try:
        # the workers ignore Ctrl-C and die quietly on the SIGTERM of the pool's end (not through the
        # command's own SIGTERM handler, which they inherit and which would print a traceback each)
        with worker_pool(mp.get_context("fork"), n) as pool:
            if ordered:
                for _, result in pool.imap(_run, range(len(tasks))):
                    yield result
            else:
                yield from pool.imap_unordered(_run, range(len(tasks)))
    finally:
        _TASKS = ()
