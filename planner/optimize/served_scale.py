"""max_throughput in two stages, for the plan and for each of its alternatives: the largest common served
fraction s of the stated demand within the budget and supply (first stage: max s), then the least cost that
serves it (second stage: min cost subject to s ≥ the first stage's s, less :data:`HOLD_REL`).

Two answers compare lexicographically (:func:`serves_better`): more of the demand first, then less cost.
"""

from __future__ import annotations

from planner.optimize.solver import Solution, SolverName, solve_context
from planner.problem.context import BuildContext

ZERO_SCALE = 1e-9
"""A served fraction at or below this serves nothing — answered as infeasible, with the cause."""

HOLD_REL = 1e-7
"""The second stage holds s·(1 − HOLD_REL): the first stage's plan stays feasible under solver tolerances."""

SAME_SCALE_REL = 1e-6
"""Served fractions within this relative difference are the same (a second stage's s, held at HOLD_REL)."""


def most_served(
    ctx: BuildContext, solver: SolverName, time_limit_s: float | None, max_nodes: int | None = None
) -> tuple[Solution, float | None]:
    """First stage on the unbuilt ``ctx`` (no ``scale_floor``): its solution and the largest served fraction
    s; None when no plan serves any of the demand (infeasible, or s ≤ :data:`ZERO_SCALE`)."""
    sol = solve_context(ctx, solver=solver, time_limit_s=time_limit_s, max_nodes=max_nodes)
    if sol.status == "infeasible":
        return sol, None
    served = float(sol.values["scale"][()])
    return sol, (served if served > ZERO_SCALE else None)


def hold(ctx: BuildContext, served_scale: float) -> BuildContext:
    """Make the unbuilt ``ctx`` the second stage: min cost while serving ``served_scale`` of the demand."""
    ctx.scale_floor = served_scale * (1 - HOLD_REL)
    return ctx


def serves_better(scale: float | None, cost_usd: float, best_scale: float | None, best_cost_usd: float) -> bool:
    """Whether a plan serving ``scale`` at ``cost_usd`` beats the best so far (``best_scale`` None: a min-cost
    scenario, cost alone decides): it serves more (beyond :data:`SAME_SCALE_REL`), or as much for less.
    ``best_cost_usd`` carries the caller's tie tolerance."""
    if best_scale is None:
        return cost_usd < best_cost_usd
    if scale is None:
        return False
    if scale > best_scale * (1 + SAME_SCALE_REL):
        return True
    return scale >= best_scale * (1 - SAME_SCALE_REL) and cost_usd < best_cost_usd


def serves_less(scale: float | None, best_scale: float | None) -> bool:
    """Whether ``scale`` serves less of the demand than ``best_scale`` (beyond :data:`SAME_SCALE_REL`)."""
    return scale is not None and best_scale is not None and scale < best_scale * (1 - SAME_SCALE_REL)
