"""Audit: re-evaluate every chosen deployment with the scalar ledger path and reject violations loudly.

The candidate table is built by a vectorized pass over candidates × loads; the audit recomputes each
chosen deployment from the catalog with :func:`planner.performance.deployment_terms` and the engine scheduler
(:func:`planner.performance.load.serve_at_load`) on plain floats at the load it claims per replica, then
checks memory, TPOT and TTFT against the scenario (not the table), and that the replica sustains that load. A violation is a bug and raises :class:`AuditError`.
The capacity at the SLO of the plan's plain co-located deployments is bisected for all of them at once, with
one deployment's schedule (:func:`_capacities`: the same number each one's own bisection gives).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from planner import performance as perf
from planner.audit_pd import pool_at_served_load, pool_check, pool_memory_bytes, scenario_terms
from planner.candidate_optimizations import deployment_load_optimizations
from planner.candidates import network_s, slo_percentiles
from planner.catalog.loader import Catalog
from planner.errors import AuditError
from planner.performance.load import bare_tpot_s, capacity_at_slo, replica_batch_limit, serve_at_load
from planner.performance.optimizations import (
    LoadOptimizations,
    optimized_max_batch,
    optimized_memory_per_gpu_bytes,
)
from planner.performance.stack import stack_terms
from planner.readout.limits import limited_at_capacity
from planner.readout.moe_terms import moe_terms_at
from planner.readout.optimizations import is_on
from planner.readout.types import Deployment
from planner.scenario import Scenario, Workload
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


def deployment_terms_and_optimizations(
    catalog: Catalog, scenario: Scenario, deployment: Deployment
) -> tuple[perf.DeploymentTerms, LoadOptimizations | None]:
    """The deployment's terms and its chosen optimization variant (None when plain)."""
    w = next(x for x in scenario.workloads if x.name == deployment.workload)
    gpu = catalog.accelerators[deployment.gpu]
    fmt, kfmt = catalog.formats[deployment.quantization], catalog.formats[deployment.kv_dtype]
    tp, pp = int(deployment.tp), int(deployment.pp)
    terms = scenario_terms(catalog, scenario, deployment)
    opt = deployment_load_optimizations(
        catalog, w, terms, model_id=deployment.model, gpu=gpu, fmt=fmt, kfmt=kfmt, tp=tp, pp=pp,
        prefix_cache=is_on(deployment.optimizations, "prefix_cache"),
        speculative=is_on(deployment.optimizations, "speculative"),
    )
    return terms, opt


@dataclass(frozen=True)
class _Inputs:
    """One deployment's figures recomputed from the catalog for its audit."""

    workload: Workload
    terms: perf.DeploymentTerms
    opt: LoadOptimizations | None
    limit: float
    """Its batch limit (planner.performance.load.replica_batch_limit), as the plan's deployment reports it."""
    network_s: float


def _inputs(catalog: Catalog, scenario: Scenario, deployment: Deployment, sites: dict[str, Any]) -> _Inputs:
    w = next(x for x in scenario.workloads if x.name == deployment.workload)
    terms, opt = deployment_terms_and_optimizations(catalog, scenario, deployment)
    context = float(w.input_tokens + w.output_tokens)
    fit = float(
        optimized_max_batch(terms, opt, context_tokens=context, workspace_bytes=scenario.workspace_gib * BYTES_PER_GIB)
    )
    limit = replica_batch_limit(terms, fit=fit, max_batch=float(scenario.max_batch))
    return _Inputs(w, terms, opt, limit, network_s(w, sites[deployment.site]))


