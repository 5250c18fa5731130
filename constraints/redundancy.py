"""Redundancy: a workload's SLO holds with its ``redundancy.spare_replicas`` failure domains down.

A request is served by a co-located replica, or by a prefill AND a decode pool of one PD group
(planner.problem.roles): after failures the survivors serve C' + Σ_g min(P'_g, D'_g), with C', P'_g, D'_g the
surviving co-located, prefill and decode capacity of group g. A pool whose partner stage is missing or lost
serves nothing, so it is no spare capacity; a pool's surplus over its partner stage (slack) absorbs failures.

Replica or node domain (r = spare_replicas; each failure takes out at most the largest unit in use):

    Σ_{k ∈ C_w} cap·n[k, t] + Σ_g z[w, g, t] − r · L[w, t]  ≥  Σ_{k ∈ C_w ∪ P_w} flow[k, t]      ∀ t      (1)
    z[w, g, t] ≤ Σ_{k ∈ P_wg} cap·n[k, t],   z[w, g, t] ≤ Σ_{k ∈ D_wg} cap·n[k, t]           ∀ g, t   (2)
    L[w, t] ≥ charge[k, t]                                                     ∀ k ∈ C_w, t      (3)
    L[w, t] ≥ charge[k, t] − (Σ_{k' ∈ X_wg} cap·n[k', t] − z[w, g, t]) / r     ∀ k ∈ X_wg, X ∈ {P, D}, t   (4)
    charge[k, t] = Σ_j lost[k, j] · y[k, j]          (k with several points; y selects k's point)
    charge[k, t] = lost[k] · u[k, t],   n_rep[k, 0, t] ≤ U[k] · u[k, t],  u[k, t] ∈ {0, 1}   (k with one point)
    L[w, t] ≥ min_{k ∈ K_w, j} lost[k, j]                                ∀ t with D[w, t] > 0 (min_cost)  (5)
    D[w, t] · L[w, t] ≥ Σ_{k ∈ C_w ∪ P_w} λ'[k] · flow[k, t]             ∀ t with D[w, t] > 0 (min_cost)  (6)
    r · L[w, t] ≥ (r / D[w, t]) · Σ_{k ∈ C_w} λ[k] · flow[k, t] + Σ_g e[w, g, t]    (same t, min_cost)  (7)
    e[w, g, t] ≥ (r / D[w, t]) · Σ_{k ∈ X_wg} λ[k] · flow[k, t] − (Σ_{k ∈ X_wg} cap·n[k, t] − z[w, g, t])
                                                                       ∀ g, X ∈ {P, D}, e ≥ 0         (7)

Notation: C_w / P_wg / D_wg the co-located / prefill / decode candidates of w (PD group g); cap·n[k, t] =
Σ_j cap[k, j] · n_rep[k, j, t], cap[k, j] the requests/s one replica carries at operating point j (the
capacity of its capacity row, so the survivors stay within the SLO at the scenario's headroom); z[w, g, t] ≥ 0
the matched capacity of group g counted as serving; L[w, t] ≥ 0 what one failure removes from the served
stream; u[k, t] = 1 when k has a replica in slice t (y[k, j] plays that part for candidates with several
points: conservative in slices where k has no replica); U[k] the replica data bound. The decomposition's
relaxations make u continuous (planner.optimize.build.relax_replicas). lost[k, j] = cap[k, j] for the replica
domain, cap[k, j] · max(1, G/gpus_k) for the node domain (G the GPU type's gpus_per_node: a node holds
G/gpus_k replicas, or one replica that spans several nodes is lost whole; planner.problem.spare).

Why (1)–(4) suffice. Take z_g ≤ min(P_g, D_g) (2) and slacks s_gX = X_g − z_g ≥ 0. A node shared by
candidates of w holds at most G GPUs, so the capacity one failure removes from the candidates it hits is at
most G · (their largest capacity per GPU) ≤ max lost[k] over them. Removing a from stage X of g lowers
min(P_g, D_g) below z_g by at most (a − s_gX)⁺, and k ≤ r failures there by (Σa − s_gX)⁺ ≤ Σ (a − s_gX / r)⁺
(k · s / r ≤ s);
summed over the stages and groups one failure hits, the loss is at most charge − s/r of its largest
candidate ≤ L by (3)/(4) (the other terms only shrink). r failures remove at most r · L, so the survivors
serve C + Σ_g z_g − r · L ≥ the served flow (1). Without PD candidates (1) is the co-located row
Σ cap·n − r · L ≥ served of before. With one PD group and z = min(P, D), (1) with the largest L is
C + P − r·L_P ≥ served and C + D − r·L_D ≥ served (L_X the largest charge among C_w and X), one row per
stage: a pool's slack is real spare, a decode pool without prefill adds nothing. "r · the largest unit" is
exact when the r largest units are alike and conservative otherwise (as before).

(5)–(7) are valid inequalities (planner.problem.spare): they cut off no replica vector. Raising z_g by δ
raises (1)'s left side by δ and the bounds (4) on L by δ / r, so z_g = min(P_g, D_g) is as good as any; then
the narrower stage of every group has no slack and (4) charges its replicas in full. A min-cost plan serves
D[w, t] > 0 (demand_coverage is an equality), so a co-located candidate or a PD group with both stages
serves, and L ≥ the least loss of a running unit (5). A candidate with flow runs a replica, so its charge
is at least λ[k] = min_j lost[k, j]. The flows of C_w ∪ P_w add up to D[w, t]; with λ'[k] = λ[k] for a
co-located k and the least λ of every pool of k's group for a prefill pool k (the narrower stage is
charged in full), L ≥ λ'[k] wherever k has flow, hence L ≥ their flow-weighted mean (6) (coefficients
λ'/D). (7) needs no narrower stage: by (3)/(4), r · L + s_gX ≥ r · λ[k] for every k ∈ X_wg with flow (any
z), and r · L ≥ r · λ[k] for co-located k. Pick a stage X(g) per group; the flows of C_w and of the
pools X(g) add up to D[w, t] (a group's decode flows equal its prefill flows), so the flow-weighted sum of
those bounds gives r · L + Σ_g s_gX(g) ≥ (r / D) · (Σ_{C_w} λ · flow + Σ_g Σ_{X(g)} λ · flow); e[w, g, t]
takes the larger stage (or none: e ≥ 0 drops a group's terms, weights summing below 1 stay valid). The
relaxation, whose indicators u = n_rep / U are fractions, otherwise charges almost no loss.
examples/chat_p99_redundant: root LP bound 190k without (7) → 417k with it (optimum 627k), HiGHS 1.0 → 0.65 s
CPU. tests/plan/test_redundancy_least_lost.py: brute force over every replica vector of tiny instances,
and the bound; tests/plan/test_redundancy_pd.py: every replica vector of a tiny PD instance accepted
exactly when it survives every failure, with and without (5)–(7), and brute-force optima.

Site domain (every set S of r sites that serve w; survivors at the other sites, exact):

    Σ_{k ∈ C_w, site(k) ∉ S} cap·n[k, t] + Σ_g z[w, g, S, t]  ≥  Σ_{k ∈ C_w ∪ P_w} flow[k, t]      ∀ S, t
    z[w, g, S, t] ≤ Σ_{k ∈ X_wg, site(k) ∉ S} cap·n[k, t]                                 ∀ X ∈ {P, D}, g, S, t

Served flow on the right keeps the rows valid for max_throughput (decode flows repeat the prefill flows and
are not counted twice). The KV link of a PD group is in cap: a pool replica's capacity is capped at its own link,
B_k / V_KV (planner.performance.pools.link_capped_requests_per_s), so a lost replica takes its link with it.
No rows without ``redundancy`` or with r = 0: the rule raises cost only where it binds.
"""

