"""max_throughput in two stages, for the plan and for each of its alternatives: the largest common served
fraction s of the stated demand within the budget and supply (first stage: max s), then the least cost that
serves it (second stage: min cost subject to s ≥ the first stage's s, less :data:`HOLD_REL`).

The first stage admits s ≤ S (``BuildContext.max_scale``, which bounds the replica counts), starting at 10×
the stated demand. A first stage that reaches S has not found what the budget serves, only that it serves at
least S: it is solved again with S × :data:`SCALE_GROWTH`, up to :data:`SCALE_LIMIT` (before, a $50,000/month
budget on 5 req/s of Qwen3-8B answered "10 × the stated demand" with 9.8 % of it spent).

Two answers compare lexicographically (:func:`serves_better`): more of the demand first, then less cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from planner.optimize.solver import MIN_LEFT_S, Solution, SolverName, solve_context
from planner.problem.context import BuildContext

ZERO_SCALE = 1e-9
"""A served fraction at or below this serves nothing — answered as infeasible, with the cause."""

HOLD_REL = 1e-7
"""The second stage holds s·(1 − HOLD_REL): the first stage's plan stays feasible under solver tolerances."""

SAME_SCALE_REL = 1e-6
"""Served fractions within this relative difference are the same (a second stage's s, held at HOLD_REL)."""

SCALE_GROWTH = 10.0
"""Factor by which a first stage that served its whole admitted scale S raises S for the next solve."""

SCALE_LIMIT = 10_000.0
"""The largest S searched: a budget that serves 10,000× the stated demand is reported as serving that much
(state a larger demand to look further); the replica bounds stay well inside the solvers' tolerances."""


def reached_limit(served_scale: float | None, max_scale: float) -> bool:
    """Whether a first stage's served fraction is its admitted scale S (it may serve more)."""
    return served_scale is not None and served_scale >= max_scale * (1 - SAME_SCALE_REL)


def most_served(
    build: Callable[[], BuildContext], solver: SolverName, time_limit_s: float | None, max_nodes: int | None = None
) -> tuple[Solution, BuildContext, float | None]:
    """First stage on the unbuilt contexts ``build()`` makes (no ``scale_floor``): its solution, its context and
    the largest served fraction s; None when no plan serves any of the demand (infeasible, or s ≤
    :data:`ZERO_SCALE`). S grows by :data:`SCALE_GROWTH` while s reaches it (module docstring)."""
    began = time.perf_counter()
    ctx = build()
    while True:
        left_s = None if time_limit_s is None else max(MIN_LEFT_S, time_limit_s - (time.perf_counter() - began))
        sol = solve_context(ctx, solver=solver, time_limit_s=left_s, max_nodes=max_nodes)
        if sol.status == "infeasible":
            return sol, ctx, None
        served = float(sol.values["scale"][()])
        if served <= ZERO_SCALE:
            return sol, ctx, None
        if not reached_limit(served, ctx.max_scale) or ctx.max_scale >= SCALE_LIMIT:
            return sol, ctx, served
        wider = build()
        wider.max_scale = min(SCALE_LIMIT, ctx.max_scale * SCALE_GROWTH)
        ctx = wider


def hold(ctx: BuildContext, served_scale: float) -> BuildContext:
    """Make the unbuilt ``ctx`` the second stage: min cost while serving ``served_scale`` of the demand (its
    admitted scale raised to that fraction if below)."""
    ctx.scale_floor = served_scale * (1 - HOLD_REL)
    ctx.max_scale = max(ctx.max_scale, served_scale)
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
