"""MXFP4 on Hopper: served weight-only, as vLLM serves gpt-oss on H100.

The catalog refused mxfp4 on every GPU without FP4 tensor cores, so gpt-oss-120b with `quantizations: [mxfp4]`
had no candidate on H100, and `planner predict --quant mxfp4 --gpu h100_sxm` was an error, while
measurements/mlenergy_vllm.csv serves it on one H100 (TP1, 2,572 tokens/s) and vllm_memory_h100.csv loads it
on one H100 (64.38 GiB of weights). Hopper keeps the 4.25-bit experts and multiplies in BF16 (Marlin / Triton
MoE kernels): the format is weight-only there (planner.performance.terms.format_as_run): its storage does
not change, its matmuls run at the BF16 peak, and the weight-only read efficiency of the GPU's family applies.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.plan import plan
from planner.scenario import parse_scenario


def test_mxfp4_is_weight_only_on_hopper_and_native_on_blackwell(catalog: Catalog) -> None:
    mxfp4 = catalog.format("mxfp4")
    on_h100 = perf.format_as_run(catalog.gpu("h100_sxm"), mxfp4)
    assert (on_h100.weight_only, on_h100.compute_format) == (True, "bf16")
    assert (on_h100.bits_per_value, on_h100.group_size_values, on_h100.scale_bytes) == (4, 32, 1)
    assert perf.format_as_run(catalog.gpu("b200"), mxfp4) is mxfp4  # FP4 tensor cores
    int4, fp8 = catalog.format("int4"), catalog.format("fp8")
    assert perf.format_as_run(catalog.gpu("h100_sxm"), int4) is int4  # weight-only already
    assert perf.format_as_run(catalog.gpu("h100_sxm"), fp8) is fp8  # FP8 tensor cores


@pytest.mark.parametrize("gpu", ["h100_sxm", "h100_pcie", "h100_nvl", "h200_sxm", "h20"])
def test_every_hopper_gpu_serves_mxfp4(catalog: Catalog, gpu: str) -> None:
    assert "mxfp4" in catalog.gpu(gpu).native_formats


def test_gpt_oss_120b_terms_on_one_h100(catalog: Catalog) -> None:
    gpu = catalog.gpu("h100_sxm")
    kwargs = {"model": catalog.model("gpt_oss_120b"), "gpu": gpu, "kv_format": catalog.format("bf16")}
    mxfp4 = perf.deployment_terms(catalog, weight_format=catalog.format("mxfp4"), **kwargs)  # type: ignore[arg-type]
    bf16 = perf.deployment_terms(catalog, weight_format=catalog.format("bf16"), **kwargs)  # type: ignore[arg-type]
    int4 = perf.deployment_terms(catalog, weight_format=catalog.format("int4"), **kwargs)  # type: ignore[arg-type]
    assert mxfp4.peak_tflops == pytest.approx(bf16.peak_tflops) == pytest.approx(989.4)  # BF16 matmuls
    assert mxfp4.efficiency == int4.efficiency  # the family's weight-only kernels, as int4 (W4A16)
    # 4.25-bit experts (4 bits + one 1-byte scale per 32), the rest in BF16: 65.19 GB, under one H100's 80 GB
    assert mxfp4.weights_bytes / 1e9 == pytest.approx(65.19, abs=0.01)
    assert bf16.weights_bytes / 1e9 > 200


def test_efficiency_terms_ask_for_the_weight_only_kernels(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planner.performance import terms

    asked: list[bool] = []
    monkeypatch.setattr(
        terms, "calibrated_efficiency", lambda _p, _g, *, weight_only: asked.append(weight_only)
    )
    for gpu, fmt in (("h100_sxm", "mxfp4"), ("b200", "mxfp4"), ("h100_sxm", "bf16"), ("h100_sxm", "int4")):
        terms.efficiency_terms(catalog, catalog.gpu(gpu), catalog.format(fmt))
    assert asked == [True, False, False, True]


def test_a_plan_that_allows_only_mxfp4_serves_gpt_oss_120b_on_one_h100(catalog: Catalog) -> None:
    scenario = yaml.safe_load(
        """
        name: oss
        horizon_months: 12
        workloads:
          - name: chat
            models: [gpt_oss_120b]
            quantizations: [mxfp4]
            requests_per_s: 4
            input_tokens: 1500
            output_tokens: 300
            slo: {ttft_ms: 2000, tpot_ms: 50}
            sites: [us_east]
        hardware: {gpus: [h100_sxm], tp: [1, 2, 4, 8]}
        procurement: [rent]
        """
    )
    result = plan(catalog, parse_scenario(scenario), with_alternatives=False)
    assert result.status == "optimal"
    assert [(d.quantization, d.tp, d.replicas) for d in result.deployments] == [("mxfp4", 1, 1)]


def test_the_catalog_names_its_hopper_mxfp4_sources() -> None:
    text = (Path(__file__).resolve().parents[2] / "catalogs" / "accelerators.yaml").read_text()
    assert "mlenergy_vllm.csv" in text and "vllm_memory_h100.csv" in text
