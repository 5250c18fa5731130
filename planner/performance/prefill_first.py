"""The prefill-first engine schedule (no chunked prefill) at an offered load: TTFT, TPOT and throughput.

Engines without chunked prefill (``chunked_prefill: false`` in catalogs/engines.yaml: vLLM V0's default
scheduler for contexts ≤ 32K; TGI and llama.cpp's server behave alike) run a waiting prompt's prefill as a
pass of its own before the next decode step, and every running sequence waits for it: prefill and decode
times add, as in the book's co-located model (card 8, μ_co = N / (d_P + d_D)). At λ requests/s of P prompt
and G output tokens on one replica:

    T_p    = T_mixed(0, P)                 one prompt's prefill pass, s (it also emits the first token)
    u      = λ·T_p                         share of the time the engine prefills
    T_d(B) = T_mixed(B, 0)                 one decode step of B running sequences, s
    τ      = T_d(B) / (1 − u),  B = λ·G·τ  decode runs in the remaining 1 − u of the time; Little's law
    ⇔ s = T_d(λ′·G·s) with s = τ·(1 − u), λ′ = λ / (1 − u): the decode-only fixed point at the load λ′
      (load._steady_step_s with no prompt tokens, as a decode pool), then τ = s / (1 − u), B = λ′·G·s
    TPOT   = T_d(min(B + 1, limit)) / (1 − u)   a request's own decode steps hold it and the B others it finds
                                         (load.own_step_s)
    TTFT   = W_q + T_p + W_phase + network,  W_q = u·T_p / (2(1 − u))
      (Cobham's non-preemptive priority wait R / (1 − u) with R = u·T_p/2 + (1 − u)·T_d/2: the M/D/1 wait
       behind earlier prompts plus the residual of the decode step in flight, tail.step_phase_s:
       W_phase = (1 − e^(−N))·(n_s/2 + L)·T_d, N = B + u requests in service; T_d/2 for a busy engine that
       admits prompts every step)
    stable ⇔ u < 1, the fixed point exists, B ≤ the batch limit, P ≤ the engine's prefill token budget

Choice: one prompt per prefill pass. V0 batches the prompts waiting at a step boundary up to its token
budget; a pass of k prompts saves k − 1 weight reads and host steps, small once P reaches the compute-bound
range (a few hundred tokens on data-centre GPUs), so the model is slightly conservative for short prompts
at high load. With G = 0 (a prefill-only pool, planner/performance/pools.py) it is an M/D/1 queue of prefill
passes. Prefix caching makes P the new tokens P − h·S, speculation G the rounds G/E[N] and TPOT τ/E[N]
(planner/performance/optimizations.py), as in the chunked schedule.

Like the chunked schedule this is a mean-field fixed point: the batch is held at its mean. Against a
seeded simulation of a prefill-first engine (tests/performance/test_prefill_first.py) TTFT is within 3 %;
per-request TPOT is within 3 % for a constant decode step and 8 % above τ when KV reads are 17 % of the step
(a step that grows with the batch is longest exactly when most requests decode).

At the book's card-8 operating point the fixed point reproduces μ_co: B = 32 at λ = 1/(T_p + G·T_d(32)/32).

Worked example (tests/performance/test_prefill_first.py): T_p = 0.2 s, T_d(B) = 10 ms + 1 ms·B, G = 200,
λ = 1.5/s: u = 0.3, λ′ = 2.143/s, s = 10 ms + 1 ms·λ′·200·s → s = 17.5 ms, τ = 25 ms, B = 7.5,
TTFT = 0.3·0.2/(2·0.7) + 0.2 + (1 − e^(−7.8))·0.00875 = 0.2516 s.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from planner.ledgers.inference import md1_queue_wait_s
from planner.performance.load import LoadPoint, _steady_step_s, own_batch, own_step_s
from planner.performance.optimizations import LoadOptimizations, round_s
from planner.performance.step_memo import kept_round_step
from planner.performance.tail import step_phase_s
from planner.performance.terms import DeploymentTerms, Num


def prefill_pass_s(
    terms: DeploymentTerms, *, prompt_tokens: Num, context_tokens: Num, opt: LoadOptimizations | None = None
) -> Any:
    """T_p = T_mixed(0, P): one prompt's prefill as a pass of its own (no decode tokens in it), s."""
    return round_s(
        terms, opt, decode_batch=0.0, decode_context_tokens=context_tokens, prefill_tokens=prompt_tokens,
        prompt_tokens=prompt_tokens,
    )


