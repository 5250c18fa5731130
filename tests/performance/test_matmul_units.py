"""llama.cpp's 2023 dp4a prompt path (planner/performance/matmul_units.py) and the edge rows that use it."""

from __future__ import annotations

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.validate.cases import _read_csv, measurements_dir
from planner.validate.edge_builds import DP4A_ENGINE, TENSOR_CORE_ENGINE, edge_engine


def _terms(catalog: Catalog, engine: str, *, gpu: str = "a100_sxm_80gb", quant: str = "int4") -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog,
        model=catalog.model("llama_2_7b"),
        gpu=catalog.gpu(gpu),
        weight_format=catalog.format(quant),
        kv_format=catalog.format("bf16"),
        engine=engine,
    )


def test_dp4a_peaks_are_sms_times_64_times_8_ops_times_boost_clock(catalog: Catalog) -> None:
    """A100 108 SMs × 64 × 8 × 1.41 GHz = 77.97 TOPS; H100 PCIe 114 × 64 × 8 × 1.755 = 102.4; 4090 128 × 2.52."""
    assert catalog.gpu("a100_sxm_80gb").cuda_core_int8_tops == pytest.approx(108 * 64 * 8 * 1.41 / 1e3, rel=1e-3)
    assert catalog.gpu("a100_pcie_80gb").cuda_core_int8_tops == catalog.gpu("a100_sxm_80gb").cuda_core_int8_tops
    assert catalog.gpu("h100_pcie").cuda_core_int8_tops == pytest.approx(114 * 64 * 8 * 1.755 / 1e3, rel=1e-3)
    assert catalog.gpu("rtx_4090").cuda_core_int8_tops == pytest.approx(128 * 64 * 8 * 2.52 / 1e3, rel=1e-3)


def test_only_quantized_weights_on_the_2023_engine_leave_the_tensor_cores(catalog: Catalog) -> None:
    assert _terms(catalog, TENSOR_CORE_ENGINE).peak_tflops == 312.0  # int4 weight-only → BF16/FP16 tensor peak
    assert _terms(catalog, DP4A_ENGINE).peak_tflops == pytest.approx(78.0)
    assert _terms(catalog, DP4A_ENGINE, quant="bf16").peak_tflops == 312.0  # F16 weights: cuBLAS in every build
    assert catalog.engine(TENSOR_CORE_ENGINE).prompt_matmul == "tensor_cores"  # plans use today's llama.cpp


def test_a100_llama2_7b_pp512_on_dp4a_worked_example(catalog: Catalog) -> None:
    """edge_llamacpp.csv A100 80GB Llama 2 7B Q4_0, 3,443.98 tok/s → 512 / 3,443.98 = 148.67 ms.

    FLOPs: 512 × 12.952 GFLOP (2 × 6.476 B linear weights) + 0.262 GFLOP LM head (last token)
    + 16,384 FLOP per pair per layer × 32 layers × 131,328 causal pairs = 6.7005 TFLOP.
    η(512, 1) = 0.65 × 512 / (512 + 128) = 0.52: the weights' matmuls on Π_dp4a = 78.0 TOPS, the LM head's one
    row at the decode efficiency 0.65 (steps.lm_head_s), attention (fp16 queries over the fp16 cache: tensor
    cores, 312 TFLOP/s) → 163.9 ms; host 0.8 + 32 × 0.01 + 0.02 ms and the
    0.1 ms step overhead → 165.2 ms (+11 %). The tensor-core path gives 42.5 ms (−71 %).
    """
    attn = 16384 * 32 * (512 * 513 / 2)
    head = 0.262144e9
    flop = 512 * 12.952010752e9 + head + attn
    assert flop == pytest.approx(6.7005e12, rel=1e-4)
    dp4a = perf.prefill_step(_terms(catalog, DP4A_ENGINE), prompt_tokens=512)
    assert float(dp4a.compute_s) == pytest.approx(
        (flop - attn - head) / (78.0e12 * 0.52) + head / (78.0e12 * 0.65) + attn / (312.0e12 * 0.52), rel=1e-6
    )
    assert float(dp4a.overhead_s) == pytest.approx((0.1 + 0.8 + 0.32 + 0.02) * 1e-3, rel=1e-6)
    measured_ms = 512 / 3443.98 * 1e3
    assert float(dp4a.total_s) * 1e3 == pytest.approx(165.2, abs=0.1)
    assert float(dp4a.total_s) * 1e3 / measured_ms == pytest.approx(1.11, abs=0.01)
    tensor = perf.prefill_step(_terms(catalog, TENSOR_CORE_ENGINE), prompt_tokens=512)
    assert float(tensor.compute_s) == pytest.approx((flop - head) / (312.0e12 * 0.52) + head / (312.0e12 * 0.65), rel=1e-6)
    assert float(tensor.total_s) * 1e3 / measured_ms == pytest.approx(0.286, abs=0.01)


def test_dp4a_on_a_gpu_without_the_figure_names_the_field(catalog: Catalog) -> None:
    with pytest.raises(perf.UnsupportedDeployment, match="cuda_core_int8_tops"):
        _terms(catalog, DP4A_ENGINE, gpu="h100_sxm")


def test_only_undated_llama2_cuda_rows_of_xdai_take_the_2023_build() -> None:
    rows = _read_csv(measurements_dir(), "edge_llamacpp.csv")
    dp4a = {(r["device"], r["model"]) for r in rows if edge_engine(r) == DP4A_ENGINE}
    assert dp4a == {("NVIDIA A100 80GB", "Llama 2 7B"), ("NVIDIA H100 PCIe 80GB", "Llama 2 7B")}
