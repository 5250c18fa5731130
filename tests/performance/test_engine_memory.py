"""The engine's memory account: KV room = k·(u·M − W − A) (planner/performance/memory.py kv_room_bytes), the
one formula plans, `planner predict` and `planner validate-model` use."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from planner import performance as perf
from planner.catalog import default_catalog
from planner.cli.main import app
from planner.units import BYTES_PER_GIB

CATALOG = default_catalog()
WORKSPACE_BYTES = 2.0 * BYTES_PER_GIB


def _terms(model: str, gpu: str, quant: str, *, tp: int = 1, engine: str = "vllm", ideal: bool = False) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        CATALOG,
        model=CATALOG.model(model),
        gpu=CATALOG.gpu(gpu),
        weight_format=CATALOG.format(quant),
        kv_format=CATALOG.format("fp8" if quant == "fp8" else "bf16"),
        tp=tp,
        engine=engine,
        ideal=ideal,
    )


def test_vllm_keeps_a_tenth_of_the_gpu_out_of_its_kv_cache() -> None:
    """Worked example, Llama-3.1-8B BF16 on one H100 (80 GB) under vLLM (gpu_memory_utilization 0.9):
    0.9 × 80 GB − 16.06 GB of weights − 2 GiB = 53.79 GB = 50.10 GiB (vLLM reported 51.38 GiB on 79.18 GiB,
    shared/reference/measurements/vllm_memory_h100.csv)."""
    t = _terms("llama_3_1_8b", "h100_sxm", "bf16")
    weights = float(perf.weights_bytes_per_gpu(t))
    room = float(perf.kv_room_bytes(t, workspace_bytes=WORKSPACE_BYTES))
    assert room == pytest.approx(0.9 * 80e9 - weights - WORKSPACE_BYTES)
    assert room / BYTES_PER_GIB == pytest.approx(50.10, abs=0.01)
    assert float(perf.engine_reserve_bytes(t, workspace_bytes=WORKSPACE_BYTES)) == pytest.approx(8e9)


def test_trtllm_gives_its_cache_nine_tenths_of_the_free_memory() -> None:
    """TensorRT-LLM's free_gpu_memory_fraction 0.9: room = 0.9 × (80 GB − W − 2 GiB)."""
    t = _terms("llama_3_1_8b", "h100_sxm", "bf16", engine="trtllm")
    free = 80e9 - float(perf.weights_bytes_per_gpu(t)) - WORKSPACE_BYTES
    assert float(perf.kv_room_bytes(t, workspace_bytes=WORKSPACE_BYTES)) == pytest.approx(0.9 * free)
    assert float(perf.engine_reserve_bytes(t, workspace_bytes=WORKSPACE_BYTES)) == pytest.approx(0.1 * free)


def test_a_70b_fp8_model_does_not_fit_one_h100_under_vllm_but_does_with_the_whole_card() -> None:
    """vLLM fails to load Llama-3.3-70B-FP8 on one H100 ('no room left for KV cache', vllm_memory_h100.csv):
    the 0.9 share less 70.6 GB of weights and 2 GiB is negative. An engine that claims the whole card
    (llama.cpp, or --ideal) keeps about 5 GB, and the old account (M − W − A) said it fits."""
    vllm = _terms("llama_3_1_70b", "h100_sxm", "fp8")
    assert float(perf.kv_room_bytes(vllm, workspace_bytes=WORKSPACE_BYTES)) < 0
    assert float(perf.max_batch(vllm, context_tokens=2304.0, workspace_bytes=WORKSPACE_BYTES)) == 0.0
    whole = _terms("llama_3_1_70b", "h100_sxm", "fp8", ideal=True)
    assert float(perf.max_batch(whole, context_tokens=2304.0, workspace_bytes=WORKSPACE_BYTES)) > 0


@settings(max_examples=60, deadline=None)
@given(
    engine=st.sampled_from(sorted(CATALOG.engines)),
    model=st.sampled_from(["llama_3_1_8b", "qwen3_8b", "llama_3_1_70b", "mixtral_8x7b"]),
    gpu=st.sampled_from(["h100_sxm", "a100_sxm_80gb", "l40s", "mi300x", "h200_sxm"]),
    context_tokens=st.integers(min_value=64, max_value=32768),
)
def test_a_batch_fits_the_gpu_exactly_up_to_max_batch(engine: str, model: str, gpu: str, context_tokens: int) -> None:
    """memory_per_gpu_bytes (weights + KV + workspace + engine reserve) ≤ the GPU's memory exactly for
    batches up to max_batch, under every engine: the displayed memory and the batch limit are one account."""
    quant = "bf16" if gpu == "a100_sxm_80gb" else "fp8"
    t = _terms(model, gpu, quant, tp=2 if model == "llama_3_1_70b" else 1, engine=engine)
    limit = float(perf.max_batch(t, context_tokens=float(context_tokens), workspace_bytes=WORKSPACE_BYTES))
    capacity = float(t.memory_capacity_bytes)

    def used(batch: float) -> float:
        return float(perf.memory_per_gpu_bytes(t, batch=batch, context_tokens=float(context_tokens),
                                               workspace_bytes=WORKSPACE_BYTES))

    if limit >= 1:
        assert used(limit) <= capacity * (1 + 1e-12)
    assert used(limit + 1) > capacity


