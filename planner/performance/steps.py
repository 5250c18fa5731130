"""Step times: one decode step and one prefill as a :class:`StepBreakdown` (formulas in :mod:`planner.performance`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.ledgers import architecture as arch
from planner.ledgers import efficiency as eff
from planner.ledgers import operators as ops
from planner.ledgers.collectives import (
    AllreduceChoice,
    allreduce_choice,
    in_domain_allreduce_s,
    in_domain_fabric,
)
from planner.ledgers.communication import collective_launch_s, transfer_s
from planner.ledgers.inference import engine_host_s
from planner.performance import moe
from planner.performance.memory import _min, kv_bytes_of, kv_bytes_per_gpu, kv_parts
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


def _tp_allreduce_parts(terms: DeploymentTerms) -> tuple[Num, Num, Num]:
    """(ranks t, the link's achieved GB/s, engine launch τ_e): the parts of one TP all-reduce that do not read
    the message (a step table at many loads computes them once)."""
    ranks = moe.attention_tp(terms)
    link_gb_per_s = terms.tp_link_gb_per_s * terms.efficiency.link_efficiency_frac
    return ranks, link_gb_per_s, collective_launch_s(ranks, launch_us=terms.collective_launch_us)


def _tp_allreduce_s_and_startup(
    terms: DeploymentTerms, message_bytes: Num, parts: tuple[Num, Num, Num] | None = None
) -> tuple[Num, Num]:
    """(time, start-up) of one TP all-reduce with the algorithm :func:`tp_allreduce_choice` picks, without
    the engine launch, s (the fast path of ledgers.collectives.in_domain_allreduce_s; names not needed)."""
    ranks, link_gb_per_s, _launch = _tp_allreduce_parts(terms) if parts is None else parts
    return in_domain_allreduce_s(
        message_bytes / terms.attention_dp,
        ranks=ranks,
        link_gb_per_s=link_gb_per_s,
        latency_us=terms.tp_link_latency_us,
        in_switch_gb_per_s=terms.tp_in_switch_gb_per_s,
        in_switch_latency_us=terms.tp_in_switch_latency_us,
    )


def _tp_allreduce_s(terms: DeploymentTerms, message_bytes: Num, parts: tuple[Num, Num, Num] | None = None) -> Num:
    """One TP all-reduce: engine launch τ_e + the fastest algorithm of :func:`tp_allreduce_choice`, s (0 at TP1);
    ``parts``: :func:`_tp_allreduce_parts` when the caller has them."""
    parts = _tp_allreduce_parts(terms) if parts is None else parts
    t, _start = _tp_allreduce_s_and_startup(terms, message_bytes, parts)
    return np.where(parts[0] > 1, t, 0.0) + parts[2]


def _tp_allreduce_startup_s(terms: DeploymentTerms, message_bytes: Num) -> Num:
    """Start-up part τ_e + rounds·α of one TP all-reduce with the algorithm it uses (ring: 2(t − 1)·α), s."""
    parts = _tp_allreduce_parts(terms)
    _t, start = _tp_allreduce_s_and_startup(terms, message_bytes, parts)
    return np.where(parts[0] > 1, start, 0.0) + parts[2]


def host_s(terms: DeploymentTerms, batch: Num) -> Num:
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
    t = transfer_s(
        message_bytes, bandwidth_gb_per_s=terms.pp_link_gb_per_s, latency_us=terms.pp_link_latency_us
    )
    return (terms.pp - 1) * t


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
    flop = tokens * terms.linear_flop_per_token + batch * terms.lm_head_flop_per_token + attn_flop
    mfu = eff.prefill_compute_efficiency_frac(e, tokens, t)
    peak = terms.peak_tflops * FLOP_PER_TFLOP * mfu
    routed = moe.routing(terms, tokens)
    attention_s = attn_flop / t / (terms.attention_peak_tflops * FLOP_PER_TFLOP * mfu)
    gemm_s = (flop / t - attn_flop / t - moe.expert_flop_per_gpu(terms, tokens) * p) / peak + moe.expert_gemm_s(
        terms, tokens, peak_flop_per_s=terms.peak_tflops * FLOP_PER_TFLOP / p, eta_max=e.prefill_mfu_frac, routed=routed
    )
    peak_bw = terms.bandwidth_gb_per_s * BYTES_PER_GB
    bw = peak_bw * eff.kv_stream_efficiency_frac(e)  # the KV write; the weight stream: eff.weight_stream_s
    w_bytes = weights_read_bytes(terms, tokens, routed) / t
    x_bytes = moe.expert_read_bytes(terms, routed) / t
    weights_s = eff.weight_stream_s(e, w_bytes, peak_bw, terms.gemm_kernels, terms.layers, x_bytes)
    kv_write_s = kv_bytes_per_gpu(terms, batch=batch, context_tokens=prompt_tokens) * p / bw
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


def mixed_step(
    terms: DeploymentTerms,
    *,
    decode_batch: Num,
    decode_context_tokens: Num,
    prefill_tokens: Num,
    prompt_tokens: Num,
    verify_tokens: Num = 1.0,
    cached_tokens: Num = 0.0,
) -> Num:
    """One chunked-prefill engine step: B decode tokens + c prompt tokens through ONE weight pass, s.

    With B = ``decode_batch`` at history H = ``decode_context_tokens`` and c = ``prefill_tokens`` from
    prompts of P = ``prompt_tokens`` tokens (c/P prompts; each prompt token attends to (P + 1)/2 earlier
    tokens on average), split in p micro-batches over the PP stages (each max(B/p, min(B, 1)) sequences,
    :func:`micro_batch`, and c/p prompt tokens; a prompt's chunk runs whole in one of them, MixedStep):

        T = T_host(B + c/P) + p·[max(F_lin,dec/(Π·η_max) + F_lin,pre/(Π·η_p), R_W(B + c)/(β·η_m·η_w))
            + max(F_attn/(Π_a·η), KV read + KV write) + exposed 2L/p all-reduces of (B + c)/p·d·2 B] + (p − 1)·T_pp

    plus, on each max, the overlap loss of its decode rows, eff.overlap_loss_s (0 at q = ∞);

    all per GPU (÷ t·p). η_p is the prefill saturation curve η_p(n, t) at the GEMM rows of a step that runs a chunk,
    max(c/p, min(P, C − B)): a chunk is never smaller than one prompt's share of the budget, so a light load
    (c → 0) adds its FLOPs at the chunk's efficiency instead of at an ever smaller row count. At c = 0 it is
    :func:`decode_step`; at B = 0, c = P it is a single prefill.

    Optimizations (planner/performance/optimizations.py): each decoding sequence runs ``verify_tokens`` = k + 1
    query rows (speculative verification; its KV is read once), and each prompt token also attends to the
    ``cached_tokens`` of a prefix-cache hit (c·S_cached more pairs). Defaults 1 and 0 are the plain step.
    """
    return MixedStep(
        terms, decode_context_tokens=decode_context_tokens, prompt_tokens=prompt_tokens,
        verify_tokens=verify_tokens, cached_tokens=cached_tokens,
    )(decode_batch=decode_batch, prefill_tokens=prefill_tokens)


class MixedStep:
    """:func:`mixed_step` of a table whose terms, history, prompts, verified rows and cached tokens are fixed,
    as a function of the load (B, c): the parts that read neither are evaluated once, at construction — the
    scheduler's fixed point asks the same table at a dozen steps per load and forty loads per bisection. Each
    part is the expression :func:`mixed_step` evaluated, in the same order: the same numbers."""

    def __init__(
        self, terms: DeploymentTerms, *, decode_context_tokens: Num, prompt_tokens: Num, verify_tokens: Num = 1.0,
        cached_tokens: Num = 0.0,
    ) -> None:
        e = terms.efficiency
        self.terms, self.context, self.prompt = terms, decode_context_tokens, prompt_tokens
        self.verify, self.cached = verify_tokens, cached_tokens
        self.prompt_floor = np.maximum(prompt_tokens, 1.0)
        window_ctx = _min(decode_context_tokens, terms.window_tokens)
        self.pair_layers = terms.full_attention_layers * decode_context_tokens + terms.window_layers * window_ctx
        self.prompt_plus = prompt_tokens + 1.0
        self.peak = terms.peak_tflops * FLOP_PER_TFLOP
        self.attention_peak = terms.attention_peak_tflops * FLOP_PER_TFLOP
        self.dense_flop = terms.linear_flop_per_token - terms.expert_flop_per_token
        self.dense_head_flop = self.dense_flop + terms.lm_head_flop_per_token
        self.tp_pp = terms.tp * terms.pp
        self.bw_bytes = terms.bandwidth_gb_per_s * BYTES_PER_GB
        self.kv_bw = self.bw_bytes * eff.kv_stream_efficiency_frac(e)  # B/s of the KV read and write
        self.kv_read = kv_parts(terms, decode_context_tokens)  # c(H), paging at H, s_kv·p
        self.kv_write = kv_parts(terms, prompt_tokens)
        self.allreduces = 2 * (terms.layers / terms.pp)
        self.spread = moe.imbalance_spread(terms.expert_parallel)
        self.half_rows = moe.expert_half_rows(terms, e.prefill_mfu_frac)
        self.all_to_all = moe.all_to_all_parts(terms)
        self.tp_allreduce = _tp_allreduce_parts(terms)
        self.overlap = not bool(np.all(np.isinf(e.overlap_exponent)))  # q = ∞: the max, no loss to add
        # terms that are +0 on every row of a table without pipeline stages ((p − 1)·T_pp, T_pp finite), expert
        # parallelism (the all-to-all: 0 where e = 1) or TP ranks (the all-reduce but its launch, 0 at t = 1)
        # are not evaluated for it: x + 0 = x
        self.pipelined = bool(np.any(np.asarray(terms.pp) > 1))
        self.expert_parallel = bool(np.any(self.all_to_all["e"] > 1.0))
        self.tensor_parallel = bool(np.any(np.asarray(self.tp_allreduce[0]) > 1))

    def __call__(self, *, decode_batch: Num, prefill_tokens: Num, own_tokens: Num = 0.0) -> Num:
        """The step at B = ``decode_batch`` running sequences and c = ``prefill_tokens`` prompt tokens, s.

        With pipeline stages the step's p micro-batches share its decode rows (:func:`micro_batch`) and its
        prompt tokens, c/p each: the engine's step, what throughput reads. ``own_tokens`` a of the c belong to
        one prompt's chunk, which runs in ONE micro-batch (an engine never splits a request's chunk over
        micro-batches): then this is the time that micro-batch, a + (c − a)/p prompt tokens, takes through
        all p stages, the chunk's latency (TTFT). Without pipeline stages both are the same step."""
        terms, e = self.terms, self.terms.efficiency
        t, p = terms.tp, terms.pp
        b_dec = micro_batch(decode_batch, p)
        c_pre = (prefill_tokens - own_tokens) / p + own_tokens
        prompts = c_pre / self.prompt_floor
        rows_dec = b_dec * self.verify
        attn_dec = terms.attention_flop_per_pair_per_layer * rows_dec * self.pair_layers
        pairs = c_pre * self.prompt_plus / 2.0 + c_pre * self.cached
        attn_pre = terms.attention_flop_per_pair_per_layer * (
            terms.full_attention_layers * pairs + terms.window_layers * _min(pairs, c_pre * terms.window_tokens)
        )
        peak = self.peak
        eta_dec = eff.decode_compute_efficiency_frac(e, rows_dec)
        # GEMM rows when a chunk runs: the micro-batch's prompt tokens, and at least one prompt's chunk
        # min(P, C − B), which runs whole in one micro-batch
        chunk_rows = np.maximum(np.minimum(self.prompt, terms.chunk_tokens - decode_batch), 1.0)
        eta_pre = eff.prefill_compute_efficiency_frac(e, np.maximum(c_pre, chunk_rows), t)
        lin_dec = rows_dec * self.dense_head_flop / self.tp_pp / (peak * eta_dec)
        lin_pre = (c_pre * self.dense_flop + prompts * terms.lm_head_flop_per_token) / self.tp_pp / (peak * eta_pre)
        rows = rows_dec + c_pre
        routed = moe.routing(terms, rows, self.spread)
        lin_experts = moe.expert_gemm_s(
            terms, rows, peak_flop_per_s=peak, eta_max=e.prefill_mfu_frac, routed=routed, half_rows=self.half_rows
        )
        attn_dec_s = attn_dec / self.tp_pp / (self.attention_peak * eta_dec)
        attn_s = attn_dec_s + attn_pre / self.tp_pp / (self.attention_peak * eta_pre)
        w_bytes = weights_read_bytes(terms, rows, routed) / self.tp_pp
        x_bytes = moe.expert_read_bytes(terms, routed) / self.tp_pp  # experts stream at η_m
        weights_s = eff.weight_stream_s(e, w_bytes, self.bw_bytes, terms.gemm_kernels / p, terms.layers / p, x_bytes)
        kv_read = kv_bytes_of(b_dec, self.kv_read) / self.kv_read[1]
        kv_write = kv_bytes_of(prompts, self.kv_write) / p
        linear_ops = ops.operator_stage_s(lin_dec + lin_pre + lin_experts, weights_s)
        attention_ops = ops.operator_stage_s(attn_s, (kv_read + kv_write) / self.kv_bw)
        if self.overlap:  # + the overlap loss of the decode rows (eff.overlap_loss_s); a prompt chunk is far
            # above the ridge, and spreading it over decode steps (c per step) is an average, not a small GEMM
            lin_dec_all = lin_dec + lin_experts * rows_dec / np.maximum(rows, 1e-30)
            linear_ops = linear_ops + eff.overlap_loss_s(e, lin_dec_all, weights_s)
            attention_ops = attention_ops + eff.overlap_loss_s(e, attn_dec_s, kv_read / self.kv_bw)
        message = rows * terms.hidden_size * ACTIVATION_BYTES
        allreduce = _tp_allreduce_s(terms, message, self.tp_allreduce) if self.tensor_parallel else self.tp_allreduce[2]
        all_to_all = moe.all_to_all_at(self.all_to_all, terms, rows) if self.expert_parallel else 0.0
        tp_comm = exposed_comm_s(terms, self.allreduces * allreduce + all_to_all, linear_ops)
        pp_comm = _pp_transfer_s(terms, message) if self.pipelined else 0.0
        host = e.step_overhead_s + host_s(terms, decode_batch + prefill_tokens / self.prompt_floor)
        return host + p * (linear_ops + attention_ops + tp_comm) + pp_comm