from __future__ import annotations

import itertools
from typing import Any

import pulp

from planner.problem.context import BuildContext
from planner.problem.roles import Role, cands_with_role, serving_cands
from planner.problem.spare import (
    least_lost_per_request,
    least_lost_requests_per_s,
    lost_per_replica_frac,
    lost_per_served_request,
)

STAGES: tuple[Role, ...] = ("prefill", "decode")
"""The two stages a disaggregated request passes through."""


def add_redundancy(ctx: BuildContext) -> None:
    """Add the rows of the module docstring for every workload with ``redundancy``."""
    flow = ctx.variables["flow"]
    for w in ctx.scenario.workloads:
        rule = w.redundancy
        if rule is None or rule.spare_replicas == 0:
            continue
        if not list(ctx.cands_of_workload(w.name)):
            continue
        colocated = cands_with_role(ctx.cands, w.name, "colocated")
        groups = {
            g: pools
            for g, pools in ctx.pd_groups(w.name).items()
            if pools["prefill"] and pools["decode"]
        }
        served = {t: pulp.lpSum(flow[(k, t)] for k in serving_cands(ctx.cands, w.name)) for t in ctx.periods}
        if rule.failure_domain == "site":
            _add_site_rows(ctx, w.name, rule.spare_replicas, colocated, groups, served)
            continue
        for t in ctx.periods:
            _add_spare_rows(
                ctx, w.name, rule.spare_replicas, rule.failure_domain, colocated, groups, served[t], t
            )


def _capacity(ctx: BuildContext, keep: list[int], t: int) -> pulp.LpAffineExpression:
    """Σ_{k ∈ keep} Σ_j cap[k, j] · n_rep[k, j, t], requests/s."""
    n_rep = ctx.variables["n_rep"]
    return pulp.lpSum(
        float(p.capacity_requests_per_s) * n_rep[(k, int(p.point), t)] for k in keep for p in ctx.points_of(k)
    )


