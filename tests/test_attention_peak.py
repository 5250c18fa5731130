"""Attention runs at the rate of the wider of the queries' and the KV cache's formats, not the weights'
(terms.attention_peak_tflops): QKᵀ and PV multiply activations by cached keys and values, so an FP8- or
FP4-weight model with a bf16 cache computes them at the bf16 rate, and bf16 queries over an FP8 cache too. Worked example and the whole-step H200 timings that show it
(measurements/h200_kernels_steps_fp8.csv)."""

from __future__ import annotations

import dataclasses

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.performance.terms import DeploymentTerms
from planner.units import FLOP_PER_TFLOP
from planner.validate import kernel_mixed_steps as M
from planner.validate.kernels import h200_terms


def _terms(catalog: Catalog, *, gpu: str, weights: str, kv: str, model: str = "llama_3_1_8b") -> DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.model(model), gpu=catalog.gpu(gpu), weight_format=catalog.format(weights),
        kv_format=catalog.format(kv), tp=1,
    )


def test_the_attention_peak_is_the_wider_formats(catalog: Catalog) -> None:
    """H200: FP8 weights run at 1,979 × 0.89 TFLOP/s (format_mfu_scale), their attention over a bf16 cache at
    989.5 and over an FP8 cache at the FP8 rate; bf16 weights attend at bf16 over either cache; a B200 NVFP4
    model attends at bf16 over a bf16 cache and at FP8 over an FP8 one."""
    fp8_bf16 = _terms(catalog, gpu="h200_sxm", weights="fp8", kv="bf16")
    assert fp8_bf16.peak_tflops == pytest.approx(1979 * 0.89)
    assert fp8_bf16.attention_peak_tflops == 989.5
    assert _terms(catalog, gpu="h200_sxm", weights="fp8", kv="fp8").attention_peak_tflops == pytest.approx(1979 * 0.89)
    assert _terms(catalog, gpu="h200_sxm", weights="bf16", kv="bf16").attention_peak_tflops == 989.5
    assert _terms(catalog, gpu="h200_sxm", weights="bf16", kv="fp8").attention_peak_tflops == 989.5
    assert _terms(catalog, gpu="h200_sxm", weights="int4", kv="bf16").attention_peak_tflops == 989.5
    b200 = catalog.gpu("b200")
    nvfp4 = _terms(catalog, gpu="b200", weights="nvfp4", kv="bf16")
    assert nvfp4.attention_peak_tflops == b200.dense_tflops["bf16"] < nvfp4.peak_tflops
    fp8_cache = _terms(catalog, gpu="b200", weights="nvfp4", kv="fp8").attention_peak_tflops
    assert fp8_cache == pytest.approx(perf.compute_peak_tflops(b200, catalog.format("fp8")))
    assert b200.dense_tflops["bf16"] < fp8_cache < nvfp4.peak_tflops


def test_prefill_attention_worked_example(catalog: Catalog) -> None:
    """8B FP8 weights, bf16 KV, 8,192-token prompt on one H200: F_attn = 4·d_head·n_q·L·P(P + 1)/2 =
    4·128·32·32·8192·8193/2 FLOP = 17.6 TFLOP at Π_a·η_p = 989.5 · 0.6·8192/(8192 + 64) TFLOP/s → 29.9 ms; the
    linear part keeps the FP8 rate; the total equals the same step with the attention FLOPs moved to it."""
    t = _terms(catalog, gpu="h200_sxm", weights="fp8", kv="bf16")
    step = perf.prefill_step(t, prompt_tokens=8192)
    attn_flop = 4 * 128 * 32 * 32 * 8192 * 8193 / 2
    eta = 0.6 * 8192 / (8192 + 64)
    assert float(step.attention_compute_s) == pytest.approx(attn_flop / (989.5 * FLOP_PER_TFLOP * eta), rel=1e-9)
    assert float(step.attention_compute_s) * 1e3 == pytest.approx(29.87, abs=0.01)
    at_weight_rate = perf.prefill_step(dataclasses.replace(t, attention_peak_tflops=t.peak_tflops), prompt_tokens=8192)
    slower_by = float(step.total_s - at_weight_rate.total_s)
    assert slower_by == pytest.approx(attn_flop / eta / FLOP_PER_TFLOP * (1 / 989.5 - 1 / t.peak_tflops), rel=1e-6)


def test_the_kv_rate_is_what_the_fp8_steps_measure(catalog: Catalog) -> None:
    """The H200 FP8-weight prefills (bf16 attention): at the KV rate the model is within 3.4 % / 7.1 % (8B at
    TP1, a 70B TP8 rank, 8,192 tokens); at the weights' rate it was 12.5 % / 12.0 % fast."""
    rows = {(r.model_id, r.tp): r for r in M.mixed_step_rows(catalog) if r.weight_format == "fp8" and r.kind == "prefill"
            and r.chunk_tokens == 8192}
    assert rows[("llama_3_1_8b", 1)].error_pct == pytest.approx(-3.4, abs=0.1)
    assert rows[("llama_3_1_70b", 8)].error_pct == pytest.approx(-7.1, abs=0.1)
    for (model, tp), r in rows.items():
        t = h200_terms(catalog, model_id=model, weight_format="fp8", tp=tp)
        old = M.rank_step_ms(dataclasses.replace(t, attention_peak_tflops=t.peak_tflops), batch=0, context_tokens=0,
                             chunk_tokens=8192)
        assert old / r.measured_ms - 1 < -0.11 < r.error_pct / 100
