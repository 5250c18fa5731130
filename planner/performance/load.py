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
Engines without chunked prefill (vLLM V0) run prompts in passes of their own ahead of the decode steps:
:func:`serve_at_load` hands their rows to planner/performance/prefill_first.py (prefill and decode add).
Every function is plain arithmetic over numpy arrays (one row per deployment).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.ledgers.inference import md1_queue_wait_s
from planner.performance.optimizations import LoadOptimizations, round_s
from planner.performance.tail import at_percentiles
from planner.performance.terms import DeploymentTerms, Num

FIXED_POINT_ITERATIONS = 80
NEWTON_ITERATIONS = 30
BISECTION_ITERATIONS = 40
SETTLED_REL = 1e-12
"""The iteration stops once no element moves by more than this relative step (the fixed point to float
precision); elements converging slowly near a replica's limit are finished by :func:`_newton_from_below`."""
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
    terms: DeploymentTerms, lam: Num, *, input_tokens: Num, output_tokens: Num, context_tokens: Num,
    opt: LoadOptimizations | None = None,
) -> tuple[Num, Num]:
    """Smallest fixed point T = T_mixed(λGT, λPT) by monotone iteration, finished by Newton steps where it
    converges slowly (:func:`_newton_from_below`); (T, converged)."""

    def f(step: Num) -> Num:
        return round_s(
            terms,
            opt,
            decode_batch=lam * output_tokens * step,
            decode_context_tokens=context_tokens,
            prefill_tokens=lam * input_tokens * step,
            prompt_tokens=input_tokens,
        )

    t = round_s(terms, opt, decode_batch=0.0, decode_context_tokens=context_tokens, prefill_tokens=0.0,
                prompt_tokens=input_tokens)
    for _ in range(FIXED_POINT_ITERATIONS):
        t_next = np.minimum(f(t), 1e3)
        settled = np.all(np.abs(t_next - t) <= SETTLED_REL * t_next)
        t = t_next
        if settled:
            break  # every element at its fixed point to float precision; slow ones are left to Newton

    def close(step: Num) -> Num:
        return np.abs(f(step) - step) <= CONVERGED_REL * np.maximum(step, 1e-9) + 1e-9

    done = close(t)
    if not np.all(done):
        t = np.where(done, t, _newton_from_below(f, t))
    return t, close(t)


def _newton_from_below(f: Callable[[Num], Num], t: Num) -> Num:
    """Finish a slowly converging monotone iteration T ← f(T) (slope of f near 1: a load close to the
    replica's limit) with Newton steps on f(T) − T = 0 from below, the slope from a backward difference;
    steps are taken only where f(T) > T and the slope is below 1 (else no fixed point lies ahead)."""
    for _ in range(NEWTON_ITERATIONS):
        ft = f(t)
        h = np.maximum(t * 1e-4, 1e-12)
        slope = (ft - f(t - h)) / h
        ahead = (ft > t + CONVERGED_REL * np.maximum(t, 1e-9)) & (slope < 1.0) & (t < 1e3)
        if not np.any(ahead):
            break
        t = np.minimum(np.where(ahead, t + (ft - t) / np.maximum(1.0 - slope, 1e-12), t), 1e3)
    return t


def _new_tokens_and_rounds(input_tokens: Num, output_tokens: Num, opt: LoadOptimizations | None) -> tuple[Any, Any, Any]:
    """(new prompt tokens P − h·S, decode rounds G/E[N], E[N]); (P, G, 1) without optimizations."""
    p_tok = np.asarray(input_tokens, dtype=float)
    g_tok = np.asarray(output_tokens, dtype=float)
    if opt is None:
        return p_tok, g_tok, 1.0
    per_round = np.asarray(opt.tokens_per_round, dtype=float)
    return p_tok - opt.cached_tokens, g_tok / per_round, per_round


