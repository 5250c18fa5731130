"""Percentiles of TTFT and TPOT at a load: the tail of the scheduler's queueing model.

:func:`planner.performance.load.serve_at_load` gives MEAN values. A workload may state its SLOs at a
percentile p ∈ {50, 90, 95, 99} (``slo.ttft_percentile`` / ``slo.tpot_percentile``; None = the mean, the
meaning before percentiles existed). This module turns a mean load point into the percentile one.

TTFT — M/D/1 waiting-time tail (Cramér–Lundberg exponential approximation with the exact M/D/1 decay):
prompts wait for the prefill budget as an M/D/1 queue with deterministic service s = k·T_k and
utilisation ρ (load.py). For M/G/1, P(W > t) ≈ C·exp(−θ·t) with θ the positive root of
λ·(E[e^{θS}] − 1) = θ; for S ≡ s, with x = θ·s:

    ρ·(eˣ − 1) = x                      (decay rate, solved by Newton from x = 2·ln(1/ρ) + 1)
    C = (1 − ρ) / (ρ·eˣ − 1)            (exact asymptotic constant; C = ρ for M/M/1, C > ρ for M/D/1)
    w_p = max(0, ln(C / (1 − p)) / θ)   (p-quantile of the wait), w_p = 0 where ρ ≤ 1 − p (P(W > 0) = ρ)
    TTFT_p = w_p + s + W_phase + network (prefill service, step phase and network at their means;
                                         for p ≥ 90 at least the mean TTFT, which counts the mean wait)

A prefill-first engine (no chunked prefill, planner/performance/prefill_first.py) is the same queue with
s = T_p (one prompt per pass), ρ = u = λ·T_p and the step phase T_d/2 of the decode step in flight
(:func:`step_phase_s`); its TPOT tail below is the same cluster model with m = u (each prefill pass of T_p
stretches the window by T_p, during which λ·T_p = u more prompts arrive).

TPOT — prompt interference over a request's decode window: per-request TPOT (vLLM's benchmark metric,
(e2e − TTFT) / (G − 1)) is the mean of the G steps it decodes in. Each step costs T_dec = T_mixed(B, 0)
plus the prefill tokens it carries, and T − T_dec on average. The prompts prefilled during one request's
window number N with mean λ·G·T = B (Little). They come in clusters: each prompt's prefill lengthens the
steps, during which more prompts arrive (a branching process with mean offspring m = 1 − T_dec/T, the
prefill share of the step), so N is compound Poisson with Borel(m) clusters: mean B, variance
B/(1 − m)², skewness γ = (1 + 2m)/((1 − m)·√B). Then

    TPOT_p = T_dec + (T − T_dec) · q_p / B
    q_p = max(0, B + σ·(z_p + γ·(z_p² − 1)/6)),  σ = √B / (1 − m)      (Cornish–Fisher quantile of N)

with z_p the standard normal quantile (z_50 = 0, so TPOT_50 ≈ T). Every step also holds the request itself:
the tail is shifted by its own sequence, T_own − T (planner.performance.load.own_batch: B + 1 sequences).
The decode batch is otherwise held at its mean B (its fluctuation is not modelled). tests/performance/test_tail.py checks both against seeded
discrete-event simulations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from planner.performance.terms import DeploymentTerms, Num

ALLOWED_PERCENTILES: tuple[int, ...] = (50, 90, 95, 99)
Z_OF_PERCENTILE: dict[int, float] = {50: 0.0, 90: 1.2815515655446004, 95: 1.6448536269514722, 99: 2.3263478740408408}
"""Standard normal quantiles Φ⁻¹(p/100) of the allowed percentiles."""
NEWTON_ITERATIONS = 60
Point = TypeVar("Point")


def md1_decay_rate_x(rho: Num) -> Any:
    """x = θ·s > 0 with ρ·(eˣ − 1) = x (M/D/1 waiting-time decay per service time); nan where ρ ∉ (0, 1)."""
    r = np.asarray(rho, dtype=float)
    ok = (r > 0) & (r < 1)
    rs = np.where(ok, r, 0.5)
    x = 2.0 * np.log(1.0 / rs) + 1.0  # above the root: f(x) = ρ(eˣ − 1) − x is convex, Newton from the right
    for _ in range(NEWTON_ITERATIONS):
        ex = np.exp(np.minimum(x, 700.0))
        x = x - (rs * (ex - 1.0) - x) / (rs * ex - 1.0)
    return np.where(ok, x, np.nan)


def md1_wait_quantile_s(rho: Num, *, service_s: Num, percentile: Num) -> Any:
    """p-quantile of the M/D/1 wait, s (module docstring: w_p = max(0, ln(C/(1 − p))/θ)); inf at ρ ≥ 1.

    Against a 400k-arrival simulation: within 0.05·s for ρ ∈ [0.3, 0.85], p ∈ {90, 95, 99}.
    """
    r = np.asarray(rho, dtype=float)
    s = np.asarray(service_s, dtype=float)
    p = np.asarray(percentile, dtype=float) / 100.0
    x = md1_decay_rate_x(r)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        c = (1.0 - r) / (r * np.exp(np.minimum(x, 700.0)) - 1.0)
        w = np.maximum(np.log(c / (1.0 - p)) * s / x, 0.0)
    w = np.where(r <= 1.0 - p + 1e-12, 0.0, w)
    return np.where(r >= 1, np.inf, w)


def cluster_count_quantile(mean: Num, *, prefill_share: Num, z: Num) -> Any:
    """Cornish–Fisher quantile of N (module docstring): max(0, B + σ(z + γ(z² − 1)/6)); Poisson at m = 0."""
    b = np.maximum(np.asarray(mean, dtype=float), 0.0)
    m = np.clip(np.asarray(prefill_share, dtype=float), 0.0, 0.99)
    zz = np.asarray(z, dtype=float)
    root = np.sqrt(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(root > 0, (1.0 + 2.0 * m) / ((1.0 - m) * root), 0.0)
    sigma = root / (1.0 - m)
    q = b + sigma * (zz + np.where(zz != 0, skew * (zz * zz - 1.0) / 6.0, 0.0))
    return np.maximum(q, 0.0)


def z_of(percentile: Num) -> Any:
    """Φ⁻¹(p/100) for p in ALLOWED_PERCENTILES (element-wise; nan stays nan)."""
    p = np.asarray(percentile, dtype=float)
    z = np.full(p.shape, np.nan)
    for pct, value in Z_OF_PERCENTILE.items():
        z = np.where(p == pct, value, z)
    return z


def tpot_quantile_s(*, step_s: Num, decode_only_step_s: Num, running_batch: Num, percentile: Num) -> Any:
    """TPOT_p = T_dec + (T − T_dec)·q_p/B, s (module docstring); T at B → 0."""
    t = np.asarray(step_s, dtype=float)
    prefill_part = np.maximum(t - np.asarray(decode_only_step_s, dtype=float), 0.0)
    b = np.asarray(running_batch, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(t > 0, prefill_part / t, 0.0)
    q = cluster_count_quantile(b, prefill_share=share, z=z_of(percentile))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b > 1e-12, q / b, 1.0)
    return t - prefill_part + prefill_part * ratio


def busy_frac(point: Any) -> Any:
    """P(busy) = 1 − exp(−N), N = B + λ·T_pre: the chance an arriving prompt finds the engine working.

    N is the mean number of requests in service: B decoding plus λ·T_pre prefilling (Little's law over the
    prefill latency T_pre = ``prefill_latency_s``, k chunk steps of T_k without pipeline stages). Below the batch limit every admitted request is served at once
    (an M/G/∞ station), so the number in service is Poisson with mean N, and an arrival sees that time
    average (PASTA). At N → 0 the engine is idle and the prompt starts at once; at N ≥ 3 the factor is
    ≥ 0.95."""
    n = np.asarray(point.running_batch, dtype=float) + np.asarray(point.requests_per_s, dtype=float) * np.asarray(
        point.prefill_latency_s, dtype=float
    )
    return -np.expm1(-np.maximum(n, 0.0))


def step_phase_s(point: Any, terms: DeploymentTerms) -> Any:
    """Mean wait of an arriving prompt for the scheduler to admit it, s:

        W_phase = (1 − e^(−B)) · (n_s/2 + L) · T_d

    T_d: the step in flight (T with chunked prefill; the decode step T_d = T·(1 − u) with a prefill-first
    engine, planner/performance/prefill_first.py, u = prefill_utilization_frac). The scheduler admits prompts
    between blocks of n_s = ``terms.scheduler_steps`` decode steps (vLLM V0 multi-step; 1 otherwise): a
    prompt arriving at a random time waits for the rest of the block, n_s·T_d/2 on average. An engine whose
    scheduler runs L = ``terms.scheduler_lookahead_steps`` steps ahead of the GPU (SGLang's overlap
    scheduler, L = 1) has already queued the next step, which the prompt also waits for. Only a busy engine
    makes it wait: :func:`busy_frac`. Monotone: more load (λ, B, T) never shortens it."""
    step = np.asarray(point.step_s, dtype=float)
    decode = step * (1.0 - np.asarray(point.prefill_utilization_frac, dtype=float))
    in_flight = np.where(np.asarray(terms.prefill_first) > 0, decode, step)
    steps = np.asarray(terms.scheduler_steps, dtype=float) / 2.0 + np.asarray(terms.scheduler_lookahead_steps, dtype=float)
    return busy_frac(point) * steps * in_flight


def at_percentiles(
    point: Point,
    terms: DeploymentTerms,
    *,
    step_at: Callable[..., Num],
    tokens_per_round: Num,
    network_s: Num,
    ttft_percentile: Num | None,
    tpot_percentile: Num | None,
) -> Point:
    """``point`` (a load.LoadPoint of means) with ttft_s / tpot_s at the given percentiles.

    ``step_at`` is the engine round the point's steps came from (planner.performance.optimizations.round_step,
    called with ``decode_batch=`` and ``prefill_tokens=``): the decode-only round T_dec is it without prompt
    tokens. TPOT is per output token: the round's tail over E[N] = ``tokens_per_round`` tokens, as the mean.
    None, or nan entries of an array, keep the mean. Nothing is computed when both are None.
    """
    if ttft_percentile is None and tpot_percentile is None:
        return point
    pt: Any = point
    changes: dict[str, Any] = {}
    if ttft_percentile is not None:
        p = np.asarray(ttft_percentile, dtype=float)
        service = pt.chunk_steps * pt.chunk_step_s
        wait = md1_wait_quantile_s(pt.prefill_utilization_frac, service_s=service, percentile=np.nan_to_num(p, nan=50.0))
        wait = np.where(pt.stable, wait, np.inf)
        tail = wait + pt.prefill_latency_s + step_phase_s(pt, terms) + network_s
        tail = np.where(p >= 90, np.maximum(tail, pt.ttft_s), tail)  # a p ≥ 90 tail is never below the mean
        changes["ttft_s"] = np.where(np.isnan(p), pt.ttft_s, tail)
    if tpot_percentile is not None:
        p = np.asarray(tpot_percentile, dtype=float)
        round_tail = tpot_quantile_s(
            step_s=pt.step_s, decode_only_step_s=step_at(decode_batch=pt.running_batch, prefill_tokens=0.0),
            running_batch=pt.running_batch, percentile=np.nan_to_num(p, nan=50.0),
        ) + (pt.own_step_s - pt.step_s)  # the request's own sequence in every step (load.own_step_s)
        changes["tpot_s"] = np.where(np.isnan(p), pt.tpot_s, round_tail / np.asarray(tokens_per_round, dtype=float))
    out: Point = replace(pt, **changes)
    return out


__all__ = [
    "ALLOWED_PERCENTILES",
    "Z_OF_PERCENTILE",
    "at_percentiles",
    "busy_frac",
    "cluster_count_quantile",
    "md1_decay_rate_x",
    "md1_wait_quantile_s",
    "step_phase_s",
    "tpot_quantile_s",
    "z_of",
]
