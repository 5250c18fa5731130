"""The engine scheduler at an offered load: TTFT, TPOT and throughput of one replica serving λ requests/s.

One function, :func:`serve_at_load`, is used by the candidate table (``planner plan``) and by
``planner predict --requests-per-s``; both therefore report the same numbers for the same deployment.

Schedule (continuous batching with chunked prefill, vLLM / SGLang / TensorRT-LLM): every engine step runs
one decode token for each of the B running sequences plus up to C − B prompt tokens (C = the engine's
chunked-prefill token budget), all through ONE pass over the weights (:func:`mixed_step`). In steady state
at λ requests/s of P prompt and G output tokens, with mean step time T:

    B = λ·G·T                     (Little's law: a request decodes for G steps)
    c = λ·P·T                     (prompt tokens arriving per step, processed in the same step)
    T = T_mixed(B, c)             (fixed point, solved by monotone iteration from T_mixed(0, 0))

    TPOT = T                      (every running sequence gets one token per step)
    TTFT = W_q + k·T_k + T/2 + network,   k = ⌈P / (C − B)⌉ chunk steps of T_k = T_mixed(B, min(c + P/k, C − B))
    W_q  = ρ·s / (2(1 − ρ)),  s = k·T_k,  ρ = c / (C − B)       (M/D/1 wait for the prefill budget)
    throughput = λ·G output tokens/s

The load is sustainable (``stable``) when the fixed point exists, B ≤ the memory / engine batch limit and
ρ < 1. :func:`capacity_at_slo` bisects λ for the largest sustainable load meeting TPOT and TTFT SLOs.
Every function is plain arithmetic over numpy arrays (one row per deployment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.ledgers.inference import md1_queue_wait_s
from planner.performance.steps import mixed_step
from planner.performance.terms import DeploymentTerms, Num

FIXED_POINT_ITERATIONS = 80
BISECTION_ITERATIONS = 40
CONVERGED_REL = 1e-6


@dataclass(frozen=True)
class LoadPoint:
    """One replica at an offered load (seconds, sequences, tokens/s; numpy arrays or floats)."""

    requests_per_s: Num
    step_s: Num
    """Mean engine step T = TPOT."""
    running_batch: Num
    """Mean running sequences B = λ·G·T."""
    prefill_tokens_per_step: Num
    """Mean prompt tokens per step c = λ·P·T."""
    prefill_utilization_frac: Num
    """ρ = c / (C − B): share of the step's spare token budget prompts use."""
    chunk_steps: Num
    """k = ⌈P / (C − B)⌉ steps one prompt's prefill spans."""
    chunk_step_s: Num
    queue_wait_s: Num
    ttft_s: Num
    tpot_s: Num
    output_tokens_per_s: Num
    stable: Num
    """True where the replica sustains the load (fixed point, batch limit, ρ < 1)."""


def _steady_step_s(
    terms: DeploymentTerms, lam: Num, *, input_tokens: Num, output_tokens: Num, context_tokens: Num
) -> tuple[Num, Num]:
    """Smallest fixed point T = T_mixed(λGT, λPT) by monotone iteration; (T, converged)."""
    t = mixed_step(terms, decode_batch=0.0, decode_context_tokens=context_tokens, prefill_tokens=0.0,
                   prompt_tokens=input_tokens)
    for _ in range(FIXED_POINT_ITERATIONS):
        t_next = mixed_step(
            terms,
            decode_batch=lam * output_tokens * t,
            decode_context_tokens=context_tokens,
            prefill_tokens=lam * input_tokens * t,
            prompt_tokens=input_tokens,
        )
        t = np.minimum(t_next, 1e3)
    t_check = mixed_step(
        terms,
        decode_batch=lam * output_tokens * t,
        decode_context_tokens=context_tokens,
        prefill_tokens=lam * input_tokens * t,
        prompt_tokens=input_tokens,
    )
    return t, np.abs(t_check - t) <= CONVERGED_REL * np.maximum(t, 1e-9) + 1e-9


