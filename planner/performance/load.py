"""The engine scheduler at an offered load: TTFT, TPOT and throughput of one replica serving λ requests/s.

One function, :func:`serve_at_load`, is used by the candidate table (``planner plan``) and by
``planner predict --requests-per-s``; both therefore report the same numbers for the same deployment.

Schedule (continuous batching with chunked prefill, vLLM / SGLang / TensorRT-LLM): every engine step runs
one decode token for each of the B running sequences plus up to C − B prompt tokens (C = the engine's
chunked-prefill token budget), all through ONE pass over the weights (:func:`mixed_step`). In steady state
at λ requests/s of P prompt and G output tokens, with mean step time T:

    B = λ·G·T                     (Little's law: a request decodes for G steps)
    c = λ·P·T                     (prompt tokens arriving per step, processed in the same step)
    T = T_mixed(B, c)             (smallest fixed point above T_mixed(0, 0): secant / regula falsi)

    TPOT = T_mixed(min(B + 1, limit), c)   (the steps a decoding request runs in: its own sequence and
                                  the B others it finds, :func:`own_batch`)
    TTFT = W_q + k·T_k + W_phase + network,   k = ⌈P / (C − B)⌉ chunk steps of T_k = T_mixed(B, min(c + P/k, C − B))
                                  (with p pipeline stages k·T_k is the chunks' pass through every stage, each
                                  chunk whole in one micro-batch: MixedStep ``own_tokens``)
    W_phase = (1 − e^(−N))·(n_s/2 + L)·T,  N = B + λ·k·T_k   (wait for the scheduler to admit the prompt:
                                          tail.step_phase_s; T/2 for a busy engine without multi-step or lookahead)
    W_q  = ρ·s / (2(1 − ρ)),  s = k·T_k,  ρ = λ·P·T_full / (C − B)  (M/D/1 wait for the prefill budget;
                                          :func:`budget_use`, T_full = T_mixed(B, C − B): a full budget's step)
    throughput = λ·G output tokens/s

The load is sustainable (``stable``) when the fixed point exists, B ≤ the memory / engine batch limit and
ρ < 1. :func:`capacity_at_slo` bisects λ for the largest sustainable load meeting TPOT and TTFT SLOs.
Engines without chunked prefill (vLLM V0) run prompts in passes of their own ahead of the decode steps:
:func:`serve_at_load` hands their rows to planner/performance/prefill_first.py (prefill and decode add).
Every function is plain arithmetic over numpy arrays (one row per deployment).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from planner.ledgers.inference import md1_queue_wait_s
from planner.performance.bisection import deciding, largest_ok_load
from planner.performance.fixed_point import GiveUp, fixed_point_s, rows_of
from planner.performance.optimizations import LoadOptimizations, round_s, round_step
from planner.performance.stack import take_optimizations, take_terms
from planner.performance.step_memo import kept_round_step, zero_load_round_s
from planner.performance.steps import mean_decode_context_tokens
from planner.performance.tail import at_percentiles, step_phase_s
from planner.performance.terms import DeploymentTerms, Num


@dataclass(frozen=True)
class LoadPoint:
    """One replica at an offered load (seconds, sequences, tokens/s; numpy arrays or floats)."""

    requests_per_s: Num
    step_s: Num
    """Mean engine step T (throughput, TTFT's waits)."""
    own_batch: Num
    """Running sequences in a decoding request's own steps, min(B + 1, limit) (:func:`own_batch`)."""
    own_step_s: Num
    """Mean step a decoding request runs in, T_mixed(own_batch, c) (:func:`own_step_s`); TPOT = own_step_s / E[N]
    tokens per round."""
    running_batch: Num
    """Mean running sequences B = λ·G·T."""
    prefill_tokens_per_step: Num
    """Mean prompt tokens per step c = λ·P·T."""
    prefill_utilization_frac: Num
    """ρ = λ·P·T_full / (C − B): share of the spare token budget prompts use (:func:`budget_use`)."""
    chunk_steps: Num
    """k = ⌈P / (C − B)⌉ steps one prompt's prefill spans."""
    chunk_step_s: Num
    """Mean engine step a prompt's chunk runs in, s (the prefill queue's service is k of them)."""
    prefill_latency_s: Num
    """The request's own prefill, s: its k chunk steps, each chunk crossing every pipeline stage in one
    micro-batch (MixedStep ``own_tokens``); k·``chunk_step_s`` without pipeline stages. TTFT's prefill part."""
    queue_wait_s: Num
    ttft_s: Num
    tpot_s: Num
    output_tokens_per_s: Num
    stable: Num
    """True where the replica sustains the load (fixed point, batch limit, ρ < 1)."""


def _steady_step_s(
    terms: DeploymentTerms, lam: Num, *, input_tokens: Num, output_tokens: Num, context_tokens: Num,
    opt: LoadOptimizations | None = None, give_up: GiveUp | None = None,
) -> tuple[Num, Num]:
    """Smallest fixed point T = T_mixed(λGT, λPT) above the zero-load step (:func:`fixed_point_s`, with its
    ``give_up``); (T, converged)."""
    t0 = zero_load_round_s(terms, opt, context_tokens=context_tokens, prompt_tokens=input_tokens)
    shape = np.broadcast_shapes(np.shape(t0), np.shape(lam), np.shape(input_tokens), np.shape(output_tokens))
    inputs = (lam, input_tokens, output_tokens, context_tokens)

    def on_rows(rows: Any) -> Callable[[Num], Num]:
        """f of the deployments in ``rows`` only (axis 0 of the stacked table; prepared for them alone)."""
        lam_rows, in_rows, out_rows, ctx_rows = (rows_of(x, rows, shape[0]) for x in inputs)
        prepared = round_step(take_terms(terms, rows), take_optimizations(opt, rows), decode_context_tokens=ctx_rows,
                              prompt_tokens=in_rows)
        return _step_of(prepared, lam_rows, in_rows, out_rows)

    # the table's prepared round, shared by the loads of a bisection and its chunk steps (step_memo.py)
    f = _step_of(kept_round_step(terms, opt, context_tokens=context_tokens, prompt_tokens=input_tokens), *inputs[:3])
    return fixed_point_s(f, np.broadcast_to(np.asarray(t0, dtype=float), shape), on_rows=on_rows, give_up=give_up)


def _step_of(step_at: Callable[..., Num], lam: Num, input_tokens: Num, output_tokens: Num) -> Callable[[Num], Num]:
    """f(T) = T_mixed(λGT, λPT): the engine round (``step_at``, a prepared :func:`round_step` of the table) when
    a step of T lets λGT sequences decode and λPT prompt tokens arrive."""

    def f(step: Num) -> Num:
        return step_at(decode_batch=lam * output_tokens * step, prefill_tokens=lam * input_tokens * step)

    return f


def _new_tokens_and_rounds(input_tokens: Num, output_tokens: Num, opt: LoadOptimizations | None) -> tuple[Any, Any, Any]:
    """(new prompt tokens P − h·S, decode rounds G/E[N], E[N]); (P, G, 1) without optimizations."""
    p_tok = np.asarray(input_tokens, dtype=float)
    g_tok = np.asarray(output_tokens, dtype=float)
    if opt is None:
        return p_tok, g_tok, 1.0
    per_round = np.asarray(opt.tokens_per_round, dtype=float)
    return p_tok - opt.cached_tokens, g_tok / per_round, per_round


def replica_batch_limit(terms: DeploymentTerms, *, fit: float, max_batch: float) -> float:
    """The most sequences one replica runs, sequences: max(min(``fit``, ``max_batch``, the engine's
    ``max_running_sequences``), 1) — ``fit`` the memory fit with the deployment's optimizations
    (planner.performance.optimizations.optimized_max_batch), ``max_batch`` the scenario's ``max_batch`` (predict's
    ``--max-batch``). A plan's deployment and ``planner predict --requests-per-s`` report it as ``batch_limit``."""
    return max(min(float(fit), float(max_batch), float(terms.max_running_sequences)), 1.0)


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
    and TPOT = T/E[N]. Works on arrays. ``ttft_s`` / ``tpot_s`` are means, or the
    given percentiles (planner.performance.tail; None or nan = the mean). Rows whose engine has no chunked
    prefill (``terms.prefill_first`` = 1) follow the prefill-first schedule (planner.performance.prefill_first).
    """
    lam = np.maximum(np.asarray(requests_per_s, dtype=float), 0.0)
    g_out = np.asarray(output_tokens, dtype=float)
    context = mean_decode_context_tokens(np.asarray(input_tokens, dtype=float), g_out)
    p_tok, g_tok, per_round = _new_tokens_and_rounds(input_tokens, g_out, opt)
    first = np.asarray(terms.prefill_first) > 0
    point: LoadPoint | None = None
    if first.size == 0 or not np.all(first):  # an empty table of rows (none fits memory) is solved as chunked
        point = _chunked_at_load(
            terms, lam, prompt_tokens=p_tok, decode_rounds=g_tok, tokens_per_round=per_round, output_tokens=g_out,
            context_tokens=context, max_batch=max_batch, network_s=network_s, opt=opt,
        )
    if np.any(first):  # engines without chunked prefill
        from planner.performance.prefill_first import prefill_first_at_load  # it builds on this module

        pf = prefill_first_at_load(
            terms, requests_per_s=lam, prompt_tokens=p_tok, decode_rounds=g_tok, tokens_per_round=per_round,
            output_tokens=g_out, context_tokens=context, max_batch=max_batch, network_s=network_s, opt=opt,
        )
        point = pf if point is None else LoadPoint(
            **{f.name: np.where(first, getattr(pf, f.name), getattr(point, f.name)) for f in fields(LoadPoint)}
        )
    assert point is not None  # every row is chunked or prefill-first
    if ttft_percentile is None and tpot_percentile is None:  # the means: no round to prepare for the tails
        return point
    return at_percentiles(
        point, terms, step_at=kept_round_step(terms, opt, context_tokens=context, prompt_tokens=p_tok),
        tokens_per_round=per_round, network_s=network_s, ttft_percentile=ttft_percentile,
        tpot_percentile=tpot_percentile,
    )


def _chunked_at_load(
    terms: DeploymentTerms,
    lam: Any,
    *,
    prompt_tokens: Any,
    decode_rounds: Any,
    tokens_per_round: Any,
    output_tokens: Any,
    context_tokens: Any,
    max_batch: Num,
    network_s: Num,
    opt: LoadOptimizations | None,
) -> LoadPoint:
    """Mean TTFT, TPOT and throughput of the chunked-prefill schedule (module docstring) at λ = ``lam``;
    P = ``prompt_tokens`` new tokens, G = ``decode_rounds`` rounds of ``tokens_per_round`` tokens."""
    p_tok, g_tok, context = prompt_tokens, decode_rounds, context_tokens
    limit = np.minimum(max_batch, terms.max_running_sequences)
    step, converged = _steady_step_s(
        terms, lam, input_tokens=p_tok, output_tokens=g_tok, context_tokens=context, opt=opt,
        give_up=_unfit_beyond(lam, g_tok, p_tok, limit, terms.chunk_tokens),
    )
    batch, c, chunk_budget, _rho = _occupancy(lam, g_tok, p_tok, step, terms.chunk_tokens)
    k = np.ceil(p_tok / chunk_budget)
    round_at = kept_round_step(terms, opt, context_tokens=context, prompt_tokens=p_tok)
    in_chunk_step = np.minimum(c + p_tok / k, chunk_budget)
    chunk_s = round_at(decode_batch=batch, prefill_tokens=in_chunk_step)
    service_s = k * chunk_s
    latency_s = service_s
    staged = np.asarray(terms.pp) > 1
    if np.any(staged):  # the own chunk runs whole in one micro-batch through all stages; rows without stages
        # keep k·T_k itself, so a row's numbers do not depend on the table it is evaluated in
        own = np.minimum(p_tok / k, in_chunk_step)
        latency_s = np.where(
            staged, k * round_at(decode_batch=batch, prefill_tokens=in_chunk_step, own_tokens=own), service_s
        )
    rho = budget_use(lam, p_tok, round_at(decode_batch=batch, prefill_tokens=chunk_budget), chunk_budget)
    stable = converged & _fits(batch, rho, limit, terms.chunk_tokens)
    own = own_batch(batch, limit)
    own_s = own_step_s(round_at, step_s=step, batch=own, prefill_tokens=c)
    arrival = np.where(stable, rho / service_s, 0.0)
    wait = np.where(stable, md1_queue_wait_s(arrival, service_s=service_s), np.inf)
    point = LoadPoint(
        requests_per_s=lam,
        step_s=step,
        own_batch=own,
        own_step_s=own_s,
        running_batch=batch,
        prefill_tokens_per_step=c,
        prefill_utilization_frac=rho,
        chunk_steps=k,
        chunk_step_s=chunk_s,
        prefill_latency_s=latency_s,
        queue_wait_s=wait,
        ttft_s=wait,
        tpot_s=own_s / tokens_per_round,
        output_tokens_per_s=lam * output_tokens,
        stable=stable,
    )
    return replace(point, ttft_s=wait + latency_s + step_phase_s(point, terms) + network_s)


def own_batch(batch: Num, limit: Num) -> Any:
    """Running sequences in the steps a decoding request runs in: min(B + 1, limit), at least 1.

    A request is in every step it decodes in, so its steps hold its own sequence and the others it finds.
    Below the batch limit the running sequences are those of an M/G/∞ station fed by Poisson arrivals: the
    others are a Poisson number of mean B = λ·G·T, independent of the request, so its steps hold B + 1
    sequences on average (token-weighted, a step of n sequences counts n times: E[N²]/E[N] = B + 1). A lone
    request (λ → 0) steps alone, not in the empty engine; at the limit the batch is full either way."""
    return np.minimum(np.asarray(batch, dtype=float) + 1.0, np.maximum(limit, 1.0))


def own_step_s(step_at: Callable[..., Num], *, step_s: Num, batch: Num, prefill_tokens: Num) -> Any:
    """Mean step a decoding request runs in, s: T_mixed(``batch``, c) at its :func:`own_batch`, never below the
    engine's mean step T = ``step_s``. ``step_at`` is the prepared round (:func:`round_step`) T came from;
    c = ``prefill_tokens`` per step."""
    return np.maximum(step_at(decode_batch=batch, prefill_tokens=prefill_tokens), step_s)


def bare_tpot_s(
    terms: DeploymentTerms, point: LoadPoint, *, input_tokens: Num, output_tokens: Num,
    opt: LoadOptimizations | None = None,
) -> Any:
    """TPOT with no prompt tokens in the steps, s per output token: the request's own round (``point.own_batch``
    sequences, no prefill chunk) over E[N] tokens per round — the bare decode step at the own batch without
    optimizations. TPOT − this is the prefill interference (and the prefill-first engine's paused share).
    ``input_tokens`` / ``output_tokens`` as given to :func:`serve_at_load` for ``point``."""
    g_out = np.asarray(output_tokens, dtype=float)
    p_tok, _rounds, per_round = _new_tokens_and_rounds(input_tokens, g_out, opt)
    context = mean_decode_context_tokens(np.asarray(input_tokens, dtype=float), g_out)
    own_round = kept_round_step(terms, opt, context_tokens=context, prompt_tokens=p_tok)(
        decode_batch=point.own_batch, prefill_tokens=0.0
    )
    return own_round / per_round


def _occupancy(lam: Any, g_tok: Any, p_tok: Any, step: Any, chunk_tokens: Num) -> tuple[Any, Any, Any, Any]:
    """(B = λGT running sequences, c = λPT prompt tokens per step, spare budget max(C − B, 1), ρ = c / budget)
    at step T = ``step``; each grows with T (so :func:`_fits` holds at T only if at every smaller step)."""
    batch = lam * g_tok * step
    chunk_budget = np.maximum(chunk_tokens - batch, 1.0)
    c = lam * p_tok * step
    return batch, c, chunk_budget, c / chunk_budget


def budget_use(lam: Any, p_tok: Any, full_step_s: Any, chunk_budget: Any) -> Any:
    """ρ = λ·P·T_full / (C − B), T_full = ``full_step_s`` (a step with a full budget of C − B prompt tokens): where
    prompt tokens are nearly free (weight-bound, T_full ≈ T) c / (C − B); where compute-bound (τ per token)
    λ·P·τ, the GPU's busy fraction on prompts, as batching them saves nothing (a prefill pool's 8,192-token
    prompts at 228 ms and 4.2/s: 0.96, where c / C said 0.13). ≥ c / (C − B), as T_full ≥ T."""
    return lam * p_tok * full_step_s / chunk_budget


def _fits(batch: Any, rho: Any, limit: Any, chunk_tokens: Num) -> Any:
    """The chunked schedule's load limits: B within the batch limit and the chunk budget, ρ < 1."""
    return (batch <= limit) & (rho < 1.0) & (batch < chunk_tokens)


def _unfit_beyond(lam: Any, g_tok: Any, p_tok: Any, limit: Any, chunk_tokens: Num) -> GiveUp | None:
    """While :func:`largest_ok_load` decides: give_up(take, lo) = not :func:`_fits` at step lo (then at no
    step ≥ lo either, :func:`_occupancy`); None otherwise."""
    if not deciding():
        return None

    def give_up(take: Callable[[Any], Any], lo: Any) -> Any:
        batch, _c, _budget, rho = _occupancy(take(lam), take(g_tok), take(p_tok), lo, take(chunk_tokens))
        return ~_fits(batch, rho, take(limit), take(chunk_tokens))

    return give_up


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
    schedule_size: int | None = None,
) -> Any:
    """Largest λ (requests/s) one replica sustains with TTFT ≤ SLO and TPOT ≤ SLO; 0 where none does.

    Bisection on λ between 0 and the decode-bound ceiling max_batch / (G·T_mixed(1, 0)); the SLO checks
    are monotone in λ because T_mixed and the M/D/1 wait grow with the load. With percentiles, TTFT / TPOT
are taken at them (planner.performance.tail). ``schedule_size``: see :func:`largest_ok_load`.
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

    return largest_ok_load(ok, hi, schedule_size=schedule_size)
