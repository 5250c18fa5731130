"""A model released in a quantized format is planned in it by default, at its reference quality.

gpt-oss ships (and was trained with) MXFP4 experts, DeepSeek-V3 FP8 weights. The default quantizations
(bf16, fp8, int8, int4) left gpt-oss's MXFP4 out, so a gpt-oss-120b plan on H100 re-quantized it to INT4 at
tier 2 (planner.format_policy)."""

from __future__ import annotations

import yaml

from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.format_policy import allowed_formats, weight_quality_tier
from planner.plan import plan
from planner.scenario import parse_scenario

SCENARIO = """
name: oss
horizon_months: 12
workloads:
  - name: chat
    models: [gpt_oss_120b]
    requests_per_s: 2
    input_tokens: 1500
    output_tokens: 300
    slo: {ttft_ms: 2000, tpot_ms: 50}
    sites: [us_east]
hardware: {gpus: [h100_sxm], tp: [1, 2, 4, 8]}
procurement: [rent]
"""


def test_released_formats_are_the_models_reference_quality(catalog: Catalog) -> None:
    assert weight_quality_tier(catalog, "gpt_oss_120b", "mxfp4") == 0
    assert weight_quality_tier(catalog, "gpt_oss_120b", "int4") == 2
    assert weight_quality_tier(catalog, "deepseek_v3", "fp8") == 0
    assert weight_quality_tier(catalog, "llama_3_1_70b", "bf16") == 0
    assert weight_quality_tier(catalog, "llama_3_1_70b", "fp8") == 1


def test_the_default_adds_only_a_quantized_release(catalog: Catalog) -> None:
    data = yaml.safe_load(SCENARIO)
    (w,) = parse_scenario(data).workloads
    assert allowed_formats(catalog, w, "gpt_oss_120b") == ["bf16", "fp8", "int8", "int4", "mxfp4"]
    assert allowed_formats(catalog, w, "llama_3_1_70b") == ["bf16", "fp8", "int8", "int4"]  # released in bf16
    data["workloads"][0]["quantizations"] = ["bf16", "fp8", "int8", "int4"]  # stated: the user's policy holds
    (stated,) = parse_scenario(data).workloads
    assert allowed_formats(catalog, stated, "gpt_oss_120b") == ["bf16", "fp8", "int8", "int4"]
    table = build_candidates(catalog, parse_scenario(data))
    assert "mxfp4" not in set(table.candidates["quantization"])


def test_gpt_oss_120b_is_planned_in_mxfp4_on_one_h100(catalog: Catalog) -> None:
    result = plan(catalog, parse_scenario(yaml.safe_load(SCENARIO)), with_alternatives=False)
    assert result.status == "optimal"
    # one H100 either way (INT4 at tier 2 costs the same): the released format wins the tie on quality
    assert [(d.gpu, d.quantization, d.tp, d.replicas) for d in result.deployments] == [
        ("h100_sxm", "mxfp4", 1, 1)
    ]
