"""Engines catalog and physical monotonicity of the performance model over every catalog GPU pair."""

from __future__ import annotations

import itertools

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator
from planner.errors import InputError
from planner.ledgers.inference import engine_host_s


def test_engines_catalog_has_the_five_engines_with_sources(catalog: Catalog) -> None:
    assert {"vllm", "vllm_eager", "sglang", "trtllm", "llamacpp"} <= set(catalog.engines)
    for engine in catalog.engines.values():
        assert engine.source and engine.as_of
        # CUDA-graph decode replays the layers: no per-layer launch cost; eager pays one per layer
        assert (engine.host_per_layer_us == 0.0) == (engine.cuda_graphs and engine.id != "llamacpp")
    assert catalog.engine("vllm_eager").host_per_layer_us > 0
    assert catalog.engine("vllm_eager").collective_launch_us > catalog.engine("vllm").collective_launch_us


def test_engine_host_time_worked_example() -> None:
    """vLLM V1 at B = 64: 1.4 ms + 64 × 10 µs = 2.04 ms; eager 70B (80 layers) at B = 1: 3 + 4.8 + 0.02 ms."""
    assert engine_host_s(32, 64, step_ms=1.4, per_layer_us=0.0, per_sequence_us=10.0) == pytest.approx(2.04e-3)
    assert engine_host_s(80, 1, step_ms=3.0, per_layer_us=60.0, per_sequence_us=20.0) == pytest.approx(7.82e-3)


def test_unknown_engine_names_a_valid_one(catalog: Catalog) -> None:
    with pytest.raises(InputError, match="did you mean vllm"):
        perf.predict(catalog, perf.PredictRequest(model="llama_3_1_8b", gpu="h100_sxm", engine="vlm"))


def test_ideal_turns_the_engine_costs_off(catalog: Catalog) -> None:
    data = perf.predict(
        catalog, perf.PredictRequest(model="llama_3_1_8b", gpu="h100_sxm", engine="vllm_eager", ideal=True)
    ).to_json()
    assert data["breakdown"]["decode"]["overhead_ms"] == 0.0
    assert data["breakdown"]["engine"]["host_step_ms"] == 0.0


def _effective(catalog: Catalog, gpu: Accelerator) -> tuple[float, float, float]:
    """Achievable bandwidth (β·η_m, GB/s), achievable BF16 compute (Π·η_p, TFLOP/s) and memory (GB) with the
    catalog's sourced efficiencies and calibration: what 'more bandwidth and FLOPs' means for the model."""
    e = perf.efficiency_terms(catalog, gpu, catalog.format("bf16"))
    return (
        gpu.memory_bandwidth_gb_per_s * e.decode_mbu_frac,
        gpu.dense_tflops["bf16"] * e.prefill_mfu_frac,
        gpu.memory_gb,
    )


def _steps(catalog: Catalog, gpu: Accelerator) -> tuple[float, float]:
    terms = perf.deployment_terms(
        catalog, model=catalog.model("llama_3_1_8b"), gpu=gpu, weight_format=catalog.format("bf16"),
        kv_format=catalog.format("bf16"),
    )
    decode = float(perf.decode_step(terms, batch=32.0, context_tokens=2048.0).total_s)
    prefill = float(perf.prefill_step(terms, prompt_tokens=2048.0).total_s)
    return decode, prefill


def test_more_bandwidth_and_flops_are_never_slower(catalog: Catalog) -> None:
    """Over every catalog pair where one GPU has at least the other's achievable bandwidth, BF16 FLOPs and
    memory, the same work (Llama 3.1 8B BF16, TP1, decode batch 32 at 2K, a 2K prefill) is never predicted
    slower on it: no calibration parameter or prefill saturation may invert the hardware order."""
    gpus = [g for g in catalog.accelerators.values() if "bf16" in g.dense_tflops and "bf16" in g.native_formats]
    steps = {g.id: _steps(catalog, g) for g in gpus}
    eff = {g.id: _effective(catalog, g) for g in gpus}
    pairs = [
        (a, b)
        for a, b in itertools.permutations(gpus, 2)
        if all(x >= y for x, y in zip(eff[a.id], eff[b.id], strict=True)) and eff[a.id] != eff[b.id]
    ]
    assert len(pairs) > 20
    slower = [
        f"{a.id} {steps[a.id][i] * 1e3:.2f} ms > {b.id} {steps[b.id][i] * 1e3:.2f} ms ({what})"
        for a, b in pairs
        for i, what in enumerate(("decode", "prefill"))
        if steps[a.id][i] > steps[b.id][i] * (1 + 1e-9)
    ]
    assert not slower, slower
    assert steps["b200"][0] < steps["h200_sxm"][0] and steps["b200"][1] < steps["h200_sxm"][1]
