"""The prefill-first schedule (engines without chunked prefill, planner/performance/prefill_first.py): its
formulas against hand arithmetic on the card-8 terms, the book's co-located rate at its operating point,
a seeded discrete-event simulation of a prefill-first engine, stacked tables that mix engines, and the tail."""

from __future__ import annotations

from collections import deque
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import yaml

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.errors import ScenarioError
from planner.performance.load import LoadPoint, capacity_at_slo, serve_at_load
from planner.performance.mixed_step import mixed_step
from planner.performance.stack import stack_terms
from planner.performance.tail import md1_wait_quantile_s
from planner.performance.terms import with_efficiency
from planner.scenario import parse_scenario, validate_against_catalog

ROOT = Path(__file__).resolve().parents[2]
P_TOK, G_TOK = 8192.0, 1025.0
CONTEXT = P_TOK + G_TOK / 2.0


def _book_terms(catalog: Catalog, gpu: str, engine: str = "vllm_v0") -> perf.DeploymentTerms:
    """Qwen3-8B BF16 TP1 on ``gpu`` as the book computes card 8: roofline at MFU = MBU = 50 %, no host cost."""
    fmt = catalog.formats["bf16"]
    terms = perf.deployment_terms(
        catalog, model=catalog.models["qwen3_8b"], gpu=catalog.accelerators[gpu], weight_format=fmt,
        kv_format=fmt, tp=1, pp=1, ideal=True, engine=engine,
    )
    return with_efficiency(terms, prefill_mfu_frac=0.5, decode_mbu_frac=0.5)


def _decode_s(terms: perf.DeploymentTerms, batch: float) -> float:
    return float(mixed_step(terms, decode_batch=batch, decode_context_tokens=CONTEXT, prefill_tokens=0.0,
                            prompt_tokens=P_TOK))


def test_engine_catalog_marks_vllm_v0_prefill_first(catalog: Catalog) -> None:
    v0, v1 = catalog.engines["vllm_v0"], catalog.engines["vllm"]
    assert not v0.chunked_prefill and v1.chunked_prefill
    assert perf.engine_fields(v0)["prefill_first"] == 1.0 and perf.engine_fields(v1)["prefill_first"] == 0.0


def test_formulas_against_hand_arithmetic(catalog: Catalog) -> None:
    """A100, λ = 0.3 req/s: T_d(B) = a + b·B is linear (memory-bound), so τ(1 − u) = a + b·λ·G·τ gives
    τ = a / (1 − u − b·λ·G); B = λ·G·τ; TTFT = u·T_p / (2(1 − u)) + T_p + T_d(B)/2."""
    terms = _book_terms(catalog, "a100_sxm_80gb")
    a = _decode_s(terms, 0.0)
    b = (_decode_s(terms, 32.0) - a) / 32.0
    assert _decode_s(terms, 10.0) == pytest.approx(a + 10 * b, rel=1e-9)  # linear in the batch
    t_p = float(perf.prefill_step(terms, prompt_tokens=P_TOK).total_s)
    assert t_p == pytest.approx(0.856, abs=5e-4)  # C8.7
    lam = 0.3
    u = lam * t_p
    tau = a / (1 - u - b * lam * G_TOK)
    batch = lam * G_TOK * tau
    pt = serve_at_load(terms, requests_per_s=lam, input_tokens=P_TOK, output_tokens=G_TOK, max_batch=256.0)
    assert bool(pt.stable)
    assert float(pt.prefill_utilization_frac) == pytest.approx(u, rel=1e-12)
    assert float(pt.step_s) == pytest.approx(tau, rel=1e-6)
    # a request's own decode steps hold it and the B others: TPOT = T_d(B + 1) / (1 − u)
    own = (a + b * (batch + 1)) / (1 - u)
    assert float(pt.tpot_s) == pytest.approx(own, rel=1e-6)
    assert float(pt.running_batch) == pytest.approx(batch, rel=1e-6)
    wait = u * t_p / (2 * (1 - u))
    assert float(pt.queue_wait_s) == pytest.approx(wait, rel=1e-12)
    assert float(pt.ttft_s) == pytest.approx(wait + t_p + (a + b * batch) / 2, rel=1e-6)
    # numbers: a = 14.85 ms, b = 1.26 ms per sequence → u = 0.257, τ = 41.7 ms, B = 12.8, TPOT = 43.4 ms
    assert (a * 1e3, b * 1e3) == (pytest.approx(14.85, abs=0.01), pytest.approx(1.26, abs=0.01))
    assert (u, tau * 1e3, batch, own * 1e3) == (pytest.approx(0.2569, abs=1e-4), pytest.approx(41.7, abs=0.05),
                                                pytest.approx(12.83, abs=0.01), pytest.approx(43.4, abs=0.05))