def _capacities(inputs: list[_Inputs]) -> list[float]:
    """:func:`capacity_at_slo` of co-located deployments without optimizations whose workloads take their SLOs
    at the mean, in one stacked bisection with the schedule of one deployment (``schedule_size`` 1): every step
    is element-wise, so each gets the number its own bisection gives (7 deployments of the 5-workload bench:
    0.12 s one by one, 0.03 s stacked)."""
    if not inputs:
        return []

    def column(values: list[float]) -> np.ndarray:
        return np.array(values, dtype=float)[:, None]

    workloads = [i.workload for i in inputs]
    capacity = capacity_at_slo(
        stack_terms([i.terms for i in inputs]),
        input_tokens=column([w.input_tokens for w in workloads]),
        output_tokens=column([w.output_tokens for w in workloads]),
        max_batch=column([i.limit for i in inputs]),
        network_s=column([i.network_s for i in inputs]),
        slo_ttft_s=column([w.slo.ttft_ms / 1e3 for w in workloads]),
        slo_tpot_s=column([w.slo.tpot_ms / 1e3 for w in workloads]),
        schedule_size=1,
    )
    return [float(c) for c in np.ravel(capacity)]


def _stacked(deployment: Deployment, inputs: _Inputs) -> bool:
    """True when the deployment's capacity is computed in the stacked bisection (:func:`_capacities`)."""
    slo = inputs.workload.slo
    return deployment.role == "colocated" and inputs.opt is None and slo.ttft_percentile is None and slo.tpot_percentile is None


