"""SLO operating point: replicas run at one point of their throughput–latency curve that meets the SLOs.

    flow[k, t] ≤ Σ_{j ∈ J_k} cap[k, j] · n_rep[k, j, t]     ∀ k, t          (1)
    n_rep[k, j, t] ≤ U[k, j] · y[k, j]                       ∀ k, j, t       (2)
    Σ_{j ∈ J_k} y[k, j] ≤ 1                                  ∀ k             (3)

Notation: J_k the operating points (batch breakpoints b = 1, 2, 4, … and the largest SLO-feasible batch)
of candidate k — each already satisfies TPOT(b) ≤ SLO and TTFT(b, load) ≤ SLO in the candidate table;
cap[k, j] requests/s one replica sustains there; y[k, j] ∈ {0, 1} selects the point (the binary segment
selection of the piecewise-linear curve — no SOS2, which PuLP drops with HiGHS/CBC); U[k, j] =
ceil(peak demand / cap[k, j]) a data bound. Candidates left with one point after dominance pruning
(planner.problem.dominance.prune_dominated_points) need no selector and get only row (1).
"""

from __future__ import annotations

import pulp

from planner.problem.context import BuildContext


def add_slo_operating_point(ctx: BuildContext) -> None:
    """Add capacity rows (1), selector links (2) and one-point-per-candidate rows (3)."""
    n_rep, y, flow = ctx.variables["n_rep"], ctx.variables["y"], ctx.variables["flow"]
    for cand in ctx.cands.index:
        k = int(cand)
        pts = ctx.points_of(k)
        for t in ctx.periods:
            capacity = pulp.lpSum(float(p.capacity_requests_per_s) * n_rep[(k, int(p.point), t)] for p in pts)
            ctx.add_row("slo_operating_point", ("capacity", k, t), flow[(k, t)] <= capacity)  # (1)
        if len(pts) == 1:
            continue  # a single point needs no selector: (2) and (3) would only restate the bound
        for p in pts:
            j = int(p.point)
            bound = n_rep[(k, j, 0)].upBound
            for t in ctx.periods:
                ctx.add_row(
                    "slo_operating_point", ("select", k, j, t), n_rep[(k, j, t)] <= bound * y[(k, j)]
                )  # (2)
        ctx.add_row(
            "slo_operating_point", ("one_point", k), pulp.lpSum(y[(k, int(p.point))] for p in pts) <= 1
        )  # (3)
