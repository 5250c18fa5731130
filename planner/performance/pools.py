"""Prefill-only and decode-only pools of prefill/decode disaggregation (card 8), on the ONE scheduler model.

A disaggregated request is prefilled by a prefill replica, its KV cache is handed over the link between the
pools, and a decode replica generates the remaining tokens:

    prefill pool  :func:`planner.performance.load.serve_at_load` with G = 0 (no decode sequences share the
                  steps): T = T_mixed(0, λ·P·T); TTFT = W_q + k·T_k + W_phase + RTT + upload + T_handoff
                  (W_phase = (1 − e^(−λ·k·T_k))·T/2: performance.tail.step_phase_s)
    KV handoff    V_KV = KV bytes of the P prompt tokens (memory ledger); T_handoff = α + V_KV / B_link
                  (ledgers.distributed.kv_handoff_s; B_link = the GPUs' scale-out links of the replica)
    decode pool   T = T_mixed(λ·G·T, 0): the fixed point of :mod:`planner.performance.load` without prompt
                  tokens, so TPOT = T_mixed(min(B + 1, limit), 0) (a request's own steps, load.own_batch)
                  has no prefill interference; B = λ·G·T running sequences must fit
                  memory (KV of P + G tokens each) and the engine's sequence limit.

Capacities at the SLO are the largest loads (bisection, :func:`planner.performance.bisection.largest_ok_load`)
with TTFT ≤ SLO (prefill) or TPOT ≤ SLO (decode). Plain numpy arithmetic, one row per deployment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from planner.ledgers.distributed import kv_handoff_s, kv_link_rate_per_s
from planner.performance.bisection import deciding, largest_ok_load
from planner.performance.fixed_point import GiveUp
from planner.performance.load import (
    LoadPoint,
    _steady_step_s,
    own_batch,
    own_step_s,
    serve_at_load,
)
from planner.performance.memory import kv_bytes_per_sequence
from planner.performance.mixed_step import mixed_step
from planner.performance.step_memo import kept_round_step
from planner.performance.steps import mean_decode_context_tokens
from planner.performance.terms import DeploymentTerms, Num


def kv_bytes_per_request(terms: DeploymentTerms, *, input_tokens: Num) -> Num:
    """V_KV: KV bytes of one request's prompt handed from the prefill to the decode pool, B (card 8)."""
    return kv_bytes_per_sequence(terms, np.asarray(input_tokens, dtype=float))


def handoff_s(kv_bytes: Num, *, link_gb_per_s: Num, latency_us: Num) -> Num:
    """T_handoff = α + V_KV / B_link, s (ledgers.distributed.kv_handoff_s, on whole arrays)."""
    return np.asarray(kv_handoff_s(kv_bytes, latency_us=latency_us, link_gb_per_s=link_gb_per_s), dtype=float)


def link_capped_requests_per_s(capacity_requests_per_s: Num, *, kv_bytes: Num, replica_link_gb_per_s: Num) -> Any:
    """A prefill or decode replica's capacity within its KV link: min(capacity, B_k / V_KV), requests/s.

    Card 8's B_net / V_KV (ledgers.distributed.kv_link_rate_per_s) per replica: B_k is the replica's own
    scale-out links per direction (its GPUs × the per-GPU link), over which a prefill replica sends and a
    decode replica receives its requests' KV. As a capacity it rides with the replica: the MILP's capacity
    rows bound each pool's flow by it, and a replica lost to a failure takes its link with it
    (constraints.redundancy)."""
    return np.minimum(
        capacity_requests_per_s, kv_link_rate_per_s(replica_link_gb_per_s, kv_bytes_per_request=kv_bytes)
    )


def _batched(terms: DeploymentTerms) -> DeploymentTerms:
    """``terms`` on the batched schedule (``prefill_first`` = 0); terms already made so are returned as they
    are, so the prefill bisection asks one terms object at every load (planner/performance/step_memo.py)."""
    first = terms.prefill_first
    return terms if type(first) is float and first == 0.0 else replace(terms, prefill_first=0.0)


def prefill_at_load(
    terms: DeploymentTerms,
    *,
    requests_per_s: Num,
    input_tokens: Num,
    max_batch: Num,
    network_s: Num,
    handoff_s: Num,
) -> LoadPoint:
    """A prefill-only replica at ``requests_per_s`` prompts/s: the scheduler with no decode tokens (G = 0);
    its TTFT includes the network (RTT + upload) and the KV handoff.

    Always the batched schedule (prompt tokens of up to C = ``chunk_tokens`` per step), also for engines
    without chunked prefill: with no decode steps to hold back, a prefill-first engine differs only in not
    splitting a prompt, and it batches the waiting prompts up to the same budget (vLLM V0
    max_num_batched_tokens), which is what T = T_mixed(0, λ·P·T) describes for P ≤ C."""
    return serve_at_load(
        _batched(terms),
        requests_per_s=requests_per_s,
        input_tokens=input_tokens,
        output_tokens=np.zeros_like(np.asarray(input_tokens, dtype=float)),
        max_batch=max_batch,
        network_s=np.asarray(network_s, dtype=float) + handoff_s,
    )