def audit_deployment(
    catalog: Catalog, scenario: Scenario, deployment: Deployment, sites: dict[str, Any],
    inputs: _Inputs | None = None, capacity_requests_per_s: float | None = None,
) -> AuditRecord:
    """Recompute one deployment and raise AuditError if it violates memory, an SLO or its claimed capacity.
    ``inputs``, ``capacity_requests_per_s``: its recomputed figures and co-located capacity at the SLO when
    already computed (:func:`audit_plan`)."""
    inputs = _inputs(catalog, scenario, deployment, sites) if inputs is None else inputs
    w, terms, opt, limit, net = inputs.workload, inputs.terms, inputs.opt, inputs.limit, inputs.network_s
    gpu = catalog.accelerators[deployment.gpu]
    batch = float(deployment.batch)
    context = float(w.input_tokens + w.output_tokens)
    memory = float(
        optimized_memory_per_gpu_bytes(
            terms, opt, batch=batch, context_tokens=context, workspace_bytes=scenario.workspace_gib * BYTES_PER_GIB
        )
    )
    claimed = float(deployment.capacity_per_replica_requests_per_s)
    if deployment.role != "colocated":  # a prefill or decode pool (planner/audit_pd.py)
        check = pool_check(catalog, scenario, deployment, sites, terms, requests_per_s=claimed, max_batch=limit)
        capacity, op, memory = check.capacity_requests_per_s, check.point, pool_memory_bytes(terms, scenario, check)
    else:
        capacity = capacity_requests_per_s if capacity_requests_per_s is not None else float(
            capacity_at_slo(
                terms,
                input_tokens=float(w.input_tokens),
                output_tokens=float(w.output_tokens),
                max_batch=limit,
                network_s=net,
                slo_ttft_s=w.slo.ttft_ms / 1e3,
                slo_tpot_s=w.slo.tpot_ms / 1e3,
                opt=opt,
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
            opt=opt,
            **slo_percentiles(w),
        )
    record = AuditRecord(
        workload=w.name,
        cand=int(deployment.cand),
        batch=int(batch),
        memory_per_gpu_gb=memory / BYTES_PER_GB,
        memory_capacity_gb=gpu.memory_gb,
        tpot_ms=0.0 if deployment.role == "prefill" else float(op.tpot_s) * 1e3,
        ttft_ms=float(op.ttft_s) * 1e3,
        capacity_requests_per_s=capacity,
    )
    where = f"{w.name}{'' if deployment.role == 'colocated' else ' ' + deployment.role}: {deployment.model} {deployment.quantization} on {gpu.id} TP{deployment.tp}xPP{deployment.pp}{f'xEP{deployment.ep}' if deployment.ep > 1 else ''} at {deployment.site} batch {int(batch)}"
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
    """Audit every deployment (the capacities of co-located ones without optimizations or SLO percentiles in
    one stacked bisection: :func:`_capacities`)."""
    inputs = [_inputs(catalog, scenario, d, sites) for d in deployments]
    stacked = [k for k, (d, i) in enumerate(zip(deployments, inputs, strict=True)) if _stacked(d, i)]
    capacity = dict(zip(stacked, _capacities([inputs[k] for k in stacked]), strict=True))
    return [
        audit_deployment(catalog, scenario, d, sites, inputs[k], capacity.get(k)) for k, d in enumerate(deployments)
    ]


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

    A deployment serving nothing at the peak is read at the period whose replicas it shows
    (:meth:`Deployment.read_load_per_replica_requests_per_s`); one that serves nothing there either keeps its
    operating point's figures. A co-located
    replica's capacity at the SLO is ``capacity_requests_per_s`` when given (the audit's record of it).
    """
    w = next(x for x in scenario.workloads if x.name == deployment.workload)
    terms, opt = deployment_terms_and_optimizations(catalog, scenario, deployment)
    workspace = scenario.workspace_gib * BYTES_PER_GIB
    context = float(w.input_tokens + w.output_tokens)
    fit = float(optimized_max_batch(terms, opt, context_tokens=context, workspace_bytes=workspace))
    limit = replica_batch_limit(terms, fit=fit, max_batch=float(scenario.max_batch))
    deployment = replace(deployment, batch_limit=int(limit))
    net = network_s(w, sites[deployment.site])
    per_replica = deployment.read_load_per_replica_requests_per_s()
    if deployment.role != "colocated":
        return pool_at_served_load(catalog, scenario, deployment, sites, terms, per_replica, limit)
    capacity = capacity_requests_per_s if capacity_requests_per_s is not None else float(
        capacity_at_slo(
            terms, input_tokens=float(w.input_tokens), output_tokens=float(w.output_tokens), max_batch=limit,
            network_s=net, slo_ttft_s=w.slo.ttft_ms / 1e3, slo_tpot_s=w.slo.tpot_ms / 1e3, opt=opt,
            **slo_percentiles(w),
        )
    )
    if deployment.gpu_share_frac >= 1.0:  # what sets that capacity, read at it (a share keeps its point's label)
        label = limited_at_capacity(
            terms, opt, w, capacity=capacity, fit=fit, max_batch=float(scenario.max_batch), network_s=net
        )
        deployment = deployment if label is None else replace(deployment, limited_by=label)
    if per_replica <= 0:
        return replace(deployment, capacity_at_slo_requests_per_s=capacity)
    op = serve_at_load(
        terms, requests_per_s=per_replica, input_tokens=float(w.input_tokens),
        output_tokens=float(w.output_tokens), max_batch=limit, network_s=net, opt=opt, **slo_percentiles(w),
    )
    batch = max(int(np.ceil(float(op.running_batch) - 1e-9)), 1)
    # TPOT without prompt chunks at the batch TPOT is taken at, a request's own steps (TPOT = this + prefill
    # interference; performance.load.bare_tpot_s); memory is held for the whole sequences of the ceiling
    bare_s = bare_tpot_s(
        terms, op, input_tokens=float(w.input_tokens), output_tokens=float(w.output_tokens), opt=opt
    )
    memory = optimized_memory_per_gpu_bytes(
        terms, opt, batch=float(batch), context_tokens=context, workspace_bytes=workspace
    )
    return replace(
        deployment,
        batch=batch,
        moe=None if deployment.moe is None else moe_terms_at(terms, float(batch)),
        ttft_ms=float(op.ttft_s) * 1e3,
        tpot_ms=float(op.tpot_s) * 1e3,
        decode_step_ms=float(bare_s) * 1e3,
        memory_per_gpu_gb=float(memory) / BYTES_PER_GB,
        served_per_replica_requests_per_s=per_replica,
        capacity_at_slo_requests_per_s=capacity,
    )
