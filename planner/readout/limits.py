"""What limits a co-located replica's capacity at the SLO (a deployment's ``limited_by``).

A plan loads each replica to at most ``max_utilization_frac`` of its capacity at the SLO, C (the largest load
whose TTFT and TPOT meet the SLOs, :func:`planner.performance.load.capacity_at_slo`). Its operating point
therefore sits below C, where no SLO is near: judged there, a replica whose C is set by the TPOT SLO (TPOT
reaches 50 ms at C, 19 ms at the 0.9·C it runs) read "throughput_peak", as if nothing but the engine's
saturation bounded it and relaxing the SLO could not save a replica. The limit is read at C instead:

    tpot_slo         TPOT(C) ≥ 0.97 · SLO_TPOT   (the larger share of its SLO when both are)
    ttft_slo         TTFT(C) ≥ 0.97 · SLO_TTFT
    memory           the running batch at C reaches 0.97 × the sequences that fit in memory (below the
                     scenario's max_batch and the engine's max_running_sequences)
    throughput_peak  otherwise: C is the engine's saturation (the queue grows without bound above it)

Prefill and decode pools and replicas on a share of one GPU keep their operating point's label
(:func:`planner.readout.deployments.limited_by`).
"""

from __future__ import annotations

import math
from typing import Any

from planner.readout.types import Deployment
from planner.scenario import Scenario, Workload
from planner.units import BYTES_PER_GIB

NEAR_FRAC = 0.97
"""Share of a limit at C from which it counts as the one that binds (as the operating-point rule)."""


def limited_at_capacity(
    catalog: Any, scenario: Scenario, deployment: Deployment, w: Workload, site: Any, capacity: float | None = None
) -> str | None:
    """The limit that sets ``deployment``'s capacity at the SLO (module docstring); None for a pool or a
    shared replica (their operating point's label stands) or where no load meets the SLO. ``capacity``: C when
    known (the candidate's best load ÷ max_utilization_frac), else found by bisection."""
    if deployment.role != "colocated" or deployment.gpu_share_frac < 1.0:
        return None
    from planner.audit import deployment_terms_and_optimizations  # planner.audit imports planner.readout
    from planner.candidates import network_s, slo_percentiles
    from planner.performance.load import capacity_at_slo, serve_at_load
    from planner.performance.optimizations import optimized_max_batch

    terms, opt = deployment_terms_and_optimizations(catalog, scenario, deployment)
    context = float(w.input_tokens + w.output_tokens)
    workspace = scenario.workspace_gib * BYTES_PER_GIB
    fit = float(optimized_max_batch(terms, opt, context_tokens=context, workspace_bytes=workspace))
    limit = max(min(fit, float(scenario.max_batch)), 1.0)
    net = network_s(w, site)
    tails = slo_percentiles(w)
    load: dict[str, Any] = {
        "input_tokens": float(w.input_tokens), "output_tokens": float(w.output_tokens), "max_batch": limit,
        "network_s": net,
    }
    if capacity is None:
        capacity = float(
            capacity_at_slo(
                terms, **load, slo_ttft_s=w.slo.ttft_ms / 1e3, slo_tpot_s=w.slo.tpot_ms / 1e3, opt=opt, **tails
            )
        )
    if not math.isfinite(capacity) or capacity <= 0:
        return None
    op = serve_at_load(terms, requests_per_s=capacity, **load, opt=opt, **tails)
    if not bool(op.stable):  # not a capacity of this replica (a synthetic table's): the point's label stands
        return None
    shares = {"tpot_slo": float(op.tpot_s) * 1e3 / w.slo.tpot_ms, "ttft_slo": float(op.ttft_s) * 1e3 / w.slo.ttft_ms}
    name, share = max(shares.items(), key=lambda kv: kv[1])
    if share >= NEAR_FRAC:
        return name
    memory_bound = fit < min(float(scenario.max_batch), float(terms.max_running_sequences))
    if memory_bound and float(op.running_batch) >= NEAR_FRAC * limit:
        return "memory"
    return "throughput_peak"