def test_book_co_located_rate_is_the_fixed_point_at_batch_32(catalog: Catalog) -> None:
    """Card 8 (C8.7): μ_co = 1 / (d_P + d_D) per card with d_D = G·T_d(32)/32. At that load the prefill-first
    fixed point runs exactly B = 32 (τ = T_d/(1 − u), B = λGτ ⇔ λ(T_p + G·T_d(B)/B) = 1), and 4 A100 + 4 H20
    serve 3.02 req/s — the book's co-located answer. The engine steps 82 ms / 84 ms; a request's TPOT is its own
    steps, T_d(33)/(1 − u) = 84 ms / 86 ms (no SLO in the book)."""
    total = 0.0
    for gpu, step_ms, tpot_ms in (("a100_sxm_80gb", 82.0, 84.0), ("h20", 84.0, 86.0)):
        terms = _book_terms(catalog, gpu)
        t_p = float(perf.prefill_step(terms, prompt_tokens=P_TOK).total_s)
        lam = 1.0 / (t_p + G_TOK * _decode_s(terms, 32.0) / 32.0)
        pt = serve_at_load(terms, requests_per_s=lam, input_tokens=P_TOK, output_tokens=G_TOK, max_batch=256.0)
        assert float(pt.running_batch) == pytest.approx(32.0, rel=1e-6)
        assert float(pt.step_s) * 1e3 == pytest.approx(step_ms, abs=0.5)
        u = float(pt.prefill_utilization_frac)
        assert float(pt.tpot_s) == pytest.approx(_decode_s(terms, 33.0) / (1 - u), rel=1e-9)
        assert float(pt.tpot_s) * 1e3 == pytest.approx(tpot_ms, abs=0.5)
        total += 4 * lam
    assert total == pytest.approx(3.02, abs=0.005)