def test_a_larger_memory_share_never_holds_fewer_sequences() -> None:
    """Monotone in the engine's share u and KV fraction k."""
    import dataclasses

    t = _terms("llama_3_1_8b", "l40s", "fp8")
    shares = np.array([0.5, 0.7, 0.9, 1.0])
    batches = [
        float(perf.max_batch(dataclasses.replace(t, memory_claim_frac=u), context_tokens=4096.0,
                             workspace_bytes=WORKSPACE_BYTES))
        for u in shares
    ]
    assert batches == sorted(batches) and batches[0] < batches[-1]


def test_predict_names_the_engine_reserve_when_a_model_does_not_fit() -> None:
    """`planner predict` of the 70B FP8 model on one H100: exit 3, and the message counts the 8 GB vLLM
    holds back; its JSON shows the reserve and the GPU's memory."""
    runner = CliRunner()
    args = ["predict", "--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--quant", "fp8", "--kv-dtype", "fp8"]
    result = runner.invoke(app, args)
    assert result.exit_code == 3
    assert "with the 8.0 GB the vllm engine holds back" in result.output
    assert "more than the GPU's 80 GB" in result.output
    ok = runner.invoke(app, ["predict", "--model", "llama_3_1_8b", "--gpu", "h100_sxm", "--json"])
    data = json.loads(ok.stdout)
    assert data["engine_reserve_gb"] == pytest.approx(8.0)
    assert data["gpu_memory_gb"] == pytest.approx(80.0)
    assert data["memory_per_gpu_gb"] == pytest.approx(
        data["weights_per_gpu_gb"] + data["kv_cache_gb"] + data["workspace_gb"] + data["engine_reserve_gb"]
    )
    assert data["max_batch"] == int((0.9 * 80e9 - 16.06e9 - 2 * BYTES_PER_GIB) // (2304 * 131072))


def test_validation_checks_the_kv_room_against_vllm() -> None:
    """make validate compares the KV room with what vLLM reported (vllm_memory_h100.csv) and lists the
    row that failed to load with the model's verdict."""
    from planner.validate.cases import _Builder, _read_csv, measurements_dir
    from planner.validate.sources_memory import _vllm_memory

    b = _Builder(CATALOG)
    _vllm_memory(b, _read_csv(measurements_dir(), "vllm_memory_h100.csv"))
    rooms = {c.label: (c.fixed_prediction, c.measured) for c in b.cases if "KV cache room" in c.label}
    assert len(rooms) == 5
    predicted, measured = rooms["Llama-3.1-8B H100 TP1 KV cache room"]
    assert measured == 51.38 and predicted == pytest.approx(50.10, abs=0.01)
    errors = sorted(abs(p - m) / m for p, m in rooms.values() if p is not None)
    assert errors[2] < 0.05  # median within 5 %
    failed = [s for s in b.skipped if s.label == "Llama-3.3-70B-FP8 H100 TP1 KV cache room"]
    assert len(failed) == 1 and "does not fit either" in failed[0].reason


def test_a_scenario_nothing_fits_is_infeasible_with_the_engine_share_named(tmp_path: Path) -> None:
    """Llama-3.1-70B FP8 on H100 at TP1 only: no configuration holds a sequence. The plan exits 3 and says
    why (it crashed with an internal AssertionError when every row was out of memory: the scheduler was asked
    about an empty table)."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(
        "name: one-h100-70b\nhorizon_months: 12\nworkloads:\n  - name: chat\n    models: [llama_3_1_70b]\n"
        "    quantizations: [fp8]\n    requests_per_s: 1\n    input_tokens: 1000\n    output_tokens: 200\n"
        "    slo: {ttft_ms: 2000, tpot_ms: 60}\nhardware: {gpus: [h100_sxm], tp: [1], pp: [1]}\n"
    )
    result = CliRunner().invoke(app, ["plan", str(scenario)])
    assert result.exit_code == 3, result.output
    assert "does not fit in memory at any allowed TP/PP and format" in result.output
    assert "exceed 0.9 of GPU memory (the vllm engine's share)" in result.output


def test_the_scheduler_answers_an_empty_table() -> None:
    """serve_at_load on zero rows returns zero rows (the co-located curves of a table where nothing fits)."""
    from planner.performance.load import serve_at_load
    from planner.performance.stack import stack_terms, take_terms

    t = take_terms(stack_terms([_terms("llama_3_1_8b", "h100_sxm", "bf16")]), np.array([], dtype=np.int64))
    empty = np.zeros((0, 1))
    pt = serve_at_load(t, requests_per_s=1.0, input_tokens=empty, output_tokens=empty, max_batch=empty + 1)
    assert np.asarray(pt.tpot_s).size == 0
