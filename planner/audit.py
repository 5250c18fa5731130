"""Audit: re-evaluate every chosen deployment with the scalar ledger path and reject violations loudly.

The candidate table is built by a vectorized pass over candidates × loads; the audit recomputes each
chosen deployment from the catalog with :func:`planner.performance.deployment_terms` and the engine scheduler
(:func:`planner.performance.load.serve_at_load`) on plain floats at the load it claims per replica, then
checks memory, TPOT and TTFT against the scenario (not the table), and that the replica sustains that load. A violation is a bug and raises :class:`AuditError`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from planner import performance as perf
from planner.candidates import network_s, slo_percentiles, stack_terms
from planner.catalog.loader import Catalog
from planner.errors import AuditError
from planner.performance.load import capacity_at_slo, serve_at_load
from planner.readout.types import Deployment
from planner.scenario import Scenario
from planner.units import BYTES_PER_GB, BYTES_PER_GIB

REL_TOL = 1e-6


@dataclass(frozen=True)
class AuditRecord:
    """What the audit recomputed for one deployment."""

    workload: str
    cand: int
    batch: int
    memory_per_gpu_gb: float
    memory_capacity_gb: float
    tpot_ms: float
    ttft_ms: float
    capacity_requests_per_s: float


def _terms(catalog: Catalog, deployment: Deployment) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog,
        model=catalog.models[deployment.model],
        gpu=catalog.accelerators[deployment.gpu],
        weight_format=catalog.formats[deployment.quantization],
        kv_format=catalog.formats[deployment.kv_dtype],
        tp=int(deployment.tp),
        pp=int(deployment.pp),
        engine=deployment.engine,
    )


def capacities_at_slo(
    catalog: Catalog, scenario: Scenario, deployments: list[Deployment], sites: dict[str, Any]
) -> list[float]:
    """Capacity at the SLO (requests/s per replica) of every deployment, in ONE vectorized
    :func:`capacity_at_slo` call (the terms stacked as the candidate table stacks them)."""
    if not deployments:
        return []
    workloads = {w.name: w for w in scenario.workloads}
    ws = [workloads[d.workload] for d in deployments]
    terms = [_terms(catalog, d) for d in deployments]
    workspace = scenario.workspace_gib * BYTES_PER_GIB
    limit = [
        max(min(float(perf.max_batch(t, context_tokens=float(w.input_tokens + w.output_tokens),
                                     workspace_bytes=workspace)), float(scenario.max_batch)), 1.0)
        for t, w in zip(terms, ws, strict=True)
    ]

    def column(values: list[Any]) -> Any:
        return np.array([np.nan if v is None else float(v) for v in values], dtype=float)[:, None]

    pct = {key: column([slo_percentiles(w)[key] for w in ws]) for key in ("ttft_percentile", "tpot_percentile")}
    caps = capacity_at_slo(
        stack_terms(terms),
        input_tokens=column([w.input_tokens for w in ws]),
        output_tokens=column([w.output_tokens for w in ws]),
        max_batch=column(limit),
        network_s=column([network_s(w, sites[d.site]) for w, d in zip(ws, deployments, strict=True)]),
        slo_ttft_s=column([w.slo.ttft_ms / 1e3 for w in ws]),
        slo_tpot_s=column([w.slo.tpot_ms / 1e3 for w in ws]),
        **{k: (None if np.isnan(v).all() else v) for k, v in pct.items()},
    )
    return [float(c) for c in np.asarray(caps).ravel()]


def audit_deployment(
    catalog: Catalog,
    scenario: Scenario,
    deployment: Deployment,
    sites: dict[str, Any],
    capacity_requests_per_s: float | None = None,
) -> AuditRecord:
    """Recompute one deployment and raise AuditError if it violates memory, an SLO or its claimed capacity
    (its capacity at the SLO from ``capacity_requests_per_s`` when given: :func:`capacities_at_slo`)."""
    w = next(x for x in scenario.workloads if x.name == deployment.workload)
    gpu = catalog.accelerators[deployment.gpu]
    terms = _terms(catalog, deployment)
    batch = float(deployment.batch)
    context = float(w.input_tokens + w.output_tokens)
    memory = float(
        perf.memory_per_gpu_bytes(
            terms, batch=batch, context_tokens=context, workspace_bytes=scenario.workspace_gib * BYTES_PER_GIB
        )
    )
    fit = float(
        perf.max_batch(terms, context_tokens=context, workspace_bytes=scenario.workspace_gib * BYTES_PER_GIB)
    )
    claimed = float(deployment.capacity_per_replica_requests_per_s)
    net = network_s(w, sites[deployment.site])
    limit = max(min(fit, float(scenario.max_batch)), 1.0)
    capacity = capacity_requests_per_s if capacity_requests_per_s is not None else float(
        capacity_at_slo(
            terms,
            input_tokens=float(w.input_tokens),
            output_tokens=float(w.output_tokens),
            max_batch=limit,
            network_s=net,
            slo_ttft_s=w.slo.ttft_ms / 1e3,
            slo_tpot_s=w.slo.tpot_ms / 1e3,
            **slo_percentiles(w),
        )
    )
    op = serve_at_load(
        terms,
        requests_per_s=claimed,
        input_tokens=float(w.input_tokens),
        output_tokens=float(w.output_tokens),
        max_batch=limit,
        network_s=net,
        **slo_percentiles(w),
    )
    record = AuditRecord(
        workload=w.name,
        cand=int(deployment.cand),
        batch=int(batch),
        memory_per_gpu_gb=memory / BYTES_PER_GB,
        memory_capacity_gb=gpu.memory_gb,
        tpot_ms=float(op.tpot_s) * 1e3,
        ttft_ms=float(op.ttft_s) * 1e3,
        capacity_requests_per_s=capacity,
    )
    where = f"{w.name}: {deployment.model} {deployment.quantization} on {gpu.id} TP{deployment.tp}xPP{deployment.pp} at {deployment.site} batch {int(batch)}"
    if claimed > record.capacity_requests_per_s * (1 + REL_TOL) + 1e-12:
        raise AuditError(
            f"audit failed for {where}: the plan claims {claimed:.4g} req/s per replica, the ledger gives "
            f"{record.capacity_requests_per_s:.4g}"
        )
    if record.memory_per_gpu_gb > gpu.memory_gb * (1 + REL_TOL):
        raise AuditError(
            f"audit failed for {where}: {record.memory_per_gpu_gb:.2f} GB per GPU exceeds {gpu.memory_gb:g} GB"
        )
    if record.tpot_ms > w.slo.tpot_ms * (1 + REL_TOL):
        raise AuditError(
            f"audit failed for {where}: TPOT {record.tpot_ms:.2f} ms exceeds the SLO {w.slo.tpot_ms:g} ms"
        )
    if record.ttft_ms > w.slo.ttft_ms * (1 + REL_TOL):
        raise AuditError(
            f"audit failed for {where}: TTFT {record.ttft_ms:.1f} ms exceeds the SLO {w.slo.ttft_ms:g} ms"
        )
    return record


def audit_plan(
    catalog: Catalog, scenario: Scenario, deployments: list[Deployment], sites: dict[str, Any]
) -> list[AuditRecord]:
    """Audit every deployment; also check each workload's demand is covered by what was served."""
    caps = capacities_at_slo(catalog, scenario, deployments, sites)
    return [audit_deployment(catalog, scenario, d, sites, c) for d, c in zip(deployments, caps, strict=True)]