def prefill_capacity_at_slo(
    terms: DeploymentTerms,
    *,
    input_tokens: Num,
    max_batch: Num,
    network_s: Num,
    handoff_s: Num,
    slo_ttft_s: Num,
    schedule_size: int | None = None,
) -> Any:
    """Largest prompts/s one prefill replica sustains with TTFT ≤ SLO; 0 where none does.
    (``schedule_size``: planner.performance.bisection.largest_ok_load.)

    Upper end of the bisection: the prompt tokens per step c = λ·P·T stay below the chunk budget C with
    T ≥ T_mixed(0, min(P, C)), so λ < max(C, P) / (P · T_mixed(0, min(P, C))).
    """
    p_tok = np.asarray(input_tokens, dtype=float)
    terms = _batched(terms)  # the same terms object at every load of the bisection
    first = mixed_step(
        terms, decode_batch=0.0, decode_context_tokens=p_tok, prefill_tokens=np.minimum(p_tok, terms.chunk_tokens),
        prompt_tokens=p_tok,
    )
    hi = np.maximum(terms.chunk_tokens, p_tok) / (p_tok * first)

    def ok(lam: Num) -> Num:
        pt = prefill_at_load(
            terms, requests_per_s=lam, input_tokens=p_tok, max_batch=max_batch, network_s=network_s,
            handoff_s=handoff_s,
        )
        return pt.stable & (pt.ttft_s <= slo_ttft_s)

    return largest_ok_load(ok, hi, schedule_size=schedule_size)


def _decode_batch(lam: Any, g_tok: Any, step: Any) -> Any:
    """B = λ·G·T running sequences of a decode replica (grows with T)."""
    return lam * g_tok * step


def _over_limit_beyond(lam: Any, g_tok: Any, limit: Any) -> GiveUp | None:
    """While a capacity bisection decides (planner.performance.bisection.largest_ok_load): give_up(take, lo) =
    B above the limit at step lo (then at every step ≥ lo); None otherwise."""
    if not deciding():
        return None

    def give_up(take: Callable[[Any], Any], lo: Any) -> Any:
        return ~(_decode_batch(take(lam), take(g_tok), lo) <= take(limit))

    return give_up


def decode_at_load(
    terms: DeploymentTerms, *, requests_per_s: Num, input_tokens: Num, output_tokens: Num, max_batch: Num
) -> LoadPoint:
    """A decode-only replica at ``requests_per_s``: T = T_mixed(λGT, 0) at the mean history P + G/2, B = λGT
    (no prompt tokens in its steps, so TPOT = T_mixed(min(B + 1, limit), 0), a request's own steps
    (load.own_step_s), has no prefill interference; TTFT is the prefill pool's, 0 here)."""
    lam = np.maximum(np.asarray(requests_per_s, dtype=float), 0.0)
    p_tok = np.asarray(input_tokens, dtype=float)
    g_tok = np.asarray(output_tokens, dtype=float)
    limit = np.minimum(max_batch, terms.max_running_sequences)
    context, no_prompt = mean_decode_context_tokens(p_tok, g_tok), np.zeros_like(p_tok)
    step, converged = _steady_step_s(
        terms, lam, input_tokens=no_prompt, output_tokens=g_tok, context_tokens=context,
        give_up=_over_limit_beyond(lam, g_tok, limit),
    )
    batch = _decode_batch(lam, g_tok, step)
    stable = converged & (batch <= limit)
    zero = 0.0 * step
    own = own_batch(batch, limit)
    own_s = own_step_s(
        kept_round_step(terms, None, context_tokens=context, prompt_tokens=no_prompt), step_s=step, batch=own,
        prefill_tokens=no_prompt,
    )
    return LoadPoint(
        requests_per_s=lam,
        step_s=step,
        own_batch=own,
        own_step_s=own_s,
        running_batch=batch,
        prefill_tokens_per_step=zero,
        prefill_utilization_frac=zero,
        chunk_steps=zero,
        chunk_step_s=zero,
        prefill_latency_s=zero,
        queue_wait_s=zero,
        ttft_s=zero,
        tpot_s=own_s,
        output_tokens_per_s=lam * g_tok,
        stable=stable,
    )


def decode_capacity_at_slo(
    terms: DeploymentTerms, *, input_tokens: Num, output_tokens: Num, max_batch: Num, slo_tpot_s: Num,
    schedule_size: int | None = None,
) -> Any:
    """Largest requests/s one decode replica sustains with TPOT ≤ SLO within memory; 0 where none does.
    (``schedule_size``: planner.performance.bisection.largest_ok_load.)

    Upper end: B = λ·G·T ≤ limit with T ≥ T_mixed(1, 0), so λ ≤ limit / (G · T_mixed(1, 0)).
    """
    p_tok = np.asarray(input_tokens, dtype=float)
    g_tok = np.asarray(output_tokens, dtype=float)
    floor_step = mixed_step(
        terms, decode_batch=1.0, decode_context_tokens=mean_decode_context_tokens(p_tok, g_tok),
        prefill_tokens=0.0, prompt_tokens=p_tok,
    )
    limit = np.maximum(np.minimum(max_batch, terms.max_running_sequences), 1.0)
    hi = np.broadcast_to(limit / (g_tok * floor_step), np.shape(floor_step)).astype(float)

    def ok(lam: Num) -> Num:
        pt = decode_at_load(terms, requests_per_s=lam, input_tokens=p_tok, output_tokens=g_tok, max_batch=max_batch)
        return pt.stable & (pt.tpot_s <= slo_tpot_s)

    return largest_ok_load(ok, hi, schedule_size=schedule_size)
