"""A first plan for the exact solve of many workloads: each workload's best configurations per GPU pool,
then packed.

The replicas of all workloads share the rented units of each GPU pool (GPU type, site), so the plan is a
bin packing on top of every workload's choice of configuration, and HiGHS's own heuristics find good plans
late (20-workload full-catalog bench: the optimum after 25-70 s). This module builds one cheaply:

    1. for every workload w, slice t, pool P and replica footprint f (GPUs, constraints/gpu_supply.py): the
       co-located candidate of w at P with footprint f of the largest capacity cap (req/s, over its
       operating points), and its cost alone, ⌈D[w, t] / cap⌉ · f · π[P, t] (π the cheapest price of a
       GPU at P: constraints.workload_cost_floor.gpu_prices_usd); the same for the prefill and the decode
       pools of each of w's PD groups, each paired with the other role's cheapest (a disaggregated request
       passes both, so a pair costs the sum);
    2. keep the co-located ones within :data:`KEEP_RATIO` of w's cheapest option, and the PD pairs that cost
       no more than w's cheapest co-located one (every candidate of a workload without an option);
    3. solve the full problem restricted to the kept candidates (every other replica count held at 0) as a
       MILP within :data:`MAX_NODES` branch-and-bound nodes: it chooses among the kept configurations and
       packs them into whole units, with every row of the problem (handed to HiGHS as the exact solve is:
       flows projected out from MIN_INTEGER_COLUMNS on, planner.optimize.flow_projection; 20 workloads
       5.2 → 2.4 s, first plan $48,974 → $48,960).

Step 1 keeps one candidate per (pool, footprint): for a rent-only slice another one there holds the same
GPUs and serves less, so the restriction loses little, and it drops the near-copies (formats, engines,
TP × PP shapes) among which the exact search wanders. Every plan of the restriction is a plan of the full
problem (it only tightens bounds), so its best plan is a valid first incumbent for the exact solve
(planner.optimize.solver.WarmHiGHS), which proves or improves it: the optimum and the proven bound stay
the full problem's. Deterministic: one thread (planner.highs_threads), fixed seed, node limits (no wall clock).

Step 2 keeps PD pairs only where they may beat serving co-located. The bench's scaling instances (5 and
20 workloads, 12 months) keep none of their 573 / 2,280 / 1,092 PD candidates that way; keeping those within
KEEP_RATIO slowed the 5-workload restricted MILP from 0.08 to 0.62 s for the same plan.

Measured (CPU s, first plan + exact solve; before: the relaxation-guided restriction of
planner.optimize.incumbent, or none above its size): 20-workload bench 1.9 s to the optimum 45,850
(HiGHS alone: 46,282 at 20 s), 10 workloads 0.5 s to its optimum 22,925 (before: 2.8 s), the 5-workload
bench 0.2 s to its optimum; on the examples it is their optimum but for buy_vs_rent (+2.7 %: 805,551 USD
against 784,340; +5.1 % without its PD pairs, whose optimum disaggregates, and then the exact solve took
1.45 s instead of 0.55) and chat_p99_redundant (+16 %).
"""

from __future__ import annotations

import math

import pulp

from constraints.gpu_supply import replica_footprints
from constraints.workload_cost_floor import allowed_points, forbidden_keys, gpu_prices_usd
from planner.highs_threads import run_highs
from planner.optimize.components import columns, projection_for, solver_model
from planner.problem.context import BuildContext
from planner.problem.roles import cands_with_role
from planner.problem.supply import first_supply_month

KEEP_RATIO = 3.0
"""Pools whose single-pool cost for a workload is within this factor of its best one are kept for it."""

MAX_NODES = 1000
"""Branch-and-bound nodes of the restricted MILP. 500 stopped the 20-workload bench's restriction at 47,786
(4.2 % above the optimum 45,850) once the FP8 matmul efficiency (accelerators.yaml format_mfu_scale) changed
its candidates, and the exact solve then took 12.3-14.5 s to find the optimum; with 1,000 it takes 6.5 s
(10 workloads 7.9 → 8.9 s, 5 workloads and the examples' 4.2-4.4 s CPU in all unchanged, same optima)."""


Option = tuple[float, tuple[int, ...]]
"""A way to serve a workload's demand in a slice: (its cost alone, USD; the candidates it uses)."""


