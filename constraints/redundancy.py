"""Redundancy: a workload's SLO holds with its ``redundancy.spare_replicas`` failure domains down.

Replica or node domain (r = spare_replicas; the failure takes out the largest unit in use):

    Σ_{k ∈ K_w} Σ_j cap[k, j] · n_rep[k, j, t]  −  r · L[w, t]  ≥  Σ_{k ∈ K_w} flow[k, t]         ∀ t
    L[w, t] ≥ Σ_j lost[k, j] · y[k, j]                  ∀ k with several points, t  (y selects k's point)
    L[w, t] ≥ lost[k] · u[k, t],   n_rep[k, 0, t] ≤ U[k] · u[k, t],  u[k, t] ∈ {0, 1}   ∀ k with one point, t
    L[w, t] ≥ min_{k ∈ K_w, j} lost[k, j]                       ∀ t with D[w, t] > 0 (min_cost)         (5)
    D[w, t] · L[w, t] ≥ Σ_{k ∈ S_w} min_j lost[k, j] · flow[k, t]   ∀ t with D[w, t] > 0 (min_cost)         (6)

(5) and (6) are valid inequalities (planner.problem.spare). A min-cost plan serves D[w, t] > 0 in full, so
some replica of w runs and its failure removes at least the least loss of any unit (5). The flows of the
serving candidates S_w (co-located and prefill pools) add up to D[w, t]; a candidate with flow runs a
replica, so L ≥ min_j lost[k, j] for each of them, hence L ≥ their flow-weighted mean (6). The relaxation,
whose indicators u = n_rep / U are fractions, otherwise charges almost no loss, and spreading the flow
over many candidates does not lower the mean. tests/plan/test_redundancy_least_lost.py: brute force over
every replica vector of tiny instances, and the bound. examples/chat_p99_redundant: root LP bound 128k →
252k (optimum 545k), HiGHS 0.9 → 0.35 s CPU.

Site domain (every set S of r sites that serve w):

    Σ_{k ∈ K_w, site(k) ∉ S} Σ_j cap[k, j] · n_rep[k, j, t]  ≥  Σ_{k ∈ K_w} flow[k, t]          ∀ S, t

Notation: cap[k, j] the requests/s one replica of candidate k carries at operating point j (the capacity
of its capacity row, so the survivors stay within the SLO at the scenario's headroom); L[w, t] ≥ 0 the
capacity one failure removes; u[k, t] = 1 when k has a replica in slice t (y[k, j] plays that part for
candidates with several points — it is already there and selects the point in use — charging k's loss in
every slice once it is selected: conservative in slices where k has no replica); U[k] the replica data
bound. The decomposition's relaxations make u continuous with the replica counts
(planner.optimize.build.relax_replicas).
lost[k, j] = cap[k, j] for the replica domain, and cap[k, j] · max(1, G/gpus_k) for the node domain (G the
GPU type's gpus_per_node: a node holds G/gpus_k replicas, or one replica that spans several nodes is lost
whole; G·capacity-per-GPU also bounds a node shared by several candidates of w;
planner.problem.spare, which also widens the replica data bound U by the spare). Approximation: r · L
charges r failures of the largest unit in use, exact when the r largest units are alike (one deployment
type) and conservative otherwise. Served flow on the right keeps the rows valid for max_throughput. No
rows without ``redundancy`` or with r = 0: the rule raises cost only where it binds.
"""

from __future__ import annotations

import itertools

import pulp

from planner.problem.context import BuildContext
from planner.problem.spare import least_lost_requests_per_s, lost_per_replica_frac, lost_per_served_request


def add_redundancy(ctx: BuildContext) -> None:
    """Add the rows of the module docstring for every workload with ``redundancy``."""
    n_rep, y, flow = ctx.variables["n_rep"], ctx.variables["y"], ctx.variables["flow"]
    for w in ctx.scenario.workloads:
        rule = w.redundancy
        if rule is None or rule.spare_replicas == 0:
            continue
        cands = list(ctx.cands_of_workload(w.name))
        if not cands:
            continue
        r = rule.spare_replicas

        def capacity(keep: list[int], t: int) -> pulp.LpAffineExpression:
            return pulp.lpSum(
                float(p.capacity_requests_per_s) * n_rep[(k, int(p.point), t)] for k in keep for p in ctx.points_of(k)
            )

        if rule.failure_domain == "site":
            sites = sorted({str(ctx.cands.at[k, "site"]) for k in cands})
            for down in itertools.combinations(sites, min(r, len(sites))):
                keep = [k for k in cands if str(ctx.cands.at[k, "site"]) not in down]
                for t in ctx.periods:
                    served = pulp.lpSum(flow[(k, t)] for k in cands)
                    ctx.add_row("redundancy", (w.name, "site", down, t), capacity(keep, t) >= served)
            continue
        for t in ctx.periods:
            lost = ctx.var("redundancy_lost", (w.name, t), low=0)
            for k in cands:
                pts = ctx.points_of(k)
                frac = lost_per_replica_frac(ctx, k, rule.failure_domain)
                caps = {int(p.point): frac * float(p.capacity_requests_per_s) for p in pts}
                if len(pts) > 1:
                    chosen = pulp.lpSum(c * y[(k, j)] for j, c in caps.items())
                    ctx.add_row("redundancy", (w.name, "lost", k, t), lost >= chosen)
                    continue
                ((j, c),) = caps.items()
                used = ctx.var("redundancy_used", (k, t), low=0, up=1, cat="Integer")
                reps = n_rep[(k, j, t)]
                ctx.add_row("redundancy", (w.name, "used", k, t), reps <= float(reps.upBound or 0) * used)
                ctx.add_row("redundancy", (w.name, "lost", k, t), lost >= c * used)
            served = pulp.lpSum(flow[(k, t)] for k in cands)
            ctx.add_row("redundancy", (w.name, "spare", t), capacity(cands, t) - r * lost >= served)
            least = least_lost_requests_per_s(ctx, w.name, t)
            if least > 0:  # (5): a valid inequality (module docstring)
                ctx.add_row("redundancy", (w.name, "least_lost", t), lost >= least)
            per_flow = lost_per_served_request(ctx, w.name, t)
            if per_flow:  # (6): a valid inequality (module docstring)
                weighted = pulp.lpSum(c * flow[(k, t)] for k, c in per_flow.items())
                ctx.add_row("redundancy", (w.name, "lost_by_flow", t), lost - weighted >= 0)
