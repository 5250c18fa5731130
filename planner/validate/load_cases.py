"""Serving rows measured at a load: open-loop (Poisson λ) and closed-loop (N concurrent clients) benchmarks.

Both go through :func:`planner.performance.load.serve_at_load`, the scheduler function ``planner plan`` and
``planner predict --requests-per-s`` use, so the validation checks the same TTFT/TPOT/throughput numbers the
plan is sized from.

- Open loop at λ requests/s (``bench_serving --request-rate λ``): the steady state at λ below the
  replica's capacity λ_max (the largest λ the scheduler sustains). At or above it, or at λ = inf (all
  requests at t = 0), a queue builds and the engine runs at its batch limit B_lim (memory, max running
  sequences): every step decodes B_lim sequences and admits the prompts of the B_lim/G that finish, so
  T = T_mixed(B_lim, B_lim·P/G), TPOT = T and the output rate is B_lim/T (no fixed point: near λ_max the
  running batch B = λGa/(1 − λGb) of a linear step T = a + bB grows without bound, which is the batch
  limit the engine then sits at).
- Closed loop with N clients (``--max-concurrency N``, static concurrency sweeps): each client sends its next
  request when the last one ends, so λ = N / (TTFT + (G − 1)·TPOT) (Little's law over one request);
  solved by damped fixed-point iteration from λ₀ = N / (G·T_decode(N)). A request sees the replica loaded
  by the other N − 1 clients (arrival theorem), so its TTFT and TPOT are taken at λ·(N − 1)/N: its decode
  steps carry the other clients' prompt chunks, never its own (TPOT no less than a lone sequence's step).
"""

from __future__ import annotations

import math
from dataclasses import replace

from planner.performance.load import LoadPoint, capacity_at_slo, serve_at_load
from planner.performance.mixed_step import mixed_step
from planner.performance.steps import mean_decode_context_tokens
from planner.performance.terms import DeploymentTerms

SATURATED_FRAC = 0.98
"""A saturated replica is predicted at this share of its capacity λ_max (the fixed point at λ_max itself is
on the edge of stability)."""
CLOSED_LOOP_ITERATIONS = 40


def capacity_requests_per_s(terms: DeploymentTerms, *, input_tokens: float, output_tokens: float,
                            max_batch: float) -> float:
    """λ_max: the largest load the replica sustains (no SLO), requests/s."""
    return float(
        capacity_at_slo(
            terms, input_tokens=input_tokens, output_tokens=output_tokens, max_batch=max_batch,
            network_s=0.0, slo_ttft_s=math.inf, slo_tpot_s=math.inf,
        )
    )


def saturated_point(terms: DeploymentTerms, *, input_tokens: float, output_tokens: float,
                    max_batch: float) -> LoadPoint:
    """A queued replica at its batch limit: T = T_mixed(B_lim, B_lim·P/G), output B_lim/T, TTFT unbounded."""
    batch = float(min(max_batch, terms.max_running_sequences))
    context = float(mean_decode_context_tokens(input_tokens, output_tokens))
    prefill = min(batch * input_tokens / output_tokens, max(float(terms.chunk_tokens) - batch, 1.0))
    step = float(mixed_step(terms, decode_batch=batch, decode_context_tokens=context, prefill_tokens=prefill,
                            prompt_tokens=input_tokens))
    lam = batch / (output_tokens * step)
    return LoadPoint(
        requests_per_s=lam, step_s=step, own_batch=batch, own_step_s=step, running_batch=batch,
        prefill_tokens_per_step=prefill,
        prefill_utilization_frac=1.0, chunk_steps=1.0, chunk_step_s=step, prefill_latency_s=step,
        queue_wait_s=math.inf,
        ttft_s=math.inf, tpot_s=step, output_tokens_per_s=batch / step, stable=False,
    )


def open_loop_point(terms: DeploymentTerms, *, requests_per_s: float, input_tokens: float,
                    output_tokens: float, max_batch: float, percentile: float | None = None) -> LoadPoint:
    """The replica at λ = ``requests_per_s``; the saturated point at or above λ_max (inf = offline burst).
    ``percentile``: its TTFT and TPOT at that percentile (None: the means; planner.performance.tail)."""
    cap = capacity_requests_per_s(
        terms, input_tokens=input_tokens, output_tokens=output_tokens, max_batch=max_batch
    )
    if requests_per_s >= SATURATED_FRAC * cap:
        return saturated_point(terms, input_tokens=input_tokens, output_tokens=output_tokens, max_batch=max_batch)
    return serve_at_load(
        terms, requests_per_s=requests_per_s, input_tokens=input_tokens, output_tokens=output_tokens,
        max_batch=max_batch, ttft_percentile=percentile, tpot_percentile=percentile,
    )


def closed_loop_point(terms: DeploymentTerms, *, concurrency: float, input_tokens: float,
                      output_tokens: float, max_batch: float, percentile: float | None = None) -> LoadPoint:
    """The replica under ``concurrency`` clients: λ = N / (TTFT + (G − 1)·TPOT), damped fixed point.

    TTFT and TPOT are the ones a client's request sees: by the arrival theorem of closed queueing networks
    (mean value analysis) it finds the replica as it is with the other N − 1 clients, i.e. at λ·(N − 1)/N.
    Its decode steps carry their prompts' chunks, not its own (its prompt was prefilled before), and hold
    its own sequence besides the others' (serve_at_load's TPOT, planner.performance.load.own_step_s). One
    client (N = 1) finds the engine idle: TPOT is the step of a lone sequence. Throughput and the running
    batch are the replica's at λ. ``percentile``: the client's TTFT and TPOT at that percentile (None: the
    means); the load itself is set by the mean latencies.
    """
    cap = SATURATED_FRAC * capacity_requests_per_s(
        terms, input_tokens=input_tokens, output_tokens=output_tokens, max_batch=max_batch
    )

    def at(lam: float, pct: float | None = None) -> LoadPoint:
        return serve_at_load(
            terms, requests_per_s=lam, input_tokens=input_tokens, output_tokens=output_tokens, max_batch=max_batch,
            ttft_percentile=pct, tpot_percentile=pct,
        )

    seen = (concurrency - 1.0) / concurrency  # share of the load a request finds: the other N − 1 clients'

    def tagged(lam: float, pct: float | None = None) -> tuple[float, float]:
        """(TTFT, TPOT) of one client's request at total load λ (means, or at the percentile ``pct``)."""
        found = at(lam * seen, pct)
        return float(found.ttft_s), float(found.tpot_s)

    lam = min(concurrency / (output_tokens * float(at(cap).tpot_s)), cap)
    for _ in range(CLOSED_LOOP_ITERATIONS):
        ttft, tpot = tagged(lam)
        latency = ttft + (output_tokens - 1.0) * tpot
        target = min(concurrency / latency, cap) if math.isfinite(latency) and latency > 0 else cap / 2.0
        lam = 0.5 * lam + 0.5 * target
    ttft, tpot = tagged(lam, percentile)  # λ follows the mean latencies (Little's law); the row's statistic is reported
    return replace(at(lam), ttft_s=ttft, tpot_s=tpot)
