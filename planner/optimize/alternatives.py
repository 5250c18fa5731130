"""Alternatives: the best plan restricted to each GPU type and to each site, with its cost delta against
the chosen plan, why it lost, and its worst deployed TPOT and TTFT (the latency side of the cost-vs-TPOT
frontier)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.candidates import CandidateTable
from planner.catalog.loader import Catalog
from planner.optimize import solve
from planner.optimize.solver import Solution, SolverName
from planner.problem.context import BuildContext, build_context
from planner.scenario import Scenario

ALTERNATIVE_TIME_LIMIT_S = 5.0


@dataclass(frozen=True)
class Alternative:
    """The best plan with only one GPU type (``kind`` 'gpu') or one site (``kind`` 'site')."""

    kind: str
    value: str
    status: str
    lost_because: str
    total_cost_usd: float | None = None
    cost_delta_usd: float | None = None
    cost_usd_per_month: float | None = None
    max_tpot_ms: float | None = None
    """Largest predicted TPOT over its deployments (None when infeasible)."""
    max_ttft_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"kind": "gpu", "gpu": "h100_sxm", ...}`` as in ``planner plan --json``."""
        out: dict[str, Any] = {
            "kind": self.kind,
            self.kind: self.value,
            "status": self.status,
            "total_cost_usd": self.total_cost_usd,
            "cost_delta_usd": self.cost_delta_usd,
            "max_tpot_ms": self.max_tpot_ms,
            "max_ttft_ms": self.max_ttft_ms,
            "lost_because": self.lost_because,
        }
        if self.cost_usd_per_month is not None:
            out["cost_usd_per_month"] = self.cost_usd_per_month
        return out


def _worst_latency_ms(ctx: BuildContext, sol: Solution) -> tuple[float | None, float | None]:
    """(max TPOT ms, max TTFT ms) over the operating points a solution deploys in any period."""
    used = {(int(k), int(j)) for (k, j, _t), reps in sol.values["n_rep"].items() if round(reps)}
    tpot_ms: float | None = None
    ttft_ms: float | None = None
    for p in ctx.points.itertuples():
        if (int(p.cand), int(p.point)) not in used:
            continue
        tpot_ms = float(p.tpot_ms) if tpot_ms is None else max(tpot_ms, float(p.tpot_ms))
        ttft_ms = float(p.ttft_ms) if ttft_ms is None else max(ttft_ms, float(p.ttft_ms))
    return tpot_ms, ttft_ms


def alternative(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    best_cost_usd: float,
    solver: SolverName,
    *,
    column: str,
    value: str,
) -> Alternative:
    """The best plan using only candidates whose ``column`` is ``value``."""
    rows = table.candidates[table.candidates[column] == value]
    if not rows["feasible"].any():
        reasons = rows["reason"].value_counts()
        first = reasons.index[0] if len(reasons) else "none"
        return Alternative(column, value, "infeasible", f"no SLO-feasible candidate: {first}")
    others = set(table.feasible[column]) - {value}
    sol, ctx = solve(build_context(catalog, scenario, table, exclude={column: others}), solver, ALTERNATIVE_TIME_LIMIT_S)
    if sol.status == "infeasible":
        uncovered = [w.name for w in scenario.workloads if not (ctx.cands["workload"] == w.name).any()]
        why = (
            f"cannot serve {', '.join(uncovered)} within the SLOs"
            if uncovered
            else "supply or site limits cannot cover the demand (gpu_supply/site_capacity)"
        )
        return Alternative(column, value, "infeasible", why)
    cost = sol.cost_usd
    delta = cost - best_cost_usd
    max_tpot_ms, max_ttft_ms = _worst_latency_ms(ctx, sol)
    chosen = abs(delta) <= 1e-6 * max(1.0, best_cost_usd)
    return Alternative(
        column,
        value,
        sol.status,
        "chosen" if chosen else f"costs ${delta:,.0f} more over the horizon (objective: min cost)",
        total_cost_usd=cost,
        cost_delta_usd=delta,
        cost_usd_per_month=cost / scenario.horizon_months,
        max_tpot_ms=max_tpot_ms,
        max_ttft_ms=max_ttft_ms,
    )


def alternatives(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, best_cost_usd: float, solver: SolverName
) -> list[Alternative]:
    """Best plan per GPU type and per site (:func:`alternative`), GPUs first, each in sorted order."""
    return [
        alternative(catalog, scenario, table, best_cost_usd, solver, column=column, value=value)
        for column in ("gpu", "site")
        for value in sorted(set(table.candidates[column]))
    ]
