"""Percentile SLOs: the tail model of planner.performance.tail against seeded discrete-event simulations.

Tolerances (stated in the module docstring): the M/D/1 wait quantile within 0.06·s + 5 % of the simulated
one for ρ ∈ {0.3, 0.6, 0.85} at p90/p95/p99; the per-request TPOT quantile within 4 % of the simulated
TPOT for prefill shares of the step 10–60 %.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.performance.load import capacity_at_slo, serve_at_load
from planner.performance.tail import md1_decay_rate_x, md1_wait_quantile_s, tpot_quantile_s


def _md1_waits(rho: float, *, service_s: float, arrivals: int, seed: int) -> np.ndarray:
    """Waits of a FIFO M/D/1 queue by the Lindley recursion W_n = S_n − min(0, min_{k≤n} S_k)."""
    rng = np.random.default_rng(seed)
    walk = np.cumsum(service_s - rng.exponential(service_s / rho, arrivals))
    return walk - np.minimum(np.minimum.accumulate(walk), 0.0)


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.85])
def test_md1_wait_quantile_matches_simulation(rho: float) -> None:
    service = 0.25
    waits = _md1_waits(rho, service_s=service, arrivals=400_000, seed=11)
    for p in (90, 95, 99):
        simulated = float(np.quantile(waits, p / 100))
        model = float(md1_wait_quantile_s(rho, service_s=service, percentile=p))
        assert abs(model - simulated) <= 0.06 * service + 0.05 * simulated, (rho, p, model, simulated)


def test_md1_decay_rate_solves_its_equation_and_quantile_edges() -> None:
    rho = np.array([0.05, 0.3, 0.6, 0.9, 0.99])
    x = md1_decay_rate_x(rho)
    assert np.allclose(rho * (np.exp(x) - 1.0), x, rtol=1e-10)
    assert np.all(x > 0)
    # P(W > 0) = ρ: below it the quantile is 0; at ρ ≥ 1 the wait is unbounded
    assert float(md1_wait_quantile_s(0.1, service_s=1.0, percentile=90)) == 0.0
    assert float(md1_wait_quantile_s(1.0, service_s=1.0, percentile=90)) == np.inf
    waits = [float(md1_wait_quantile_s(0.7, service_s=1.0, percentile=p)) for p in (50, 90, 95, 99)]
    assert waits == sorted(waits) and waits[0] < waits[-1]


def _chunked_prefill_tpot(lam: float, *, decode_s: float, s_per_token: float, prompt: int, output: int,
                          budget: int, steps: int, seed: int) -> tuple[float, np.ndarray]:
    """Step-level simulation: Poisson prompts during each step join a FIFO prefill backlog; each step runs
    decode plus up to ``budget`` prompt tokens (duration decode_s + s_per_token·tokens); a request decodes in
    the ``output`` steps after its prefill ends. Returns (mean step, per-request TPOTs)."""
    rng = np.random.default_rng(seed)
    backlog: deque[int] = deque()
    step = np.empty(steps)
    prefilled: list[int] = []
    last = decode_s
    for i in range(steps):
        backlog.extend([prompt] * int(rng.poisson(lam * last)))
        room, done = budget, 0
        while backlog and room > 0:
            take = min(backlog[0], room)
            backlog[0] -= take
            room -= take
            done += take
            if backlog[0] == 0:
                backlog.popleft()
                prefilled.append(i)
        last = decode_s + s_per_token * done
        step[i] = last
    cum = np.concatenate([[0.0], np.cumsum(step)])
    ends = np.array(prefilled)
    ends = ends[(ends > 1000) & (ends + output < steps)]
    return float(step.mean()), (cum[ends + 1 + output] - cum[ends + 1]) / output


@pytest.mark.parametrize("lam", [1.0, 3.0, 6.0])
def test_tpot_quantile_matches_simulation(lam: float) -> None:
    decode_s, s_per_token, prompt, output = 0.02, 5e-5, 2000, 200
    mean_step, tpots = _chunked_prefill_tpot(
        lam, decode_s=decode_s, s_per_token=s_per_token, prompt=prompt, output=output, budget=2048,
        steps=120_000, seed=3,
    )
    step = decode_s / (1.0 - s_per_token * lam * prompt)  # fixed point T = T_dec + a·λ·P·T
    assert mean_step == pytest.approx(step, rel=0.02)
    batch = lam * output * step
    for p in (50, 90, 95, 99):
        model = float(tpot_quantile_s(step_s=step, decode_only_step_s=decode_s, running_batch=batch, percentile=p))
        assert model == pytest.approx(float(np.quantile(tpots, p / 100)), rel=0.04), (lam, p)


def _terms(catalog: Catalog, gpu: str) -> Any:
    return perf.deployment_terms(
        catalog, model=catalog.model("llama_3_1_8b"), gpu=catalog.accelerators[gpu],
        weight_format=catalog.format("bf16"), kv_format=catalog.format("bf16"), engine="vllm",
    )


COMBOS = [(None, None), (50, None), (90, None), (95, None), (99, None), (None, 50), (None, 90), (None, 95),
          (None, 99), (99, 50), (99, 90), (99, 95), (99, 99), (50, 99), (90, 99), (95, 99)]


@pytest.mark.parametrize("gpu", ["h100_sxm", "l40s", "a100_sxm_80gb"])
def test_a_higher_percentile_never_raises_capacity(catalog: Catalog, gpu: str) -> None:
    """Capacity at the SLO is non-increasing in each percentile, and p99/p99 is below the mean's.

    The SLOs are set 2 % above the mean TTFT / TPOT at 60 % of the replica's unconstrained capacity, so
    the latency targets (not the batch or stability limits) bind."""
    terms = _terms(catalog, gpu)
    kw = {"input_tokens": 500.0, "output_tokens": 250.0, "max_batch": 256.0, "network_s": 0.05}
    loose = float(capacity_at_slo(terms, **kw, slo_ttft_s=60.0, slo_tpot_s=60.0))
    base = serve_at_load(terms, requests_per_s=0.6 * loose, **kw)
    ttft_p = np.array([np.nan if a is None else a for a, _ in COMBOS], dtype=float)[:, None]
    tpot_p = np.array([np.nan if b is None else b for _, b in COMBOS], dtype=float)[:, None]
    caps = capacity_at_slo(
        terms, **kw, slo_ttft_s=1.02 * float(base.ttft_s), slo_tpot_s=1.02 * float(base.tpot_s),
        ttft_percentile=ttft_p, tpot_percentile=tpot_p,
    ).ravel()
    cap = {combo: float(c) for combo, c in zip(COMBOS, caps, strict=True)}
    for fixed in (None, 99):
        by_ttft = [cap[(p, fixed)] for p in (50, 90, 95, 99)]
        by_tpot = [cap[(fixed, p)] for p in (50, 90, 95, 99)]
        for chain in (by_ttft, by_tpot):
            assert all(a >= b - 1e-9 for a, b in zip(chain, chain[1:], strict=False)), (gpu, chain)
    assert 0 < cap[(99, 99)] < cap[(None, None)]


def test_percentile_point_is_the_mean_point_without_percentiles(catalog: Catalog) -> None:
    terms = _terms(catalog, "h100_sxm")
    kw = {"requests_per_s": np.array([1.0, 5.0]), "input_tokens": 2000.0, "output_tokens": 250.0,
          "max_batch": 128.0, "network_s": 0.05}
    mean = serve_at_load(terms, **kw)
    p99 = serve_at_load(terms, **kw, ttft_percentile=99, tpot_percentile=99)
    nan = serve_at_load(terms, **kw, ttft_percentile=np.nan, tpot_percentile=np.nan)
    assert np.array_equal(nan.ttft_s, mean.ttft_s) and np.array_equal(nan.tpot_s, mean.tpot_s)
    assert np.all(p99.ttft_s >= mean.ttft_s) and np.all(p99.tpot_s > mean.tpot_s)
    assert p99.ttft_s[1] > mean.ttft_s[1]  # at 1 req/s ρ < 1 %: the p99 wait is 0, TTFT stays at its mean
    assert np.array_equal(p99.step_s, mean.step_s)  # the mean step is untouched


def test_tpot_percentiles_are_per_output_token_under_speculation(catalog: Catalog) -> None:
    """With E[N] = 2.5 tokens per speculative round, TPOT's percentiles are per token like its mean: the round's
    tail over E[N]. The median is the mean (z_50 = 0) and the p99 lies between the mean and one round."""
    from planner.performance.optimizations import LoadOptimizations

    terms = _terms(catalog, "h100_sxm")
    kw = {"requests_per_s": np.array([0.5, 2.0, 6.0]), "input_tokens": 1000.0, "output_tokens": 200.0,
          "max_batch": 128.0, "opt": LoadOptimizations(tokens_per_round=2.5)}
    mean, p50, p99 = (serve_at_load(terms, **kw, tpot_percentile=p) for p in (None, 50, 99))
    assert p50.tpot_s == pytest.approx(mean.tpot_s, rel=1e-12)
    assert np.all(p99.tpot_s > mean.tpot_s) and np.all(p99.tpot_s < p99.step_s)
    assert mean.tpot_s == pytest.approx(mean.own_step_s / 2.5, rel=1e-12)
