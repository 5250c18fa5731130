"""Kernel check of planner validate-model (planner/validate/kernels.py) and the kernel-level terms it anchors:
the weight stream of a GEMM (ledgers.efficiency.weight_stream_s), GEMM kernels per pass and the FP8 matmul
efficiency relative to BF16 (accelerators.yaml efficiency.format_mfu_scale)."""

from __future__ import annotations

import dataclasses

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.ledgers import efficiency as eff
from planner.validate import kernels as K


@pytest.fixture(scope="module")
def rows(catalog: Catalog) -> list[K.KernelRow]:
    return K.kernel_rows(catalog)


def _row(rows: list[K.KernelRow], label: str, path: str) -> K.KernelRow:
    return next(r for r in rows if r.label == label and r.path == path)


def test_every_gemm_and_attention_row_is_predicted_on_its_paths(rows: list[K.KernelRow]) -> None:
    """20 bf16 shapes + 12 FP8 shapes × 19 row counts, each on the decode and the prefill path; 7 + 9 attention."""
    gemm = [r for r in rows if r.kind == "gemm"]
    assert len(gemm) == (20 + 12) * 19 * 2
    assert sum(r.kind == "attn_prefill" for r in rows) == 7
    assert sum(r.kind == "attn_decode" for r in rows) == 9
    assert {r.regime for r in gemm} == {"memory", "ridge", "compute"}
    assert all(r.predicted_ms > 0 for r in rows)


Q = 2.85  # ledgers.efficiency.OPERATOR_OVERLAP_EXPONENT, the decode path's ridge loss


def _ridge_us(compute_us: float, memory_us: float) -> float:
    """(T_c^q + T_m^q)^(1/q) at q = 2.85, µs."""
    return float((compute_us**Q + memory_us**Q) ** (1 / Q))


def test_worked_example_8b_gate_up_at_one_row(rows: list[K.KernelRow]) -> None:
    """8B gate_up (14,336·2 × 4,096 bf16 = 234,881,024 B) at m = 1 on an H200 (4,800 GB/s, decode MBU 0.65):
    the step charges the weight read, 234.88 MB / (4.8 TB/s · 0.65) = 75.28 µs (the ridge loss against
    234.9 MFLOP / (989.5 TFLOP/s · 0.6) = 0.40 µs of compute adds 1e-7 of it); measured 62.71 µs (+20 %)."""
    r = _row(rows, "8b_gate_up bf16 m=1", "decode")
    assert r.measured_ms == pytest.approx(0.06271)
    weights_us = 234_881_024 / (4800e9 * 0.65) * 1e6
    compute_us = 2 * 28_672 * 4_096 / (989.5e12 * 0.6) * 1e6
    assert r.predicted_ms * 1e3 == pytest.approx(_ridge_us(compute_us, weights_us), rel=1e-9)
    assert r.predicted_ms * 1e3 == pytest.approx(weights_us, rel=2e-7)
    assert r.predicted_ms * 1e3 == pytest.approx(75.28, abs=0.01)
    assert _row(rows, "8b_gate_up bf16 m=1", "prefill").predicted_ms == pytest.approx(r.predicted_ms)


def test_worked_example_tp8_shard_at_2048_rows_shows_the_n_over_t_curve(rows: list[K.KernelRow]) -> None:
    """70B TP8 gate_up shard (3,584·2 × 8,192) at m = 2,048: 2·2048·7168·8192 = 240.5 GFLOP. Prefill path
    η_p(2048, 8) = 0.6·256/(256 + 64) = 0.48 → 240.5e9 / (989.5e12 · 0.48) = 506.4 µs (the max: prefill keeps
    the roofline); decode path η_max 0.6 → 405.1 µs against the 117.4 MB weight read's 37.6 µs, with the ridge
    loss (405.1^q + 37.6^q)^(1/q) = 405.3 µs; measured 325.3 µs (739 TFLOP/s, as efficient as the unsharded 8B
    GEMM at the same rows)."""
    flop = 2 * 2048 * 7168 * 8192
    prefill = _row(rows, "70b_tp8_gate_up bf16 m=2048", "prefill")
    decode = _row(rows, "70b_tp8_gate_up bf16 m=2048", "decode")
    assert prefill.predicted_ms * 1e3 == pytest.approx(flop / (989.5e12 * 0.48) * 1e6, rel=1e-6)
    compute_us, weights_us = flop / (989.5e12 * 0.6) * 1e6, 7168 * 8192 * 2 / (4800e9 * 0.65) * 1e6
    assert decode.predicted_ms * 1e3 == pytest.approx(_ridge_us(compute_us, weights_us), rel=1e-6)
    assert decode.predicted_ms * 1e3 == pytest.approx(405.28, abs=0.01)
    assert prefill.measured_ms == pytest.approx(0.32535)


