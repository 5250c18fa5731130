"""A replica with pipeline stages: one sequence and one prompt chunk are never split over its micro-batches.

Worked case (Llama-3.1-8B BF16 on H100, 2,048-token prompt, 256-token answer): the bare prefill is 53.1 ms at
PP 1, 2 and 4 (each stage runs its layers of the whole prompt, one stage after the other), and a lone prompt at
0.01 req/s waits for nearly nothing, so its TTFT is ≈ 53 ms at every PP; the model used to give 53.2 / 28.2 /
15.7 ms (the chunk divided over the stages as if it were p prompts)."""

from __future__ import annotations

import numpy as np
import pytest

from planner.catalog import default_catalog
from planner.performance import PredictRequest, predict
from planner.performance.steps import micro_batch

CATALOG = default_catalog()


def _at_load(**kw: object) -> dict[str, float]:
    base: dict[str, object] = dict(
        model="llama_3_1_8b", gpu="h100_sxm", input_tokens=2048, output_tokens=256, requests_per_s=0.01
    )
    base.update(kw)
    load = predict(CATALOG, PredictRequest(**base)).to_json()["at_load"]  # type: ignore[arg-type]
    assert isinstance(load, dict)
    return load


def test_micro_batch_never_splits_a_sequence() -> None:
    assert np.allclose(micro_batch(np.array([0.5, 1.0, 2.0, 4.0, 8.0]), 4), [0.5, 1.0, 1.0, 1.0, 2.0])
    assert micro_batch(8.0, 1) == 8.0  # no stages: the batch


@pytest.mark.parametrize("engine", ["vllm", "vllm_v0"])  # chunked prefill, and the prefill-first scheduler
def test_a_lone_prompt_crosses_every_stage(engine: str) -> None:
    one, two, four = (_at_load(pp=p, engine=engine) for p in (1, 2, 4))
    assert one["ttft_ms"] == pytest.approx(53.2, abs=0.3)
    # + the activations' hops between stages (2,048 tokens × 4,096 × 2 B per hop): never below PP1
    assert one["ttft_ms"] <= two["ttft_ms"] <= four["ttft_ms"] <= 1.01 * one["ttft_ms"]
    # the queue's service is the engine's step (p micro-batches); the TTFT's prefill is the chunk's pass
    assert two["prefill_chunks_ms"] == pytest.approx(two["ttft_ms"] - two["queue_wait_ms"]
                                                     - two["scheduler_wait_ms"] - two["network_ms"], rel=1e-9)
    assert two["chunk_step_ms"] < 0.6 * two["prefill_chunks_ms"]


def test_under_load_the_chunk_latency_exceeds_the_step() -> None:
    # 8 req/s on one PP2 replica: the own chunk (2,048 tokens) runs whole in one micro-batch, the step carries
    # c/2 per micro-batch; the TTFT's prefill is at least the k steps of the engine and at most p times them
    load = _at_load(pp=2, requests_per_s=8.0)
    k_steps_ms = load["chunk_steps"] * load["chunk_step_ms"]
    assert k_steps_ms < load["prefill_chunks_ms"] <= 2.0 * k_steps_ms


def test_pipeline_stages_leave_a_single_stage_replica_unchanged() -> None:
    # own_tokens only moves tokens between micro-batches: with one stage the step is the same number
    from planner.performance.optimizations import round_step
    from planner.performance.terms import deployment_terms

    bf16 = CATALOG.formats["bf16"]
    terms = deployment_terms(
        CATALOG, model=CATALOG.models["llama_3_1_8b"], gpu=CATALOG.accelerators["h100_sxm"], weight_format=bf16,
        kv_format=bf16,
    )
    step = round_step(terms, None, decode_context_tokens=2176.0, prompt_tokens=2048.0)
    plain = step(decode_batch=12.0, prefill_tokens=900.0)
    assert step(decode_batch=12.0, prefill_tokens=900.0, own_tokens=600.0) == plain


def test_the_busiest_stage_holds_its_layers_and_the_embedding() -> None:
    # Llama-3.1-70B BF16 at PP3: layers 27 / 27 / 26 (vLLM), 1.711 GB each, the 2.10 GB embedding on the first
    # stage: 27 × 1.711 + 2.10 = 48.3 GB, not 141.1 / 3 = 47.0 GB; at PP2 the halves are equal (E = H)
    from planner.ledgers.architecture import pipeline_stage_layers

    assert pipeline_stage_layers(80, 3) == [27, 27, 26]
    assert pipeline_stage_layers(80, 7) == [11, 11, 11, 12, 12, 12, 11]
    weights = {
        pp: predict(CATALOG, PredictRequest(model="llama_3_1_70b", gpu="h100_sxm", pp=pp)).to_json()["weights_per_gpu_gb"]
        for pp in (1, 2, 3, 4)
    }
    assert weights[2] == pytest.approx(weights[1] / 2, rel=1e-12)
    assert weights[3] == pytest.approx(48.31, abs=0.01)
    assert weights[4] == pytest.approx(20 * (weights[1] - 2 * 2.101) / 80 + 2.101, abs=0.01)  # 36.33 GB


def test_a_row_without_stages_reads_the_same_beside_a_staged_row() -> None:
    # the staged rows' latency is computed for the whole table: a PP1 row keeps k·T_k bit for bit, so a
    # candidate's numbers do not depend on the table it is evaluated in
    from planner.performance.load import serve_at_load
    from planner.performance.stack import stack_terms
    from planner.performance.terms import deployment_terms

    bf16 = CATALOG.formats["bf16"]
    model, gpu = CATALOG.models["llama_3_1_8b"], CATALOG.accelerators["h100_sxm"]
    one, two = (deployment_terms(CATALOG, model=model, gpu=gpu, weight_format=bf16, kv_format=bf16, pp=p) for p in (1, 2))
    kw = dict(requests_per_s=np.array([[3.0]]), input_tokens=2048.0, output_tokens=256.0, max_batch=256.0)
    alone = serve_at_load(stack_terms([one]), **kw)
    mixed = serve_at_load(stack_terms([one, two]), **{**kw, "requests_per_s": np.array([[3.0], [3.0]])})
    assert mixed.ttft_s[0, 0] == alone.ttft_s[0, 0] and mixed.prefill_latency_s[0, 0] == alone.prefill_latency_s[0, 0]
    assert mixed.prefill_latency_s[1, 0] > mixed.chunk_steps[1, 0] * mixed.chunk_step_s[1, 0]
