"""Prefill/decode coupling: requests served disaggregated pass through one prefill pool and one decode pool
of the same PD group (model, weight and KV format), and their KV caches cross the link between the pools
(card 8: μ_PD = min(μ_P, μ_D, B_net / V_KV)).

    Σ_{k ∈ P_wg} flow[k, t] = pd_flow[w, g, t]                          ∀ w, g, t     (1) prefill pools
    Σ_{k ∈ D_wg} flow[k, t] = pd_flow[w, g, t]                          ∀ w, g, t     (2) decode pools
    V_wg · pd_flow[w, g, t] ≤ Σ_{k ∈ P_wg} B_k · Σ_j n_rep[k, j, t]     ∀ w, g, t     (3) KV sent by the prefill side
    V_wg · pd_flow[w, g, t] ≤ Σ_{k ∈ D_wg} B_k · Σ_j n_rep[k, j, t]     ∀ w, g, t     (4) KV received by the decode side

Notation: P_wg / D_wg the prefill / decode candidates of workload w in PD group g (planner/candidates_pd.py,
planner.problem.roles.pd_groups); pd_flow[w, g, t] requests/s served disaggregated (demand_coverage counts
it next to the co-located flows); V_wg the KV handed over per request (GB: the prompt's KV, memory ledger);
B_k a replica's scale-out bandwidth per direction (GB/s: its tp·ep GPUs × the per-GPU link). The capacity rows
(slo_operating_point) bound each pool's flow by its replicas at the SLO, so the MILP picks co-located or
disaggregated serving per workload, and the P:D ratio, at the lowest cost. A pool replica's capacity is
already within its own link (B_k / V_KV, planner.performance.pools.link_capped_requests_per_s), so (3)/(4)
hold wherever the capacity rows do; they stay to name the link in the binding constraints when it binds.
"""

from __future__ import annotations

import pulp

from planner.problem.context import BuildContext
from planner.problem.roles import kv_handoff_gb


def add_pd_flow(ctx: BuildContext) -> None:
    """Add rows (1)–(4) for every PD group of every workload."""
    flow, pd_flow = ctx.variables["flow"], ctx.variables["pd_flow"]
    for w in ctx.scenario.workloads:
        for group, pools in ctx.pd_groups(w.name).items():
            members = pools["prefill"] + pools["decode"]
            v_gb = kv_handoff_gb(ctx.column("kv_bytes_per_request"), members)
            for t in ctx.periods:
                pdf = pd_flow[(w.name, group, t)]
                for role, cands in pools.items():
                    served = pulp.lpSum(flow[(k, t)] for k in cands)
                    ctx.add_row("pd_flow", (role, w.name, group, t), served - pdf == 0)  # (1), (2)
                    link = pulp.lpSum(
                        float(ctx.column("kv_link_gb_per_s")[k]) * ctx.replicas(k, t) for k in cands
                    )
                    ctx.add_row("pd_flow", (f"kv_link_{role}", w.name, group, t), v_gb * pdf - link <= 0)  # (3), (4)
