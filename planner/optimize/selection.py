"""Which candidates the large path keeps: capacities, the (workload, gpu, site) triples, the candidates with
flow in a solved problem, the best candidate per triple (fluid relaxations) or per replica size (integer
problems), and the plan's shortlist (planner.optimize.decompose)."""

from __future__ import annotations

from typing import Any

from planner.optimize.solver import value
from planner.problem.context import BuildContext


def capacity_per_replica(ctx: BuildContext) -> dict[int, float]:
    """Best capacity (requests/s per replica) of every candidate of ``ctx``."""
    out: dict[int, float] = {}
    for p in ctx.points.itertuples():
        out[int(p.cand)] = max(out.get(int(p.cand), 0.0), float(p.capacity_requests_per_s))
    return out


def triples_of(ctx: BuildContext, cands: set[int]) -> set[tuple[str, str, str]]:
    """The (workload, gpu, site) of each candidate in ``cands``."""
    cols = ctx.cands[["workload", "gpu", "site"]]
    return {(str(w), str(g), str(s)) for k, w, g, s in cols.itertuples(name=None) if int(k) in cands}


def flowing(ctx: BuildContext) -> set[int]:
    """Candidates of the solved problem ``ctx`` that carry traffic in some slice."""
    return {int(k) for (k, t) in ctx.variables["flow"] if value(ctx, "flow", (k, t)) > 1e-7}


def most_capacity_per_gpu(
    ctx: BuildContext,
    allowed: set[int],
    triples: set[tuple[str, str, str]] | None = None,
    *,
    by_replica_size: bool = False,
) -> set[int]:
    """Per (workload, gpu, site, role) — and per replica size (GPUs) with ``by_replica_size`` or where the
    GPU is rented in instances smaller than a node (a group must fit one) — the allowed candidate with the
    most capacity per GPU (the first one on ties), only on ``triples`` when given. A prefill or decode pool
    competes only within its PD group (pools hand KV only inside it)."""
    capacity, cands = capacity_per_replica(ctx), ctx.cands.assign(role=ctx.cands.get("role", "colocated"))
    mixed = {(o.gpu, o.site) for o in ctx.supply if 0 < o.node_gpus != o.unit_gpus}
    best: dict[tuple[Any, ...], tuple[float, int]] = {}
    cols = ["workload", "gpu", "site", "gpus", "role", "model", "quantization", "kv_dtype"]
    for k, w, g, s, gpus, role, model, q, kv in cands[cols].itertuples(name=None):
        triple = (str(w), str(g), str(s))
        if int(k) not in allowed or (triples is not None and triple not in triples):
            continue
        kind = role if role == "colocated" else f"{role}:{model}/{q}/{kv}"
        sized = by_replica_size or (str(g), str(s)) in mixed
        key = (*triple, kind, float(gpus)) if sized else (*triple, kind)
        ratio = capacity[int(k)] / float(gpus)  # gpus is fractional for a share of one GPU
        if key not in best or ratio > best[key][0]:
            best[key] = (ratio, int(k))
    return {k for _ratio, k in best.values()}


def shortlist(ctx: BuildContext, allowed: set[int], used: set[int]) -> set[int]:
    """The plan's candidates: on each (workload, gpu, site) of ``used``, the allowed candidate with the most
    capacity per GPU of every replica size (small replicas fill the last node)."""
    return used | most_capacity_per_gpu(ctx, allowed, triples_of(ctx, used), by_replica_size=True)
