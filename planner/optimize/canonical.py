"""The plan's deployments made canonical among the plans of the same cost: with its supply held (what it
buys, rents and reserves in every slice), the replicas are re-chosen to minimize the tie-break alone.

Why: the tie-break (planner.problem.cost_terms.tie_break_usd, 1e-3 USD × months per replica, ranked by
GPUs, quality tier and candidate) is far below the solver's optimality tolerance (1e-6 of the cost:
$0.78 on a $784,340 plan), so among equal-cost plans HiGHS stops at whichever it meets first: in
examples/buy_vs_rent's quarter 8 a one-replica H200 decode pool and two prefill replicas beside six
co-located ones, where nine co-located replicas on the same rented GPUs cost the same. (Most of that plan's change
from quarter to quarter is not a tie: the cheapest mix of 4- and 8-GPU instances differs as demand grows.)

With every supply variable fixed at its solved value, the cost categories (they read supply variables
only: bought nodes, rented units, the rent discount) are fixed too, so every feasible choice of replicas,
flows and operating points (n_rep, flow, pd_flow, y, and the redundancy rows that follow them) has the
plan's cost; the tie-break alone is then the objective, a problem HiGHS solves to its own tolerance. The
answer replaces the plan only when it is feasible, proven optimal for the tie-break within
:data:`MAX_NODES` nodes and its cost equals the plan's (1e-9 relative); otherwise the plan stays as
solved. Deterministic (node limit, no clock).

Only for a min-cost plan proven optimal, solved as one exact MILP (the large-problem method keeps its own
answer). One slice too: Llama-3.1-70B on MI300X alone at 3 req/s kept a free TP2 decode pool (no prefill
pool, serving nothing) on the 8-GPU node it rents anyway; re-chosen, it is one FP8 replica and half a GPU of
an INT4 one.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pulp

from planner.optimize.build import TIE_BREAK
from planner.optimize.components import parts, solve_parts, whole
from planner.optimize.decompose import is_large
from planner.optimize.quiet import quiet_stdout
from planner.optimize.solver import Solution, read_solution
from planner.problem.context import BuildContext

FREE = (
    "n_rep",
    "flow",
    "pd_flow",
    "y",
    "redundancy_used",
    "redundancy_lost",
    "redundancy_matched",
    "redundancy_stage_lost",
)
"""Variable families re-chosen: deployments, their flows and operating points, and the redundancy bookkeeping
that follows them (constraints/redundancy.py: which candidates a slice uses, the capacity a failure takes;
no cost). Every other family is supply, held. Held redundancy indicators kept examples/chat_p99_redundant
on 2 × H100 TP1×PP2 (TPOT 36 ms) where one TP2×PP2 replica (TPOT 20 ms) costs the same."""

MAX_NODES = 2000
"""Branch-and-bound nodes of the tie-break problem."""

COST_REL = 1e-9
"""Relative cost difference above which the re-chosen plan is refused (it cannot differ: supply is held)."""


def canonical(ctx: BuildContext, sol: Solution) -> Solution:
    """``sol`` of the built ``ctx`` with its replicas re-chosen by the tie-break (module docstring), or
    ``sol`` itself where that does not apply or is not proven."""
    if (
        sol.status != "optimal"
        or ctx.scenario.objective != "min_cost"
        or ctx.elastic
        or ctx.scale_floor is not None
        or not ctx.cost_terms.get(TIE_BREAK)
        or is_large(ctx)
    ):
        return sol
    began = time.perf_counter()
    held: list[tuple[Any, Any, Any]] = []
    objective = ctx.prob.objective
    try:
        for family, registry in ctx.variables.items():
            if family in FREE:
                continue
            for key, var in registry.items():
                held.append((var, var.lowBound, var.upBound))
                value = sol.values[family][key]
                if var.cat == pulp.LpInteger:
                    value = float(round(value))
                var.lowBound = var.upBound = value
        ctx.prob.setObjective(pulp.lpSum(ctx.cost_terms[TIE_BREAK]))
        split = parts(ctx) or whole(ctx)
        if split is None:
            return sol
        with quiet_stdout():
            outcome = solve_parts(ctx, split, time_limit_s=None, max_nodes=MAX_NODES)
        if outcome.status != "optimal":
            return _restore_values(ctx, sol)
    finally:
        for var, low, up in held:
            var.lowBound, var.upBound = low, up
        ctx.prob.setObjective(objective)
    again = read_solution(ctx, optimal=True, elapsed=sol.solve_seconds)
    if abs(again.cost_usd - sol.cost_usd) > COST_REL * max(1.0, abs(sol.cost_usd)):
        return _restore_values(ctx, sol)
    return dataclasses.replace(
        again,
        build_seconds=sol.build_seconds,
        solve_seconds=sol.solve_seconds + (time.perf_counter() - began),
    )


def _restore_values(ctx: BuildContext, sol: Solution) -> Solution:
    """Put ``sol``'s values back into the variables of ``ctx`` (a refused re-choice overwrote them)."""
    for family, registry in ctx.variables.items():
        for key, var in registry.items():
            var.varValue = sol.values.get(family, {}).get(key, 0.0)
    return sol
