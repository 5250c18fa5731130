"""GPU floor (a valid inequality): the replicas serving a workload in a slice hold at least the GPUs its
demand needs, rounded up to the granularity of the replica sizes.

    Σ_{k ∈ K_w} gpus_k · Σ_j n_rep[k, j, t]  ≥  F[w, t] = q_w · ⌈γ_w · D[w, t] / q_w⌉        ∀ w, t     (1)
    Σ_o e_o · unit_o · units[o, t]  ≥  Σ_w F[w, t]                                           ∀ t        (2)

    γ_w = min( min_{k co-located} gpus_k / cap_k ,  min_{k prefill} gpus_k / cap_k + min_{k decode} gpus_k / cap_k )

Notation: K_w every candidate of workload w (co-located, prefill and decode pools); gpus_k the GPUs a
replica holds; cap_k its largest capacity over its operating points (req/s); D[w, t] the demand, which
min_cost serves in full (demand_coverage); γ_w the fewest GPUs per req/s any way of serving w takes (a
disaggregated request passes a prefill and a decode pool); q_w the greatest common divisor of the gpus_k.

Valid: a co-located flow f_k ≤ cap_k · n_k holds n_k · gpus_k ≥ f_k · gpus_k / cap_k GPUs, the prefill and
the decode pools each carry the disaggregated flow, so the GPUs in use are at least γ_w · D[w, t]; they
are a sum of multiples of q_w, so at least the next multiple of q_w. (2) sums (1) over the workloads
through the gpu_supply rows (a replica's footprint f_k ≥ gpus_k; e_o, unit_o as there): the supply in use
covers the floors, which lets the solver round the supply units too. The linear relaxation alone only
has γ_w · D[w, t]: the rounding is what it adds (integer replica counts). It cuts off no integer plan
(tests/plan/test_gpu_floor.py: brute force on small instances) and lifts the root bound of
examples/buy_vs_rent, whose exact solve it speeds up 10× (6.2 → 0.6 s CPU; (1) alone 1.8 s).

Only for min_cost without the explain mode (there the served demand may be less than D) and for
workloads whose replicas hold whole GPUs (shares of one GPU: no rounding to add).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import reduce

import pulp

from planner.problem.context import BuildContext
from planner.problem.roles import Role, cands_with_role

ROUND_TOL = 1e-9
"""Relative tolerance below a multiple of q at which γ · D counts as that multiple (float noise)."""


def gpus_per_request(
    colocated: Iterable[tuple[float, float]], prefill: Iterable[tuple[float, float]], decode: Iterable[tuple[float, float]]
) -> float:
    """γ: the fewest GPUs per req/s of any way of serving a workload, from (gpus, capacity req/s) of its
    co-located, prefill and decode candidates (inf when it has none)."""
    co = [g / c for g, c in colocated if c > 0]
    pre = [g / c for g, c in prefill if c > 0]
    dec = [g / c for g, c in decode if c > 0]
    options = co + ([min(pre) + min(dec)] if pre and dec else [])
    return min(options, default=math.inf)


def gpu_floor(demand_requests_per_s: float, gpus_per_request_s: float, sizes: Iterable[int]) -> int:
    """Right side of (1): q · ⌈γ · D / q⌉ GPUs, q the gcd of the replica ``sizes`` (0 without demand)."""
    q = reduce(math.gcd, sizes, 0)
    need = gpus_per_request_s * demand_requests_per_s
    if q <= 0 or need <= 0 or not math.isfinite(need):
        return 0
    units = need / q
    return q * math.ceil(units - ROUND_TOL * max(1.0, units))


def add_gpu_floor(ctx: BuildContext) -> None:
    """Add row (1) for every workload and slice with demand, and row (2) for every slice."""
    if ctx.scenario.objective != "min_cost" or ctx.elastic:
        return
    floors = {t: 0 for t in ctx.periods}
    for w in ctx.scenario.workloads:
        cands = list(ctx.cands_of_workload(w.name))
        gpus = {k: float(ctx.column("gpus")[k]) for k in cands}
        if not cands or any(g < 1 or g != int(g) for g in gpus.values()):
            continue
        cap = {k: max((float(p.capacity_requests_per_s) for p in ctx.points_of(k)), default=0.0) for k in cands}

        pairs: dict[Role, list[tuple[float, float]]] = {
            role: [(gpus[k], cap[k]) for k in cands_with_role(ctx.cands, w.name, role)]
            for role in ("colocated", "prefill", "decode")
        }
        gamma = gpus_per_request(pairs["colocated"], pairs["prefill"], pairs["decode"])
        sizes = [int(g) for g in gpus.values()]
        for t in ctx.periods:
            need = gpu_floor(ctx.demand[(w.name, t)], gamma, sizes)
            if need <= 0:
                continue
            held = pulp.lpSum(gpus[k] * ctx.replicas(k, t) for k in cands)
            ctx.add_row("gpu_floor", (w.name, t), held >= need)  # (1)
            floors[t] += need
    for t, need in floors.items():
        if need > 0 and ctx.supply:
            supplied = pulp.lpSum(
                o.effective_gpus_frac * o.unit_gpus * ctx.variables["units"][(i, t)] for i, o in enumerate(ctx.supply)
            )
            ctx.add_row("gpu_floor", ("supply", t), supplied >= need)  # (2)
