"""The MoE layers' routing kernels: a fixed time per step, L_moe · n_k · τ_e (planner.performance.moe.routing_kernels_s).

n_k = 4 kernels a routed-expert layer runs that a dense FFN does not (router GEMM, top-k of the softmax, the sort
of the (token, expert) pairs, the weighted sum of the k outputs) and τ_e = the engine's ``collective_launch_us``
(the floor of one small kernel: 4.4 µs with CUDA graphs, NCCL-1259; 8.5 µs without, NCCL-583). Every number
below is worked out by hand from those and the layer counts in catalogs/models.yaml.
"""

from __future__ import annotations

import dataclasses

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.performance import moe
from planner.performance.mixed_step import mixed_step
from planner.performance.steps import engine_host_time_s, host_s
from planner.performance.terms import DeploymentTerms


def _terms(catalog: Catalog, model: str, gpu: str, fmt: str, **kwargs: object) -> DeploymentTerms:
    return perf.deployment_terms(
        catalog,
        model=catalog.model(model),
        gpu=catalog.gpu(gpu),
        weight_format=catalog.format(fmt),
        kv_format=catalog.format("bf16"),
        **kwargs,  # type: ignore[arg-type]
    )


def _no_floor(terms: DeploymentTerms) -> DeploymentTerms:
    """The same deployment with τ_e = 0: at TP1 the engine launch prices nothing else (one rank: no all-reduce)."""
    return dataclasses.replace(terms, collective_launch_us=0.0)


def test_gpt_oss_20b_under_vllm_pays_24_layers_of_4_kernels(catalog: Catalog) -> None:
    terms = _terms(catalog, "gpt_oss_20b", "b200", "mxfp4")  # vLLM V1 with CUDA graphs: τ_e = 4.4 µs
    assert (terms.moe_layers, terms.collective_launch_us) == (24, 4.4)
    # 24 layers × 4 kernels × 4.4 µs = 422.4 µs
    assert moe.routing_kernels_s(terms) == pytest.approx(422.4e-6)
    assert host_s(terms, 1.0) - engine_host_time_s(terms, 1.0) == pytest.approx(422.4e-6)


def test_the_floor_adds_once_to_decode_prefill_and_mixed_steps(catalog: Catalog) -> None:
    terms = _terms(catalog, "gpt_oss_20b", "b200", "mxfp4")
    bare = _no_floor(terms)
    for batch, ctx in ((1.0, 0.0), (1.0, 32768.0), (64.0, 2048.0)):
        delta = (
            perf.decode_step(terms, batch=batch, context_tokens=ctx).total_s
            - perf.decode_step(bare, batch=batch, context_tokens=ctx).total_s
        )
        assert delta == pytest.approx(422.4e-6, rel=1e-9)
    delta = (
        perf.prefill_step(terms, prompt_tokens=2048.0).total_s
        - perf.prefill_step(bare, prompt_tokens=2048.0).total_s
    )
    assert delta == pytest.approx(422.4e-6, rel=1e-9)
    kwargs = {
        "decode_batch": 8.0,
        "decode_context_tokens": 4096.0,
        "prefill_tokens": 512.0,
        "prompt_tokens": 2048.0,
    }
    assert mixed_step(terms, **kwargs) - mixed_step(bare, **kwargs) == pytest.approx(422.4e-6, rel=1e-9)


def test_blog_intercept_worked_example(catalog: Catalog) -> None:
    """vllm_blog_fp8_kvcache.csv row 8 (gpt-oss-20b, B200, batch 1): the step gains 0.4224 ms; the Llama-3.1-8B
    rows of the same post (dense) gain nothing."""
    oss = _terms(catalog, "gpt_oss_20b", "b200", "mxfp4")
    step_ms = perf.decode_step(oss, batch=1.0, context_tokens=0.0).total_s * 1e3
    bare_ms = perf.decode_step(_no_floor(oss), batch=1.0, context_tokens=0.0).total_s * 1e3
    assert step_ms - bare_ms == pytest.approx(0.4224, abs=1e-9)
    llama = _terms(catalog, "llama_3_1_8b", "b200", "bf16")
    assert moe.routing_kernels_s(llama) == 0.0
    assert host_s(llama, 1.0) == engine_host_time_s(llama, 1.0)


def test_eager_engine_pays_its_no_graph_floor(catalog: Catalog) -> None:
    # Mixtral-8x7B (32 MoE layers) under vLLM --enforce-eager: 32 × 4 × 8.5 µs = 1,088 µs
    terms = _terms(catalog, "mixtral_8x7b", "h100_sxm", "bf16", tp=2, engine="vllm_eager")
    assert moe.routing_kernels_s(terms) == pytest.approx(1088e-6)
    # the same with CUDA graphs (vllm): 32 × 4 × 4.4 µs = 563.2 µs
    assert moe.routing_kernels_s(_terms(catalog, "mixtral_8x7b", "h100_sxm", "bf16", tp=2)) == pytest.approx(
        563.2e-6
    )


def test_every_tp_rank_and_every_stage_layer_counts_once(catalog: Catalog) -> None:
    # gpt-oss-120b: 36 MoE layers × 4 × 4.4 µs = 633.6 µs, at TP1, TP2 and TP1·PP2 alike: every GPU of a TP group
    # routes all tokens, and a token crosses all 36 layers over the stages in turn
    for kwargs in ({}, {"tp": 2}, {"pp": 2}):
        terms = _terms(catalog, "gpt_oss_120b", "h100_sxm", "mxfp4", **kwargs)
        assert moe.routing_kernels_s(terms) == pytest.approx(633.6e-6)
    staged = _terms(catalog, "gpt_oss_120b", "h100_sxm", "mxfp4", pp=2)
    bare = dataclasses.replace(staged, collective_launch_us=0.0)
    delta = (
        perf.decode_step(staged, batch=4.0, context_tokens=1024.0).total_s
        - perf.decode_step(bare, batch=4.0, context_tokens=1024.0).total_s
    )
    assert delta == pytest.approx(633.6e-6, rel=1e-9)


def test_ideal_terms_have_no_floor(catalog: Catalog) -> None:
    assert moe.routing_kernels_s(_terms(catalog, "gpt_oss_20b", "b200", "mxfp4", ideal=True)) == 0.0


def test_floor_is_the_same_on_every_gpu_so_faster_memory_stays_faster(catalog: Catalog) -> None:
    h100 = _terms(catalog, "gpt_oss_20b", "h100_sxm", "mxfp4")
    b200 = _terms(catalog, "gpt_oss_20b", "b200", "mxfp4")
    assert moe.routing_kernels_s(h100) == moe.routing_kernels_s(b200) == pytest.approx(422.4e-6)
    for batch in (1.0, 16.0, 256.0):
        fast = perf.decode_step(b200, batch=batch, context_tokens=2048.0).total_s
        slow = perf.decode_step(h100, batch=batch, context_tokens=2048.0).total_s
        assert fast <= slow


def test_explain_reports_the_floor(catalog: Catalog) -> None:
    terms = _terms(catalog, "gpt_oss_20b", "b200", "mxfp4")
    assert moe.explain_terms(terms, tokens=1.0)["routing_kernels_ms"] == pytest.approx(0.4224)
