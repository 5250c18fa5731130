"""Card 3 — inference optimisation boundaries: worked examples C3.x and properties.

Tolerances: unless stated, printed values are checked with an absolute tolerance of half a unit in
the last printed digit (``abs=0.5 * 10**-digits``).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.ledgers.inference import mbu_frac, tokens_per_s
from planner.ledgers.operators import amortization_calls
from planner.ledgers.optimizations import (
    GGUF_Q4_0_BLOCK_BYTES,
    GGUF_Q8_0_BLOCK_BYTES,
    BatchRequest,
    batching_timeline,
    bytes_per_output_token,
    chunk_causal_pairs,
    compress_min_decompress_gb_per_s,
    draft_phase_ms,
    goodput_per_s,
    gpu_s_per_request,
    itl_crossover_tokens,
    itl_line_ms,
    kv_footprint_bytes,
    kv_footprint_tokens,
    kv_pool_capacity_requests,
    kv_quant_net_saving_s,
    kv_weight_parity_batch,
    lengthen_draft_pays,
    littles_law_concurrency,
    offload_exposed_s,
    paged_slots,
    paging_waste_slots,
    pooled_ms_per_token,
    prefix_breakeven_hit_frac,
    prefix_retention_value_s,
    quantized_kv_bytes,
    reserved_slots,
    round_time_ms,
    shared_prefix_saved_slots,
    spec_acceptance_frac,
    spec_breakeven_tokens_per_round,
    spec_expected_tokens,
    spec_ms_per_token,
    step_bytes,
    step_time_lower_bound_s,
)
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB, MS_PER_S

# Qwen3-8B (models.md): KV per token and weights streamed per decode step (embedding not streamed).
QWEN3_8B_KV = 147_456
QWEN3_8B_WEIGHTS_READ = 15_136_811_008
RTX_PRO_6000_GB_PER_S = 1792.0


def _half_unit(digits: int) -> float:
    return 0.5 * 10.0**-digits


# ---------------------------------------------------------------- C3.1 block-rounded capacity


@pytest.mark.parametrize(
    ("prompt", "tokens", "mib", "requests"),
    [(2048, 2304, 324, 37), (8192, 8448, 1188, 10)],
    ids=["short-2048", "long-8192"],
)
def test_c3_1_block_rounded_capacity(prompt: int, tokens: int, mib: int, requests: int) -> None:
    # 255 further outputs after the prefill token → G = 256
    assert kv_footprint_tokens(prompt, output_tokens=256) == tokens
    footprint = kv_footprint_bytes(prompt, output_tokens=256, kv_bytes_per_token=QWEN3_8B_KV)
    assert footprint / BYTES_PER_MIB == pytest.approx(mib, abs=_half_unit(0))
    assert kv_pool_capacity_requests(12 * BYTES_PER_GIB, footprint_bytes=footprint) == requests


def test_c3_1_prefill_only_capacity() -> None:
    footprint = kv_footprint_bytes(2048, output_tokens=1, kv_bytes_per_token=QWEN3_8B_KV)
    assert kv_pool_capacity_requests(12 * BYTES_PER_GIB, footprint_bytes=footprint) == 42


# ---------------------------------------------------------------- C3.3 paging waste

LENGTHS = [9, 13, 5, 15]


def test_c3_3_paging_waste() -> None:
    assert reserved_slots(LENGTHS, max_tokens=16) == 64
    assert paged_slots(LENGTHS, page_tokens=4) == 52
    used = sum(LENGTHS)
    assert used == 42
    assert reserved_slots(LENGTHS, max_tokens=16) - used == 22
    assert sum(paging_waste_slots(n, page_tokens=4) for n in LENGTHS) == 10
    saved = shared_prefix_saved_slots(8, page_tokens=4, sharing_requests=2)
    assert paged_slots(LENGTHS, page_tokens=4) - saved == 44


# ---------------------------------------------------------------- C3.5 KV quantisation


def test_c3_5_kv_quant_net_effect() -> None:
    # The book divides by the unrounded B = 64 effective bandwidth 34.46 GB / 29.63 ms (≈ 1.163 TB/s,
    # printed "1.16 TB/s"); with exactly 1.16 TB/s the first figure would be 0.488 ms.
    effective_gb_per_s = 34.46 / 29.63e-3
    saved = 540 * BYTES_PER_MIB
    read_ms = kv_quant_net_saving_s(saved, bandwidth_gb_per_s=effective_gb_per_s, convert_s=0.0) * MS_PER_S
    assert read_ms == pytest.approx(0.487, abs=_half_unit(3))
    net_fast = kv_quant_net_saving_s(saved, bandwidth_gb_per_s=effective_gb_per_s, convert_s=0.2e-3)
    net_slow = kv_quant_net_saving_s(saved, bandwidth_gb_per_s=effective_gb_per_s, convert_s=0.8e-3)
    assert net_fast * MS_PER_S == pytest.approx(0.287, abs=_half_unit(3))
    assert net_slow * MS_PER_S == pytest.approx(-0.313, abs=_half_unit(3))


def test_c3_5_gguf_kv_sizes() -> None:
    bf16 = 8192 * QWEN3_8B_KV
    assert bf16 / BYTES_PER_MIB == pytest.approx(1152)
    assert quantized_kv_bytes(bf16, block_bytes=GGUF_Q8_0_BLOCK_BYTES) / BYTES_PER_MIB == pytest.approx(612)
    assert quantized_kv_bytes(bf16, block_bytes=GGUF_Q4_0_BLOCK_BYTES) / BYTES_PER_MIB == pytest.approx(324)
    assert 1152 - 612 == 540  # the saving used above


def test_c3_5_itl_crossover() -> None:
    bf16 = {"intercept_ms": 6.44, "slope_ms_per_token": 4.37e-5}
    fp8 = {"intercept_ms": 6.58, "slope_ms_per_token": 2.37e-5}
    crossover = itl_crossover_tokens(
        6.44, slope_a_ms_per_token=4.37e-5, intercept_b_ms=6.58, slope_b_ms_per_token=2.37e-5
    )
    assert crossover == pytest.approx(7000, rel=5e-3)
    assert itl_line_ms(2048, **bf16) == pytest.approx(6.53, abs=_half_unit(2))
    assert itl_line_ms(2048, **fp8) == pytest.approx(6.63, abs=_half_unit(2))
    assert itl_line_ms(16384, **bf16) == pytest.approx(7.16, abs=_half_unit(2))
    assert itl_line_ms(16384, **fp8) == pytest.approx(6.97, abs=_half_unit(2))


# ---------------------------------------------------------------- C3.7 speculative decoding


def test_c3_7_expected_tokens_and_time() -> None:
    low = spec_expected_tokens(0.25, draft_tokens=4)
    high = spec_expected_tokens(0.75, draft_tokens=4)
    assert low == pytest.approx(1.33, abs=_half_unit(2))
    assert high == pytest.approx(3.05, abs=_half_unit(2))
    verify_ms = 26.26 + 0.1
    assert spec_ms_per_token(verify_ms, tokens_per_round=low) == pytest.approx(19.8, abs=_half_unit(1))
    assert spec_ms_per_token(verify_ms, tokens_per_round=high) == pytest.approx(8.64, abs=_half_unit(2))


def test_c3_7_draft_model() -> None:
    serial = draft_phase_ms(3.57, draft_tokens=4)
    parallel = draft_phase_ms(3.57, draft_tokens=4, parallel=True)
    assert serial == pytest.approx(14.28)
    # the book rounds E[N] = 3.05 to 3 accepted tokens here
    assert spec_ms_per_token(26.26, tokens_per_round=3, draft_ms=serial) == pytest.approx(
        13.5, abs=_half_unit(1)
    )
    assert spec_ms_per_token(26.26, tokens_per_round=3, draft_ms=parallel) == pytest.approx(
        9.9, abs=_half_unit(1)
    )
    assert spec_ms_per_token(26.26, tokens_per_round=2, draft_ms=parallel) == pytest.approx(
        14.9, abs=_half_unit(1)
    )


def test_c3_7_index_build_breakeven() -> None:
    # 2 s index build, 17.6 ms saved per token → ≈ 114 tokens (card 7's amortisation rule)
    assert amortization_calls(2.0, saving_s_per_call=17.6e-3) == pytest.approx(114, abs=0.5)


def test_spec_rules() -> None:
    assert spec_acceptance_frac(0.3, draft_prob=0.6) == pytest.approx(0.5)
    assert spec_acceptance_frac(0.9, draft_prob=0.6) == 1.0
    # speculation pays while accepted length beats round/plain: 40.54 / 26.26 ≈ 1.544 tokens
    assert spec_breakeven_tokens_per_round(40.54, plain_ms_per_token=26.26) == pytest.approx(1.5438, rel=1e-4)
    assert lengthen_draft_pays(3.57, delta_tokens=0.4, round_ms=40.54, tokens_per_round=3.0) is True
    assert lengthen_draft_pays(3.57, delta_tokens=0.2, round_ms=40.54, tokens_per_round=3.0) is False
    # ratio of sums, not mean of ratios: (10 + 30) / (1 + 3) = 10, mean of ratios would be 10 too only
    # by accident; use an asymmetric case
    assert pooled_ms_per_token([10.0, 40.0], tokens_per_round=[1, 4]) == pytest.approx(10.0)
    assert pooled_ms_per_token([10.0, 40.0], tokens_per_round=[2, 3]) == pytest.approx(10.0)
    assert pooled_ms_per_token([20.0, 40.0], tokens_per_round=[1, 4]) == pytest.approx(12.0)


# ---------------------------------------------------------------- C3.9 batch throughput


def test_c3_9_batch_throughput() -> None:
    assert tokens_per_s(16, step_s=27.44e-3) == pytest.approx(583, abs=_half_unit(0))
    assert tokens_per_s(1, step_s=26.26e-3) == pytest.approx(38, abs=_half_unit(0))


@pytest.mark.parametrize(
    ("batch", "gb", "bound_ms", "measured_ms", "mbu_pct"),
    [
        (1, 15.44, 8.62, 26.26, 33),
        (4, 16.34, 9.12, 26.62, 34),
        (16, 19.97, 11.14, 27.44, 41),
        (64, 34.46, 19.23, 29.63, 65),
    ],
    ids=["B1", "B4", "B16", "B64"],
)
def test_measured_efficiency_table(
    batch: int, gb: float, bound_ms: float, measured_ms: float, mbu_pct: int
) -> None:
    """Book ch08 §8.2 efficiency table (measurement section of worked-examples.md)."""
    d = step_bytes(
        batch, context_tokens=2048, weight_bytes=QWEN3_8B_WEIGHTS_READ, kv_bytes_per_token=QWEN3_8B_KV
    )
    assert d / BYTES_PER_GB == pytest.approx(gb, abs=_half_unit(2))
    bound = step_time_lower_bound_s(
        batch,
        flop_per_sequence=0.0,
        peak_tflops=503.8,
        bytes_per_step=d,
        bandwidth_gb_per_s=RTX_PRO_6000_GB_PER_S,
    )
    assert bound * MS_PER_S == pytest.approx(bound_ms, abs=_half_unit(2))
    mbu = mbu_frac(d, time_s=measured_ms / MS_PER_S, bandwidth_gb_per_s=RTX_PRO_6000_GB_PER_S)
    assert mbu * 100 == pytest.approx(mbu_pct, abs=_half_unit(0))


def test_kv_weight_parity_batch_2k() -> None:
    # card 1 decision rule: KV reads overtake weight reads at B = 51 for a 2K context
    assert (
        kv_weight_parity_batch(2048, weight_bytes=QWEN3_8B_WEIGHTS_READ, kv_bytes_per_token=QWEN3_8B_KV) == 51
    )
    assert (
        kv_weight_parity_batch(8192, weight_bytes=QWEN3_8B_WEIGHTS_READ, kv_bytes_per_token=QWEN3_8B_KV) == 13
    )


def test_bytes_per_output_token() -> None:
    per_token = bytes_per_output_token(
        64, context_tokens=2048, weight_bytes=QWEN3_8B_WEIGHTS_READ, kv_bytes_per_token=QWEN3_8B_KV
    )
    total = step_bytes(
        64, context_tokens=2048, weight_bytes=QWEN3_8B_WEIGHTS_READ, kv_bytes_per_token=QWEN3_8B_KV
    )
    assert per_token == pytest.approx(total / 64)


# ---------------------------------------------------------------- fitted round-time model


def test_round_time_fit_reproduces_book_points() -> None:
    decode = round_time_ms(1, causal_pairs=chunk_causal_pairs(1, history_tokens=2048))
    assert decode == pytest.approx(26.26, abs=_half_unit(2))
    prefill = round_time_ms(2048, causal_pairs=chunk_causal_pairs(2048, history_tokens=0))
    assert prefill == pytest.approx(94.8, abs=_half_unit(1))


def test_chunk_pairs_book_example() -> None:
    assert chunk_causal_pairs(512, history_tokens=7680) == 4_063_488
    assert chunk_causal_pairs(512, history_tokens=0) == 131_328


# ---------------------------------------------------------------- C3.11 continuous batching


def _scenario() -> list[BatchRequest]:
    # A 2K request is decoding when an 8K request arrives (the schedule itself is not in the reference)
    return [BatchRequest(0.0, 2048, 7), BatchRequest(100.0, 8192, 8)]


def test_c3_11_itl_spikes() -> None:
    fixed = batching_timeline(_scenario(), policy="fixed")
    continuous = batching_timeline(_scenario(), policy="continuous")
    chunked = batching_timeline(_scenario(), policy="chunked", chunk_tokens=2048, round_token_budget=4096)
    # fixed batching never interrupts a decoding request: max ITL stays at one decode round (26 ms)
    assert fixed.max_itl_ms == pytest.approx(26, abs=0.5)
    # the whole 8K prefill lands in one round next to A's decode token: 376 ms
    assert continuous.max_itl_ms == pytest.approx(376, abs=0.5)
    # chunked prefill: the last 2,048-token chunk after 6,144 history tokens is the longest round: 133 ms
    assert chunked.max_itl_ms == pytest.approx(133, abs=0.5)
    # continuous overlaps the two requests, so it finishes earlier than fixed batching
    assert continuous.total_ms < fixed.total_ms
    # chunking keeps the same tokens and pairs but adds three rounds' fixed cost (4 chunks instead of 1)
    extra = chunked.total_ms - continuous.total_ms
    assert extra == pytest.approx(3 * 26.22, abs=1.0)


def test_batching_timeline_single_request() -> None:
    timeline = batching_timeline([BatchRequest(0.0, 2048, 3)], policy="continuous")
    prefill = round_time_ms(2048, causal_pairs=chunk_causal_pairs(2048, history_tokens=0))
    d1 = round_time_ms(1, causal_pairs=chunk_causal_pairs(1, history_tokens=2048))
    d2 = round_time_ms(1, causal_pairs=chunk_causal_pairs(1, history_tokens=2049))
    assert timeline.first_token_ms[0] == pytest.approx(prefill)
    assert timeline.total_ms == pytest.approx(prefill + d1 + d2)
    assert len(timeline.round_ms) == 3


def test_batching_timeline_idle_gap() -> None:
    timeline = batching_timeline([BatchRequest(500.0, 16, 1)], policy="fixed")
    assert timeline.total_ms == pytest.approx(500.0 + round_time_ms(16, causal_pairs=136))


# ---------------------------------------------------------------- prefix retention


def test_prefix_cache_breakeven_hit() -> None:
    """Card 3 decision rule: 4.8 % on PCIe Gen5, 10.1 % on Gen4 for a 6,144-token Qwen3-8B prefix."""
    prefix_bytes = 6144 * QWEN3_8B_KV
    # recompute at 62 % MFU of 503.8 TFLOP/s; FLOPs from the book's Qwen3-8B figures (models.md, card 2):
    # 36 layers × (385,875,968 FLOP per row + 16,384 FLOP per causal pair); head not needed
    linear_flop = 36 * 385_875_968 * 6144
    attention_flop = 36 * 16_384 * chunk_causal_pairs(6144, history_tokens=0)
    recompute_s = (linear_flop + attention_flop) / (0.62 * 503.8e12)
    for link_gb_per_s, expected in ((64.0, 0.048), (32.0, 0.101)):
        fetch_s = prefix_bytes / (link_gb_per_s * BYTES_PER_GB)
        p_star = prefix_breakeven_hit_frac(recompute_s, fetch_s=fetch_s, move_s=fetch_s)
        assert p_star == pytest.approx(expected, abs=_half_unit(3))
        assert prefix_retention_value_s(p_star, recompute_s=recompute_s, fetch_s=fetch_s, move_s=fetch_s) == (
            pytest.approx(0.0, abs=1e-12)
        )


def test_prefix_never_pays_when_fetch_slower() -> None:
    assert prefix_breakeven_hit_frac(0.1, fetch_s=0.2, move_s=0.05) == math.inf


# ---------------------------------------------------------------- other card-3 formulas


def test_compress_before_move() -> None:
    # 50 % compression over a 25 GB/s link pays only if decompression beats 50 GB/s
    assert compress_min_decompress_gb_per_s(25.0, compressed_frac=0.5) == pytest.approx(50.0)
    with pytest.raises(ValueError):
        compress_min_decompress_gb_per_s(25.0, compressed_frac=1.0)


def test_offload_hiding() -> None:
    # 1.6 GB per step over PCIe Gen5 (64 GB/s) = 25 ms: hidden behind a 26.26 ms step, exposed behind 20 ms
    assert offload_exposed_s(1.6e9, link_gb_per_s=64.0, step_s=26.26e-3) == 0.0
    assert offload_exposed_s(1.6e9, link_gb_per_s=64.0, step_s=20e-3) == pytest.approx(5e-3)


def test_littles_law_goodput_gpu_time() -> None:
    assert littles_law_concurrency(30.0, residence_s=9.0) == pytest.approx(270.0)
    assert goodput_per_s([1, 1, 0, 1], on_time=[1, 0, 1, 1], window_s=2.0) == pytest.approx(1.0)
    # 2,048 new tokens at 21,600 tok/s + 255 decode calls at 38.08 calls/s
    t = gpu_s_per_request(
        2048, output_tokens=256, prefill_tokens_per_s=21_600.0, decode_calls_per_s=1 / 26.26e-3
    )
    assert t == pytest.approx(2048 / 21_600 + 255 * 26.26e-3)


def test_invalid_inputs_raise() -> None:
    with pytest.raises(ValueError):
        paged_slots([4], page_tokens=0)
    with pytest.raises(ValueError):
        kv_footprint_tokens(10, output_tokens=0)
    with pytest.raises(ValueError):
        kv_pool_capacity_requests(1e9, footprint_bytes=0.0)
    with pytest.raises(ValueError):
        spec_expected_tokens(1.2, draft_tokens=4)
    with pytest.raises(ValueError):
        itl_crossover_tokens(1.0, slope_a_ms_per_token=1e-5, intercept_b_ms=2.0, slope_b_ms_per_token=1e-5)
    with pytest.raises(ValueError):
        batching_timeline([BatchRequest(0.0, 0, 1)], policy="continuous")


# ---------------------------------------------------------------- properties


@settings(deadline=None, max_examples=50)
@given(
    a=st.floats(min_value=0.0, max_value=1.0),
    b=st.floats(min_value=0.0, max_value=1.0),
    k=st.integers(min_value=0, max_value=12),
)
def test_expected_tokens_monotone(a: float, b: float, k: int) -> None:
    lo, hi = sorted((a, b))
    assert spec_expected_tokens(lo, draft_tokens=k) <= spec_expected_tokens(hi, draft_tokens=k) + 1e-12
    assert spec_expected_tokens(a, draft_tokens=k) <= spec_expected_tokens(a, draft_tokens=k + 1)
    assert 1.0 <= spec_expected_tokens(a, draft_tokens=k) <= k + 1 + 1e-12


@settings(deadline=None, max_examples=50)
@given(length=st.integers(min_value=0, max_value=100_000), page=st.integers(min_value=1, max_value=256))
def test_paging_waste_bounded(length: int, page: int) -> None:
    waste = paging_waste_slots(length, page_tokens=page)
    assert 0 <= waste <= page - 1
    assert (length + waste) % page == 0


@settings(deadline=None, max_examples=50)
@given(
    prompt=st.integers(min_value=0, max_value=200_000),
    out=st.integers(min_value=1, max_value=10_000),
)
def test_footprint_covers_tokens(prompt: int, out: int) -> None:
    tokens = kv_footprint_tokens(prompt, output_tokens=out)
    assert prompt + out - 1 <= tokens < prompt + out - 1 + 16


@settings(deadline=None, max_examples=50)
@given(
    b1=st.floats(min_value=1.0, max_value=512.0),
    b2=st.floats(min_value=1.0, max_value=512.0),
    ctx=st.floats(min_value=1.0, max_value=1e6),
)
def test_step_bytes_linear_in_batch(b1: float, b2: float, ctx: float) -> None:
    kw = {"context_tokens": ctx, "weight_bytes": 1e10, "kv_bytes_per_token": 1e5}
    lhs = step_bytes(b1 + b2, **kw) + 1e10
    rhs = step_bytes(b1, **kw) + step_bytes(b2, **kw)
    assert lhs == pytest.approx(rhs, rel=1e-12)
    # per-token bytes fall with batch
    lo, hi = sorted((b1, b2))
    assert bytes_per_output_token(hi, **kw) <= bytes_per_output_token(lo, **kw) * (1 + 1e-12)


@settings(deadline=None, max_examples=50)
@given(c=st.integers(min_value=1, max_value=8192), h=st.integers(min_value=0, max_value=8192))
def test_chunking_preserves_pairs(c: int, h: int) -> None:
    # splitting a chunk in two (at any point) keeps the total causal pairs
    split = c // 2
    whole = chunk_causal_pairs(c, history_tokens=h)
    parts = chunk_causal_pairs(split, history_tokens=h) + chunk_causal_pairs(
        c - split, history_tokens=h + split
    )
    assert whole == pytest.approx(parts)
