"""Workload cost floor (a valid inequality): the replicas serving a workload in a slice cost at least what
the cheapest whole-replica way of serving it alone costs, with every GPU priced at its cheapest supply.

    Σ_{k ∈ K_w} c[k, t] · Σ_j n_rep[k, j, t]  ≥  L[w, t]                                   ∀ w, t     (1)

    L[w, t] = min  Σ_{k, j} c[k, t] · n[k, j]                       (the workload's own MILP, HiGHS)
              s.t. Σ_{k co-located} x_k + Σ_g p_g ≥ D[w, t]                      (demand)
                   x_k ≤ Σ_j cap[k, j] · n[k, j]                                 (operating points)
                   p_g ≤ Σ_{k ∈ P_wg} x_k,  p_g ≤ Σ_{k ∈ D_wg} x_k               (PD groups: both pools)
                   n[k, j] ∈ {0, 1, …, U[k, j]},  x, p ≥ 0

    c[k, t] = f_k · π[g(k), s(k), t],   π[g, s, t] = min_{o ∈ O(g, s)} price_o(t) / (e_o · unit_o)

Notation: K_w every candidate of workload w (co-located, prefill and decode pools; the MILP leaves out
the points and slices a forbidding family holds at zero: memory_fit, node_packing, placement_rtt,
quantization_policy); f_k the GPUs a replica holds (its rack footprint, as in constraints/gpu_supply.py);
cap, U, D, P_wg, D_wg as in constraints/slo_operating_point.py and constraints/pd_flow.py; O(g, s) the
supply options at (g, s), e_o, unit_o as in gpu_supply; price_o(t) its objective price per unit in slice t
(months_t · USD per unit-month; a bought node's horizon cost spread over the slices by their months).

Valid for any weights c ≥ 0: every plan's replicas of w, with their flows, are a solution of the
workload's MILP (it drops the other families' rows: one point per candidate, KV links, supply), so their
weighted count is at least its optimum, and L is HiGHS's proven bound of it less a relative 1e-7. The
prices make it useful: the supply rows already charge every GPU at least π, so the objective is at least
Σ_w L[w, t]; the linear relaxation alone only has min_k c_k / cap_k · D (fractional replicas), and the
gap between the two — a workload needs ⌈D / cap⌉ whole replicas of its best configuration or a costlier
mix — is what (1) adds, per workload (20-workload full-catalog bench: the root relaxation rises from 41,734 to
45,328 USD, optimum 45,850; handed its optimum, HiGHS proves it in 5 nodes instead of 109). Rows that would
not rise above that fractional value by :data:`MIN_LIFT` are left out, and so are all rows of problems with
fewer than :data:`MIN_REPLICA_COLUMNS` replica columns.

Only with HiGHS installed (highspy solves the workload MILPs), for min_cost without the explain mode (there the served demand may be less than D) and slices whose
demand is served in full (not before the first supply arrives).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pulp

from constraints.gpu_supply import replica_footprints
from planner.highs_threads import highspy_installed, highspy_module, new_highs, run_highs
from planner.problem.context import BuildContext
from planner.problem.roles import Role, cands_with_role
from planner.problem.supply import SupplyKind, first_supply_month

BOUND_TOL = 1e-7
"""Relative margin taken off the workload MILP's proven bound (solver tolerances)."""

MIN_LIFT = 1e-4
"""Relative rise over the fractional bound min_k c_k / cap_k · D below which a row is not added."""

MAX_NODES = 2000
"""Branch-and-bound nodes of one workload's MILP (its proven bound is used when it stops there)."""

MIN_REPLICA_COLUMNS = 2000
"""Replica-count columns (n_rep) below which no row is added: on smaller problems the rows do not pay.
`make bench` solve seconds without / with them (2026-12-05, quiet 2-core machine): the 1-month scenario with
buy options (2,101 columns) 2.22 / 1.67, and 2.32 / 1.95 on the code before the prefill LM-head change, which
moved its capacities by ~1e-6; 10 workloads (2,187) is path-dependent: 9.2 / 7.1 before that change, 8.8 /
10.5 after it; the 12-month buy scenario keeps its plan and gap. At 1,095 (the 5-workload bench plan) they save
in the plan's solve what they cost its GPU-type alternatives; the examples (at most 168 columns) get slower
(buy_vs_rent 2.5 / 3.5 s CPU)."""

POOL_ROLES: tuple[Role, ...] = ("prefill", "decode")

FORBIDDING = ("memory_fit", "node_packing", "placement_rtt", "quantization_policy")
"""Families whose rows hold a candidate at zero (role ``forbid`` in constraints/__init__.py; keys start
with the candidate id)."""


