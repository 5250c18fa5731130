"""Spare capacity of a workload's ``redundancy`` rule: what one failure removes, and the replica bound it needs.

Shared by constraints/redundancy.py (the rows) and planner.problem.variables (the data bound on replicas,
which must leave room for the spare replicas).
"""

from __future__ import annotations

from planner.problem.context import BuildContext
from planner.problem.roles import cands_with_role


def lost_per_replica_frac(ctx: BuildContext, cand: int, domain: str) -> float:
    """Replicas' worth of candidate ``cand``'s capacity one failure of ``domain`` removes (≥ 1).

    replica: 1; node: max(1, G / gpus_k) with G the GPU type's gpus_per_node (a node holds G / gpus_k
    replicas, or one replica that spans nodes is lost whole); site: 1 (the site rows do not use it).
    """
    if domain != "node":
        return 1.0
    per_node = ctx.gpu(str(ctx.cands.at[cand, "gpu"])).gpus_per_node
    return max(1.0, per_node / float(ctx.cands.at[cand, "gpus"]))  # a share of one GPU: 1/share per GPU


def spare_requests_per_s(ctx: BuildContext, workload: str) -> float:
    """Upper bound of the capacity the rule holds in reserve: r · max_k lost[k] · max_j cap[k, j], req/s.

    0 without a rule, with r = 0 and for the site domain (each site alone covers at most the peak).
    """
    w = next(x for x in ctx.scenario.workloads if x.name == workload)
    rule = w.redundancy
    if rule is None or rule.spare_replicas == 0 or rule.failure_domain == "site":
        return 0.0
    biggest = 0.0
    for k in ctx.cands_of_workload(workload):
        caps = [float(p.capacity_requests_per_s) for p in ctx.points_of(k)]
        if caps:
            biggest = max(biggest, lost_per_replica_frac(ctx, k, rule.failure_domain) * max(caps))
    return rule.spare_replicas * biggest


def least_lost_requests_per_s(ctx: BuildContext, workload: str, t: int) -> float:
    """The least capacity one failure of the workload's ``redundancy`` domain can remove in slice t, req/s:
    min over its candidates k and operating points j of lost[k] · cap[k, j] when a min-cost plan must
    serve demand D[w, t] > 0 there (then some replica runs, and the failure of its unit removes at least
    that much); 0 otherwise (no rule, the site domain, max_throughput or the explain mode, where the
    served demand may be 0)."""
    w = next(x for x in ctx.scenario.workloads if x.name == workload)
    rule = w.redundancy
    if rule is None or rule.spare_replicas == 0 or rule.failure_domain == "site":
        return 0.0
    if ctx.scenario.objective != "min_cost" or ctx.elastic or ctx.demand[(workload, t)] <= 0:
        return 0.0
    return min(_least_lost_by_cand(ctx, workload, rule.failure_domain).values(), default=0.0)


def _least_lost_by_cand(ctx: BuildContext, workload: str, domain: str) -> dict[int, float]:
    """Candidate → the least capacity one failure of ``domain`` removes once it runs: min over its operating
    points j of lost[k] · cap[k, j], req/s."""
    return {
        k: min(lost_per_replica_frac(ctx, k, domain) * float(p.capacity_requests_per_s) for p in ctx.points_of(k))
        for k in ctx.cands_of_workload(workload)
        if ctx.points_of(k)
    }


def least_lost_per_request(ctx: BuildContext, workload: str, t: int) -> dict[int, float]:
    """Candidate k → its least loss (:func:`_least_lost_by_cand`) / D[w, t], per req/s of its flow, for every
    candidate of the workload (constraints/redundancy.py (7)); empty where :func:`least_lost_requests_per_s`
    is 0."""
    if least_lost_requests_per_s(ctx, workload, t) <= 0:
        return {}
    w = next(x for x in ctx.scenario.workloads if x.name == workload)
    assert w.redundancy is not None
    demand = ctx.demand[(workload, t)]
    return {k: c / demand for k, c in _least_lost_by_cand(ctx, workload, w.redundancy.failure_domain).items()}


def lost_per_served_request(ctx: BuildContext, workload: str, t: int) -> dict[int, float]:
    """Coefficients of the flow-weighted loss row (constraints/redundancy.py (6)): candidate k → the least loss
    one failure charges once k serves, / D[w, t], per req/s of flow, for the candidates whose flows add up to
    the served demand (co-located and prefill pools: planner.problem.roles.serving_cands). A co-located
    candidate charges its own least loss (:func:`_least_lost_by_cand`); a prefill pool the least of every
    prefill and decode pool of its PD group (the group's narrower stage has no slack, and a replica of that
    stage charges its loss in full). Empty where :func:`least_lost_requests_per_s` is 0."""
    if least_lost_requests_per_s(ctx, workload, t) <= 0:
        return {}
    w = next(x for x in ctx.scenario.workloads if x.name == workload)
    assert w.redundancy is not None
    demand = ctx.demand[(workload, t)]
    lost = _least_lost_by_cand(ctx, workload, w.redundancy.failure_domain)
    out = {k: lost[k] / demand for k in cands_with_role(ctx.cands, workload, "colocated") if k in lost}
    for pools in ctx.pd_groups(workload).values():
        group = [lost[k] for k in pools["prefill"] + pools["decode"] if k in lost]
        out.update({k: min(group) / demand for k in pools["prefill"] if k in lost})
    return dict(sorted(out.items()))