def test_fp8_gemm_runs_at_the_measured_fraction_of_the_fp8_peak(rows: list[K.KernelRow]) -> None:
    """8B gate_up FP8 at m = 2,048: 240.5/2 ... F = 2·2048·28672·4096 = 481.0 GFLOP at 1,979 · 0.89 · 0.6 =
    1,056.8 TFLOP/s = 455.2 µs on the decode path, against the 117.4 MB FP8 weight read's 37.6 µs: with the
    ridge loss 455.3 µs; measured 380.8 µs (1,263 TFLOP/s)."""
    r = _row(rows, "8b_gate_up fp8 m=2048", "decode")
    flop = 2 * 2048 * 28672 * 4096
    compute_us, weights_us = flop / (1979e12 * 0.89 * 0.6) * 1e6, 28672 * 4096 / (4800e9 * 0.65) * 1e6
    assert r.predicted_ms * 1e3 == pytest.approx(_ridge_us(compute_us, weights_us), rel=1e-6)
    assert r.predicted_ms * 1e3 == pytest.approx(455.32, abs=0.01)
    assert r.measured_ms == pytest.approx(0.3808)


def test_attention_rows_use_the_steps_attention_terms(rows: list[K.KernelRow]) -> None:
    """Causal prefill of 8,192 tokens, 32 heads × 128: 4·S²/2·d·h = 549.8 GFLOP (the CSV's flop) at
    989.5 · η_p(8192) = 0.6·8192/8256 → 933.3 µs vs 896.4 measured; decode B = 1, H = 1,024: the KV read
    4 MiB / (4.8 TB/s · 0.65) = 1.34 µs against one kernel's 7.8 µs floor."""
    pre = _row(rows, "S=8192 causal", "prefill")
    flop = 549_755_813_888.0
    assert pre.predicted_ms * 1e3 == pytest.approx(flop / (989.5e12 * 0.6 * 8192 / (8192 + 64)) * 1e6, rel=1e-3)
    dec = _row(rows, "B=1 H=1024", "decode")
    assert dec.predicted_ms * 1e3 == pytest.approx(4_194_304 / (4800e9 * 0.65) * 1e6, rel=1e-3)
    assert dec.measured_ms == pytest.approx(0.0078)


def test_summary_groups_and_markdown(rows: list[K.KernelRow]) -> None:
    summaries = {(s.kind, s.dtype, s.regime, s.path): s for s in K.kernel_summaries(rows)}
    assert summaries[("gemm", "bf16", "memory", "decode")].rows == 20 * 7  # m = 1, 2, 4, 8, 16, 32, 64
    assert summaries[("gemm", "fp8", "compute", "prefill")].rows == 12 * 5  # m = 1,024 .. 16,384
    for s in summaries.values():
        assert s.median_abs_pct >= abs(s.median_signed_pct) - 1e-9
    text = "\n".join(K.kernel_markdown(rows))
    assert "## Kernel check" in text and "| gemm | bf16 | memory | decode | 140 |" in text
    assert K.kernel_markdown([]) == []


def test_shape_names_and_regimes() -> None:
    assert K.shape_tp("70b_tp4_down") == ("llama_3_1_70b", 4)
    assert K.shape_tp("8b_qkv") == ("llama_3_1_8b", 1)
    assert [K.gemm_regime(m) for m in (1, 64, 96, 768, 1024)] == ["memory", "memory", "ridge", "ridge", "compute"]


