"""Decision variables of the MILP, registered in the context by family and key.

    n_rep[k, j, t] ∈ ℤ≥0   replicas of candidate k at operating point j in slice t (≤ its data bound)
    y[k, j] ∈ {0, 1}       point selection (only for candidates with several points)
    flow[k, t] ≥ 0         requests/s served by candidate k in slice t
    pd_flow[w, g, t] ≥ 0   requests/s of workload w served disaggregated by PD group g (prefill + decode pools of
                           one model, weight and KV format; planner.problem.roles.pd_groups) in slice t
    bought[o] ∈ ℤ≥0        nodes ordered of buy option o
    units[o, t] ∈ ℤ≥0      units of supply option o in use in slice t
    scale ∈ [0, S]         max_throughput only: the common served fraction of the stated demand, S = ctx.max_scale
"""

from __future__ import annotations

import math

from planner.problem.context import BuildContext
from planner.problem.roles import kv_link_rates, kv_link_requests_per_s
from planner.problem.spare import spare_requests_per_s
from planner.problem.supply import SupplyKind


def peak_with_spare_requests_per_s(ctx: BuildContext, workload: str) -> float:
    """Peak demand of ``workload`` over the slices (× ctx.max_scale for max_throughput) + the capacity its
    ``redundancy`` rule holds in reserve (planner.problem.spare), req/s."""
    peak = max(ctx.demand[(workload, t)] for t in ctx.periods)
    if ctx.scenario.objective == "max_throughput":
        peak *= ctx.max_scale
    return peak + spare_requests_per_s(ctx, workload)


def replica_upper_bound(
    ctx: BuildContext,
    cand: int,
    capacity_requests_per_s: float,
    peak_requests_per_s: float | None = None,
    link_requests_per_s: float | None = None,
) -> int:
    """Data bound on replicas of one point: ceil((peak demand + spare) / capacity) (the big-M of the point
    selector); spare = the capacity a ``redundancy`` rule holds in reserve (planner.problem.spare); a prefill
    or decode replica counts at most what its KV link carries (B_k / V_KV). ``peak_requests_per_s``: the
    candidate's workload's :func:`peak_with_spare_requests_per_s` when already known, ``link_requests_per_s``
    its KV link rate (planner.problem.roles.kv_link_requests_per_s) likewise."""
    peak = peak_requests_per_s
    if peak is None:
        peak = peak_with_spare_requests_per_s(ctx, str(ctx.cands.at[cand, "workload"]))
    link = kv_link_requests_per_s(ctx.cands, cand) if link_requests_per_s is None else link_requests_per_s
    capacity = min(capacity_requests_per_s, link)
    return max(1, math.ceil(peak / capacity - 1e-9))


def create_variables(ctx: BuildContext) -> None:
    """Register every variable family of the module docstring."""
    counts = ctx.points["cand"].value_counts()
    workload_of = {int(k): str(w) for k, w in ctx.cands["workload"].items()}
    peaks = {w: peak_with_spare_requests_per_s(ctx, w) for w in set(workload_of.values())}
    links = kv_link_rates(ctx.cands)
    for row in ctx.points.itertuples():
        cand, point = int(row.cand), int(row.point)
        bound = replica_upper_bound(ctx, cand, float(row.capacity_requests_per_s), peaks[workload_of[cand]], links[cand])
        if counts[cand] > 1:
            ctx.var("y", (cand, point), low=0, up=1, cat="Integer")
        for t in ctx.periods:
            ctx.var("n_rep", (cand, point, t), low=0, up=bound, cat="Integer")
    for cand in ctx.cands.index:
        for t in ctx.periods:
            ctx.var("flow", (int(cand), t), low=0)
    for w in ctx.scenario.workloads:
        for group in ctx.pd_groups(w.name):
            for t in ctx.periods:
                ctx.var("pd_flow", (w.name, group, t), low=0)
    for i, opt in enumerate(ctx.supply):
        if opt.kind is SupplyKind.BUY:
            ctx.var("bought", i, low=0, up=opt.max_units, cat="Integer")
        for t in ctx.periods:
            ctx.var("units", (i, t), low=0, up=opt.max_units, cat="Integer")
    if ctx.scenario.objective == "max_throughput":
        ctx.var("scale", (), low=0, up=ctx.max_scale)