def at_served_load(
    catalog: Catalog,
    scenario: Scenario,
    deployment: Deployment,
    sites: dict[str, Any],
    capacity_requests_per_s: float | None = None,
) -> Deployment:
    """The deployment with TTFT, TPOT, running batch, decode step and memory at the load each replica
    actually serves at the workload's peak (served / replicas, the engine scheduler of
    :func:`planner.performance.load.serve_at_load`), and the replica's capacity at the SLO.

    A replica that serves nothing at the peak slice keeps its operating point's figures. The capacity at
    the SLO is taken from ``capacity_requests_per_s`` when given (the audit's :class:`AuditRecord` already
    computed it with the same inputs) instead of bisecting again.
    """
    w = next(x for x in scenario.workloads if x.name == deployment.workload)
    terms = _terms(catalog, deployment)
    workspace = scenario.workspace_gib * BYTES_PER_GIB
    context = float(w.input_tokens + w.output_tokens)
    limit = max(min(float(perf.max_batch(terms, context_tokens=context, workspace_bytes=workspace)),
                    float(scenario.max_batch)), 1.0)
    net = network_s(w, sites[deployment.site])
    capacity = capacity_requests_per_s
    if capacity is None:
        capacity = float(
            capacity_at_slo(
                terms, input_tokens=float(w.input_tokens), output_tokens=float(w.output_tokens), max_batch=limit,
                network_s=net, slo_ttft_s=w.slo.ttft_ms / 1e3, slo_tpot_s=w.slo.tpot_ms / 1e3,
                **slo_percentiles(w),
            )
        )
    per_replica = deployment.served_requests_per_s / max(deployment.replicas, 1)
    if per_replica <= 0:
        return replace(deployment, capacity_at_slo_requests_per_s=capacity)
    op = serve_at_load(
        terms, requests_per_s=per_replica, input_tokens=float(w.input_tokens),
        output_tokens=float(w.output_tokens), max_batch=limit, network_s=net, **slo_percentiles(w),
    )
    batch = max(int(np.ceil(float(op.running_batch) - 1e-9)), 1)
    step = perf.decode_step(
        terms, batch=float(batch), context_tokens=perf.mean_decode_context_tokens(w.input_tokens, w.output_tokens)
    )
    memory = perf.memory_per_gpu_bytes(terms, batch=float(batch), context_tokens=context, workspace_bytes=workspace)
    return replace(
        deployment,
        batch=batch,
        ttft_ms=float(op.ttft_s) * 1e3,
        tpot_ms=float(op.tpot_s) * 1e3,
        decode_step_ms=float(step.total_s) * 1e3,
        memory_per_gpu_gb=float(memory) / BYTES_PER_GB,
        served_per_replica_requests_per_s=per_replica,
        capacity_at_slo_requests_per_s=capacity,
    )
