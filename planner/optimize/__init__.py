"""Build and solve the planning MILP: :mod:`~planner.optimize.build` (one visible build sequence),
:mod:`~planner.optimize.solver` (HiGHS/CBC, reading back by key), :mod:`~planner.optimize.decompose`
(large problems), :mod:`~planner.optimize.alternatives` and :mod:`~planner.optimize.explain`."""

from __future__ import annotations

from typing import Any

from planner.optimize.decompose import is_large, solve_large
from planner.optimize.reuse import recall, remember, solve_key
from planner.optimize.solver import Solution, SolverName, solve_context
from planner.problem.context import BuildContext


def solve(
    ctx: BuildContext,
    solver: SolverName,
    time_limit_s: float | None,
    *,
    max_nodes: int | None = None,
    start: dict[tuple[str, Any], float] | None = None,
    built: BuildContext | None = None,
    decompose: bool = False,
) -> tuple[Solution, BuildContext]:
    """The exact MILP (within ``max_nodes`` branch-and-bound nodes when given), or for large min-cost
    problems the bounded method of planner.optimize.decompose (its own node limits; it answers with the
    context of the problem it solved). ``time_limit_s`` is an outer wall-clock cap (None: none, and the
    answer does not depend on machine load). Inside :func:`planner.optimize.reuse.shared_solves` a
    problem solved before is answered from memory. ``start``: a feasible plan by (family, key), HiGHS's
    first incumbent in the exact solve (planner.optimize.solver.solve_context). ``built``: a built copy of
    the unbuilt ``ctx`` (``ctx.restricted`` of all its candidates, built): solved instead of building again.
    ``decompose``: a min-cost problem takes the bounded method even when small enough for the exact MILP
    (the alternatives of a plan that took it: an exact multi-period MILP per GPU type costs minutes)."""
    key = solve_key(ctx, solver, time_limit_s, max_nodes, decompose)  # a start changes the search, not the optimum
    kept: tuple[Solution, BuildContext] | None = recall(key)
    if kept is not None:
        return kept
    if is_large(ctx) or (decompose and ctx.scenario.objective == "min_cost"):
        answer = solve_large(ctx, solver=solver, time_limit_s=time_limit_s)
    elif built is not None:  # the same problem, already built (its variables keyed as ctx's would be)
        answer = solve_context(
            built, solver=solver, time_limit_s=time_limit_s, max_nodes=max_nodes, warm_start=start, prebuilt=True
        ), built
    else:
        answer = solve_context(ctx, solver=solver, time_limit_s=time_limit_s, max_nodes=max_nodes, warm_start=start), ctx
    remember(key, answer, ctx.catalog)
    return answer


__all__ = ["Solution", "SolverName", "solve", "solve_context"]
