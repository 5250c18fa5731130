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
(:func:`planner.readout.deployments.limited_by`). The audit reads it (planner.audit.at_served_load), where the
replica's terms, batch limit and C are at hand.
"""

from __future__ import annotations

import math
from typing import Any

from planner.candidates import slo_percentiles
from planner.performance.load import serve_at_load
from planner.scenario import Workload

NEAR_FRAC = 0.97
"""Share of a limit at C from which it counts as the one that binds (as the operating-point rule)."""


def limited_at_capacity(
    terms: Any, opt: Any, w: Workload, *, capacity: float, fit: float, max_batch: float, network_s: float
) -> str | None:
    """The limit that sets a co-located whole-GPU replica's capacity at the SLO ``capacity`` (C, req/s; module
    docstring), read at C with the replica's ``terms`` and optimizations ``opt``; ``fit`` the sequences that fit
    in memory, ``max_batch`` the scenario's batch cap, ``network_s`` the network time in TTFT. None where C is
    no load this replica sustains (its operating point's label stands). planner.audit.at_served_load calls it
    with the audit's C."""
    if not math.isfinite(capacity) or capacity <= 0:
        return None
    limit = max(min(fit, max_batch), 1.0)
    op = serve_at_load(
        terms, requests_per_s=capacity, input_tokens=float(w.input_tokens), output_tokens=float(w.output_tokens),
        max_batch=limit, network_s=network_s, opt=opt, **slo_percentiles(w),
    )
    if not bool(op.stable):  # not a capacity of this replica (a synthetic table's): the point's label stands
        return None
    shares = {"tpot_slo": float(op.tpot_s) * 1e3 / w.slo.tpot_ms, "ttft_slo": float(op.ttft_s) * 1e3 / w.slo.ttft_ms}
    name, share = max(shares.items(), key=lambda kv: kv[1])
    if share >= NEAR_FRAC:
        return name
    memory_bound = fit < min(max_batch, float(terms.max_running_sequences))
    if memory_bound and float(op.running_batch) >= NEAR_FRAC * limit:
        return "memory"
    return "throughput_peak"
