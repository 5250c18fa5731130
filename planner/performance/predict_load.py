"""``planner predict --requests-per-s``: one replica under the engine scheduler at an offered load, with what a
plan's deployment adds there — the site's network time, the SLO percentiles, the batch limit and the workload's
optimizations (prefix cache, speculative decoding) — so it gives the numbers ``planner plan`` reports for that
deployment at that load. The candidate table, the audit and this read the same functions: serve_at_load, the
optimizations' variants (planner.candidate_optimizations) and request_network_s."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, NumericFormat, Site
from planner.errors import InfeasiblePlan, InputError
from planner.ledgers.edge_cloud import request_network_s
from planner.limits import MAX_RTT_MS, MAX_UPLINK_MBIT_PER_S, MIN_EFFICIENCY_FRAC
from planner.performance import moe
from planner.performance.load import bare_tpot_s, capacity_at_slo, replica_batch_limit, serve_at_load
from planner.performance.optimizations import LoadOptimizations
from planner.performance.pools import (
    decode_at_load,
    decode_capacity_at_slo,
    prefill_at_load,
    prefill_capacity_at_slo,
)
from planner.performance.steps import engine_host_time_s
from planner.performance.tail import busy_frac, step_phase_s
from planner.performance.terms import DeploymentTerms
from planner.scenario_base import SLO_PERCENTILES
from planner.scenario_optimizations import PrefixCache, Speculative

if TYPE_CHECKING:
    from planner.performance.prediction import PredictRequest

ROLES = ("colocated", "prefill", "decode")
"""What a replica does: serve requests whole, or the prefill / decode pool of a disaggregated pair."""


@dataclass(frozen=True)
class _PredictedWorkload:
    """What the optimizations' variants read of a workload (planner.candidate_optimizations.OptimizedWorkload),
    from predict's options."""

    name: str
    input_tokens: int
    output_tokens: int
    engine_key: str
    prefix_cache: PrefixCache | None
    speculative: Speculative | None


GPU_SHARES = (1.0, 0.5, 0.25)
"""Shares of one GPU a replica may hold (a scenario's ``hardware.gpu_share_fracs`` and the whole GPU)."""


def check_options(request: PredictRequest) -> None:
    """InputError (exit 2, naming the option) for a stated efficiency outside [MIN_EFFICIENCY_FRAC, 1] or beside --ideal, a role
    other than colocated / prefill / decode, percentiles or optimizations on a pool role, a load option without
    ``--requests-per-s``, a percentile a latency SLO cannot be stated at, network figures :func:`check_network`
    refuses, or a prefix longer than the prompt (the catalog ids, site and draft model among them, are looked up
    by planner.performance.prediction.resolve)."""
    for option, frac in (("--prefill-mfu-frac", request.prefill_mfu_frac), ("--decode-mbu-frac", request.decode_mbu_frac)):
        if frac is not None and not MIN_EFFICIENCY_FRAC <= frac <= 1:
            raise InputError(f"{option}: must be in [{MIN_EFFICIENCY_FRAC:g}, 1] (got {frac:g})")
        if frac is not None and request.ideal:
            raise InputError(f"{option}: --ideal takes every efficiency at 1; give one or the other")
    if request.gpu_share_frac not in GPU_SHARES:
        raise InputError(f"--gpu-share-frac: must be 1, 0.5 or 0.25 (got {request.gpu_share_frac:g})")
    if request.gpu_share_frac < 1 and request.tp * request.pp * request.ep != 1:
        raise InputError("--gpu-share-frac: a share of one GPU runs TP1·PP1·EP1; drop --tp/--pp/--ep or the share")
    if request.role not in ROLES:
        raise InputError(f"--role: must be one of {', '.join(ROLES)} (got {request.role})")
    percentiles = (("--ttft-percentile", request.ttft_percentile), ("--tpot-percentile", request.tpot_percentile))
    optimizations: tuple[tuple[str, object], ...] = (
        ("--prefix-hit-frac", request.prefix_cache), ("--draft-model", request.speculative),
    )
    pool_options = (*percentiles, *optimizations) if request.role != "colocated" else ()
    for option, value in pool_options:
        if value is not None:
            raise InputError(
                f"{option}: a plan's {request.role} pools run without optimizations and report means; drop"
                f" it or --role {request.role}"
            )
    for option, percentile in percentiles:
        if percentile is not None and percentile not in SLO_PERCENTILES:
            raise InputError(f"{option}: must be one of {', '.join(map(str, SLO_PERCENTILES))} (got {percentile})")
    role = None if request.role == "colocated" else request.role
    network = (("--site", request.site), ("--rtt-ms", request.rtt_ms), ("--uplink-mbit-per-s", request.uplink_mbit_per_s))
    for option, value in (*network, *percentiles, *optimizations, ("--role", role)):
        if value is not None and request.requests_per_s is None:
            raise InputError(
                f"{option} acts on a replica under load; give --requests-per-s too (without a load, ttft_ms is the"
                " prefill alone and decode_step_ms the plain step at --batch)"
            )
    check_network(request)
    if request.prefix_cache is not None and request.prefix_cache.prefix_tokens > request.input_tokens:
        raise InputError(
            f"--prefix-tokens: {request.prefix_cache.prefix_tokens} exceeds --input-tokens {request.input_tokens}"
            " (the shared prefix is part of the prompt)"
        )