def serve_at_load(
    terms: DeploymentTerms,
    *,
    requests_per_s: Num,
    input_tokens: Num,
    output_tokens: Num,
    max_batch: Num,
    network_s: Num = 0.0,
) -> LoadPoint:
    """TTFT, TPOT and throughput of one replica at ``requests_per_s`` (module docstring formulas).

    ``max_batch`` is the largest number of running sequences memory holds; the engine's
    ``max_running_sequences`` caps it too. Works on arrays.
    """
    lam = np.maximum(np.asarray(requests_per_s, dtype=float), 0.0)
    p_tok = np.asarray(input_tokens, dtype=float)
    g_tok = np.asarray(output_tokens, dtype=float)
    context = p_tok + g_tok / 2.0
    step, converged = _steady_step_s(
        terms, lam, input_tokens=p_tok, output_tokens=g_tok, context_tokens=context
    )
    batch = lam * g_tok * step
    chunk_budget = np.maximum(terms.chunk_tokens - batch, 1.0)
    c = lam * p_tok * step
    rho = c / chunk_budget
    k = np.ceil(p_tok / chunk_budget)
    chunk_s = mixed_step(
        terms,
        decode_batch=batch,
        decode_context_tokens=context,
        prefill_tokens=np.minimum(c + p_tok / k, chunk_budget),
        prompt_tokens=p_tok,
    )
    service_s = k * chunk_s
    limit = np.minimum(max_batch, terms.max_running_sequences)
    stable = converged & (batch <= limit) & (rho < 1.0) & (batch < terms.chunk_tokens)
    arrival = np.where(stable, rho / service_s, 0.0)
    wait = np.where(stable, md1_queue_wait_s(arrival, service_s=service_s), np.inf)
    ttft = wait + service_s + step / 2.0 + network_s
    return LoadPoint(
        requests_per_s=lam,
        step_s=step,
        running_batch=batch,
        prefill_tokens_per_step=c,
        prefill_utilization_frac=rho,
        chunk_steps=k,
        chunk_step_s=chunk_s,
        queue_wait_s=wait,
        ttft_s=ttft,
        tpot_s=step,
        output_tokens_per_s=lam * g_tok,
        stable=stable,
    )


def capacity_at_slo(
    terms: DeploymentTerms,
    *,
    input_tokens: Num,
    output_tokens: Num,
    max_batch: Num,
    network_s: Num,
    slo_ttft_s: Num,
    slo_tpot_s: Num,
) -> Any:
    """Largest λ (requests/s) one replica sustains with TTFT ≤ SLO and TPOT ≤ SLO; 0 where none does.

    Bisection on λ between 0 and the decode-bound ceiling max_batch / (G·T_mixed(1, 0)); the SLO checks
    are monotone in λ because T_mixed and the M/D/1 wait grow with the load.
    """
    p_tok = np.asarray(input_tokens, dtype=float)
    g_tok = np.asarray(output_tokens, dtype=float)
    floor_step = mixed_step(
        terms, decode_batch=1.0, decode_context_tokens=p_tok + g_tok / 2.0, prefill_tokens=0.0,
        prompt_tokens=p_tok,
    )
    limit = np.maximum(np.minimum(max_batch, terms.max_running_sequences), 1.0)
    hi = np.broadcast_to(limit / (g_tok * floor_step), np.shape(floor_step)).astype(float)
    lo = np.zeros_like(hi)

    def ok(lam: Num) -> Num:
        pt = serve_at_load(
            terms, requests_per_s=lam, input_tokens=p_tok, output_tokens=g_tok, max_batch=max_batch,
            network_s=network_s,
        )
        return pt.stable & (pt.ttft_s <= slo_ttft_s) & (pt.tpot_s <= slo_tpot_s)

    for _ in range(BISECTION_ITERATIONS):
        mid = (lo + hi) / 2.0
        good = ok(mid)
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    return np.where(ok(lo) & (lo > 0), lo, 0.0)
