"""Step times: one decode step and one prefill as a :class:`StepBreakdown` (formulas in :mod:`planner.performance`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.ledgers import architecture as arch
from planner.ledgers import efficiency as eff
from planner.ledgers import operators as ops
from planner.ledgers.collectives import (
    AllreduceChoice,
    InDomainAllreduce,
    allreduce_choice,
    in_domain_allreduce,
    in_domain_fabric,
)
from planner.ledgers.communication import collective_launch_s, transfer_at_s, transfer_s
from planner.ledgers.inference import engine_host_at_s, engine_host_fixed_s, engine_host_s
from planner.performance import moe
from planner.performance.memory import _min, kv_bytes_per_gpu
from planner.performance.terms import ACTIVATION_BYTES, DeploymentTerms, Num
from planner.units import BYTES_PER_GB, FLOP_PER_TFLOP


@dataclass(frozen=True)
class StepBreakdown:
    """Terms of one step (seconds), each already divided by its efficiency; ``total_s`` combines them."""

    weights_read_s: Num
    kv_read_s: Num
    compute_s: Num
    attention_compute_s: Num
    """Part of ``compute_s`` spent on attention (grows with context)."""
    tp_comm_s: Num
    pp_comm_s: Num
    overhead_s: Num
    total_s: Num
    read_bytes_per_gpu: Num
    flop_per_gpu: Num
    linear_ops_s: Num
    """Linear layers (projections, FFN/experts, LM head): their compute against the weight stream, max or, in a
    decode step, the overlap norm of eff.overlapped_stage_s (q = ∞: the max)."""
    attention_ops_s: Num
    """Attention: max(its compute, the KV read or write); runs after the projections, so it adds (card 7)."""
    tp_latency_s: Num
    """Start-up part of the TP all-reduces (launch + rounds·α of the algorithm each uses: 2(t − 1)·α on the
    ring, α_S with in-switch reduction; included in ``tp_comm_s``)."""

    def bound(self) -> Num:
        """Dominant resource: 'memory', 'compute' or 'communication' (arrays give an object array)."""
        memory = self.weights_read_s + self.kv_read_s
        comm = self.tp_comm_s + self.pp_comm_s
        return np.where(
            (comm > memory) & (comm > self.compute_s),
            "communication",
            np.where(self.compute_s > memory, "compute", "memory"),
        )


def experts_touched(terms: DeploymentTerms, tokens: Num) -> Num:
    """Expected distinct routed experts a step with ``tokens`` tokens reads, per MoE layer (card 2)."""
    return arch.expected_experts_touched(
        tokens, experts=terms.experts_routed, experts_per_token=terms.experts_per_token
    )


def weights_read_bytes(terms: DeploymentTerms, tokens: Num, routed: moe.Routing | None = None) -> Num:
    """Weight bytes one pass over ``tokens`` tokens streams: fixed part + expert union (cards 1, 2), B.

    With expert parallelism the fixed part is read once per attention rank and the experts by the busiest
    rank (:func:`planner.performance.moe.weights_read_bytes`); without it, fixed + L_moe·U(n)·M_e.
    """
    return moe.weights_read_bytes(terms, tokens, routed)


def tp_allreduce_choice(terms: DeploymentTerms, message_bytes: Num) -> AllreduceChoice:
    """The algorithm one TP all-reduce of ``message_bytes`` uses and its time without the engine launch
    (card 11: ring 2(t − 1)·α + 2(t − 1)·M/(t·B·η_link), or NVLS α_S + M/B_S where the switch reduces).

    t = the attention TP (w/e with expert parallelism, whose ranks each all-reduce their own 1/e of the rows).
    """
    ranks = moe.attention_tp(terms)
    message_bytes = message_bytes / terms.attention_dp
    link_gb_per_s = terms.tp_link_gb_per_s * terms.efficiency.link_efficiency_frac
    fabric = in_domain_fabric(
        ranks,
        link_gb_per_s=link_gb_per_s,
        latency_us=terms.tp_link_latency_us,
        in_switch_gb_per_s=terms.tp_in_switch_gb_per_s,
        in_switch_latency_us=terms.tp_in_switch_latency_us,
    )
    return allreduce_choice(message_bytes, fabric)


@dataclass(frozen=True)
class TpAllreduce:
    """One TP all-reduce of a deployment without its message M (a step table at many loads keeps it): the
    in-domain algorithm's terms over the attention TP t (ledgers.collectives.in_domain_allreduce), the
    attention data-parallel ranks e (each all-reduces its own 1/e of the rows) and the engine launch τ_e."""

    fabric: InDomainAllreduce
    ranks: Num
    """The attention TP t."""
    attention_dp: Num
    launch_s: Num

    def time_s(self, message_bytes: Num) -> Num:
        """τ_e + the fastest algorithm's time for M/e bytes per rank, s (τ_e alone at t = 1)."""
        return self.fabric.time_s(message_bytes / self.attention_dp) + self.launch_s

    def startup_s(self, message_bytes: Num) -> Num:
        """τ_e + the start-up (rounds·α) of the algorithm M/e bytes use, s (τ_e alone at t = 1)."""
        return self.fabric.time_and_startup_s(message_bytes / self.attention_dp)[1] + self.launch_s


