"""The requests/s each deployment serves, spread over the plan's replicas as a router spreads them: with
everything the plan pays for held, the flows are re-chosen to balance the replicas' utilization.

    minimize   Σ_{k, t: C[k, t] > 0}  s[k, t] · flow[k, t]² / C[k, t]
    subject to every row of the plan's MILP, with every integer variable, ``scale`` and every variable
               of the objective held at the plan's values

    C[k, t] = Σ_j cap[k, j] · n_rep[k, j, t]      the plan's capacity of candidate k in slice t at its points
    s[k, t] = 1, or C_stage / (2 · C_narrow) for a PD pool (:func:`stage_scales`: a request passes two pools)

Why: a flow costs nothing, so every split of a workload's demand over its deployments within their
capacities has the plan's cost, and HiGHS returns whichever vertex it meets: one deployment at its full
capacity at the SLO and another nearly idle, a split that moves with a capacity's last digits
(examples/buy_vs_rent served 4.79 or 4.03 req/s on one deployment in quarter 1 for a capacity change of
1e-5). The plan's latencies are read at the served load (planner.audit.at_served_load), so they moved with it.

Where no other row bounds them, the optimum has 2·flow[k, t] / C[k, t] = μ[w, t] for every deployment of
workload w in slice t (the multiplier of its demand row): every replica at the same utilization, the
split of a router that weighs replicas by capacity (round-robin by weight, least-loaded); a PD group's
path weighs as its narrower stage, whose utilization its co-located neighbours share. Rows that
restrict flows (quantization policy, placement, PD pools' coupling, redundancy) keep their hold: the
answer is the most even split they allow. The objective is strictly convex in each flow with C > 0 (the
others are 0 by their capacity rows), so the flows are unique: the same plan gives the same split
whichever vertex the MILP ended at (to HiGHS's QP tolerance: utilizations equal to about 1e-6). A
redundancy rule's spare replicas share the load too (chat_p99_redundant: both deployments at 29 %).
Nothing the plan pays for moves, so its cost, supply and replicas are unchanged; a split HiGHS does not
solve to optimality leaves the plan's flows as they were.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pulp

from planner.highs_threads import highspy_installed, highspy_module, new_highs, run_highs
from planner.optimize.components import RowBlock, column_bound
from planner.optimize.quiet import quiet_stdout
from planner.optimize.solver import Solution, read_solution, restore, snapshot
from planner.problem.context import BuildContext

HELD_CONTINUOUS = ("scale",)
"""Continuous variable families held besides those of the objective (max_throughput's served fraction)."""


def capacities(ctx: BuildContext, sol: Solution) -> dict[tuple[int, int], float]:
    """C[k, t]: the capacity the plan's replicas of candidate k give in slice t at their points, req/s."""
    cap_of = {(int(p.cand), int(p.point)): float(p.capacity_requests_per_s) for p in ctx.points.itertuples()}
    out: dict[tuple[int, int], float] = {}
    for (k, j, t), n in sol.values.get("n_rep", {}).items():
        if n > 0.5:
            out[(int(k), int(t))] = out.get((int(k), int(t)), 0.0) + cap_of[(int(k), int(j))] * round(n)
    return out


def stage_scales(ctx: BuildContext, cap: dict[tuple[int, int], float]) -> dict[tuple[int, int], float]:
    """s[k, t] for the prefill and decode pools of every PD group in every slice: C_stage / (2 · C_narrow), the
    stage's capacity C_stage = Σ_{k in the stage} C[k, t] over the narrower stage's C_narrow = min(C_P, C_D).

    A disaggregated request passes both stages, so the pools' terms weighted by 1 would count it twice (the
    co-located replicas beside a PD group ran at u_P + u_D: 100 % of their capacity with the pools at 73 %).
    With these scales, F requests/s on the group cost F² · (1/(2·C_narrow) + 1/(2·C_narrow)) = F² / C_narrow:
    the path counts as one deployment of its narrower stage's capacity, so co-located replicas run at the
    bottleneck stage's utilization, and the pools of each stage still share their stage's flow by capacity."""
    scales: dict[tuple[int, int], float] = {}
    for w in ctx.scenario.workloads:
        for pools in ctx.pd_groups(w.name).values():
            for t in ctx.periods:
                stage = {role: sum(cap.get((k, t), 0.0) for k in pools[role]) for role in ("prefill", "decode")}
                narrow = min(stage.values())
                for role, members in pools.items():
                    for k in members:
                        scales[(k, t)] = stage[role] / (2.0 * narrow) if narrow > 0 else 1.0
    return scales


def _free_variables(ctx: BuildContext, cap: dict[tuple[int, int], float]) -> dict[str, tuple[Any, float]]:
    """The variables the split re-chooses, by name, with their weight 2 · s / C[k, t] (s: :func:`stage_scales`
    for a PD pool, 1 otherwise; 0 for a variable outside the objective's sum): the flows of deployments the
    plan runs, and every other continuous variable outside the plan's objective and :data:`HELD_CONTINUOUS`
    (pd_flow, redundancy's losses). A flow with no replica (C = 0) stays at 0, the value its capacity row
    allows."""
    in_objective = {v.name for v, _ in ctx.prob.objective.items()}
    held = {v.name for family in HELD_CONTINUOUS for v in ctx.variables.get(family, {}).values()}
    scales = stage_scales(ctx, cap)
    free: dict[str, tuple[Any, float]] = {}
    for family, registry in ctx.variables.items():
        for key, v in registry.items():
            if v.cat == pulp.LpInteger or v.name in in_objective or v.name in held:
                continue
            if family == "flow":
                k_t = (int(key[0]), int(key[1]))
                c = cap.get(k_t, 0.0)
                if c > 0:
                    free[v.name] = (v, 2.0 * scales.get(k_t, 1.0) / c)
            else:
                free[v.name] = (v, 0.0)
    return free


def _held_value(v: Any) -> float:
    value = float(v.varValue or 0.0)
    return float(round(value)) if v.cat == pulp.LpInteger else value


def _split_model(ctx: BuildContext, free: dict[str, tuple[Any, float]], highspy: Any) -> Any:
    """The HiGHS model of the module docstring on the ``free`` variables alone: every row of ``ctx`` with a
    free variable, the held variables' values moved into its bounds (a few hundred columns where the whole
    problem has tens of thousands: the 12-month economics bench)."""
    position = {name: i for i, name in enumerate(free)}
    rows = RowBlock()
    for expr in ctx.row_constraints.values():
        mine = [(position[v.name], float(c)) for v, c in expr.items() if v.name in position]
        if mine:
            held = sum(float(c) * _held_value(v) for v, c in expr.items() if v.name not in position)
            rows.add(expr, -float(expr.constant) - held, mine)
    n = len(free)
    h = new_highs()
    h.addVars(
        n,
        np.array([column_bound(v, True) for v, _ in free.values()]),
        np.array([column_bound(v, False) for v, _ in free.values()]),
    )
    rows.add_to(h)
    weights = np.array([w for _, w in free.values()])
    diagonal = np.flatnonzero(weights)
    hessian = highspy.HighsHessian()
    hessian.dim_ = n
    hessian.format_ = highspy.HessianFormat.kTriangular
    hessian.start_ = np.searchsorted(diagonal, np.arange(n + 1)).astype(np.int32)
    hessian.index_ = diagonal.astype(np.int32)
    hessian.value_ = weights[diagonal]
    h.passHessian(hessian)
    return h


def balanced_flows(ctx: BuildContext, sol: Solution) -> Solution:
    """``sol`` with its flows re-chosen as in the module docstring (``sol`` itself where there is nothing
    to balance or HiGHS does not solve the split)."""
    if (
        sol.status not in ("optimal", "feasible")
        or not ctx.variables.get("flow")
        or ctx.elastic
        or ctx.prob.sense != pulp.LpMinimize
        or not highspy_installed()  # CBC alone: the flows stay the MILP's
    ):
        return sol
    free = _free_variables(ctx, capacities(ctx, sol))
    if not any(w for _, w in free.values()):
        return sol
    highspy = highspy_module()
    h = _split_model(ctx, free, highspy)
    with quiet_stdout():
        run_highs(h)
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return sol
    before = snapshot(ctx)
    for (v, _), value in zip(free.values(), h.getSolution().col_value, strict=True):
        v.varValue = float(value)
    again = read_solution(ctx, optimal=sol.status == "optimal", elapsed=sol.solve_seconds)
    if not math.isclose(again.objective_usd, sol.objective_usd, rel_tol=1e-9, abs_tol=1e-6):
        restore(ctx, before)
        return sol
    return dataclasses.replace(
        again, status=sol.status, gap=sol.gap, bound_usd=sol.bound_usd, build_seconds=sol.build_seconds
    )