def saturation_requests_per_s(
    terms: DeploymentTerms, request: PredictRequest, *, max_batch: float, network_s: float, handoff_s: float,
    opt: LoadOptimizations | None,
) -> float:
    """The most requests/s the replica sustains with no latency SLO (the capacity functions at SLOs of inf):
    above it the engine's queue grows without bound and the figures at load are no steady state."""
    p_tok, g_tok, inf = float(request.input_tokens), float(request.output_tokens), math.inf
    if request.role == "prefill":
        cap = prefill_capacity_at_slo(
            terms, input_tokens=p_tok, max_batch=max_batch, network_s=network_s, handoff_s=handoff_s, slo_ttft_s=inf
        )
    elif request.role == "decode":
        cap = decode_capacity_at_slo(terms, input_tokens=p_tok, output_tokens=g_tok, max_batch=max_batch, slo_tpot_s=inf)
    else:
        cap = capacity_at_slo(
            terms, input_tokens=p_tok, output_tokens=g_tok, max_batch=max_batch, network_s=network_s,
            slo_ttft_s=inf, slo_tpot_s=inf, opt=opt,
        )
    return float(cap)


def load_optimizations(
    catalog: Catalog, request: PredictRequest, terms: DeploymentTerms, *, model_id: str, gpu: Accelerator,
    fmt: NumericFormat, kfmt: NumericFormat,
) -> LoadOptimizations | None:
    """The optimizations the request turns on, as the plan's 'on' variant of this configuration has them (None
    when plain). One the planner never deploys here (card 3's break-even fails, the draft does not run or has
    another tokenizer) raises InfeasiblePlan (exit 3) with its reason."""
    if request.prefix_cache is None and request.speculative is None:
        return None
    from planner.candidate_optimizations import config_variants  # it builds on planner.performance

    w = _PredictedWorkload(
        "predict", request.input_tokens, request.output_tokens, request.engine, request.prefix_cache,
        request.speculative,
    )
    variants = config_variants(
        catalog, w, terms, model_id=model_id, gpu=gpu, fmt=fmt, kfmt=kfmt, tp=request.tp, pp=request.pp
    )
    want = (w.prefix_cache is not None, w.speculative is not None)
    for v in variants:
        if (v.prefix_cache, v.speculative) == want:
            return v.opt
    plain = variants[0]  # its reasons say why each stated optimization is off
    missing = [
        plain.why[name] for name, asked in (("prefix_cache", want[0]), ("speculative", want[1]))
        if asked and not any(getattr(v, name) for v in variants)
    ]
    raise InfeasiblePlan("; ".join(missing) + " — the planner never turns it on for this configuration")