def gpu_prices_usd(ctx: BuildContext, t: int) -> dict[tuple[str, str], float]:
    """π[g, s, t]: the cheapest objective price of one usable GPU at (g, s) in slice t, USD."""
    total_months = sum(ctx.months[u] for u in ctx.periods) or 1.0
    prices: dict[tuple[str, str], float] = {}
    for opt in ctx.supply:
        if opt.kind is SupplyKind.BUY:
            unit_usd = opt.horizon_usd_per_unit * ctx.months[t] / total_months
        else:
            unit_usd = opt.usd_per_unit_month * ctx.months[t]
        per_gpu = max(0.0, unit_usd) / max(1e-12, opt.effective_gpus_frac * opt.unit_gpus)
        key = (opt.gpu, opt.site)
        prices[key] = min(per_gpu, prices.get(key, math.inf))
    return prices


def workload_milp(
    n_cost: list[float], n_cap: list[float], n_up: list[float], n_cand: list[int], cands: list[int],
    colocated: list[int], groups: list[tuple[list[int], list[int]]], demand: float,
) -> tuple[float, list[float] | None]:
    """Proven lower bound of the workload MILP of the module docstring (HiGHS; -inf when it has none, +inf
    when it has no plan) and its best plan's replica counts (None without one). Its columns n: cost
    ``n_cost``, capacity ``n_cap`` (req/s), bound ``n_up`` and candidate ``n_cand`` (one per operating point);
    ``cands`` the candidates, ``colocated`` those serving on their own, ``groups`` (prefill, decode) pools."""
    highspy = highspy_module()
    h = new_highs()
    for name, value in (("random_seed", 1), ("mip_rel_gap", 1e-6), ("mip_max_nodes", MAX_NODES)):
        h.setOptionValue(name, value)
    n, m, g = len(n_cost), len(cands), len(groups)
    inf = highspy.kHighsInf
    h.addVars(n + m + g, np.zeros(n + m + g), np.array([*n_up, *([inf] * (m + g))]))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(n_cost))
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * n))
    pos = {k: n + i for i, k in enumerate(cands)}
    rows: list[tuple[float, list[int], list[float]]] = []  # (lower bound, columns, values), upper = inf
    rows.append((demand, [pos[k] for k in colocated] + [n + m + i for i in range(g)], [1.0] * (len(colocated) + g)))
    by_cand: dict[int, list[int]] = defaultdict(list)
    for col, k in enumerate(n_cand):
        by_cand[k].append(col)
    for k in cands:  # Σ_j cap n − x ≥ 0
        rows.append((0.0, [*by_cand[k], pos[k]], [*(n_cap[c] for c in by_cand[k]), -1.0]))
    for i, (prefill, decode) in enumerate(groups):
        for pool in (prefill, decode):  # Σ_pool x − p ≥ 0
            rows.append((0.0, [*(pos[k] for k in pool), n + m + i], [*([1.0] * len(pool)), -1.0]))
    starts = np.cumsum([0] + [len(r[1]) for r in rows[:-1]]).astype(np.int32)
    h.addRows(
        len(rows), np.array([r[0] for r in rows]), np.full(len(rows), inf), int(sum(len(r[1]) for r in rows)),
        starts, np.array([c for r in rows for c in r[1]], dtype=np.int32), np.array([v for r in rows for v in r[2]]),
    )
    run_highs(h)
    if h.getModelStatus() == highspy.HighsModelStatus.kInfeasible:
        return math.inf, None
    info = h.getInfo()
    plan = list(h.getSolution().col_value[:n]) if info.primal_solution_status == 2 else None
    if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
        return float(min(info.objective_function_value, info.mip_dual_bound)), plan
    bound = float(info.mip_dual_bound)
    return (bound if math.isfinite(bound) else -math.inf), plan


@dataclass(frozen=True)
class WorkloadPlan:
    """The workload MILP of one (workload, slice) over some of its candidates: the weights c[k, t], HiGHS's
    proven bound L (less :data:`BOUND_TOL`) and the fractional bound min_k c_k / cap_k · D."""

    cost: dict[int, float]
    bound: float
    fractional: float


def forbidden_keys(ctx: BuildContext) -> set[tuple[int, ...]]:
    """What the forbidding families' rows (built so far) hold at zero: (candidate, point, slice) for a
    replica count (memory_fit, node_packing), (candidate, slice) for a flow (placement_rtt,
    quantization_policy)."""
    return {tuple(int(x) for x in key) for family, key in ctx.rows.values() if family in FORBIDDING}


def allowed_points(ctx: BuildContext, k: int, t: int, forbidden: set[tuple[int, ...]]) -> list[Any]:
    """The operating points of candidate ``k`` that may serve in slice ``t`` (none if its flow is held at 0)."""
    if (k, t) in forbidden:
        return []
    return [p for p in ctx.points_of(k) if (k, int(p.point), t) not in forbidden]