def tp_allreduce(terms: DeploymentTerms) -> TpAllreduce:
    """The :class:`TpAllreduce` of ``terms``: the attention TP's links at the achieved bandwidth
    (B·η_link), their per-hop α, the switch's reduction where it has one, and the engine's launch."""
    ranks = moe.attention_tp(terms)
    fabric = in_domain_allreduce(
        ranks=ranks,
        link_gb_per_s=terms.tp_link_gb_per_s * terms.efficiency.link_efficiency_frac,
        latency_us=terms.tp_link_latency_us,
        in_switch_gb_per_s=terms.tp_in_switch_gb_per_s,
        in_switch_latency_us=terms.tp_in_switch_latency_us,
    )
    return TpAllreduce(
        fabric, ranks, terms.attention_dp, collective_launch_s(ranks, launch_us=terms.collective_launch_us)
    )


def _tp_allreduce_s(terms: DeploymentTerms, message_bytes: Num) -> Num:
    """One TP all-reduce: engine launch τ_e + the fastest algorithm of :func:`tp_allreduce_choice`, s (τ_e alone
    at TP1)."""
    return tp_allreduce(terms).time_s(message_bytes)


def _tp_allreduce_startup_s(terms: DeploymentTerms, message_bytes: Num) -> Num:
    """Start-up part τ_e + rounds·α of one TP all-reduce with the algorithm it uses (ring: 2(t − 1)·α), s."""
    return tp_allreduce(terms).startup_s(message_bytes)


def host_s(terms: DeploymentTerms, batch: Num) -> Num:
    """Fixed time of one step with ``batch`` running sequences outside its operator groups, s: the engine's host
    time (:func:`engine_host_time_s`) + the MoE layers' routing kernels (moe.routing_kernels_s, 0 for dense
    models), through :func:`host_parts` / :func:`host_at` as a step table at many loads computes it. Every step
    function (decode, prefill, the chunked mixed step) adds it once."""
    return host_at(host_parts(terms), batch)


def host_parts(terms: DeploymentTerms, step_overhead_s: Num = 0.0) -> tuple[Num, Num, Num, Num, Num]:
    """(step overhead, the engine's batch-free host time T_step + L·τ_layer, e, τ_seq, the routing kernels' time):
    the parts of ``step_overhead_s`` + :func:`host_s` that do not read the batch, for a step table at many loads."""
    fixed = engine_host_fixed_s(terms.layers, step_ms=terms.host_step_ms, per_layer_us=terms.host_per_layer_us)
    return step_overhead_s, fixed, terms.attention_dp, terms.host_per_sequence_us, moe.routing_kernels_s(terms)