def _matched(
    ctx: BuildContext, key: tuple[Any, ...], pools: dict[Role, list[int]], t: int
) -> tuple[Any, dict[Role, Any]]:
    """z[key] ≤ each stage's capacity (rows (2)); returns z and the stage capacities."""
    z = ctx.var("redundancy_matched", key, low=0)
    stages: dict[Role, Any] = {}
    for role in STAGES:
        stages[role] = _capacity(ctx, pools[role], t)
        ctx.add_row("redundancy", (key[0], f"matched_{role}", *key[1:]), z - stages[role] <= 0)
    return z, stages


def _charge(ctx: BuildContext, w: str, k: int, domain: str, t: int) -> Any:
    """charge[k, t] of the module docstring: lost[k, j] of k's selected point, or lost[k] · u[k, t]."""
    pts = ctx.points_of(k)
    frac = lost_per_replica_frac(ctx, k, domain)
    caps = {int(p.point): frac * float(p.capacity_requests_per_s) for p in pts}
    if len(pts) > 1:
        return pulp.lpSum(c * ctx.variables["y"][(k, j)] for j, c in caps.items())
    ((j, c),) = caps.items()
    used = ctx.var("redundancy_used", (k, t), low=0, up=1, cat="Integer")
    reps = ctx.variables["n_rep"][(k, j, t)]
    ctx.add_row("redundancy", (w, "used", k, t), reps <= float(reps.upBound or 0) * used)
    return c * used


def _add_spare_rows(
    ctx: BuildContext,
    w: str,
    r: int,
    domain: str,
    colocated: list[int],
    groups: dict[str, dict[Role, list[int]]],
    served: Any,
    t: int,
) -> None:
    """Rows (1)–(6) of workload ``w`` in slice ``t``."""
    flow = ctx.variables["flow"]
    lost = ctx.var("redundancy_lost", (w, t), low=0)
    for k in colocated:
        ctx.add_row("redundancy", (w, "lost", k, t), lost - _charge(ctx, w, k, domain, t) >= 0)  # (3)
    matched, slacks = [], {}
    for g, pools in groups.items():
        z, stages = _matched(ctx, (w, g, t), pools, t)  # (2)
        matched.append(z)
        for role in STAGES:
            slacks[(g, role)] = stages[role] - z
            for k in pools[role]:
                charge = _charge(ctx, w, k, domain, t)
                ctx.add_row(
                    "redundancy", (w, "lost", k, t), lost - charge + slacks[(g, role)] * (1.0 / r) >= 0
                )  # (4)
    spare = _capacity(ctx, colocated, t) + pulp.lpSum(matched) - r * lost
    ctx.add_row("redundancy", (w, "spare", t), spare >= served)  # (1)
    least = least_lost_requests_per_s(ctx, w, t)
    if least > 0:  # (5): a valid inequality (module docstring)
        ctx.add_row("redundancy", (w, "least_lost", t), lost >= least)
    per_flow = lost_per_served_request(ctx, w, t)
    if per_flow:  # (6): a valid inequality (module docstring)
        weighted = pulp.lpSum(c * flow[(k, t)] for k, c in per_flow.items())
        ctx.add_row("redundancy", (w, "lost_by_flow", t), lost - weighted >= 0)
    per_request = least_lost_per_request(ctx, w, t)
    if per_request and groups:  # (7): a valid inequality (module docstring)
        excess = []
        for g, pools in groups.items():
            e = ctx.var("redundancy_stage_lost", (w, g, t), low=0)
            excess.append(e)
            for role in STAGES:
                stage = pulp.lpSum(r * per_request[k] * flow[(k, t)] for k in pools[role])
                ctx.add_row("redundancy", (w, "stage_lost", g, role, t), e - stage + slacks[(g, role)] >= 0)
        weighted = pulp.lpSum(r * per_request[k] * flow[(k, t)] for k in colocated)
        ctx.add_row("redundancy", (w, "lost_by_stage", t), r * lost - weighted - pulp.lpSum(excess) >= 0)


def _add_site_rows(
    ctx: BuildContext,
    w: str,
    r: int,
    colocated: list[int],
    groups: dict[str, dict[Role, list[int]]],
    served: dict[int, Any],
) -> None:
    """The site-domain rows of workload ``w``: every set of r of its sites down."""
    site_of = {k: str(ctx.cands.at[k, "site"]) for k in ctx.cands_of_workload(w)}
    sites = sorted(set(site_of.values()))
    for down in itertools.combinations(sites, min(r, len(sites))):

        def kept(ks: list[int], down: tuple[str, ...] = down) -> list[int]:
            return [k for k in ks if site_of[k] not in down]

        for t in ctx.periods:
            matched = [
                _matched(ctx, (w, g, down, t), {role: kept(pools[role]) for role in pools}, t)[0]
                for g, pools in groups.items()
            ]
            survivors = _capacity(ctx, kept(colocated), t) + pulp.lpSum(matched)
            ctx.add_row("redundancy", (w, "site", down, t), survivors >= served[t])