def check_network(request: PredictRequest) -> None:
    """InputError (exit 2) for a round trip outside [0, 60 s] or an uplink outside (0, 10 Tbit/s], and for one of
    the two without ``--site`` (with no site there is nothing to take the other from)."""
    if request.rtt_ms is not None and not 0 <= request.rtt_ms <= MAX_RTT_MS:
        raise InputError(f"--rtt-ms: must be in [0, {MAX_RTT_MS:g}] ms (got {request.rtt_ms:g})")
    if request.uplink_mbit_per_s is not None and not 0 < request.uplink_mbit_per_s <= MAX_UPLINK_MBIT_PER_S:
        raise InputError(
            f"--uplink-mbit-per-s: must be in (0, {MAX_UPLINK_MBIT_PER_S:g}] Mbit/s (got {request.uplink_mbit_per_s:g})"
        )
    if request.site is None and (request.rtt_ms is None) != (request.uplink_mbit_per_s is None):
        given, missing = (
            ("--rtt-ms", "--uplink-mbit-per-s") if request.uplink_mbit_per_s is None else ("--uplink-mbit-per-s", "--rtt-ms")
        )
        raise InputError(f"{given}: without --site, give {missing} too (or --site to take it from)")


def network_s(request: PredictRequest, site: Site | None) -> float:
    """Network part of TTFT at load, s: request_network_s of the site's round trip and uplink, each replaced by
    ``--rtt-ms`` / ``--uplink-mbit-per-s`` where given (a scenario's ``sites:`` override); 0 with neither."""
    rtt = request.rtt_ms if request.rtt_ms is not None else (None if site is None else site.rtt_ms)
    uplink = request.uplink_mbit_per_s if request.uplink_mbit_per_s is not None else (
        None if site is None else site.uplink_mbit_per_s
    )
    if rtt is None or uplink is None:
        return 0.0
    return request_network_s(request.input_tokens, rtt_ms=rtt, uplink_mbit_per_s=uplink)