def host_at(parts: tuple[Num, Num, Num, Num, Num], batch: Num) -> Num:
    """``step_overhead_s`` + :func:`host_s` of ``batch`` from its :func:`host_parts` (ledgers.inference.engine_host_at_s
    of the B/e sequences each attention rank schedules)."""
    overhead, fixed, dp, per_sequence_us, routing_s = parts
    return overhead + (engine_host_at_s(fixed, batch / dp, per_sequence_us=per_sequence_us) + routing_s)


def engine_host_time_s(terms: DeploymentTerms, batch: Num) -> Num:
    """Engine host time of one step with ``batch`` running sequences (ledgers.inference.engine_host_s), s.

    Attention data-parallel ranks schedule their B/e sequences in parallel (one engine process each).
    """
    return engine_host_s(
        terms.layers,
        batch / terms.attention_dp,
        step_ms=terms.host_step_ms,
        per_layer_us=terms.host_per_layer_us,
        per_sequence_us=terms.host_per_sequence_us,
    )


def exposed_comm_s(terms: DeploymentTerms, comm_s: Num, gemm_s: Num) -> Num:
    """TP communication left on the critical path: all of it, or max(comm − GEMM, 0) if the engine overlaps."""
    o = terms.collectives_overlap
    return (1.0 - o) * comm_s + o * np.maximum(comm_s - gemm_s, 0.0)


def _pp_transfer_s(terms: DeploymentTerms, message_bytes: Num) -> Num:
    """(p − 1) point-to-point transfers of ``message_bytes`` between pipeline stages, s (0 without stages)."""
    return _pp_transfer_at(_pp_parts(terms), message_bytes)


def _pp_parts(terms: DeploymentTerms) -> tuple[Num, Num, Num]:
    """(p − 1, the stage link's start-up s, its B/s): the parts of :func:`_pp_transfer_s` that do not read the
    message (the start-up is ledgers.communication.transfer_s of 0 B: its inputs checked here once)."""
    start_s = transfer_s(0.0, bandwidth_gb_per_s=terms.pp_link_gb_per_s, latency_us=terms.pp_link_latency_us)
    return terms.pp - 1, start_s, terms.pp_link_gb_per_s * BYTES_PER_GB


def _pp_transfer_at(parts: tuple[Num, Num, Num], message_bytes: Num) -> Num:
    """:func:`_pp_transfer_s` from its :func:`_pp_parts`: (p − 1)·transfer_s(message) through
    ledgers.communication.transfer_at_s (its inputs checked in the parts; a message is ≥ 0 bytes)."""
    stages_less_one, start_s, link_bytes_per_s = parts
    return stages_less_one * transfer_at_s(message_bytes, startup_s=start_s, bytes_per_s=link_bytes_per_s)


def micro_batch(batch: Num, pp: Num) -> Num:
    """Sequences in one micro-batch of a step of ``batch`` sequences over ``pp`` pipeline stages:
    max(B/p, min(B, 1)). A sequence is never split: below p sequences each runs in a micro-batch of its own
    (the others are empty), so a lone sequence crosses every stage with its whole KV and its experts, and a
    PP step is never faster than the same batch on one stage."""
    return np.maximum(batch / pp, np.minimum(batch, 1.0))


