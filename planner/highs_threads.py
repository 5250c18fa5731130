"""HiGHS's threads: one tree search for every solve but the exact solves of large problems, which search
concurrently, and how the two share one process.

HiGHS (1.16) solves a MIP with ``threads`` = 2 as two concurrent tree searches that share plans, cuts and
bounds at deterministic points: the answer depends on the thread count, not on the machine's cores, its
load or the threads' timing (measured on the 20-workload bench model: the same plan pinned to one core,
under a competing busy loop, and with HiGHS's ``mip_search_simulate_concurrency``, which runs the searches
one after the other). The exact solves of large problems use it (:func:`search_concurrently`, from
:data:`CONCURRENT_MIN_INTEGER_COLUMNS` integer columns). On two cores the searches run side by side; bench
solve seconds, fresh processes side by side: 20 workloads 10.95-11.15 → 7.27-7.64, 15 workloads 6.75-7.52
→ 4.89-4.91, 10 workloads 3.12-3.50 → 1.78-1.82 (the same optima; ties may fall elsewhere). On one core
they take turns and still gained there (20 workloads pinned to one core: 11.44 → 8.11 s). Every other solve keeps one thread
(:data:`ONE_SEARCH_THREADS`) and so its one-thread answer: small exact solves (every example), and the
node-limited ones (first plans, the large path's period problems, the workload floors), which gain nothing
from a second search; the large path solves its periods on two Python threads, where a second HiGHS thread
per solve only competes (24-month economics plan 31.8 → 37.4 s with two threads and one search each, the
same plan).

HiGHS keeps one scheduler of worker threads per process, made by the first solve with that solve's thread
count; a solve asking for another count fails, and a Python thread keeps a handle on the scheduler it last
used. So every solve runs through :func:`run_highs`: a solve of one count waits while solves of another are
in flight, a concurrent solve starts its own scheduler and the last one in flight ends it
(``resetGlobalScheduler``, which waits for the workers), and each thread drops its handle after its solve
(``resetThreadScheduler``; without it a thread pool mixing the two counts fails). Outside a concurrent solve
no worker thread exists, which a fork needs: a forked child inherits the scheduler but not its workers, and
a solve there can wait forever on one (measured). :func:`no_solver_workers` holds concurrent solves off while
:mod:`planner.forked` forks.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

ONE_SEARCH_THREADS = 1
"""HiGHS ``threads`` of every solve but the exact ones: one tree search."""

CONCURRENT_THREADS = 2
"""HiGHS ``threads`` of the exact solves of large problems: two concurrent tree searches."""

CONCURRENT_MIN_INTEGER_COLUMNS = 2000
"""Integer columns of an exact solve's model from which it searches concurrently. Below, the solve takes
under a second and a second search only burns CPU (the 5-workload bench, 1,077 integer columns: 0.40 s either
way; chat_70b_cloud planned 30 times: 3.8-5.1 → 6.2-7.2 CPU s, and a sweep's workers share the cores); the
10-workload bench (2,145) gains 3.1-3.5 → 1.8 s."""

_STATE = threading.Condition()
_IN_FLIGHT: dict[int, int] = {}
"""HiGHS runs in flight in this process, by their thread count (under ``_STATE``)."""


def _fresh_state() -> None:
    """A forked child starts with no run in flight and a lock nobody holds."""
    global _STATE
    _STATE = threading.Condition()
    _IN_FLIGHT.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_state)


def new_highs() -> Any:
    """A silent ``highspy.Highs`` with one thread (highspy imported on first use: it is optional, CBC
    solves without it)."""
    h = highspy_module().Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", ONE_SEARCH_THREADS)
    return h


def search_concurrently(h: Any, integer_columns: int) -> None:
    """Let the model ``h`` of ``integer_columns`` integer columns solve its MIP as :data:`CONCURRENT_THREADS`
    concurrent tree searches if it has at least :data:`CONCURRENT_MIN_INTEGER_COLUMNS`."""
    if integer_columns >= CONCURRENT_MIN_INTEGER_COLUMNS:
        h.setOptionValue("threads", CONCURRENT_THREADS)


def option_value(h: Any, name: str) -> Any:
    """HiGHS option ``name`` of the model ``h`` (highspy returns (status, value) or the value alone)."""
    got = h.getOptionValue(name)
    return got[1] if isinstance(got, tuple) else got


def highspy_module() -> Any:
    """The highspy module, imported on first use (it is optional: CBC solves without it); every module that
    builds HiGHS models reads it here."""
    return importlib.import_module("highspy")


def highspy_installed() -> bool:
    """Whether highspy can be imported (without importing it): the HiGHS-only steps are skipped without it."""
    return importlib.util.find_spec("highspy") is not None


def _end_workers() -> None:
    highspy_module().Highs.resetGlobalScheduler(True)


def run_highs(h: Any) -> Any:
    """``h.run()`` once no solve of another thread count is in flight (module docstring); its status."""
    threads = int(option_value(h, "threads"))
    with _STATE:
        _STATE.wait_for(lambda: not any(n for count, n in _IN_FLIGHT.items() if count != threads))
        if threads > 1 and not _IN_FLIGHT.get(threads):
            _end_workers()  # the one-thread scheduler gives way to this count's
        _IN_FLIGHT[threads] = _IN_FLIGHT.get(threads, 0) + 1
    try:
        return h.run()
    finally:
        highspy_module().Highs.resetThreadScheduler(False)  # this thread's handle on the scheduler
        with _STATE:
            _IN_FLIGHT[threads] -= 1
            if threads > 1 and not _IN_FLIGHT[threads]:
                _end_workers()
            _STATE.notify_all()


@contextmanager
def no_solver_workers() -> Iterator[None]:
    """While inside: no concurrent solve is in flight in this process, so no HiGHS worker thread exists
    (for a fork)."""
    with _STATE:
        _STATE.wait_for(lambda: not any(n for count, n in _IN_FLIGHT.items() if count > 1))
        yield
