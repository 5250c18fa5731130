"""Replica counts that no plan as cheap as the first plan can use, held at zero in the exact solve.

Let U be the cost of the first plan handed to the exact solve (planner.optimize.incumbent) and

    Σ_k c[k, t] · Σ_j n_rep[k, j, t]  ≥  L[w, t]                      (constraints/workload_cost_floor.py)

the workload cost floors, c[k, t] a replica's GPUs at their cheapest price π. Where every supply column's
objective price is at least π per usable GPU and no other objective term is negative (no volume discount,
no purchase: checked on the objective, :func:`_prices_cover_floors`), every plan costs at least
Σ_{w, t} Σ_k c[k, t] · n[k, t]: the supply rows cover each replica's GPUs. A plan running a replica of
candidate k of workload w at point j in slice t charges w at least

    B[k, j, t] = c[k, t] + ρ[w, t] · max(0, D[w, t] − cap[k, j])            k co-located
    B[k, j, t] = c[k, t] + min(L[w, t], min_{k' in the other pool of k's PD group} c[k', t])    k a pool

(ρ[w, t] = min c / cap over w's points: the rest of its demand costs at least that per req/s, a request
through a PD group at least the sum over its two pools; a pool's replica serves only beside a replica of the
other pool, or idles and leaves all of D to the others), so the plan costs at least
Σ_{w', t'} L[w', t'] − L[w, t] + B[k, j, t]. Where that exceeds U (by more than a relative 1e-6), no plan at
most as costly as the first one uses (k, j, t), and its replica count is held at 0 in HiGHS's model. Every
optimal plan costs at most U, so the optimum and the proven bound are the full problem's; only the search
is smaller.

Why: HiGHS's reduced-cost fixing reads the relaxation, where every replica column is priced at zero against
the floors (the floor rows' multipliers charge each GPU exactly π), so it fixes nothing until its bound has
risen. The floors' integer optimum per workload knows more: on the 20-workload full-catalog instance the
first plan ($48,960; floors $47,110) holds 1,803 of its 4,344 replica columns at zero.
"""

from __future__ import annotations

import math
from collections import defaultdict

from constraints.workload_cost_floor import gpu_prices_usd
from planner.problem.context import BuildContext
from planner.problem.cost_terms import RENT_DISCOUNT
from planner.problem.supply import SupplyKind

REL_TOL = 1e-6
"""Relative margin above U before a column is held (solver tolerances on U and the floors)."""


def held_at_zero(ctx: BuildContext, first_plan_usd: float) -> set[str]:
    """Names of the replica-count variables of the built ``ctx`` that no plan costing at most
    ``first_plan_usd`` uses (module docstring); empty without floor rows or where prices do not cover them."""
    floors = {
        key: (name, -float(ctx.row_constraints[name].constant))
        for name, (family, key) in ctx.rows.items()
        if family == "workload_cost_floor"
    }
    if not floors or not _prices_cover_floors(ctx):
        return set()
    slack = first_plan_usd - sum(bound for _name, bound in floors.values())
    margin = REL_TOL * max(1.0, abs(first_plan_usd))
    n_rep = ctx.variables["n_rep"]
    key_of = {v.name: key for key, v in n_rep.items()}
    role_of = ctx.column("role")
    held: set[str] = set()
    for (workload, t), (name, floor) in floors.items():
        cost = {int(key_of[v.name][0]): float(c) for v, c in ctx.row_constraints[name].items()}
        points = [(k, int(p.point), float(p.capacity_requests_per_s)) for k in cost for p in ctx.points_of(k)]
        other = _cheapest_other_pool(ctx, str(workload), cost)
        bounds = replica_bounds(
            [cost[k] for k, _j, _cap in points],
            [cap for _k, _j, cap in points],
            [None if role_of[k] == "colocated" else other.get(k, math.inf) for k, _j, _cap in points],
            ctx.demand[(str(workload), t)],
            floor,
        )
        for (k, j, _cap), bound in zip(points, bounds, strict=True):
            v = n_rep.get((k, j, t))
            if v is not None and bound - floor > slack + margin:
                held.add(v.name)
    return held


def replica_bounds(
    cost: list[float], capacity: list[float], other_pool: list[float | None], demand: float, floor: float
) -> list[float]:
    """B of the module docstring for each operating point of one workload in one slice: its replica's weight
    ``cost`` c, ``capacity`` cap (req/s), ``other_pool`` None for a co-located point, else the least weight in
    the other pool of its PD group (+inf: none); ``demand`` D, ``floor`` L (the workload MILP's bound)."""
    rho = min((c / cap for c, cap in zip(cost, capacity, strict=True) if cap > 0), default=0.0)
    return [
        c + rho * max(0.0, demand - cap) if other is None else c + min(floor, other)
        for c, cap, other in zip(cost, capacity, other_pool, strict=True)
    ]


def _cheapest_other_pool(ctx: BuildContext, workload: str, cost: dict[int, float]) -> dict[int, float]:
    """For each pool candidate of ``workload``: the least weight c of a candidate in the other pool of its PD
    group (+inf where that pool is empty)."""
    out: dict[int, float] = {}
    for pools in ctx.pd_groups(workload).values():
        prefill = min((cost.get(k, math.inf) for k in pools["prefill"]), default=math.inf)
        decode = min((cost.get(k, math.inf) for k in pools["decode"]), default=math.inf)
        out.update({k: decode for k in pools["prefill"]})
        out.update({k: prefill for k in pools["decode"]})
    return out


def _prices_cover_floors(ctx: BuildContext) -> bool:
    """True when the objective charges every GPU of a supply column at least the floors' price π in its slice
    and holds nothing that lowers the cost: no purchase, no volume discount, no negative coefficient."""
    if ctx.variables.get(RENT_DISCOUNT) or any(o.kind is SupplyKind.BUY for o in ctx.supply):
        return False
    coefficient: dict[str, float] = defaultdict(float)
    for v, c in ctx.prob.objective.items():
        coefficient[v.name] += float(c)
    if any(c < 0 for c in coefficient.values()):
        return False
    for t in ctx.periods:
        prices = gpu_prices_usd(ctx, t)
        for o, opt in enumerate(ctx.supply):
            units = ctx.variables["units"].get((o, t))
            if units is None:
                continue
            least = prices.get((opt.gpu, opt.site), 0.0) * opt.effective_gpus_frac * opt.unit_gpus
            if coefficient.get(units.name, 0.0) < least * (1 - 1e-9):
                return False
    return True