def test_weight_stream_is_bytes_at_the_kernel_fraction_plus_fixed_kernel_times() -> None:
    """T = W/(β·η_w·η_q) + N·τ_gemm + L·τ_layer; η_w unset → the decode MBU; monotone in the bandwidth."""
    base = eff.EfficiencyTerms(decode_mbu_frac=0.65)
    assert eff.weight_stream_s(base, 1e9, 4.8e12, 100.0) == pytest.approx(1e9 / (4.8e12 * 0.65))
    kernel = dataclasses.replace(base, weight_stream_frac=0.83, gemm_launch_s=3.6e-6, layer_kernels_s=10e-6)
    # 8B gate_up at one row: 234.88 MB / (4.8 TB/s · 0.83) + 3.6 µs = 62.56 µs (measured 62.71)
    assert eff.weight_stream_s(kernel, 234_881_024, 4.8e12, 1.0) * 1e6 == pytest.approx(62.56, abs=0.01)
    assert eff.weight_stream_s(kernel, 1e9, 4.8e12, 129.0, 32.0) == pytest.approx(
        1e9 / (4.8e12 * 0.83) + 129 * 3.6e-6 + 32 * 10e-6
    )
    assert eff.weight_stream_s(kernel, 1e9, 8e12, 129.0, 32.0) < eff.weight_stream_s(kernel, 1e9, 4.8e12, 129.0, 32.0)
    quant = dataclasses.replace(kernel, weight_read_efficiency_frac=0.5)
    assert eff.weight_stream_efficiency_frac(quant) == pytest.approx(0.415)


def test_gemm_kernels_per_pass(catalog: Catalog) -> None:
    """4 per layer + LM head; + router per MoE layer; + shared-expert pair per MoE layer where it has one."""
    assert perf.gemm_kernels_per_pass(catalog.model("llama_3_1_8b")) == 4 * 32 + 1
    assert perf.gemm_kernels_per_pass(catalog.model("mixtral_8x7b")) == 4 * 32 + 32 + 1
    ds = catalog.model("deepseek_v3")
    assert ds.moe is not None
    assert perf.gemm_kernels_per_pass(ds) == 4 * ds.layers + 3 * ds.moe.moe_layers + 1


def test_fp8_matmul_peak_is_scaled_on_hopper_only(catalog: Catalog) -> None:
    """H100/H200 FP8 GEMMs reach 0.89 of the fraction of peak that BF16 reaches (h200_kernels.csv, MAMF)."""
    fp8, bf16 = catalog.format("fp8"), catalog.format("bf16")
    assert perf.compute_peak_tflops(catalog.gpu("h200_sxm"), fp8) == pytest.approx(1979 * 0.89)
    assert perf.compute_peak_tflops(catalog.gpu("h100_sxm"), fp8) == pytest.approx(1978.9 * 0.89, rel=1e-3)
    assert perf.compute_peak_tflops(catalog.gpu("h200_sxm"), bf16) == 989.5
    b200 = catalog.gpu("b200")
    assert perf.compute_peak_tflops(b200, fp8) == b200.dense_tflops["fp8"]
    for gpu in catalog.accelerators.values():  # an FP8 GEMM is never slower than the same GEMM in BF16
        if "fp8" in gpu.dense_tflops and "bf16" in gpu.dense_tflops:
            assert perf.compute_peak_tflops(gpu, fp8) >= perf.compute_peak_tflops(gpu, bf16)


def test_report_prints_the_kernel_section_before_the_method_notes(rows: list[K.KernelRow]) -> None:
    from planner.validate.report import ValidationReport

    text = ValidationReport(rows=[], skipped=[], kernel_lines=K.kernel_markdown(rows)).to_markdown()
    assert text.index("## Kernel check") < text.index("## Method and known gaps")
    assert "| gemm 8b_gate_up bf16 m=1 | decode | 75.3 | 62.7 | +20.0 % |" in text