def _pool_bests(
    ctx: BuildContext, cands: list[int], t: int, prices: dict[tuple[str, str], float], footprint: dict[int, float],
    forbidden: set[tuple[int, ...]],
) -> list[tuple[float, int]]:
    """Step 1 for ``cands`` (one role of one workload w) in slice ``t``: per (GPU, site, footprint) the candidate
    of the largest capacity cap, as (its cost alone ⌈D[w, t] / cap⌉ · f · π, candidate), cheapest first."""
    gpu_of, site_of, workload_of = ctx.column("gpu"), ctx.column("site"), ctx.column("workload")
    best: dict[tuple[str, str, float], tuple[float, float, int]] = {}  # (pool, f) → (-cap, cost, cand)
    for k in cands:
        price = prices.get((str(gpu_of[k]), str(site_of[k])), math.inf)
        if not math.isfinite(price):
            continue
        cap = max((float(p.capacity_requests_per_s) for p in allowed_points(ctx, k, t, forbidden)), default=0.0)
        if cap <= 0:
            continue
        cost = math.ceil(ctx.demand[(str(workload_of[k]), t)] / cap - 1e-9) * footprint[k] * price
        key = (str(gpu_of[k]), str(site_of[k]), footprint[k])
        best[key] = min(best.get(key, (math.inf, math.inf, -1)), (-cap, cost, k))
    return sorted((cost, k) for _cap, cost, k in best.values())


def _pd_options(
    ctx: BuildContext, workload: str, t: int, prices: dict[tuple[str, str], float], footprint: dict[int, float],
    forbidden: set[tuple[int, ...]],
) -> list[Option]:
    """Step 1 for the PD groups of ``workload``: each prefill pool's best with its group's cheapest decode
    pool's, and each decode pool's best with the cheapest prefill pool's (a disaggregated request passes both)."""
    options: list[Option] = []
    for pools in ctx.pd_groups(workload).values():
        prefill = _pool_bests(ctx, pools["prefill"], t, prices, footprint, forbidden)
        decode = _pool_bests(ctx, pools["decode"], t, prices, footprint, forbidden)
        if prefill and decode:
            options += [(cost + decode[0][0], (k, decode[0][1])) for cost, k in prefill]
            options += [(prefill[0][0] + cost, (prefill[0][1], k)) for cost, k in decode[1:]]
    return options


def kept_candidates(ctx: BuildContext, keep_ratio: float | None = None) -> set[int]:
    """Steps 1-2 of the module docstring: the candidates of the restriction."""
    ratio = KEEP_RATIO if keep_ratio is None else keep_ratio
    forbidden = forbidden_keys(ctx)
    footprint = replica_footprints(ctx)
    from_month = first_supply_month(ctx.supply)
    keep: set[int] = set()
    for t in ctx.periods:
        if ctx.start_month[t] < from_month:
            continue
        prices = gpu_prices_usd(ctx, t)
        for w in ctx.scenario.workloads:
            colocated = cands_with_role(ctx.cands, w.name, "colocated")
            alone = [(cost, (k,)) for cost, k in _pool_bests(ctx, colocated, t, prices, footprint, forbidden)]
            pd = _pd_options(ctx, w.name, t, prices, footprint, forbidden)
            if not alone and not pd:
                keep.update(ctx.cands_of_workload(w.name))
                continue
            colocated_usd = min((cost for cost, _ks in alone), default=math.inf)
            cheapest = min([colocated_usd, *(cost for cost, _ks in pd)])
            keep.update(k for cost, ks in alone if cost <= ratio * cheapest for k in ks)
            keep.update(k for cost, ks in pd if cost <= colocated_usd for k in ks)
    return keep


def pooled_start(ctx: BuildContext, *, time_limit_s: float | None = None) -> dict[str, float] | None:
    """A feasible plan of the built min-cost problem of ``ctx`` (PuLP variable name → value) from the
    restriction of the module docstring; None for a maximization, the explain mode, or when the
    restriction holds no plan within its limits."""
    if ctx.prob.sense != pulp.LpMinimize or ctx.elastic or ctx.scenario.objective != "min_cost":
        return None
    keep = kept_candidates(ctx)
    if not keep:
        return None
    cols, index = columns(ctx)
    everything = list(range(len(cols)))
    model = solver_model(ctx, cols, index, everything, projection_for(ctx, cols, index, [everything]))
    h = model.h
    for name, value in (("random_seed", 1), ("mip_rel_gap", 1e-6), ("mip_allow_restart", False)):
        h.setOptionValue(name, value)
    h.setOptionValue("mip_max_nodes", MAX_NODES)
    if time_limit_s is not None:
        h.setOptionValue("time_limit", max(1e-3, time_limit_s))
    model.hold_at_zero(
        index[v.name] for (k, _j, _t), v in ctx.variables["n_rep"].items() if k not in keep and v.name in index
    )
    run_highs(h)
    if h.getInfo().primal_solution_status != 2:  # kSolutionStatusFeasible
        return None
    values = model.values(len(cols))
    return {v.name: float(values[i]) for i, v in enumerate(cols)}
