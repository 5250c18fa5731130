"""Card 1/2 worked examples on the catalog's model records (C1.7, C1.9, C2.1, C2.3, C2.5, C2.7, C2.9, C2.11)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog import Catalog
from planner.ledgers import architecture as arch
from planner.ledgers import inference as inf
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB


def test_qwen3_8b_reference_figures(catalog: Catalog) -> None:
    model, bf16 = catalog.model("qwen3_8b"), catalog.format("bf16")
    assert arch.params_total(model) == 8_190_735_360
    assert arch.weights_bytes(model, bf16) == 16_381_470_720
    assert arch.weights_read_bytes_per_step(model, bf16) == 15_136_811_008
    assert arch.kv_bytes_per_token(model) == 147_456
    # per-layer projection / FFN parameters (models.md §2)
    assert arch.attention_params_per_layer(model) - 2 * model.head_dim == 41_943_040
    assert arch.swiglu_ffn_params(model.hidden_size, ffn_size=model.ffn_size) == 150_994_944


def test_c2_1_kv_per_token(catalog: Catalog) -> None:
    assert arch.kv_bytes_per_token(catalog.model("qwen3_8b")) * 8192 / BYTES_PER_GIB == pytest.approx(1.125)
    assert arch.kv_bytes_per_token(catalog.model("qwen3_32b")) == 262_144
    assert arch.kv_bytes_per_token(catalog.model("qwen3_235b_a22b")) == 192_512
    assert arch.kv_bytes_per_token(catalog.model("qwen3_30b_a3b")) == 98_304


def test_c2_5_mla_latent(catalog: Catalog) -> None:
    ds = catalog.model("deepseek_v3")
    assert ds.attention_kind == "mla"
    assert arch.kv_bytes_per_token(ds) == 70_272
    assert arch.kv_bytes_per_token(ds) * 8192 / BYTES_PER_MIB == pytest.approx(549, abs=0.5)
    ratio = arch.kv_bytes_per_token(ds) / arch.kv_bytes_per_token(catalog.model("qwen3_8b"))
    assert ratio == pytest.approx(0.48, abs=0.005)


def test_c2_3_cumulative_decode_reads(catalog: Catalog) -> None:
    c_kv = arch.kv_bytes_per_token(catalog.model("qwen3_8b"))
    n_d, history = 1024, 8192
    token_reads = n_d * history + n_d * (n_d - 1) // 2
    assert token_reads == 8_912_384
    assert token_reads * c_kv / BYTES_PER_GIB == pytest.approx(1224, abs=0.5)
    assert arch.kv_cache_bytes(
        catalog.model("qwen3_8b"), context_tokens=history + n_d
    ) / BYTES_PER_GIB == pytest.approx(1.27, abs=0.005)


def test_c2_7_expert_union() -> None:
    # Qwen3.6: 256 experts, top-8, B = 64 → 512 dispatches; uniform routing touches ≈ all 256
    assert arch.expected_experts_touched(64, experts=256, experts_per_token=8) == pytest.approx(
        256 * (1 - (1 - 8 / 256) ** 64)
    )
    assert arch.expected_experts_touched(64, experts=256, experts_per_token=8) > 220
    assert arch.expected_experts_touched(1, experts=256, experts_per_token=8) == pytest.approx(8)


def test_c2_9_granularity_invariance(catalog: Catalog) -> None:
    model = catalog.model("qwen3_235b_a22b")
    # 128 experts × 1,536 top-8 vs 64 × 3,072 top-4: per-token expert FLOPs 6·k·d·f equal, 16 tokens, 94 layers
    flop_a = 16 * 94 * 6 * 8 * model.hidden_size * 1536
    flop_b = 16 * 94 * 6 * 4 * model.hidden_size * 3072
    assert flop_a == flop_b
    assert flop_a / 1e9 == pytest.approx(454, abs=0.5)
    assert 2 * 8 * arch.expert_params(model) == 6 * 8 * model.hidden_size * 1536


def test_c2_11_prefill_and_decode_flops(catalog: Catalog) -> None:
    model = catalog.model("qwen3_8b")
    assert arch.prefill_flop(model, prompt_tokens=8192) / 1e12 == pytest.approx(133.6, abs=0.05)
    assert arch.decode_flop_per_step(model, context_tokens=8192) / 1e9 == pytest.approx(19.97, abs=0.005)
    assert arch.linear_flop_per_token(model) / 1e9 == pytest.approx(13.89, abs=0.005)
    assert arch.lm_head_flop_per_token(model) / 1e9 == pytest.approx(1.245, abs=0.0005)


def test_c1_9_qwen3_8b_on_rtx_pro_6000(catalog: Catalog) -> None:
    model, bf16 = catalog.model("qwen3_8b"), catalog.format("bf16")
    read = arch.decode_read_bytes_per_step(model, bf16, batch=1, context_tokens=2048, kv_bytes_per_value=2.0)
    assert read / BYTES_PER_GB == pytest.approx(15.44, abs=0.005)
    assert inf.memory_time_s(read, bandwidth_gb_per_s=1792) * 1e3 == pytest.approx(8.62, abs=0.005)
    prefill = arch.prefill_flop(model, prompt_tokens=2048)
    assert prefill / 1e12 == pytest.approx(29.69, abs=0.005)
    assert inf.compute_time_s(prefill, peak_tflops=503.8) * 1e3 == pytest.approx(58.9, abs=0.05)
    decode = arch.decode_flop_per_step(model, context_tokens=2048)
    assert decode / 1e9 == pytest.approx(16.34, abs=0.005)
    assert inf.compute_time_s(decode, peak_tflops=503.8) * 1e3 == pytest.approx(0.0324, abs=0.00005)
    assert inf.mbu_frac(read, time_s=26.5e-3, bandwidth_gb_per_s=1792) == pytest.approx(0.33, abs=0.005)


def test_c1_7_seventy_b_quantized_on_h100(catalog: Catalog) -> None:
    # The book's R1-Distill-Llama-70B has the Llama-3.x-70B shape (70,553,706,496 parameters).
    model = catalog.model("llama_3_1_70b")
    assert arch.params_total(model) == 70_553_706_496
    int8, int4 = catalog.format("int8"), catalog.format("int4")
    w8, w4 = arch.weights_bytes(model, int8), arch.weights_bytes(model, int4)
    assert w8 / BYTES_PER_GB == pytest.approx(73.726, abs=0.0005)
    assert w4 / BYTES_PER_GB == pytest.approx(39.500, abs=0.0006)
    capacity, reserve = 80 * BYTES_PER_GB, 2 * BYTES_PER_GIB
    kv_8k = 2.5 * BYTES_PER_GIB
    assert (
        inf.max_concurrent_requests(
            capacity, weights_bytes=w8, workspace_bytes=reserve, state_bytes_per_request=kv_8k
        )
        == 1
    )
    assert (
        inf.max_concurrent_requests(
            capacity, weights_bytes=w4, workspace_bytes=reserve, state_bytes_per_request=kv_8k
        )
        == 14
    )
    assert (
        inf.max_concurrent_requests(
            capacity, weights_bytes=w4, workspace_bytes=reserve, state_bytes_per_request=4 * kv_8k
        )
        == 3
    )
    assert arch.kv_bytes_per_token(model) * 8192 == kv_8k


def test_c1_1_decode_floor() -> None:
    t = inf.memory_time_s(70e9, bandwidth_gb_per_s=3350)
    assert t * 1e3 == pytest.approx(20.90, abs=0.005)
    assert inf.compute_time_s(2 * 70e9, peak_tflops=989.4) * 1e3 == pytest.approx(0.1415, abs=0.00005)
    assert inf.step_lower_bound_s(
        2 * 70e9, n_bytes=70e9, peak_tflops=2 * 989.4, bandwidth_gb_per_s=3350
    ) == pytest.approx(t)
    assert inf.memory_time_s(70e9, bandwidth_gb_per_s=6700) * 1e3 == pytest.approx(10.45, abs=0.005)


def test_c1_11_cost_per_success() -> None:
    assert inf.cost_per_success(1.0, success_frac=0.5) == pytest.approx(2.0)
    assert inf.cost_per_success(2.0, success_frac=0.8) == pytest.approx(2.5)
    assert pytest.approx(1.25) == 2 * 0.5 / 0.8
    assert not inf.option_beats(2.0, success_ratio=0.8 / 0.5)


def test_kv_overtakes_weights(catalog: Catalog) -> None:
    model = catalog.model("qwen3_8b")
    r_w = arch.weights_read_bytes_per_step(model, catalog.format("bf16"))
    assert round(inf.kv_overtakes_weights_batch(r_w, kv_bytes_per_token=147_456, context_tokens=8192)) == 13
    assert round(inf.kv_overtakes_weights_batch(r_w, kv_bytes_per_token=147_456, context_tokens=2048)) == 50


def test_attention_kinds_and_ratios(catalog: Catalog) -> None:
    assert catalog.model("llama_2_7b").attention_kind == "mha"
    assert catalog.model("llama_3_1_8b").attention_kind == "gqa"
    mha, gqa = catalog.model("llama_2_7b"), catalog.model("llama_3_1_8b")
    # same layers, heads and head dim: KV scales with n_KV (32 vs 8 → 4×)
    assert arch.kv_bytes_per_token(mha) / arch.kv_bytes_per_token(gqa) == pytest.approx(
        mha.kv_heads / gqa.kv_heads
    )


def test_derived_params_match_published(catalog: Catalog) -> None:
    for model in catalog.models.values():
        derived = arch.params_total(model) / 1e9
        assert derived == pytest.approx(model.params_published_b, rel=0.03), model.id


def test_percentile_nearest_rank() -> None:
    samples = [float(x) for x in range(1, 21)]
    assert inf.percentile_nearest_rank(samples, percentile=95) == 19.0
    assert inf.percentile_nearest_rank(samples, percentile=100) == 20.0


@settings(deadline=None, max_examples=50)
@given(
    batch=st.integers(min_value=1, max_value=512),
    context=st.integers(min_value=1, max_value=131072),
)
def test_decode_bytes_and_flops_monotone(catalog: Catalog, batch: int, context: int) -> None:
    model, fmt = catalog.model("mixtral_8x7b"), catalog.format("bf16")
    base = arch.decode_read_bytes_per_step(
        model, fmt, batch=batch, context_tokens=context, kv_bytes_per_value=2
    )
    assert (
        arch.decode_read_bytes_per_step(
            model, fmt, batch=batch + 1, context_tokens=context, kv_bytes_per_value=2
        )
        > base
    )
    assert (
        arch.decode_read_bytes_per_step(
            model, fmt, batch=batch, context_tokens=context + 1, kv_bytes_per_value=2
        )
        > base
    )
    assert arch.decode_flop_per_step(
        model, batch=batch + 1, context_tokens=context
    ) > arch.decode_flop_per_step(model, batch=batch, context_tokens=context)
    # the expert union never exceeds all experts, so reads stay below "all weights + KV"
    assert base <= arch.weights_bytes(model, fmt) + batch * arch.kv_cache_bytes(model, context_tokens=context)


@settings(deadline=None, max_examples=50)
@given(gib=st.floats(min_value=0.001, max_value=1e6))
def test_unit_round_trips(gib: float) -> None:
    from planner import units

    assert units.bytes_to_gib(units.gib_to_bytes(gib)) == pytest.approx(gib)
    assert units.bytes_to_gb(units.gib_to_bytes(gib)) == pytest.approx(gib * 2**30 / 1e9)
