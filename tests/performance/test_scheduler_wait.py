"""The scheduler's admission wait in TTFT (planner/performance/tail.step_phase_s): worked values by hand, the
engine variants that set it (multi-step vLLM V0, SGLang's overlap scheduler) and monotonicity properties."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.cli.main import app
from planner.performance.load import LoadPoint, serve_at_load
from planner.performance.tail import busy_frac, step_phase_s


def _terms(catalog: Catalog, engine: str, *, gpu: str = "h100_sxm", tp: int = 4) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.model("llama_3_3_70b"), gpu=catalog.gpu(gpu),
        weight_format=catalog.format("bf16"), kv_format=catalog.format("bf16"), tp=tp, engine=engine,
    )


def _point(*, lam: float, step_s: float, batch: float, u: float, chunk_s: float) -> LoadPoint:
    return LoadPoint(
        requests_per_s=lam, step_s=step_s, running_batch=batch, prefill_tokens_per_step=0.0,
        prefill_utilization_frac=u, chunk_steps=1.0, chunk_step_s=chunk_s, prefill_latency_s=chunk_s, queue_wait_s=0.0, ttft_s=0.0,
        tpot_s=step_s, output_tokens_per_s=0.0, stable=True, own_batch=batch, own_step_s=step_s,
    )


def test_worked_example_overlap_scheduler(catalog: Catalog) -> None:
    """SGLang-like engine (chunked, n_s = 1, L = 1): λ = 1/s, B = 2, one 50 ms chunk, 20 ms steps.

    N = 2 + 1·1·0.05 = 2.05 requests in service, P(busy) = 1 − e^(−2.05) = 0.87127;
    W_phase = 0.87127 · (1/2 + 1) · 20 ms = 26.138 ms.
    """
    terms = replace(_terms(catalog, "vllm"), prefill_first=0.0, scheduler_steps=1.0, scheduler_lookahead_steps=1.0)
    pt = _point(lam=1.0, step_s=0.020, batch=2.0, u=0.0, chunk_s=0.050)
    assert float(busy_frac(pt)) == pytest.approx(0.871265, abs=1e-6)
    assert float(step_phase_s(pt, terms)) == pytest.approx(0.0261380, abs=1e-7)


def test_worked_example_multistep_prefill_first(catalog: Catalog) -> None:
    """vLLM V0 multi-step (prefill-first, n_s = 10, L = 0): τ = 25 ms with u = 0.3 of the time prefilling, so
    the decode step in flight is T_d = 25·0.7 = 17.5 ms; B = 7.5, T_p = 0.2 s at λ = 1.5/s → N = 7.8,
    P(busy) = 1 − e^(−7.8) = 0.999590; W_phase = 0.999590 · 10/2 · 17.5 ms = 87.464 ms."""
    terms = replace(_terms(catalog, "vllm"), prefill_first=1.0, scheduler_steps=10.0, scheduler_lookahead_steps=0.0)
    pt = _point(lam=1.5, step_s=0.025, batch=7.5, u=0.3, chunk_s=0.2)
    assert float(step_phase_s(pt, terms)) == pytest.approx(0.999590 * 5 * 0.0175, rel=1e-5)
    assert float(step_phase_s(pt, terms)) == pytest.approx(0.087464, abs=1e-6)


def test_engine_variants_add_their_blocks(catalog: Catalog) -> None:
    """Same deployment and load: multi-step adds (n_s − 1)/2 decode steps to vllm_v0's wait, the overlap
    scheduler one step to SGLang v0.3's; TPOT and the running batch do not change."""
    kw = {"requests_per_s": 4.0, "input_tokens": 230.0, "output_tokens": 224.0, "max_batch": 256.0}
    v0 = serve_at_load(_terms(catalog, "vllm_v0"), **kw)
    multi = serve_at_load(_terms(catalog, "vllm_v0_multistep"), **kw)
    assert float(multi.tpot_s) == pytest.approx(float(v0.tpot_s), rel=1e-12)
    decode_s = float(v0.step_s) * (1.0 - float(v0.prefill_utilization_frac))
    busy = 1.0 - math.exp(-(float(v0.running_batch) + 4.0 * float(v0.chunk_step_s)))
    assert float(multi.ttft_s) - float(v0.ttft_s) == pytest.approx(busy * 4.5 * decode_s, rel=1e-9)
    old = serve_at_load(_terms(catalog, "sglang_v03"), **kw)
    new = serve_at_load(_terms(catalog, "sglang"), **kw)
    busy = float(busy_frac(old))
    assert float(new.ttft_s) - float(old.ttft_s) == pytest.approx(busy * float(old.step_s), rel=1e-9)
    assert busy > 0.99  # B ≈ 17 running sequences at 4 requests/s


