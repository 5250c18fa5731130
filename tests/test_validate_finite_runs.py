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
