"""HiGHS's threads: one count for every HiGHS solve of the process, and their release before a fork.

HiGHS (1.16) solves a MIP as :data:`SEARCH_THREADS` concurrent tree searches that share plans, cuts and
bounds at deterministic points: the answer depends on that number, not on the machine's cores, its load or
the threads' timing (measured on the 20-workload bench model: the same plan pinned to one core, under a
competing busy loop, and with HiGHS's ``mip_search_simulate_concurrency``, which runs the searches one after
the other). On two cores the two searches run side by side: 20-workload bench solve 10.2 → 6.6-7.4 s, 10
workloads 2.3 → 1.5 s, 15 workloads 5.5 → 4.3 s (the same optimum; ties may fall elsewhere). On one core
they take turns, at about the one search's time.

The worker threads belong to one scheduler per process, made by the first solve with that solve's count; a
solve asking for another count fails. So every HiGHS model of the planner is made by :func:`new_highs`
and every PuLP HiGHS solver gets ``threads=SEARCH_THREADS``.

A forked child inherits the scheduler but not its worker threads: a solve there waits forever for a worker
that does not exist (measured). :func:`release_before_fork` ends the workers first (HiGHS's
``resetGlobalScheduler``, which waits for them); the next solve, in the parent or the child, starts its own.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

SEARCH_THREADS = 2
"""HiGHS ``threads`` of every solve: its MIP searches run this many concurrent tree searches."""


def new_highs() -> Any:
    """A silent ``highspy.Highs`` with :data:`SEARCH_THREADS` threads (highspy imported on first use: it is
    optional, CBC solves without it)."""
    h = importlib.import_module("highspy").Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", SEARCH_THREADS)
    return h


def release_before_fork() -> None:
    """End HiGHS's worker threads, waiting for them, so that a forked child can solve (no-op before highspy
    is imported: there is no scheduler then). Call it from the thread that forks, with no solve running."""
    highspy = sys.modules.get("highspy")
    if highspy is not None:
        highspy.Highs.resetGlobalScheduler(True)
