"""Demand coverage: every workload's peak demand is served in every period.

    Σ_{k ∈ K_w} flow[k, t] + Σ_g pd_flow[w, g, t] = D[w, t]            ∀ w ∈ W, t ∈ T          (min_cost)
    Σ_{k ∈ K_w} flow[k, t] + Σ_g pd_flow[w, g, t] = scale · D[w, t]    ∀ w ∈ W, t ∈ T          (max_throughput)

(an equality, so ``flow`` is the traffic actually routed to each deployment; spare capacity shows as
capacity − served).

Notation: K_w co-located candidates of workload w; pd_flow[w, g, t] its requests served by the separate prefill
and decode pools of PD group g (constraints/pd_flow.py; none without prefill/decode candidates); flow[k, t] requests/s served by k; D[w, t] peak requests/s;
scale ≥ 0 the common served fraction (variable ``scale``, only for max_throughput). The scale is measured
from the first month any supply can serve (:func:`planner.problem.supply.first_supply_month`: the first
purchase delivery when only buying is allowed); periods starting before it serve what they can,
flow ≤ scale · D. In the
explain-infeasibility mode (``ctx.elastic``) a shortfall short[w, t] ∈ [0, D] is added to the left side.
"""

from __future__ import annotations

import pulp

from planner.problem.context import BuildContext
from planner.problem.roles import cands_with_role
from planner.problem.supply import first_supply_month


def add_demand_coverage(ctx: BuildContext) -> None:
    """Add one coverage row per (workload, period)."""
    scale = ctx.variables["scale"].get(()) if ctx.scenario.objective == "max_throughput" else None
    from_month = first_supply_month(ctx.supply)
    for w in ctx.scenario.workloads:
        cands = cands_with_role(ctx.cands, w.name, "colocated")
        groups = list(ctx.pd_groups(w.name))
        for t in ctx.periods:
            served = pulp.lpSum(ctx.variables["flow"][(int(k), t)] for k in cands) + pulp.lpSum(
                ctx.variables["pd_flow"][(w.name, g, t)] for g in groups
            )
            demand = ctx.demand[(w.name, t)]
            # 1. served = demand (or scale · demand)
            rhs = scale * demand if scale is not None else demand
            if ctx.elastic:
                served = served + ctx.var("short", (w.name, t), low=0, up=demand)
            if scale is not None and ctx.start_month[t] < from_month:
                ctx.add_row("demand_coverage", (w.name, t), served <= rhs)  # before any supply arrives
            else:
                ctx.add_row("demand_coverage", (w.name, t), served == rhs)