def solve_workload(
    ctx: BuildContext, workload: str, t: int, cands: list[int], cost: dict[int, float],
    forbidden: set[tuple[int, ...]],
) -> WorkloadPlan | None:
    """The workload MILP of the module docstring for ``workload`` in slice ``t`` over the points of ``cands``
    not ``forbidden`` (:func:`forbidden_keys`; weights ``cost``, all finite); None without demand or candidates.

    Only its Pareto columns are built: within the co-located candidates, and within each pool of a PD group,
    a point that costs no less and serves no more than another one's is left out. That keeps its optimum: a
    plan using it serves at least as much, for no more, with the other one instead (and never needs more
    of those than the other one's bound U = ⌈peak / cap⌉ ≥ ⌈D / cap⌉)."""
    demand = ctx.demand[(workload, t)]
    if demand <= 0 or not cands:
        return None
    keep = set(cands)
    families: dict[int, tuple[str, int]] = {k: ("colocated", 0) for k in cands_with_role(ctx.cands, workload, "colocated") if k in keep}
    groups_of = list(ctx.pd_groups(workload).values())
    for g, pools in enumerate(groups_of):
        for role in POOL_ROLES:
            families.update({k: (role, g) for k in pools[role] if k in keep})
    columns: dict[tuple[str, int], list[tuple[float, float, int, int]]] = defaultdict(list)
    for k in cands:
        if k in families:
            for p in allowed_points(ctx, k, t, forbidden):
                columns[families[k]].append((cost[k], -float(p.capacity_requests_per_s), k, int(p.point)))
    n_cost, n_cap, n_up, n_cand = [], [], [], []
    for family in sorted(columns):
        most = 0.0
        for c, neg_cap, k, j in sorted(columns[family]):
            if -neg_cap > most:  # serves more than every cheaper (or as cheap) point
                most = -neg_cap
                n_cost.append(c)
                n_cap.append(-neg_cap)
                n_up.append(float(ctx.variables["n_rep"][(k, j, t)].upBound))
                n_cand.append(k)
    used = sorted(set(n_cand))
    on = set(used)
    colocated = [k for k in used if families[k][0] == "colocated"]
    groups = [([k for k in pools["prefill"] if k in on], [k for k in pools["decode"] if k in on]) for pools in groups_of]
    fractional = demand * min((c / cap for c, cap in zip(n_cost, n_cap, strict=True) if cap > 0), default=math.inf)
    bound, _plan = workload_milp(n_cost, n_cap, n_up, n_cand, used, colocated, groups, demand)
    bound -= BOUND_TOL * max(1.0, abs(bound))
    return WorkloadPlan({k: cost[k] for k in cands}, bound, fractional)


def workload_cost_floors(ctx: BuildContext) -> list[tuple[str, int, WorkloadPlan]]:
    """(workload, slice, its MILP over every allowed candidate) of the rows (1) worth adding."""
    if ctx.scenario.objective != "min_cost" or ctx.elastic or not ctx.supply:
        return []
    if len(ctx.variables["n_rep"]) < MIN_REPLICA_COLUMNS or not highspy_installed():
        return []  # small, or no HiGHS to solve the workload MILPs (CBC alone): no rows
    forbidden = forbidden_keys(ctx)
    footprint = replica_footprints(ctx)
    gpu_of, site_of = ctx.column("gpu"), ctx.column("site")
    from_month = first_supply_month(ctx.supply)
    out = []
    for t in ctx.periods:
        if ctx.start_month[t] < from_month:
            continue
        prices = gpu_prices_usd(ctx, t)
        for w in ctx.scenario.workloads:
            cands = list(ctx.cands_of_workload(w.name))
            cost = {k: footprint[k] * prices.get((str(gpu_of[k]), str(site_of[k])), math.inf) for k in cands}
            if not all(math.isfinite(c) for c in cost.values()):
                continue
            plan = solve_workload(ctx, w.name, t, cands, cost, forbidden)
            if plan is not None and math.isfinite(plan.bound) and plan.bound > plan.fractional * (1 + MIN_LIFT):
                out.append((w.name, t, plan))
    return out


def add_workload_cost_floor(ctx: BuildContext) -> None:
    """Add row (1) for every workload and slice where it lifts the fractional bound."""
    for workload, t, plan in workload_cost_floors(ctx):
        weighted: Any = pulp.lpSum(c * ctx.replicas(k, t) for k, c in plan.cost.items())
        ctx.add_row("workload_cost_floor", (workload, t), weighted >= plan.bound)
