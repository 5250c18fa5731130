"""Placement and RTT: a workload runs only at its allowed sites, and only where the network leaves room
for its TTFT SLO.

    flow[k, t] = 0     ∀ k with s_k ∉ S_w, or RTT(s_k) + upload(P, s_k) + T_prefill(k) ≥ TTFT_SLO(w),  ∀ t

Notation: S_w the workload's ``sites`` (default: every cloud site); RTT and uplink from the site; the
upload is P tokens × 4 B over the users' uplink (card 12: T = S_up/B_up + RTT + T_compute).
"""

from __future__ import annotations

from planner.problem.context import BuildContext


def add_placement_rtt(ctx: BuildContext) -> None:
    """Forbid candidates at disallowed sites or whose network + prefill floor exceeds the TTFT SLO."""
    flow = ctx.variables["flow"]
    workloads = {w.name: w for w in ctx.scenario.workloads}
    cols = ctx.cands[["workload", "site", "network_ms", "prefill_ms"]]
    for cand, workload, site, network_ms, prefill_ms in cols.itertuples(name=None):
        w = workloads[str(workload)]
        allowed = (w.sites is None and ctx.sites[str(site)].kind == "cloud") or (
            w.sites is not None and site in w.sites
        )
        in_time = float(network_ms) + float(prefill_ms) < w.slo.ttft_ms
        if allowed and in_time:
            continue
        for t in ctx.periods:
            ctx.add_row("placement_rtt", (int(cand), t), flow[(int(cand), t)] <= 0)
