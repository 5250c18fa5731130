"""One chunked-prefill engine step (decode tokens and prompt chunks through one weight pass), as a function
(:func:`mixed_step`) and as a table prepared once for many loads (:class:`MixedStep`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from planner.ledgers import efficiency as eff
from planner.ledgers import operators as ops
from planner.performance import moe
from planner.performance.fixed_point import rows_of
from planner.performance.memory import _min, kv_bytes_of, kv_parts
from planner.performance.steps import (
    _pp_parts,
    _pp_transfer_at,
    exposed_comm_s,
    host_at,
    host_parts,
    lm_head_s,
    micro_batch,
    tp_allreduce,
    weights_read_bytes,
)
from planner.performance.terms import ACTIVATION_BYTES, DeploymentTerms, Num
from planner.units import BYTES_PER_GB, FLOP_PER_TFLOP


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
            + max(F_attn/(Π_a·η), (KV read + KV write)/(β·η_kv)) + exposed 2L/p all-reduces of (B + c)/p·d·2 B]
            + (p − 1)·T_pp

    with the KV bytes one GPU of a stage (ℓ = 1/p of the layers, s_kv KV-head shards) moves for one micro-batch:
    KV read = (B/p)·c(H)/(s_kv·p) B and KV write = (c/p)·(c(P)/P)·π(P)/(s_kv·p) B (c(X): one sequence's KV at X
    tokens over all layers, π: the paging factor). The step's p micro-batches write all c prompt tokens' KV of
    the stage's layers, as each rank of a PP engine caches its own layers' KV (c = P: a single prefill's write);

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
        self.tp_allreduce = tp_allreduce(terms)
        self.overlap = not bool(np.all(np.isinf(e.overlap_exponent)))  # q = ∞: the max, no loss to add
        if self.overlap:
            # the decode rows' attention and KV read both scale with the micro-batch's sequences b (the FLOPs
            # per KV byte do not read the load), and ‖(b·a, b·k)‖_q = b·‖(a, k)‖_q: their overlap loss is b
            # times one sequence's, evaluated here once instead of at every step of the fixed point
            one_sequence_attention_s = (
                terms.attention_flop_per_pair_per_layer * self.verify * self.pair_layers / self.tp_pp
                / (self.attention_peak * eff.decode_compute_efficiency_frac(e, 1.0))
            )
            one_sequence_kv_s = kv_bytes_of(1.0, self.kv_read) / self.kv_read[1] / self.kv_bw
            self.attention_loss_per_sequence_s = eff.overlap_loss_s(e, one_sequence_attention_s, one_sequence_kv_s)
        # terms that are +0 on every row of a table without pipeline stages ((p − 1)·T_pp, T_pp finite), expert
        # parallelism (the all-to-all: 0 where e = 1) or TP ranks (the all-reduce but its launch, 0 at t = 1)
        # are not evaluated for it: x + 0 = x
        self.pipelined = bool(np.any(np.asarray(terms.pp) > 1))
        self.expert_parallel = bool(np.any(self.all_to_all["e"] > 1.0))
        self.tensor_parallel = bool(np.any(np.asarray(self.tp_allreduce.ranks) > 1))
        self.host = host_parts(terms, e.step_overhead_s)
        # a table where those terms are nonzero on at most half of its rows evaluates them on those rows only
        # (the rest are the + 0 above): the same numbers, row by row
        self.table_rows = np.shape(terms.pp)[0] if np.ndim(terms.pp) >= 1 else 0
        self.expert_rows = self._sparse(self.all_to_all["e"] > 1.0) if self.expert_parallel else None
        self.stage_rows = self._sparse(np.asarray(terms.pp) > 1) if self.pipelined else None
        self.expert_parts = self.all_to_all if self.expert_rows is None else {
            key: rows_of(value, self.expert_rows, self.table_rows) for key, value in self.all_to_all.items()
        }
        self.stage_all = _pp_parts(terms)
        self.stage_parts = self.stage_all
        if self.stage_rows is not None:
            less_one, start_s, link_bytes_per_s = (rows_of(v, self.stage_rows, self.table_rows) for v in self.stage_all)
            self.stage_parts = (less_one, start_s, link_bytes_per_s)

    def _sparse(self, nonzero: Num) -> np.ndarray | None:
        """The table rows where ``nonzero`` holds (on any of its columns) when they are at most half of the
        table's rows, else None (the whole table is evaluated)."""
        nonzero = np.asarray(nonzero)
        if self.table_rows < 2 or nonzero.ndim < 1 or nonzero.shape[0] != self.table_rows:
            return None
        rows = np.flatnonzero(nonzero.reshape(self.table_rows, -1).any(axis=1))
        return rows if rows.size <= self.table_rows // 2 else None

    def _on_rows(self, rows: np.ndarray | None, part: Callable[[Num, bool], Num], x: Num) -> Num:
        """``part(x, False)`` of a term that is 0 outside the table rows ``rows``; where ``rows`` is set and ``x``
        is a column of the table, ``part(x[rows], True)`` on those rows (its parts taken on them) and 0 elsewhere."""
        if rows is None or not isinstance(x, np.ndarray) or x.ndim < 1 or x.shape[0] != self.table_rows:
            return part(x, False)
        out = np.zeros(np.broadcast_shapes(x.shape, (self.table_rows, 1)))
        out[rows] = part(x[rows], True)
        return out

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
        # the prompts' LM-head rows (one per prompt) are a decode-like GEMM, not chunk rows; per stage: / p
        lin_pre = c_pre * self.dense_flop / self.tp_pp / (peak * eta_pre) + lm_head_s(
            terms, prompts * terms.lm_head_flop_per_token
        ) / p
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
        # per stage GPU and micro-batch: its sequences' KV of the stage's layers, (B/p)·c(H)/(s_kv·p) read and
        # c_pre·c(P)/P·π(P)/(s_kv·p) written (kv_parts: ℓ = 1/p already in the shards; π the paging factor)
        kv_write = kv_bytes_of(prompts, self.kv_write)
        linear_ops = ops.operator_stage_s(lin_dec + lin_pre + lin_experts, weights_s)
        attention_ops = ops.operator_stage_s(attn_s, (kv_read + kv_write) / self.kv_bw)
        if self.overlap:  # + the overlap loss of the decode rows (eff.overlap_loss_s); a prompt chunk is far
            # above the ridge, and spreading it over decode steps (c per step) is an average, not a small GEMM
            lin_dec_all = lin_dec + lin_experts * rows_dec / np.maximum(rows, 1e-30)
            linear_ops = linear_ops + eff.overlap_loss_s(e, lin_dec_all, weights_s)
            attention_ops = attention_ops + b_dec * self.attention_loss_per_sequence_s  # = eff.overlap_loss_s(e,
            # attn_dec_s, kv_read / self.kv_bw) to floating rounding (__init__)
        message = rows * terms.hidden_size * ACTIVATION_BYTES
        allreduce = self.tp_allreduce.time_s(message) if self.tensor_parallel else self.tp_allreduce.launch_s
        all_to_all = 0.0
        if self.expert_parallel:
            all_to_all = self._on_rows(self.expert_rows, self._all_to_all, rows)
        tp_comm = exposed_comm_s(terms, self.allreduces * allreduce + all_to_all, linear_ops)
        pp_comm = self._on_rows(self.stage_rows, self._pp_comm, message) if self.pipelined else 0.0
        host = host_at(self.host, decode_batch + prefill_tokens / self.prompt_floor)
        return host + p * (linear_ops + attention_ops + tp_comm) + pp_comm

    def _all_to_all(self, tokens: Num, on_rows: bool) -> Num:
        """moe.all_to_all_at of ``tokens``: the table's rows, or its expert-parallel rows' (``on_rows``)."""
        return moe.all_to_all_at(self.expert_parts if on_rows else self.all_to_all, tokens)

    def _pp_comm(self, message: Num, on_rows: bool) -> Num:
        """(p − 1)·T_pp of ``message`` bytes: the table's rows, or its pipelined rows' (``on_rows``)."""
        return _pp_transfer_at(self.stage_parts if on_rows else self.stage_all, message)