def _simulate(lam: float, *, prefill_s: float, a: float, b: float, output: int, requests: int, seed: int
              ) -> tuple[float, float, float]:
    """A prefill-first engine: at each step boundary one waiting prompt's prefill (prefill_s, emits the first
    token) runs if any waits, else one decode step of a + b·B for the B running sequences; each sequence
    decodes ``output`` steps. Returns (mean TTFT, mean per-request TPOT, mean running batch over decode time)."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / lam, requests))
    t, nxt, step_count = 0.0, 0, 0
    waiting: deque[float] = deque()
    running: deque[tuple[int, float]] = deque()  # (decode step count at start, decode start time)
    ttft, tpot = [], []
    batch_time = decode_time = 0.0
    while nxt < requests or waiting or running:
        while nxt < requests and arrivals[nxt] <= t:
            waiting.append(arrivals[nxt])
            nxt += 1
        if waiting:
            t += prefill_s
            ttft.append(t - waiting.popleft())
            running.append((step_count, t))
        elif running:
            step = a + b * len(running)
            t += step
            batch_time += len(running) * step
            decode_time += step
            step_count += 1
            while running and step_count - running[0][0] >= output:
                tpot.append((t - running.popleft()[1]) / output)
        else:
            t = float(arrivals[nxt])
    warm = requests // 10  # drop the warm-up
    return float(np.mean(ttft[warm:])), float(np.mean(tpot[warm:])), batch_time / decode_time


@pytest.mark.parametrize(("a", "b", "tpot_rel"), [(0.0175, 0.0, 0.03), (0.014, 0.0004, 0.10)])
def test_formulas_match_a_discrete_event_simulation(a: float, b: float, tpot_rel: float) -> None:
    """T_p = 0.2 s, G = 200, λ = 1.5/s (u = 0.3). Constant T_d = 17.5 ms: s = 17.5 ms, τ = 25 ms, B = 7.5,
    TTFT = 0.3·0.2/1.4 + 0.2 + s/2 = 0.2516 s; the simulation agrees within 3 %. T_d = 14 ms + 0.4 ms·B
    (KV share of the step 17 %): τ = 24.1 ms; the simulated per-request TPOT is 8 % above it, because a step
    that grows with the batch lengthens exactly when more requests decode: a request's own steps hold it and
    the B others it finds, T_d(B + 1)/(1 − u) = 24.7 ms (the model's TPOT, load.own_step_s), which closes
    a third of the gap; the rest is the batch's swing around its mean across prefill passes. TTFT within 3 %."""
    t_p, g, lam = 0.2, 200, 1.5
    u = lam * t_p
    s = a / (1 - b * lam / (1 - u) * g)
    tau, batch = s / (1 - u), lam * g * s / (1 - u)
    ttft = u * t_p / (2 * (1 - u)) + t_p + s / 2
    if b == 0:
        assert (s, tau, batch, ttft) == (pytest.approx(0.0175), pytest.approx(0.025), pytest.approx(7.5),
                                         pytest.approx(0.2516, abs=1e-4))
    # the module docstring's worked example: T_d = 10 ms + 1 ms·B gives the same s, τ, B as 17.5 ms constant
    s_lin = 0.010 / (1 - 0.001 * lam / (1 - u) * g)
    assert (s_lin, lam * g * s_lin / (1 - u)) == (pytest.approx(0.0175), pytest.approx(7.5))
    sim_ttft, sim_tpot, sim_batch = _simulate(lam, prefill_s=t_p, a=a, b=b, output=g, requests=8000, seed=7)
    assert sim_ttft == pytest.approx(ttft, rel=0.03)
    assert tau <= sim_tpot * 1.01
    assert sim_tpot == pytest.approx(tau, rel=tpot_rel)
    own = (a + b * (batch + 1)) / (1 - u)  # the model's TPOT
    assert own <= sim_tpot * 1.01
    assert abs(own - sim_tpot) <= abs(tau - sim_tpot) * (1.0 if b == 0 else 0.75)
    assert sim_batch == pytest.approx(batch, rel=tpot_rel)


def test_a_table_mixing_engines_gives_each_row_its_own_schedule(catalog: Catalog) -> None:
    """Stacked terms of a prefill-first and a chunked row: each row equals its own single-row evaluation."""
    rows = [_book_terms(catalog, "h20", "vllm_v0"), _book_terms(catalog, "h20", "vllm")]
    lam = np.array([[0.1, 0.3]])
    both = serve_at_load(stack_terms(rows), requests_per_s=lam, input_tokens=P_TOK, output_tokens=G_TOK,
                         max_batch=56.0, ttft_percentile=90, tpot_percentile=90)
    for r, terms in enumerate(rows):
        one = serve_at_load(terms, requests_per_s=lam[0], input_tokens=P_TOK, output_tokens=G_TOK, max_batch=56.0,
                            ttft_percentile=90, tpot_percentile=90)
        for f in fields(LoadPoint):
            assert np.asarray(getattr(both, f.name))[r] == pytest.approx(np.asarray(getattr(one, f.name)), rel=1e-12)
    # prefill and decode add: the prefill-first row is slower at the same load
    assert np.all(both.tpot_s[0] > both.tpot_s[1])


def test_ttft_percentile_is_the_md1_tail_of_the_prefill_passes(catalog: Catalog) -> None:
    """TTFT_p99 = w_99(u, T_p) + T_p + T_d(B)/2: the prefill server is one pass of T_p at utilisation u."""
    terms = _book_terms(catalog, "h20")
    mean = serve_at_load(terms, requests_per_s=0.3, input_tokens=P_TOK, output_tokens=G_TOK, max_batch=56.0)
    p99 = serve_at_load(terms, requests_per_s=0.3, input_tokens=P_TOK, output_tokens=G_TOK, max_batch=56.0,
                        ttft_percentile=99, tpot_percentile=99)
    t_p = float(mean.chunk_step_s)
    u = float(mean.prefill_utilization_frac)
    decode = _decode_s(terms, float(mean.running_batch))
    assert float(mean.step_s) * (1 - u) == pytest.approx(decode, rel=1e-6)
    expected = float(md1_wait_quantile_s(u, service_s=t_p, percentile=99)) + t_p + decode / 2
    assert float(p99.ttft_s) == pytest.approx(expected, rel=1e-6)
    assert float(p99.tpot_s) > float(mean.tpot_s) > decode


def test_a_prompt_longer_than_one_prefill_pass_is_refused(catalog: Catalog) -> None:
    """vllm_v0 prefills a prompt in one pass of at most 32,768 tokens: a longer input is bad input (exit 2)."""
    data = yaml.safe_load((ROOT / "examples/pd_card8/scenario.yaml").read_text())
    data["workloads"][0]["input_tokens"] = 40_000
    with pytest.raises(ScenarioError, match=r"engine: vllm_v0 has no chunked prefill .* 32,768 .*\(use vllm\)"):
        validate_against_catalog(parse_scenario(data), catalog)
    data["workloads"][0]["engine"] = "vllm"
    validate_against_catalog(parse_scenario(data), catalog)


def _llama8b(catalog: Catalog, gpu: str, engine: str) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.model("llama_3_1_8b"), gpu=catalog.accelerators[gpu],
        weight_format=catalog.format("bf16"), kv_format=catalog.format("bf16"), engine=engine,
    )


@pytest.mark.parametrize(("gpu", "p_tok", "g_tok"), [("h100_sxm", 200, 200), ("h100_sxm", 4000, 500),
                                                     ("h100_sxm", 16000, 300), ("l40s", 1000, 200)])
def test_chunking_never_loses_capacity_and_percentiles_never_raise_it(
    catalog: Catalog, gpu: str, p_tok: int, g_tok: int
) -> None:
    """At the same SLO the prefill-first engine serves less than the chunked one (prefill and decode add
    instead of sharing a weight pass), and its p99 capacity is at most its mean one."""
    caps = {}
    for engine, pct in (("vllm", None), ("vllm_v0", None), ("vllm_v0", 99)):
        terms = _llama8b(catalog, gpu, engine)
        limit = float(perf.max_batch(terms, context_tokens=p_tok + g_tok, workspace_bytes=2 * 2**30))
        caps[engine, pct] = float(capacity_at_slo(
            terms, input_tokens=float(p_tok), output_tokens=float(g_tok), max_batch=limit, network_s=0.0,
            slo_ttft_s=2.0, slo_tpot_s=0.05, ttft_percentile=pct, tpot_percentile=pct,
        ))
    assert 0 < caps["vllm_v0", None] < caps["vllm", None]
    assert caps["vllm_v0", 99] <= caps["vllm_v0", None]