ENGINES = ("vllm", "vllm_v0", "vllm_v0_multistep", "sglang", "trtllm")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    engine=st.sampled_from(ENGINES),
    p_tok=st.floats(16.0, 4096.0),
    g_tok=st.floats(16.0, 1024.0),
    lam_lo=st.floats(1e-3, 3.0),
    more=st.floats(1.0, 3.0),
)
def test_more_load_never_lowers_ttft(catalog: Catalog, engine: str, p_tok: float, g_tok: float, lam_lo: float,
                                     more: float) -> None:
    t = _terms(catalog, engine)
    kw = {"input_tokens": p_tok, "output_tokens": g_tok, "max_batch": 256.0}
    lams = np.array([lam_lo, lam_lo * more])
    pt = serve_at_load(t, requests_per_s=lams, **kw)
    if bool(np.all(pt.stable)):
        assert pt.ttft_s[1] >= pt.ttft_s[0] * (1.0 - 1e-9)
        assert float(step_phase_s(pt, t)[1]) >= float(step_phase_s(pt, t)[0]) * (1.0 - 1e-9)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    engine=st.sampled_from(ENGINES),
    p_tok=st.floats(16.0, 4096.0),
    lam=st.floats(1e-3, 3.0),
    bw=st.floats(1.0, 3.0),
    flops=st.floats(1.0, 3.0),
)
def test_more_bandwidth_or_flops_never_slower(catalog: Catalog, engine: str, p_tok: float, lam: float, bw: float,
                                              flops: float) -> None:
    t = _terms(catalog, engine)
    fast = replace(t, bandwidth_gb_per_s=t.bandwidth_gb_per_s * bw, peak_tflops=t.peak_tflops * flops)
    kw = {"requests_per_s": lam, "input_tokens": p_tok, "output_tokens": 256.0, "max_batch": 256.0}
    slow_pt, fast_pt = serve_at_load(t, **kw), serve_at_load(fast, **kw)
    if bool(slow_pt.stable):
        assert bool(fast_pt.stable)
        assert float(fast_pt.ttft_s) <= float(slow_pt.ttft_s) * (1.0 + 1e-9)
        assert float(fast_pt.tpot_s) <= float(slow_pt.tpot_s) * (1.0 + 1e-9)


def test_predict_explain_shows_the_scheduler_wait() -> None:
    """``planner predict --requests-per-s X --explain`` prints the admission wait and its factors, and the JSON
    TTFT is the sum of its printed parts."""
    args = ["predict", "--model", "llama_3_3_70b", "--gpu", "h100_sxm", "--tp", "4", "--engine",
            "vllm_v0_multistep", "--requests-per-s", "4"]
    runner = CliRunner()
    shown = runner.invoke(app, [*args, "--explain"])
    assert shown.exit_code == 0, shown.output
    for term in ("scheduler_wait_ms", "engine_busy_frac", "scheduler_steps", "scheduler_lookahead_steps"):
        assert term in shown.output
    res = runner.invoke(app, [*args, "--json"])
    at = json.loads(res.stdout)["at_load"]
    assert at["scheduler_steps"] == 10.0 and at["scheduler_lookahead_steps"] == 0.0
    assert at["ttft_ms"] == pytest.approx(at["queue_wait_ms"] + at["prefill_chunks_ms"] + at["scheduler_wait_ms"])
    # a busy prefill-first engine: the wait is P(busy)·n_s/2 decode steps (the decode step is τ·(1 − u))
    decode_ms = at["step_ms"] * (1.0 - at["prefill_utilization_frac"])
    assert at["tpot_ms"] > at["step_ms"]  # a request's own steps also hold it (load.own_step_s)
    assert at["scheduler_wait_ms"] == pytest.approx(at["engine_busy_frac"] * 5.0 * decode_ms, rel=1e-9)
