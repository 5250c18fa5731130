"""A quick answer to "does buying beat renting here?" for the flip-point bisection of ``planner compare``.

The bisection asks, at each multiplier, whether the cheapest plan allowed to buy costs less than
(1 − tie) × the rent-only cost. The exact answer solves that hybrid MILP to a relative gap of 1e-6, which
at high demand takes most of a comparison. When buying wins clearly, a solve to a loose gap
(:data:`QUICK_GAP_REL`) already proves it: its plan's objective U bounds the optimum, the exact solve's
plan costs at most U·(1 + 1e-6)-ish (it is within its gap of that optimum) and its cost without the
tie-break is lower still, so U·(1 + :data:`MARGIN_REL`) below the threshold gives the exact answer
"buy". The quick solve looks only for plans below that bound (HiGHS ``objective_bound``) and stops at the
first one (``mip_max_improving_sols``). Any other outcome (or a problem the decomposition would solve) says nothing, and the caller solves
exactly — the comparison's result is the same as without this probe.
"""

from __future__ import annotations

import pulp

from planner.candidate_cache import candidates_for
from planner.catalog.loader import Catalog
from planner.highs_threads import ONE_SEARCH_THREADS
from planner.optimize.build import build_problem
from planner.optimize.decompose import is_large
from planner.optimize.solver import (
    Solution,
    SolverName,
    WarmHiGHS,
    objective_usd,
    solve_context,
    solve_status,
)
from planner.problem.context import BuildContext, build_context
from planner.problem.supply import SupplyKind
from planner.scenario import Scenario

QUICK_GAP_REL = 1e-2
"""Relative gap of the quick solve."""
MARGIN_REL = 1e-5
"""Safety margin over the exact solve's gap (1e-6, planner.optimize.solver.make_solver)."""


def buying_surely_cheaper(
    catalog: Catalog, hybrid: Scenario, threshold_usd: float, solver: SolverName
) -> bool:
    """True when a plan of ``hybrid`` (rent and buy allowed) provably makes the exact solve's plan cost less
    than ``threshold_usd``; False when this quick solve cannot tell."""
    if solver != "highs":
        return False
    ctx = build_context(catalog, hybrid, candidates_for(catalog, hybrid))
    if ctx.cands.empty or is_large(ctx):
        return False
    build_problem(ctx)
    target_usd = (threshold_usd - MARGIN_REL) / (1 + MARGIN_REL)
    quick = WarmHiGHS(
        msg=False,
        gapRel=QUICK_GAP_REL,
        random_seed=1,
        threads=ONE_SEARCH_THREADS,
        objective_bound=target_usd,  # only plans below the target count ...
        mip_max_improving_sols=1,  # ... and the first one answers
    )
    _status, has_solution, _optimal = solve_status(ctx.prob, quick)
    if not has_solution:
        return False
    upper_usd = objective_usd(ctx)
    return upper_usd * (1 + MARGIN_REL) + MARGIN_REL < threshold_usd


def cheapest_buying_plan(catalog: Catalog, hybrid: Scenario, solver: SolverName) -> Solution | None:
    """The cheapest plan of ``hybrid`` that buys at least one node (status 'infeasible' when none can), for
    the price flip search of ``planner compare``: it asks whether some buying plan beats renting only, and
    the hybrid optimum answers that exactly when the cheapest buying plan does (the plans that buy nothing
    are rent-only plans, whose cost the search knows). Without the plans that buy nothing the solver need
    not prove that none of them is cheaper, which near the flip point is most of the work (buy_vs_rent at
    its rent flip: 4.0 → 0.6 s CPU). None when the problem is one for the decomposition (ask the exact
    hybrid solve instead)."""
    ctx = build_context(catalog, hybrid, candidates_for(catalog, hybrid))
    if ctx.cands.empty or is_large(ctx):
        return None

    if not any(o.kind is SupplyKind.BUY for o in ctx.supply):
        return Solution("infeasible", float("nan"), None, 0.0)

    def buy_something(built: BuildContext) -> None:
        bought = pulp.lpSum(built.variables["bought"].values())
        built.add_row("flip_probe", ("buy_at_least_one_node",), bought >= 1)

    return solve_context(ctx, solver=solver, extra_rows=buy_something)