def decode_step(terms: DeploymentTerms, *, batch: Num, context_tokens: Num) -> StepBreakdown:
    """One decode step of ``batch`` sequences at history ``context_tokens`` (see the module docstring).
    ``flop_per_gpu`` and ``read_bytes_per_gpu`` are per GPU over the whole step: its B/micro micro-batches
    each stream the stage's weights (:func:`micro_batch`)."""
    e, t, p = terms.efficiency, terms.tp, terms.pp
    micro = micro_batch(batch, p)
    passes = batch / np.maximum(micro, 1e-30)  # non-empty micro-batches in the step (p once B ≥ p)
    window_ctx = _min(context_tokens, terms.window_tokens)
    attn_flop = (
        terms.attention_flop_per_pair_per_layer
        * micro
        * (terms.full_attention_layers * context_tokens + terms.window_layers * window_ctx)
    )
    flop = micro * (terms.linear_flop_per_token + terms.lm_head_flop_per_token) + attn_flop
    flop_per_gpu = flop / (t * p)
    mfu = eff.decode_compute_efficiency_frac(e, micro)
    peak = terms.peak_tflops * FLOP_PER_TFLOP
    routed = moe.routing(terms, micro)  # experts touched and load imbalance: read by the GEMMs and the weight stream
    attention_s = attn_flop / (t * p) / (terms.attention_peak_tflops * FLOP_PER_TFLOP * mfu)
    gemm_s = (flop_per_gpu - attn_flop / (t * p) - moe.expert_flop_per_gpu(terms, micro)) / (peak * mfu) + (
        moe.expert_gemm_s(terms, micro, peak_flop_per_s=peak, eta_max=mfu, routed=routed)
    )
    w_bytes = weights_read_bytes(terms, micro, routed) / (t * p)
    kv_bytes = kv_bytes_per_gpu(terms, batch=micro, context_tokens=context_tokens) / eff.kv_paging_factor(
        e, context_tokens
    )
    peak_bw = terms.bandwidth_gb_per_s * BYTES_PER_GB
    x_bytes = moe.expert_read_bytes(terms, routed) / (t * p)
    weights_s = eff.weight_stream_s(e, w_bytes, peak_bw, terms.gemm_kernels / p, terms.layers / p, x_bytes)
    kv_s = kv_bytes / (peak_bw * eff.kv_stream_efficiency_frac(e))
    allreduces = 2 * (terms.layers / p)
    pp_comm = _pp_transfer_s(terms, micro * terms.hidden_size * ACTIVATION_BYTES)
    overhead = e.step_overhead_s + host_s(terms, batch)
    # serially dependent groups add (ops.operator_sequence_s); each is kept for the breakdown
    linear_ops = eff.overlapped_stage_s(e, gemm_s, weights_s)
    attention_ops = eff.overlapped_stage_s(e, attention_s, kv_s)
    tp_comm = exposed_comm_s(
        terms,
        allreduces * _tp_allreduce_s(terms, micro * terms.hidden_size * ACTIVATION_BYTES)
        + moe.all_to_all_s(terms, micro),
        linear_ops,
    )
    total = overhead + p * (linear_ops + attention_ops + tp_comm) + pp_comm
    return StepBreakdown(
        weights_read_s=p * weights_s,
        kv_read_s=p * kv_s,
        compute_s=p * (gemm_s + attention_s),
        attention_compute_s=p * attention_s,
        tp_comm_s=p * tp_comm,
        pp_comm_s=pp_comm,
        overhead_s=overhead + 0 * total,
        total_s=total,
        read_bytes_per_gpu=passes * (w_bytes + kv_bytes),
        flop_per_gpu=passes * flop_per_gpu,
        linear_ops_s=p * linear_ops,
        attention_ops_s=p * attention_ops,
        tp_latency_s=p * allreduces * _tp_allreduce_startup_s(terms, micro * terms.hidden_size * ACTIVATION_BYTES)
        + 0 * total,
    )


def lm_head_s(terms: DeploymentTerms, head_flop: Num) -> Num:
    """Compute of the prompts' LM-head rows in a prefill, s: F_head·n_prompts / (t·Π·η_d).

    The head runs on one row per prompt (its last token), not on the prompt's n tokens, so it is a
    decode-like GEMM at the decode efficiency η_d (eff.decode_compute_efficiency_frac; its weights are in
    the weight stream), not at the prefill curve η_p(n, t) of the prompt's rows: charged at η_p(n, t), its
    time F_head·(1 + n_half·t/n)/(Π·η_max) fell as the prompt grew, and a 2-token prompt of Llama-3.1-70B
    FP8 at TP4 on H100s had a shorter TTFT than a 1-token one (11.446 vs 11.466 ms)."""
    rows_eta = eff.decode_compute_efficiency_frac(terms.efficiency, 1.0)
    return head_flop / terms.tp / (terms.peak_tflops * FLOP_PER_TFLOP * rows_eta)


