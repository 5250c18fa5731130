"""The audit of prefill and decode pool deployments (planner/candidates_pd.py), and the deployment terms
with the scenario's stated efficiencies that every audit recomputation starts from.

A prefill replica is re-evaluated with :func:`planner.performance.pools.prefill_at_load` (TTFT with the KV
handoff), a decode replica with :func:`planner.performance.pools.decode_at_load` (TPOT without prefill
interference); each returns the replica's capacity at the SLO and its figures at ``requests_per_s``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from planner import performance as perf
from planner.candidates import network_s
from planner.candidates_pd import replica_kv_link_gb_per_s, request_kv_handoff
from planner.catalog.loader import Catalog
from planner.performance.load import LoadPoint, bare_tpot_s
from planner.performance.pools import (
    decode_at_load,
    decode_capacity_at_slo,
    link_capped_requests_per_s,
    prefill_at_load,
    prefill_capacity_at_slo,
)
from planner.performance.sharing import terms_on_share
from planner.readout.moe_terms import moe_terms_at
from planner.readout.types import Deployment
from planner.scenario import Scenario, Workload
from planner.units import BYTES_PER_GB, BYTES_PER_GIB


def scenario_terms(catalog: Catalog, scenario: Scenario, deployment: Deployment) -> perf.DeploymentTerms:
    """Deployment terms from the catalog with the scenario's ``hardware.efficiency`` for its GPU applied, on the
    share of the GPU it holds (planner.performance.sharing, as the candidate table: planner.candidates_shared)."""
    stated = scenario.hardware.efficiency.get(deployment.gpu)
    return terms_on_share(
        catalog,
        model=catalog.models[deployment.model],
        gpu=catalog.accelerators[deployment.gpu],
        share_frac=deployment.gpu_share_frac,
        weight_format=catalog.formats[deployment.quantization],
        kv_format=catalog.formats[deployment.kv_dtype],
        tp=int(deployment.tp),
        pp=int(deployment.pp),
        ep=int(deployment.ep),
        engine=deployment.engine,
        prefill_mfu_frac=None if stated is None else stated.prefill_mfu_frac,
        decode_mbu_frac=None if stated is None else stated.decode_mbu_frac,
    )


@dataclass(frozen=True)
class PoolCheck:
    """A pool replica recomputed: capacity at the SLO, the scheduler at the load, memory context tokens."""

    capacity_requests_per_s: float
    point: LoadPoint
    context_tokens: float
    resident_sequences: float


def pool_check(
    catalog: Catalog,
    scenario: Scenario,
    deployment: Deployment,
    sites: dict[str, Any],
    terms: perf.DeploymentTerms,
    *,
    requests_per_s: float,
    max_batch: float,
) -> PoolCheck:
    """Capacity and the figures at ``requests_per_s`` of one prefill or decode replica (module docstring)."""
    w: Workload = next(x for x in scenario.workloads if x.name == deployment.workload)
    p_tok, g_tok = float(w.input_tokens), float(w.output_tokens)
    kv_bytes, gb_per_s, hand = request_kv_handoff(
        catalog, terms, gpu=catalog.accelerators[deployment.gpu], tp=int(deployment.tp), input_tokens=p_tok
    )
    link = {"kv_bytes": kv_bytes, "replica_link_gb_per_s": replica_kv_link_gb_per_s(gb_per_s, int(deployment.ep))}
    if deployment.role == "prefill":
        net = network_s(w, sites[deployment.site])
        cap = link_capped_requests_per_s(
            prefill_capacity_at_slo(
                terms, input_tokens=p_tok, max_batch=max_batch, network_s=net, handoff_s=hand,
                slo_ttft_s=w.slo.ttft_ms / 1e3,
            ),
            **link,
        )
        op = prefill_at_load(
            terms, requests_per_s=requests_per_s, input_tokens=p_tok, max_batch=max_batch, network_s=net,
            handoff_s=hand,
        )
        prompts = max(float(np.ceil(float(op.prefill_tokens_per_step) / p_tok - 1e-9)), 1.0)
        return PoolCheck(float(cap), op, p_tok, prompts)
    cap = link_capped_requests_per_s(
        decode_capacity_at_slo(
            terms, input_tokens=p_tok, output_tokens=g_tok, max_batch=max_batch, slo_tpot_s=w.slo.tpot_ms / 1e3
        ),
        **link,
    )
    op = decode_at_load(terms, requests_per_s=requests_per_s, input_tokens=p_tok, output_tokens=g_tok, max_batch=max_batch)
    return PoolCheck(float(cap), op, p_tok + g_tok, max(float(np.ceil(float(op.running_batch) - 1e-9)), 1.0))


def pool_memory_bytes(terms: perf.DeploymentTerms, scenario: Scenario, check: PoolCheck) -> float:
    """Bytes per GPU of a pool replica: weights + KV of its resident sequences + workspace + the engine's reserve."""
    return float(
        perf.memory_per_gpu_bytes(
            terms, batch=check.resident_sequences, context_tokens=check.context_tokens,
            workspace_bytes=scenario.workspace_gib * BYTES_PER_GIB,
        )
    )


def pool_at_served_load(
    catalog: Catalog,
    scenario: Scenario,
    deployment: Deployment,
    sites: dict[str, Any],
    terms: perf.DeploymentTerms,
    per_replica: float,
    max_batch: float,
) -> Deployment:
    """A prefill or decode deployment with its figures at the load each replica serves at the peak (as
    planner.audit.at_served_load does for co-located ones) and its capacity at the SLO."""
    check = pool_check(
        catalog, scenario, deployment, sites, terms, requests_per_s=max(per_replica, 0.0), max_batch=max_batch
    )
    if per_replica <= 0:
        return replace(deployment, capacity_at_slo_requests_per_s=check.capacity_requests_per_s)
    prefill = deployment.role == "prefill"
    w = next(x for x in scenario.workloads if x.name == deployment.workload)
    step = 0.0
    if not prefill:  # TPOT without prompt chunks, as for co-located deployments (its TPOT: no pool has chunks)
        step = float(bare_tpot_s(terms, check.point, input_tokens=float(w.input_tokens),
                                 output_tokens=float(w.output_tokens)))
    return replace(
        deployment,
        batch=int(check.resident_sequences),
        moe=None if deployment.moe is None else moe_terms_at(terms, float(int(check.resident_sequences))),
        ttft_ms=float(check.point.ttft_s) * 1e3 if prefill else None,
        tpot_ms=None if prefill else float(check.point.tpot_s) * 1e3,
        decode_step_ms=None if prefill else step * 1e3,
        memory_per_gpu_gb=pool_memory_bytes(terms, scenario, check) / BYTES_PER_GB,
        served_per_replica_requests_per_s=per_replica,
        capacity_at_slo_requests_per_s=check.capacity_requests_per_s,
    )
