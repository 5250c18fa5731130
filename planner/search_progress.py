"""Signs of progress from a long branch-and-bound search: the best plan's cost and the proven bound so far.

A command that shows a spinner sets a reporter (:func:`reporting`; planner.cli.progress does it for every
spinner); each HiGHS search of the exact solve runs inside :func:`watching` of its model. HiGHS then
calls back between nodes (its MIP interrupt callback), and at most every :data:`REPORT_EVERY_S` the reporter
gets one line, e.g. "best $48,096, proven floor $46,897 (gap 2.5%), 411 nodes": the cheapest plan found so
far, and a cost no plan can go below. The callback only
reads what HiGHS reports: the search (nodes, plan) is the same with or without it (buy_vs_rent: 642 nodes
either way), so a plan does not depend on whether a terminal watched it.

Stdlib only: the CLI imports it at start-up. The reporter is a context variable, so only the thread that set
it reports (the period problems that planner.optimize.decompose solves on worker threads stay silent).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

REPORT_EVERY_S = 1.0
"""Least seconds between two reports of one search."""

_REPORTER: ContextVar[Callable[[str], None] | None] = ContextVar("search_reporter", default=None)


@contextlib.contextmanager
def reporting(report: Callable[[str], None] | None) -> Iterator[None]:
    """Searches run inside this block pass their progress lines to ``report`` (None: they stay silent, as the
    sub-problems of planner.optimize.decompose do: their costs are not the plan's)."""
    token = _REPORTER.set(report)
    try:
        yield
    finally:
        _REPORTER.reset(token)


def search_text(best_usd: float, bound_usd: float, nodes: int, part: str = "") -> str:
    """One progress line of a min-cost search: the best plan's cost, the proven lower bound and the relative
    gap (best − bound) / best, USD; ``part``: which of several independent parts (e.g. "part 2 of 12: ")."""
    proven = f"proven floor ${bound_usd:,.0f}" if math.isfinite(bound_usd) else "no floor yet"
    searched = f"{nodes:,} nodes"
    if not math.isfinite(best_usd):
        return f"{part}no plan yet, {proven}, {searched}"
    gap = f" (gap {max(0.0, best_usd - bound_usd) / max(1e-9, abs(best_usd)):.1%})" if math.isfinite(bound_usd) else ""
    return f"{part}best ${best_usd:,.0f}, {proven}{gap}, {searched}"


@contextlib.contextmanager
def watching(highs: Any, part: str = "") -> Iterator[None]:
    """Report the progress of the min-cost search that the highspy model ``highs`` runs inside this block to
    the reporter of :func:`reporting`, if one is set; after the block, an empty line (the search is over)."""
    report = _REPORTER.get()
    if report is None:
        yield
        return
    last = [time.perf_counter()]
    shown = [False]

    def on_interrupt(event: Any) -> None:
        now = time.perf_counter()
        if now - last[0] < REPORT_EVERY_S:
            return
        last[0], shown[0] = now, True
        data = event.data_out
        report(search_text(float(data.mip_primal_bound), float(data.mip_dual_bound), int(data.mip_node_count), part))

    highs.cbMipInterrupt.subscribe(on_interrupt)
    try:
        yield
    finally:
        if shown[0]:
            report("")
