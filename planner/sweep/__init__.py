"""Sweeps: many variants of one scenario, each an independent plan, on local processes or Dask.

:func:`prepare` validates the axes and every variant (before anything is solved); :func:`run_sweep` solves
the variants not found in a resume file on an :class:`~planner.sweep.engine.Engine` and returns a
:class:`~planner.sweep.result.SweepResult` with one row per variant in variant order.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from planner.catalog.loader import Catalog
from planner.sweep.engine import DaskEngine, Engine, LocalEngine, default_workers, run_variants
from planner.sweep.result import Choice, SweepResult, SweepRow
from planner.sweep.resume import ResumeLog, catalog_digest, read_rows, scenario_digest
from planner.sweep.spec import Axis, Mode, SweepPlan, Variant, parse_axis, plan_sweep
from planner.sweep.task import SweepContext

__all__ = [
    "Axis",
    "Choice",
    "DaskEngine",
    "Engine",
    "LocalEngine",
    "Mode",
    "SweepPlan",
    "SweepResult",
    "SweepRow",
    "Variant",
    "default_workers",
    "parse_axis",
    "plan_sweep",
    "run_sweep",
]


def run_sweep(
    catalog: Catalog,
    sweep: SweepPlan,
    engine: Engine,
    *,
    time_limit_s: float | None = None,
    resume: Path | None = None,
    on_row: Callable[[SweepRow], None] | None = None,
    retries: int = 2,
) -> SweepResult:
    """Solve every variant of ``sweep`` (those finished in ``resume`` are read back, not solved again)."""
    start = time.perf_counter()
    digest, solved_with = scenario_digest(sweep.base), catalog_digest(catalog)
    earlier = read_rows(resume, digest, solved_with) if resume is not None else {}
    done = {v.index: earlier[v.key] for v in sweep.variants if v.key in earlier}
    pending = [v for v in sweep.variants if v.index not in done]
    log = ResumeLog(resume, digest, sweep.scenario_name, solved_with) if resume is not None else None

    def arrived(row: SweepRow) -> None:
        if log is not None:
            log.append(row)
        if on_row is not None:
            on_row(row)

    try:
        context = SweepContext(catalog, sweep, time_limit_s)
        for row in run_variants(engine, context, pending, arrived, retries=retries):
            done[row.index] = row
    finally:
        if log is not None:
            log.close()
    # a resumed row carries the index of its earlier run: give it this sweep's
    rows = [
        done[v.index] if done[v.index].index == v.index else _reindex(done[v.index], v)
        for v in sweep.variants
    ]
    return SweepResult(
        scenario=sweep.scenario_name,
        paths=[a.path for a in sweep.axes],
        mode=sweep.mode,
        engine=engine.name,
        rows=rows,
        wall_seconds=time.perf_counter() - start,
        resumed=len(sweep.variants) - len(pending),
    )


def _reindex(row: SweepRow, variant: Variant) -> SweepRow:
    from dataclasses import replace

    return replace(row, index=variant.index)
