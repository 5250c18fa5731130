"""A first plan for the exact solve, found on a restriction guided by the linear relaxation (HiGHS).

On the full-catalog planning MILPs HiGHS spends most of its time before it holds a good plan: its root
cut loop and sub-MIP heuristics run against an incumbent far above the optimum, and its reduced-cost
fixing only starts once one is close (5-workload bench: 2.7 s CPU cold, 0.8 s handed its optimum). A
restriction in the spirit of RENS / relaxation-induced neighbourhoods finds such a plan cheaply:

    1. solve the linear relaxation min c·x s.t. A x ⋈ b, l ≤ x ≤ u (integrality dropped): x̄, reduced costs d;
    2. Z = the integer columns with x̄_i = 0; keep those with d_i ≤ :data:`FREE_TOL` (columns the
       relaxation could bring in at no cost: its alternative optima) and, of the others ordered by d_i
       (ties: column order), the first ⌈KEEP_FRAC · |rest|⌉; fix the others at their lower bound (x_i = l_i);
    3. solve that restriction as a MILP within :data:`MAX_NODES` branch-and-bound nodes.

Every plan of the restriction is a plan of the full problem (it only tightens bounds), so its best plan is
a valid first incumbent, handed to the exact solve (planner.optimize.solver.WarmHiGHS); the exact solve
then proves or improves it: the optimum and the proven bound are the full problem's, only the search is
shorter. Columns the relaxation prices far above the rest are the ones the restriction drops, which is why
its plan is usually near-optimal. Deterministic: one thread (planner.highs_threads), fixed seed, a node limit
(no wall clock).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pulp

from planner.highs_threads import run_highs
from planner.optimize.components import columns, highs_model
from planner.optimize.pooled_start import pooled_start
from planner.problem.context import BuildContext

KEEP_FRAC = 0.15
"""Share of the integer columns the relaxation leaves at zero with a positive reduced cost that the
restriction keeps (lowest reduced cost first)."""

FREE_TOL = 1e-9
"""Reduced cost (USD) up to which a column left at zero is free to enter the relaxation's optimum: always
kept. On the bench and scaling instances a third of the zero columns are; picking among them by column
order made the restricted plan hinge on how ties fall (bench: 470k → 417k USD, the optimum, with all kept;
1-month economics: 11.8k → 11.6k, optimum 11.3k)."""

MAX_NODES = 100
"""Branch-and-bound nodes of the restricted MILP (the bench and 1-month instances need under 30)."""

MIN_INTEGER_COLUMNS = 400
"""Integer columns below which the exact solve is quick on its own and no first plan is searched."""

MAX_INTEGER_COLUMNS = 2500
"""Integer columns above which the restricted MILP here costs more than it saves, so only the pooled first
plan (planner.optimize.pooled_start, tried first at every size) is searched: its root
(cuts and heuristics on the still-large restriction) grows faster than the exact solve's. Measured (CPU s,
exact solve with / without the first plan): bench 5 workloads (1,077 integer columns) 1.2 / 2.6; 10
workloads (2,145) 8.8 / 9.3; 20 workloads (4,266) 59-69 / 46, the restricted MILP alone 8-10 s — under the
bench's 20 s cap the 20-workload plan ended at a 7.9 % gap with it, 0.9 % without."""


def _configure(h: Any, *, time_limit_s: float | None) -> None:
    for name, value in (("random_seed", 1), ("mip_rel_gap", 1e-6), ("mip_allow_restart", False)):
        h.setOptionValue(name, value)
    if time_limit_s is not None:
        h.setOptionValue("time_limit", max(1e-3, time_limit_s))


def restricted_start(
    ctx: BuildContext, *, time_limit_s: float | None = None, keep_frac: float = KEEP_FRAC, max_nodes: int = MAX_NODES
) -> dict[str, float] | None:
    """A feasible plan of the built min-cost problem of ``ctx`` (PuLP variable name → value): the pooled first
    plan (planner.optimize.pooled_start: each workload's best configurations per GPU pool, packed), else from
    the restriction of the module docstring; None when the problem is small (:data:`MIN_INTEGER_COLUMNS`), a
    maximization, or neither restriction holds a plan within its limits (above :data:`MAX_INTEGER_COLUMNS`
    only the pooled one is tried)."""
    if ctx.prob.sense != pulp.LpMinimize:
        return None
    cols, index = columns(ctx)
    integer = np.array([v.cat == pulp.LpInteger for v in cols], dtype=bool)
    if int(integer.sum()) < MIN_INTEGER_COLUMNS:
        return None
    pooled = pooled_start(ctx, time_limit_s=time_limit_s)
    if pooled is not None or int(integer.sum()) > MAX_INTEGER_COLUMNS:
        return pooled
    h = highs_model(ctx, cols, index, list(range(len(cols))))
    _configure(h, time_limit_s=time_limit_s)
    h.setOptionValue("solve_relaxation", True)
    run_highs(h)
    lp = h.getSolution()
    if not lp.value_valid or not lp.dual_valid:
        return None
    x = np.asarray(lp.col_value, dtype=float)
    reduced = np.asarray(lp.col_dual, dtype=float)
    zero = np.flatnonzero(integer & (np.abs(x) <= 1e-9))
    priced = zero[reduced[zero] > FREE_TOL]
    order = priced[np.argsort(reduced[priced], kind="stable")]
    drop = order[math.ceil(keep_frac * len(order)) :].astype(np.int32)
    lower = np.array([0.0 if v.lowBound is None else float(v.lowBound) for v in cols])[drop]
    h.clearSolver()  # the restricted MILP searches from scratch, not from the relaxation's basis
    h.changeColsBounds(len(drop), drop, lower, lower)  # the same model, now the restricted MILP
    h.setOptionValue("solve_relaxation", False)
    h.setOptionValue("mip_max_nodes", max_nodes)
    run_highs(h)
    if h.getInfo().primal_solution_status != 2:  # kSolutionStatusFeasible
        return None
    values = h.getSolution().col_value
    return {v.name: float(values[i]) for i, v in enumerate(cols)}