def serve_at_load(
    terms: DeploymentTerms,
    *,
    requests_per_s: Num,
    input_tokens: Num,
    output_tokens: Num,
    max_batch: Num,
    network_s: Num = 0.0,
    opt: LoadOptimizations | None = None,
    ttft_percentile: Num | None = None,
    tpot_percentile: Num | None = None,
) -> LoadPoint:
    """TTFT, TPOT and throughput of one replica at ``requests_per_s`` (module docstring formulas).

    ``max_batch`` is the largest number of running sequences memory holds; the engine's
    ``max_running_sequences`` caps it too. ``opt`` (prefix cache, speculation;
    planner/performance/optimizations.py) makes P the new prompt tokens P − h·S and G the rounds G/E[N],
    and TPOT = T/E[N]. Works on arrays.
    ``max_running_sequences`` caps it too. Works on arrays. ``ttft_s`` / ``tpot_s`` are means, or the
    given percentiles (planner.performance.tail; None or nan = the mean). Rows whose engine has no chunked
    prefill (``terms.prefill_first`` = 1) follow the prefill-first schedule (planner.performance.prefill_first).
    """
    if np.any(np.asarray(terms.prefill_first) > 0):  # engines without chunked prefill: prefill_first.py
        from planner.performance.prefill_first import serve_prefill_first  # it builds on this module

        return serve_prefill_first(
            terms, requests_per_s=requests_per_s, input_tokens=input_tokens, output_tokens=output_tokens,
            max_batch=max_batch, network_s=network_s, opt=opt, ttft_percentile=ttft_percentile,
            tpot_percentile=tpot_percentile,
        )
    lam = np.maximum(np.asarray(requests_per_s, dtype=float), 0.0)
    g_out = np.asarray(output_tokens, dtype=float)
    context = np.asarray(input_tokens, dtype=float) + g_out / 2.0
    p_tok, g_tok, per_round = _new_tokens_and_rounds(input_tokens, g_out, opt)
    step, converged = _steady_step_s(
        terms, lam, input_tokens=p_tok, output_tokens=g_tok, context_tokens=context, opt=opt
    )
    batch = lam * g_tok * step
    chunk_budget = np.maximum(terms.chunk_tokens - batch, 1.0)
    c = lam * p_tok * step
    rho = c / chunk_budget
    k = np.ceil(p_tok / chunk_budget)
    chunk_s = round_s(
        terms,
        opt,
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
    point = LoadPoint(
        requests_per_s=lam,
        step_s=step,
        running_batch=batch,
        prefill_tokens_per_step=c,
        prefill_utilization_frac=rho,
        chunk_steps=k,
        chunk_step_s=chunk_s,
        queue_wait_s=wait,
        ttft_s=ttft,
        tpot_s=step / per_round,
        output_tokens_per_s=lam * g_out,
        stable=stable,
    )
    return at_percentiles(
        point, terms, input_tokens=p_tok, output_tokens=g_tok, network_s=network_s,
        ttft_percentile=ttft_percentile, tpot_percentile=tpot_percentile,
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
    opt: LoadOptimizations | None = None,
    ttft_percentile: Num | None = None,
    tpot_percentile: Num | None = None,
) -> Any:
    """Largest λ (requests/s) one replica sustains with TTFT ≤ SLO and TPOT ≤ SLO; 0 where none does.

    Bisection on λ between 0 and the decode-bound ceiling max_batch / (G·T_mixed(1, 0)); the SLO checks
    are monotone in λ because T_mixed and the M/D/1 wait grow with the load. With percentiles, TTFT / TPOT
are taken at them (planner.performance.tail).
    """
    p_tok = np.asarray(input_tokens, dtype=float)
    g_tok = np.asarray(output_tokens, dtype=float)
    p_new, g_rounds, _ = _new_tokens_and_rounds(p_tok, g_tok, opt)
    floor_step = round_s(
        terms, opt, decode_batch=1.0, decode_context_tokens=p_tok + g_tok / 2.0, prefill_tokens=0.0,
        prompt_tokens=p_new,
    )
    limit = np.maximum(np.minimum(max_batch, terms.max_running_sequences), 1.0)
    hi = np.broadcast_to(limit / (g_rounds * floor_step), np.shape(floor_step)).astype(float)

    def ok(lam: Num) -> Num:
        pt = serve_at_load(
            terms, requests_per_s=lam, input_tokens=p_tok, output_tokens=g_tok, max_batch=max_batch,
            network_s=network_s, opt=opt, ttft_percentile=ttft_percentile, tpot_percentile=tpot_percentile,
        )
        return pt.stable & (pt.ttft_s <= slo_ttft_s) & (pt.tpot_s <= slo_tpot_s)

    return largest_ok_load(ok, hi)


def largest_ok_load(ok: Callable[[Num], Num], hi: Num) -> Any:
    """Bisection for the largest λ in (0, ``hi``] with ``ok(λ)`` (monotone: true below, false above); 0 where
    no positive load is ok. Element-wise on arrays."""
    hi = np.asarray(hi, dtype=float)
    lo = np.zeros_like(hi)
    for _ in range(BISECTION_ITERATIONS):
        mid = (lo + hi) / 2.0
        good = ok(mid)
        lo = np.where(good, mid, lo)
        hi = np.where(good, hi, mid)
    return np.where(ok(lo) & (lo > 0), lo, 0.0)
