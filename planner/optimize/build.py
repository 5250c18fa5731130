"""Build the planning MILP in one visible sequence: variables → each constraint family in
``constraints.FAMILIES`` order → objective (as PyPSA's ``create_model``).

The decomposition of large problems (planner.optimize.decompose) changes built problems only through the
helpers here (relax, fix, bound, re-aim the objective), never by touching PuLP variables itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pulp

from constraints import FAMILIES
from planner.optimize.quiet import quiet_stdout
from planner.problem.context import BuildContext
from planner.problem.cost_terms import supply_cost_usd, tie_break_usd
from planner.problem.variables import create_variables

TIE_BREAK = "tie_break"
"""Cost category of the deterministic tie-break (not a cost the user pays; reports leave it out)."""


def build_problem(ctx: BuildContext) -> None:
    """Variables, the constraint families in ``constraints.FAMILIES`` order, then the objective. Families
    may run HiGHS while building (constraints/workload_cost_floor.py): its banner is kept off stdout."""
    create_variables(ctx)
    with quiet_stdout():
        for family in FAMILIES:
            family.add(ctx)
    set_objective(ctx)


def set_objective(ctx: BuildContext) -> None:
    """min Σ_o supply cost (planner.problem.cost_terms, by procurement category) + the tie-break.

    Explain mode (``ctx.elastic``) minimizes the unserved demand instead; the first stage of max_throughput
    maximizes the served fraction; its second stage holds that fraction (``ctx.scale_floor``) at min cost.
    """
    for i, opt in enumerate(ctx.supply):
        ctx.add_cost(opt.procurement.value, supply_cost_usd(ctx, i))
    ctx.add_cost(TIE_BREAK, tie_break_usd(ctx))
    if ctx.elastic:
        # lexicographic first stage: the least unserved demand, whatever it costs
        ctx.prob += pulp.lpSum(ctx.variables["short"].values())
        return
    if ctx.scenario.objective == "max_throughput" and ctx.scale_floor is None:
        # first stage of max_throughput: the largest common served fraction within the budget
        ctx.prob.sense = pulp.LpMaximize
        ctx.prob += ctx.variables["scale"][()]
        return
    if ctx.scale_floor is not None:
        ctx.add_row("demand_coverage", ("scale_floor",), ctx.variables["scale"][()] >= ctx.scale_floor)
    ctx.prob += pulp.lpSum(pulp.lpSum(terms) for terms in ctx.cost_terms.values())


def set_cost_objective(ctx: BuildContext, *, skip: Iterable[str] = (TIE_BREAK,), extra: Iterable[Any] = ()) -> None:
    """Replace the objective of the built ``ctx`` by its cost terms outside the categories ``skip``, plus
    the ``extra`` terms."""
    skipped = set(skip)
    terms = [term for cat, ts in ctx.cost_terms.items() if cat not in skipped for term in ts]
    ctx.prob.setObjective(pulp.lpSum([*terms, *extra]))


def relax_replicas(ctx: BuildContext) -> None:
    """Make the replica counts of the built ``ctx`` continuous, and with them the redundancy rule's 'has a
    replica' indicators (constraints/redundancy.py); supply units stay whole."""
    for family in ("n_rep", "redundancy_used"):
        for v in ctx.variables.get(family, {}).values():
            v.cat = pulp.LpContinuous


def relax_point_selection(ctx: BuildContext) -> None:
    """Make the operating-point selectors y of the built ``ctx`` continuous: a replica may then run at any
    point of its candidate (a relaxation; within one slice it changes little, and it drops the binaries)."""
    for v in ctx.variables["y"].values():
        v.cat = pulp.LpContinuous


def fix_variable(ctx: BuildContext, family: str, key: Any, value: float) -> None:
    """Hold variable ``family[key]`` of the built ``ctx`` at ``value``."""
    v = ctx.variables[family][key]
    v.lowBound = v.upBound = value


def set_upper_bound(ctx: BuildContext, family: str, key: Any, up: float | None) -> float | None:
    """Set the upper bound of ``family[key]``; returns the previous one."""
    v = ctx.variables[family][key]
    previous: float | None = v.upBound
    v.upBound = up
    return previous