def prefill_first_at_load(
    terms: DeploymentTerms,
    *,
    requests_per_s: Any,
    prompt_tokens: Any,
    decode_rounds: Any,
    tokens_per_round: Any,
    output_tokens: Any,
    context_tokens: Any,
    max_batch: Num,
    network_s: Num,
    opt: LoadOptimizations | None,
) -> LoadPoint:
    """Mean TTFT, TPOT and throughput of a prefill-first replica at λ = ``requests_per_s`` (module docstring).

    ``prompt_tokens`` are the new prompt tokens P, ``decode_rounds`` the rounds per request G (output tokens
    / E[N]), ``tokens_per_round`` E[N], ``output_tokens`` the tokens a request emits. In the LoadPoint the
    prefill server is one chunk step of T_p (chunk_steps = 1, chunk_step_s = T_p) at utilisation u, so the
    tail module reads it as the chunked schedule's prefill queue.
    """
    lam = np.asarray(requests_per_s, dtype=float)
    p_tok = np.asarray(prompt_tokens, dtype=float)
    g_tok = np.asarray(decode_rounds, dtype=float)
    t_p = prefill_pass_s(terms, prompt_tokens=p_tok, context_tokens=context_tokens, opt=opt)
    latency_s = t_p
    staged = np.asarray(terms.pp) > 1
    if np.any(staged):  # the prompt runs whole in one micro-batch through all stages (rows without: T_p itself)
        latency_s = np.where(staged, round_s(
            terms, opt, decode_batch=0.0, decode_context_tokens=context_tokens, prefill_tokens=p_tok,
            prompt_tokens=p_tok, own_tokens=p_tok,
        ), t_p)
    u = lam * t_p
    free = np.where(u < 1.0, 1.0 - u, 1.0)
    lam_decode = np.where(u < 1.0, lam / free, 0.0)
    decode_s, converged = _steady_step_s(
        terms, lam_decode, input_tokens=np.zeros_like(p_tok), output_tokens=g_tok, context_tokens=context_tokens,
        opt=opt,
    )
    tau = decode_s / free
    batch = lam * g_tok * tau
    limit = np.minimum(max_batch, terms.max_running_sequences)
    no_prompt = np.zeros_like(p_tok)
    own = own_batch(batch, limit)
    own_decode_s = own_step_s(
        kept_round_step(terms, opt, context_tokens=context_tokens, prompt_tokens=no_prompt), step_s=decode_s,
        batch=own, prefill_tokens=no_prompt,
    )
    stable = converged & (u < 1.0) & (batch <= limit) & (p_tok <= terms.chunk_tokens)
    wait = np.where(stable, md1_queue_wait_s(np.where(stable, lam, 0.0), service_s=t_p), np.inf)
    point = LoadPoint(
        requests_per_s=lam,
        step_s=tau,
        own_batch=own,
        own_step_s=own_decode_s / free,
        running_batch=batch,
        prefill_tokens_per_step=lam * p_tok * tau,
        prefill_utilization_frac=u,
        chunk_steps=np.ones_like(u),
        chunk_step_s=t_p + 0.0 * u,
        prefill_latency_s=latency_s + 0.0 * u,
        queue_wait_s=wait,
        ttft_s=wait,
        tpot_s=own_decode_s / free / tokens_per_round,
        output_tokens_per_s=lam * np.asarray(output_tokens, dtype=float),
        stable=stable,
    )
    ttft = wait + latency_s + step_phase_s(point, terms) + network_s
    return replace(point, ttft_s=ttft)
