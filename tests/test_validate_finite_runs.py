"""Finite closed-loop runs whose p99 TTFT no steady state of the loop reaches (planner/validate/finite_runs.py)."""

from __future__ import annotations

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.validate.finite_runs import full_queue_ttft_ms, start_transient_reason
from planner.validate.sources import build_cases


def _deepseek_h200_tp8(catalog: Catalog) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog,
        model=catalog.model("deepseek_v3"),
        gpu=catalog.gpu("h200_sxm"),
        weight_format=catalog.format("fp8"),
        kv_format=catalog.format("bf16"),
        tp=8,
        engine="sglang",
    )


def test_full_queue_is_whole_chunks_of_the_engine_budget(catalog: Catalog) -> None:
    """SGLang budget C = 8,192 tokens: 8 prompts of 1,024 are one step of b = 8; 64 are ⌈65,536/8,192⌉ = 8 such
    steps; 3 prompts of 1,000 are one step of b = 3 (b = min(N, C/P))."""
    t = _deepseek_h200_tp8(catalog)
    step_8 = float(perf.prefill_step(t, prompt_tokens=1024.0, batch=8.0).total_s) * 1e3
    assert full_queue_ttft_ms(t, clients=8, prompt_tokens=1024.0) == pytest.approx(step_8)
    assert full_queue_ttft_ms(t, clients=64, prompt_tokens=1024.0) == pytest.approx(8 * step_8)
    step_3 = float(perf.prefill_step(t, prompt_tokens=1000.0, batch=3.0).total_s) * 1e3
    assert full_queue_ttft_ms(t, clients=3, prompt_tokens=1000.0) == pytest.approx(step_3)


def test_p99_below_the_full_queue_keeps_the_row(catalog: Catalog) -> None:
    t = _deepseek_h200_tp8(catalog)
    bound = full_queue_ttft_ms(t, clients=8, prompt_tokens=922.0)
    assert start_transient_reason(t, clients=8, prompt_tokens=922.0, p99_ttft_ms=bound * 0.99, mean_ttft_ms=50.0) is None
    assert start_transient_reason(t, clients=8, prompt_tokens=922.0, p99_ttft_ms=None, mean_ttft_ms=50.0) is None
    reason = start_transient_reason(t, clients=8, prompt_tokens=922.0, p99_ttft_ms=1975.4, mean_ttft_ms=330.6)
    assert reason is not None and "6.0x the mean" in reason and "8 clients" in reason


def test_only_the_inferencex_rows_lose_their_ttft(catalog: Catalog) -> None:
    """IX-870 rows 1-4 (p99 1,975-2,741 ms = 6.0-6.5x the mean) are skipped for TTFT, kept for TPOT and
    throughput; the tt-inference-server rows (no p99) keep their TTFT."""
    cases, skipped = build_cases(catalog)
    src = "github_issue_serving_points"
    gone = [s.label for s in skipped if s.source == src and s.reason.startswith("finite-run start")]
    assert [g.split(" ")[1] for g in gone] == ["1", "2", "3", "4"]
    kept = {(c.label.split(" ")[1], c.metric) for c in cases if c.source == src}
    assert ("1", "tpot_itl") in kept and ("4", "throughput") in kept and ("1", "ttft_or_prefill") not in kept
    assert sum(1 for c in cases if c.source == src and c.metric == "ttft_or_prefill") == 13


def test_a_finite_open_loop_run_that_keeps_up_reports_less_than_lambda_g() -> None:
    """bench_serving divides N·G by the arrival span N/λ plus the drain (≈ E2E): λ·G/(1 + λ·E2E/N); without N or
    E2E, λ·G. The 405B TP8 run at 1 req/s (300 prompts, E2E 24.9 s) reports 505 of λ·G = 534.5 tok/s."""
    from planner.validate.finite_runs import finite_run_output_rate

    assert finite_run_output_rate(1.0, 534.5, prompts=None, e2e_ms=24871.7) == 534.5
    expected = finite_run_output_rate(1.0, 534.5, prompts=300.0, e2e_ms=24871.7)
    assert expected == pytest.approx(534.5 / (1.0 + 24.8717 / 300.0))
    assert 0.95 * expected < 505.0 < 0.95 * 534.5  # kept up (its TTFT is a steady state), though below 0.95·λ·G
    assert finite_run_output_rate(2.0, 500.0, prompts=600.0, e2e_ms=1e4) < finite_run_output_rate(
        2.0, 500.0, prompts=6000.0, e2e_ms=1e4) < 1000.0  # a longer run drains a smaller share


def test_the_405b_runs_that_keep_up_have_ttft_cases(catalog: Catalog) -> None:
    """datacrunch 405B TP8 at 1 and 2 req/s keep up (ITL as unloaded): their TTFT rows are cases, not skipped as
    overloaded. At 4 req/s of 513-token prompts Little's law puts λ·E2E = 4 · 107 s = 428 sequences in a replica
    that holds 309 (the rest queue), and at 8 req/s (TTFT 124 s) the output rate falls short: both are skipped."""
    cases, skipped = build_cases(catalog)
    ttft = {c.label for c in cases if c.metric == "ttft_or_prefill" and "405B" in c.label}
    assert any("rate 1.0 " in label for label in ttft) and any("rate 2.0 " in label for label in ttft)
    over = [s.label for s in skipped if "405B" in s.label and "overloaded" in s.reason]
    assert any("rate 4.0 513" in label for label in over) and any("rate 8.0 509" in label for label in over)
