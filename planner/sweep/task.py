"""The unit of work of a sweep: plan one variant and read its row from the plan JSON (runs on a worker).

The same function runs in a local process and on a Dask worker. Its inputs are the :class:`SweepContext`
(catalog, base scenario, axes: sent to each worker once) and a :class:`~planner.sweep.spec.Variant`. Every
exception a variant raises becomes a row with ``status == "error"``, so one bad variant never stops a sweep.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from planner.catalog.loader import Catalog
from planner.errors import PlannerError
from planner.forked import forbid_forking
from planner.report.formatting import binding_rows
from planner.sweep.result import Choice, SweepRow
from planner.sweep.spec import SweepPlan, Variant


@dataclass(frozen=True)
class SweepContext:
    """What every task needs besides its variant (shipped to each worker once)."""

    catalog: Catalog
    plan: SweepPlan
    time_limit_s: float | None = None


_LOCAL: dict[str, SweepContext] = {}
"""The context of this worker process (set once by :func:`install_context`)."""


def install_context(context: SweepContext) -> None:
    """Process-pool initializer: keep the sweep context for every task this process runs."""
    _LOCAL["context"] = context


def local_context() -> SweepContext:
    """The context installed in this process."""
    return _LOCAL["context"]


def serving_gpus_by_type(deployments: list[dict[str, Any]]) -> dict[str, float]:
    """GPU type → the most GPUs of it serving at once, max over periods t of Σ_d g_d·n_d(t): g_d a replica's GPUs
    (its ``gpus`` over its ``replicas``, the workload's peak or else its largest period), n_d(t) its
    ``replicas_per_period``. Summing each deployment's own peak counted workloads that peak in different
    periods as if together. A plan JSON without periods (one period) gives each deployment's ``gpus``."""
    per_period: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for d in deployments:
        counts = d.get("replicas_per_period") or [d["replicas"]]
        per_replica = d["gpus"] / d["replicas"] if d["replicas"] else 0.0
        for t, n in enumerate(counts):
            per_period[d["gpu"]][t] += per_replica * n
    return {gpu: max(periods.values()) for gpu, periods in per_period.items()}


def row_from_plan(variant: Variant, data: dict[str, Any]) -> SweepRow:
    """A sweep row read from a plan's JSON (``PlanResult.to_json``): money from its cost ledger."""
    gpus = serving_gpus_by_type(data["deployments"])
    choices = [
        Choice(
            d["workload"],
            d["model"],
            d["gpu"],
            int(d["tp"]),
            int(d["pp"]),
            d["quantization"],
            int(d["replicas"]),
            ep=int(d.get("ep", 1)),
            site=d["site"],
            role=d.get("role", "colocated"),
            gpu_share_frac=float(d.get("gpu_share_frac", 1.0)),
        )
        for d in data["deployments"]
    ]
    why = "; ".join(item["message"] for item in data["infeasibility"]) or None
    return SweepRow(
        index=variant.index,
        key=variant.key,
        values=dict(variant.values),
        status=data["status"],
        gap=data["gap"],
        total_cost_usd=data["total_cost_usd"],
        capex_usd=data["capex_usd"],
        opex_usd_per_month=data["opex_usd_per_month"],
        cost_usd_per_million_output_tokens=data["cost_usd_per_million_output_tokens"],
        gpus_by_type=dict(sorted(gpus.items())),
        choices=choices,
        binding_constraints=[
            f"{family}:{key}" for family, key in binding_rows(data["binding_constraints"], data.get("schedule") or ())
        ],
        error=why,
        solve_seconds=float(data["solve_seconds"]),
        total_seconds=float(data["total_seconds"]),
        served_scale=data["served_scale"],
        served_requests_per_s=None if data["served_scale"] is None else data["served_requests_per_s"]["total"],
        warnings=list(data.get("warnings", [])),
    )


def error_row(variant: Variant, exc: BaseException, seconds: float) -> SweepRow:
    """The row of a variant that raised ``exc`` (its one-line message, with the type when unexpected)."""
    message = str(exc).splitlines()[0] if str(exc) else ""
    if not isinstance(exc, PlannerError):
        message = f"{type(exc).__name__}: {message}"
    return SweepRow(
        index=variant.index,
        key=variant.key,
        values=dict(variant.values),
        status="error",
        error=message,
        total_seconds=seconds,
    )


def solve_variant(context: SweepContext | None, variant: Variant) -> SweepRow:
    """Plan ``variant`` (no alternatives) and return its row; any exception becomes an error row.

    ``context`` None reads the context installed in this process (local pool); a Dask task gets it as a
    scattered future the scheduler resolves.
    """
    from planner.plan import plan
    from planner.scenario import parse_scenario

    forbid_forking()  # a sweep worker (local process or Dask worker) never nests a pool of its own
    ctx = context if context is not None else local_context()
    start = time.perf_counter()
    try:
        scenario = parse_scenario(ctx.plan.variant_data(variant), path=variant.key, catalog=ctx.catalog)
        result = plan(ctx.catalog, scenario, time_limit_s=ctx.time_limit_s, with_alternatives=False)
        return row_from_plan(variant, result.to_json())
    except Exception as exc:  # a failed variant is a row, never a crash of the sweep
        return error_row(variant, exc, time.perf_counter() - start)
