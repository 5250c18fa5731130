"""TTFT rows of a finite closed-loop run whose tail no steady state of that loop can produce.

A closed loop of N clients holds at most N prompts: in the worst steady-state case all N are queued at once
and the last one waits for all of them, N·P prompt tokens in ⌈N·P/C⌉ chunked-prefill steps of the engine's
budget C (each step carries min(N, C/P) prompts of P tokens):

    TTFT_max = ⌈N·P/C⌉ · T_prefill(P, b = min(N, C/P))

A reported p99 TTFT above TTFT_max is a transient of the finite run (its start: bench_serving with
``--max-concurrency N`` sends N requests at t = 0 into an engine that has not yet run a prompt), and the
mean of such a run carries it (N of the run's prompts see the start). The steady-state scheduler
(performance.load) cannot express that mean, so the row's TTFT is listed as skipped with both numbers.
"""

from __future__ import annotations

import math

from planner import performance as perf
from planner.units import MS_PER_S


def full_queue_ttft_ms(terms: perf.DeploymentTerms, *, clients: float, prompt_tokens: float) -> float:
    """TTFT_max of the module docstring: all ``clients`` prompts of ``prompt_tokens`` queued at once, ms."""
    chunk = float(terms.chunk_tokens)
    per_step = max(1.0, min(clients, chunk / prompt_tokens))
    steps = math.ceil(clients * prompt_tokens / chunk)
    step_s = float(perf.prefill_step(terms, prompt_tokens=prompt_tokens, batch=per_step).total_s)
    return steps * step_s * MS_PER_S


def start_transient_reason(
    terms: perf.DeploymentTerms, *, clients: float, prompt_tokens: float, p99_ttft_ms: float | None,
    mean_ttft_ms: float | None,
) -> str | None:
    """Skip reason for the mean TTFT of a closed-loop row whose p99 exceeds TTFT_max, else None."""
    if p99_ttft_ms is None or mean_ttft_ms is None or clients < 1:
        return None
    bound = full_queue_ttft_ms(terms, clients=clients, prompt_tokens=prompt_tokens)
    if p99_ttft_ms <= bound:
        return None
    return (
        f"finite-run start: p99 TTFT {p99_ttft_ms:.0f} ms ({p99_ttft_ms / mean_ttft_ms:.1f}x the mean) exceeds "
        f"{bound:.0f} ms, all {clients:g} clients' prompts queued at once; the mean carries that transient"
    )


def finite_run_output_rate(rate: float, output_tokens: float, *, prompts: float | None, e2e_ms: float | None) -> float:
    """Output tokens/s a finite open-loop run of N = ``prompts`` requests at λ = ``rate`` reports when the engine
    keeps up: N·G tokens over the arrival span N/λ plus the drain of the last request (≈ the median E2E latency
    ``e2e_ms``), λ·G / (1 + λ·E2E/N). Without N or E2E: λ·G (an endless run).

    bench_serving divides by the whole duration, so a run that keeps up still reports less than λ·G: Llama-3.1-405B
    on 8x H200 at 1 and 2 req/s (datacrunch_sglang_h200: 300 and 600 prompts, E2E 24.9 and 29.6 s, ITL 38.8 and
    43.3 ms as unloaded) reports 505 and 911 tok/s, 0.94 and 0.89 of λ·G but 1.02 and 0.97 of this rate."""
    if not prompts or e2e_ms is None:
        return rate * output_tokens
    return rate * output_tokens / (1.0 + rate * e2e_ms / MS_PER_S / prompts)