def prefill_step(
    terms: DeploymentTerms, *, prompt_tokens: Num, cached_tokens: Num = 0.0, batch: Num = 1.0
) -> StepBreakdown:
    """Prefill of ``batch`` prompts of ``prompt_tokens`` new tokens after ``cached_tokens`` (module docstring)."""
    e, t, p = terms.efficiency, terms.tp, terms.pp
    tokens = batch * prompt_tokens
    pairs = arch.attention_pairs(prompt_tokens, cached_tokens=cached_tokens, batch=batch)
    windowed = _min(pairs, batch * prompt_tokens * terms.window_tokens)
    attn_flop = terms.attention_flop_per_pair_per_layer * (
        terms.full_attention_layers * pairs + terms.window_layers * windowed
    )
    linear_flop, head_flop = tokens * terms.linear_flop_per_token, batch * terms.lm_head_flop_per_token
    flop = linear_flop + head_flop + attn_flop
    mfu = eff.prefill_compute_efficiency_frac(e, tokens, t)
    peak = terms.peak_tflops * FLOP_PER_TFLOP * mfu
    routed = moe.routing(terms, tokens)
    attention_s = attn_flop / t / (terms.attention_peak_tflops * FLOP_PER_TFLOP * mfu)
    head_s = lm_head_s(terms, head_flop)
    gemm_s = (linear_flop / t - moe.expert_flop_per_gpu(terms, tokens) * p) / peak + head_s + moe.expert_gemm_s(
        terms, tokens, peak_flop_per_s=terms.peak_tflops * FLOP_PER_TFLOP / p, eta_max=e.prefill_mfu_frac, routed=routed
    )
    peak_bw = terms.bandwidth_gb_per_s * BYTES_PER_GB
    bw = peak_bw * eff.kv_stream_efficiency_frac(e)  # the KV write; the weight stream: eff.weight_stream_s
    w_bytes = weights_read_bytes(terms, tokens, routed) / t
    x_bytes = moe.expert_read_bytes(terms, routed) / t
    weights_s = eff.weight_stream_s(e, w_bytes, peak_bw, terms.gemm_kernels, terms.layers, x_bytes)
    # the whole prompt's KV over every stage in turn: the busiest stage's share ℓ undone
    kv_write_s = kv_bytes_per_gpu(terms, batch=batch, context_tokens=prompt_tokens) / terms.stage_layers_frac / bw
    allreduces = 2 * terms.layers
    pp_comm = _pp_transfer_s(terms, tokens * terms.hidden_size * ACTIVATION_BYTES)
    overhead = e.step_overhead_s + host_s(terms, batch)
    linear_ops = ops.operator_stage_s(gemm_s, weights_s)
    attention_ops = ops.operator_stage_s(attention_s, kv_write_s)
    tp_comm = exposed_comm_s(
        terms,
        allreduces * _tp_allreduce_s(terms, tokens * terms.hidden_size * ACTIVATION_BYTES)
        + moe.all_to_all_s(terms, tokens) * p,
        linear_ops,
    )
    total = overhead + linear_ops + attention_ops + tp_comm + pp_comm
    return StepBreakdown(
        weights_read_s=weights_s,
        kv_read_s=kv_write_s,
        compute_s=gemm_s + attention_s,
        attention_compute_s=attention_s,
        tp_comm_s=tp_comm,
        pp_comm_s=pp_comm,
        overhead_s=overhead + 0 * total,
        total_s=total,
        read_bytes_per_gpu=w_bytes,
        flop_per_gpu=flop / (t * p),
        linear_ops_s=linear_ops,
        attention_ops_s=attention_ops,
        tp_latency_s=allreduces * _tp_allreduce_startup_s(terms, tokens * terms.hidden_size * ACTIVATION_BYTES)
        + 0 * total,
    )


def mean_decode_context_tokens(input_tokens: Num, output_tokens: Num) -> Num:
    """Mean history over a request's decode calls: call j sees P + j, j = 1..G − 1 → P + G/2 (card 1)."""
    return input_tokens + output_tokens / 2.0