def at_load(
    catalog: Catalog, request: PredictRequest, terms: DeploymentTerms, *, site: Site | None, gpu: Accelerator,
    opt: LoadOptimizations | None, fit: float,
) -> dict[str, float | bool | None]:
    """serve_at_load of one replica at the request's offered load (the candidate table's function): batch limit
    planner.performance.load.replica_batch_limit (``fit``, ``batch_limit``, the engine's ``max_running_sequences``),
    the network time of ``site`` and the request's ``--rtt-ms`` / ``--uplink-mbit-per-s`` in TTFT
    (:func:`network_s`), TTFT / TPOT at the request's percentiles (None: means). ``opt``: the request's
    optimizations (:func:`load_optimizations`); ``fit``: the memory fit with them
    (planner.performance.optimizations.optimized_max_batch, the prediction's ``max_batch``, as the plan's
    candidate table and audit compute it), sequences."""
    limit = replica_batch_limit(terms, fit=fit, max_batch=float(request.batch_limit))
    network = network_s(request, site)
    p_tok, g_tok = float(request.input_tokens), float(request.output_tokens)
    lam = float(request.requests_per_s or 0.0)
    handoff = 0.0
    if request.role == "prefill":  # TTFT with the KV handoff to the decode pool, as the plan's prefill pools
        from planner.candidates_pd import request_kv_handoff  # it builds on planner.performance

        handoff = request_kv_handoff(catalog, terms, gpu=gpu, tp=request.tp, input_tokens=p_tok)[2]
        pt = prefill_at_load(
            terms, requests_per_s=lam, input_tokens=p_tok, max_batch=limit, network_s=network, handoff_s=handoff
        )
    elif request.role == "decode":  # TPOT with no prompt in the steps
        pt = decode_at_load(terms, requests_per_s=lam, input_tokens=p_tok, output_tokens=g_tok, max_batch=limit)
    else:
        pt = serve_at_load(
            terms, requests_per_s=lam, input_tokens=p_tok, output_tokens=g_tok, max_batch=limit, network_s=network,
            opt=opt, ttft_percentile=request.ttft_percentile, tpot_percentile=request.tpot_percentile,
        )
    saturation = saturation_requests_per_s(terms, request, max_batch=limit, network_s=network, handoff_s=handoff, opt=opt)
    figures = {
        "requests_per_s": float(pt.requests_per_s),
        "stable": bool(pt.stable),
        "saturation_requests_per_s": saturation,
        # a pool reports only its own half, None (JSON null) for the other, as the plan's PD deployments do
        "ttft_ms": None if request.role == "decode" else float(pt.ttft_s) * 1e3,  # at --ttft-percentile if given
        "tpot_ms": None if request.role == "prefill" else float(pt.tpot_s) * 1e3,  # at --tpot-percentile if given
        # TPOT without prompt chunks, as a plan's deployment reports its decode step (load.bare_tpot_s)
        "decode_step_ms": None if request.role == "prefill" else float(
            bare_tpot_s(terms, pt, input_tokens=p_tok, output_tokens=g_tok, opt=opt)
        ) * 1e3,
        # the engine's mean step (B running sequences); TPOT is the steps a request runs in: B + 1 (load.own_batch)
        "step_ms": float(pt.step_s) * 1e3,
        "output_tokens_per_s": float(pt.output_tokens_per_s),
        "batch_limit": limit,
        "running_batch": float(pt.running_batch),
        "own_batch": float(pt.own_batch),  # sequences in a request's own steps, min(B + 1, limit): TPOT's batch
        "tokens_per_round": 1.0 if opt is None else float(opt.tokens_per_round),  # E[N] under speculation
        "cached_prompt_tokens": 0.0 if opt is None else float(opt.cached_tokens),  # h·S under the prefix cache
        "prefill_tokens_per_step": float(pt.prefill_tokens_per_step),
        "prefill_utilization_frac": float(pt.prefill_utilization_frac),
        "chunk_steps": float(pt.chunk_steps),
        "chunk_step_ms": float(pt.chunk_step_s) * 1e3,
        "queue_wait_ms": float(pt.queue_wait_s) * 1e3,
        # TTFT = queue_wait + prefill_chunks + scheduler_wait + network; prefill_chunks = chunk_steps · chunk_step
        # without pipeline stages (with them, each chunk crosses every stage: LoadPoint.prefill_latency_s); scheduler_wait =
        # engine_busy · (scheduler_steps/2 + scheduler_lookahead_steps) · the step in flight (tail.step_phase_s)
        "prefill_chunks_ms": float(pt.prefill_latency_s) * 1e3,
        "scheduler_wait_ms": float(step_phase_s(pt, terms)) * 1e3,
        "network_ms": network * 1e3,  # the RTT + the prompt upload (0 without --site or --rtt-ms)
        "handoff_ms": handoff * 1e3,  # a prefill pool's KV handoff to its decode pool (0 otherwise)
        "engine_busy_frac": float(busy_frac(pt)),
        "scheduler_steps": float(terms.scheduler_steps),
        "scheduler_lookahead_steps": float(terms.scheduler_lookahead_steps),
        # the engine's host time and the MoE layers' routing kernels: steps.host_s adds both to every step
        "host_ms": float(engine_host_time_s(terms, pt.running_batch)) * 1e3,
        "routing_kernels_ms": float(moe.routing_kernels_s(terms)) * 1e3,
    }
    if not pt.stable:  # no steady state: the queue grows without bound, so no step, batch or wait describes it
        figures |= dict.fromkeys(UNSTABLE_FIGURES)
        figures["output_tokens_per_s"] = saturation * g_tok  # what the replica emits, at its saturation load
    return figures


UNSTABLE_FIGURES = (
    "ttft_ms", "tpot_ms", "decode_step_ms", "step_ms", "running_batch", "own_batch", "prefill_tokens_per_step",
    "prefill_utilization_frac", "chunk_steps", "chunk_step_ms", "queue_wait_ms", "prefill_chunks_ms",
    "scheduler_wait_ms", "engine_busy_frac", "host_ms",
)
"""Figures of :func:`at_load` that only a steady state has: null above the saturation load."""
