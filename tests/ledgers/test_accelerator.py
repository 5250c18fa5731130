"""Card 5 (accelerator arithmetic): worked examples C5.1, C5.3, C5.5, C5.7, C5.11 and properties.

Tolerance: unless a test says otherwise, a printed value is matched to half a unit in its last printed
digit (``printed("33.3")`` accepts 33.25..33.35). C5.9 (specialisation break-even, V* = F_0/Δc) belongs
to card 12 and is tested there.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.ledgers.accelerator import (
    attainable_tflops,
    compute_bound_rows,
    critical_batch_seqs,
    decode_intensity_flop_per_byte,
    device_a_cheaper_per_task,
    double_buffered_pipeline_s,
    hbm_bandwidth_gb_per_s,
    hbm_stack_gb_per_s,
    is_compute_bound,
    link_edge_s,
    memory_parallelism_gb_per_s,
    mfu_ceiling_frac,
    outstanding_requests_needed,
    peak_tensor_tflops,
    power_budget_pj_per_flop,
    projection_bytes,
    projection_flop,
    projection_intensity_flop_per_byte,
    quantized_storage_bytes,
    ridge_flop_per_byte,
    rom_hbm_share_ratio,
    rom_memory_time_s,
    startup_equal_payload_bytes,
    step_energy_j,
    tile_efficiency_frac,
    usd_per_token,
)
from planner.units import BYTES_PER_GB, BYTES_PER_GIB, BYTES_PER_MIB, MS_PER_S, US_PER_S


def printed(text: str) -> object:
    """pytest.approx at half a unit of the last printed digit of ``text`` (commas allowed)."""
    clean = text.replace(",", "")
    decimals = len(clean.split(".")[1]) if "." in clean else 0
    return pytest.approx(float(clean), abs=0.5 * 10.0**-decimals * (1 + 1e-9))


# Reference devices (worked-examples.md header): TFLOP/s dense BF16, GB/s.
H100 = (989.4, 3350.0)
H200_GB_PER_S = 4800.0
B200_GB_PER_S = 8000.0
M3_ULTRA_GB_PER_S = 819.0
RTX4090 = (165.2, 1008.0)
RTX5090_GB_PER_S = 1792.0


def _read_ms(n_bytes: float, gb_per_s: float) -> float:
    # Bytes / bandwidth (card 1's memory time), computed inline: this module must not import card 1.
    return n_bytes / (gb_per_s * BYTES_PER_GB) * MS_PER_S


# --- C5.1 peak derivation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sms", "clock_ghz", "flop_per_clock", "expected"),
    [
        (132, 1.83, 4096, "989.4"),  # H100 SXM BF16 dense tensor
        (132, 1.98, 128 * 2, "66.9"),  # FP32 CUDA cores, 128 FMA x 2 FLOP
        (132, 1.83, 8192, "1,978.9"),  # FP8 dense (ledgers.md card 5)
    ],
    ids=["h100_bf16", "h100_fp32", "h100_fp8"],
)
def test_c5_1_peak_tflops(sms: int, clock_ghz: float, flop_per_clock: int, expected: str) -> None:
    assert peak_tensor_tflops(sms, clock_ghz=clock_ghz, flop_per_clock_per_sm=flop_per_clock) == printed(
        expected
    )


def test_c5_1_hbm_bandwidth() -> None:
    assert hbm_bandwidth_gb_per_s(5, stack_gb_per_s=670.0) == printed("3,350")
    assert hbm_bandwidth_gb_per_s(6, stack_gb_per_s=800.0) == printed("4,800")
    assert hbm_bandwidth_gb_per_s(8, stack_gb_per_s=1000.0) == printed("8,000")  # B200, card 5
    assert hbm_stack_gb_per_s(9.6) == printed("1,229")  # HBM3E pins


def test_c5_1_h100_stack_from_pins() -> None:
    # 1,024 x 5.24 / 8 = 670.7 GB/s; the book prints 670 (rounded down), so rel 5e-3 here.
    assert hbm_stack_gb_per_s(5.24) == pytest.approx(670.0, rel=5e-3)
    assert hbm_bandwidth_gb_per_s(5, stack_gb_per_s=hbm_stack_gb_per_s(5.24)) == pytest.approx(
        3350.0, rel=5e-3
    )


# --- C5.3 roofline on RTX 4090 ---------------------------------------------------------------------


def test_c5_3_ridge() -> None:
    assert ridge_flop_per_byte(RTX4090[0], bandwidth_gb_per_s=RTX4090[1]) == printed("164")
    assert ridge_flop_per_byte(H100[0], bandwidth_gb_per_s=H100[1]) == printed("295")


@pytest.mark.parametrize(
    ("rows", "compute_us", "memory_us", "compute_bound"),
    [(1, "0.20", "33.3", False), (256, "52", "37.4", True)],
    ids=["m1", "m256"],
)
def test_c5_3_q_projection(rows: int, compute_us: str, memory_us: str, compute_bound: bool) -> None:
    peak, bw = RTX4090
    flop = projection_flop(rows, k=4096, n=4096)
    moved = projection_bytes(rows, k=4096, n=4096)
    assert flop / (peak * 1e12) * US_PER_S == printed(compute_us)
    assert moved / (bw * BYTES_PER_GB) * US_PER_S == printed(memory_us)
    intensity = projection_intensity_flop_per_byte(rows, k=4096, n=4096)
    ridge = ridge_flop_per_byte(peak, bandwidth_gb_per_s=bw)
    assert is_compute_bound(intensity, ridge_flop_per_byte=ridge) is compute_bound


def test_c5_3_rows_to_compute_bound() -> None:
    ridge = ridge_flop_per_byte(RTX4090[0], bandwidth_gb_per_s=RTX4090[1])
    rows = compute_bound_rows(ridge, hidden_size=4096)
    assert rows == printed("178.1")
    assert math.ceil(rows) == 179
    # At M* the projection sits exactly on the ridge.
    assert projection_intensity_flop_per_byte(rows, k=4096, n=4096) == pytest.approx(ridge, rel=1e-12)


def test_c5_3_intensity_limit() -> None:
    # I(M) → KN/(K + N) = 2,048 FLOP/B for the BF16 4,096 x 4,096 Q projection (card 5).
    assert projection_intensity_flop_per_byte(1e12, k=4096, n=4096) == pytest.approx(2048.0, rel=1e-6)


def test_compute_bound_rows_rejects_unreachable_ridge() -> None:
    with pytest.raises(ValueError, match="never reaches the ridge"):
        compute_bound_rows(2048.0, hidden_size=4096)


# --- C5.5 Qwen3-235B-A22B 4-bit: per-step times from the printed byte totals ------------------------


@pytest.mark.parametrize(
    ("step_gb", "gb_per_s", "expected_ms"),
    [
        (75.967, H200_GB_PER_S, "15.8"),
        (24.737, H200_GB_PER_S, "5.2"),
        (75.967, B200_GB_PER_S, "9.5"),
        (24.737, B200_GB_PER_S, "3.1"),
        (75.967, M3_ULTRA_GB_PER_S, "92.76"),
        (24.737, M3_ULTRA_GB_PER_S, "30.20"),
        (13.697, M3_ULTRA_GB_PER_S, "16.72"),
        (13.697, H200_GB_PER_S, "2.85"),
    ],
    ids=[
        "h200_dispersed",
        "h200_conc",
        "b200_dispersed",
        "b200_conc",
        "m3_dispersed",
        "m3_conc",
        "m3_one",
        "h200_one",
    ],
)
def test_c5_5_step_times(step_gb: float, gb_per_s: float, expected_ms: str) -> None:
    assert _read_ms(step_gb * BYTES_PER_GB, gb_per_s) == printed(expected_ms)


@pytest.mark.parametrize(
    ("step_gb", "gb_per_s", "batch", "expected_tok_s"),
    [
        (75.967, M3_ULTRA_GB_PER_S, 8, "86"),
        (24.737, M3_ULTRA_GB_PER_S, 8, "265"),
        (13.697, M3_ULTRA_GB_PER_S, 1, "59.8"),
        (13.697, H200_GB_PER_S, 1, "350.4"),
    ],
    ids=["m3_dispersed", "m3_conc", "m3_one", "h200_one"],
)
def test_c5_5_tokens_per_s(step_gb: float, gb_per_s: float, batch: int, expected_tok_s: str) -> None:
    assert batch / (_read_ms(step_gb * BYTES_PER_GB, gb_per_s) / MS_PER_S) == printed(expected_tok_s)


def test_c5_5_decode_is_bandwidth_bound() -> None:
    # 8 requests, ~4.5 bits per weight: I = 2B/b_W = 28 FLOP/B, far below the H200 ridge (206 FLOP/B).
    intensity = decode_intensity_flop_per_byte(8, bytes_per_weight=4.5 / 8)
    ridge = ridge_flop_per_byte(H100[0], bandwidth_gb_per_s=H200_GB_PER_S)
    assert intensity == pytest.approx(28.44, rel=1e-3)
    assert not is_compute_bound(intensity, ridge_flop_per_byte=ridge)


# --- C5.7 memory-level parallelism (Example 4-2) ---------------------------------------------------

KV_8K_BYTES = 1.125 * BYTES_PER_GIB  # Qwen3-8B, 8,192 tokens x 147,456 B


def test_c5_7_outstanding_needed() -> None:
    assert outstanding_requests_needed(RTX4090[1], transaction_bytes=128, latency_ns=500) == 3938
    assert outstanding_requests_needed(RTX5090_GB_PER_S, transaction_bytes=128, latency_ns=500) == 7000
    assert outstanding_requests_needed(RTX5090_GB_PER_S, transaction_bytes=128, latency_ns=800) == 11200


def test_c5_7_bandwidth_with_128_outstanding() -> None:
    bw = memory_parallelism_gb_per_s(
        128, transaction_bytes=128, latency_ns=500, interface_gb_per_s=RTX4090[1]
    )
    assert bw == printed("32.8")
    assert _read_ms(KV_8K_BYTES, bw) == printed("36.9")


def test_c5_7_bandwidth_with_4096_outstanding() -> None:
    bw_4090 = memory_parallelism_gb_per_s(
        4096, transaction_bytes=128, latency_ns=500, interface_gb_per_s=RTX4090[1]
    )
    assert bw_4090 == RTX4090[1]  # interface-limited
    assert _read_ms(KV_8K_BYTES, bw_4090) == printed("1.20")
    bw_5090 = memory_parallelism_gb_per_s(
        4096, transaction_bytes=128, latency_ns=500, interface_gb_per_s=RTX5090_GB_PER_S
    )
    assert bw_5090 / 1000 == printed("1.05")  # TB/s, latency-limited
    assert _read_ms(KV_8K_BYTES, bw_5090) == printed("1.15")


# --- C5.11 quantised weight storage ----------------------------------------------------------------

MATRIX_VALUES = 4096.0**2


@pytest.mark.parametrize(
    ("bits", "group", "scale_bytes", "expected_mib"),
    [(4, 32, 1, "8.5"), (4, 16, 1, "9"), (8, 32, 1, "16.5"), (16, None, 0.0, "32")],
    ids=["mxfp4_g32", "4bit_g16", "mxfp8", "bf16"],
)
def test_c5_11_storage(bits: int, group: int | None, scale_bytes: float, expected_mib: str) -> None:
    stored = quantized_storage_bytes(
        MATRIX_VALUES, bits_per_value=bits, group_size=group, scale_bytes=scale_bytes
    )
    assert stored / BYTES_PER_MIB == printed(expected_mib)


def test_c5_11_read_times() -> None:
    bf16 = quantized_storage_bytes(MATRIX_VALUES, bits_per_value=16)
    mxfp4 = quantized_storage_bytes(MATRIX_VALUES, bits_per_value=4, group_size=32, scale_bytes=1)
    assert _read_ms(bf16, RTX4090[1]) * 1e3 == printed("33.29")
    assert _read_ms(bf16, RTX5090_GB_PER_S) * 1e3 == printed("18.72")
    assert _read_ms(mxfp4, RTX5090_GB_PER_S) * 1e3 == printed("4.97")


def test_quantized_storage_needs_group_for_scales() -> None:
    with pytest.raises(ValueError, match="group_size"):
        quantized_storage_bytes(1024, bits_per_value=4, scale_bytes=1)


# --- critical batch (C1.3, stated once here) and the roofline --------------------------------------


def test_critical_batch_h100() -> None:
    assert critical_batch_seqs(1.0, peak_tflops=H100[0], bandwidth_gb_per_s=H100[1]) == printed("147.7")
    assert round(critical_batch_seqs(1.0, peak_tflops=H100[0], bandwidth_gb_per_s=H100[1])) == 148


def test_attainable_and_mfu_ceiling() -> None:
    peak, bw = H100
    assert attainable_tflops(1.0, peak_tflops=peak, bandwidth_gb_per_s=bw) == pytest.approx(3.35)
    assert attainable_tflops(1000.0, peak_tflops=peak, bandwidth_gb_per_s=bw) == peak
    # Qwen3-235B experts at B = 1: I = 1 FLOP/B → MFU ceiling 0.3 % (C8.1).
    assert mfu_ceiling_frac(1.0, peak_tflops=peak, bandwidth_gb_per_s=bw) * 100 == printed("0.3")


# --- other card 5 formulas (hand-computed values) ---------------------------------------------------


def test_double_buffered_pipeline() -> None:
    assert double_buffered_pipeline_s(1, load_s=2.0, compute_s=3.0) == 5.0
    assert double_buffered_pipeline_s(4, load_s=2.0, compute_s=3.0) == 2.0 + 3.0 + 3 * 3.0
    with pytest.raises(ValueError, match="stages"):
        double_buffered_pipeline_s(0, load_s=1.0, compute_s=1.0)


def test_link_edge() -> None:
    # 1 GB over a 400 Gb/s (50 GB/s) NIC with 3.76 µs start-up.
    assert link_edge_s(1e9, latency_us=3.76, bandwidth_gb_per_s=50.0) == pytest.approx(0.02 + 3.76e-6)
    # NVLink α = 0.822 µs at 450 GB/s: start-up equals transfer at 369.9 KB.
    assert startup_equal_payload_bytes(0.822, bandwidth_gb_per_s=450.0) == pytest.approx(369_900.0)


def test_tile_efficiency() -> None:
    assert tile_efficiency_frac(256, n=256, k=256, tile_m=128, tile_n=128, tile_k=32) == 1.0
    assert tile_efficiency_frac(100, n=100, k=100, tile_m=64, tile_n=64, tile_k=64) == pytest.approx(
        1e6 / 128**3
    )
    with pytest.raises(ValueError, match="tile_k"):
        tile_efficiency_frac(1, n=1, k=1, tile_m=1, tile_n=1, tile_k=0)


def test_energy_and_power() -> None:
    # 1 TFLOP at 0.75 pJ/FLOP + 1 GB of HBM2 at 31.76 pJ/B + 1 GB of LPDDR at 160 pJ/B.
    energy = step_energy_j(1e12, pj_per_flop=0.75, moved_bytes=[1e9, 1e9], pj_per_byte=[31.76, 160.0])
    assert energy == pytest.approx(0.75 + 0.03176 + 0.16)
    assert power_budget_pj_per_flop(700.0, peak_tflops=H100[0]) == pytest.approx(0.7075, rel=1e-4)
    assert power_budget_pj_per_flop(700.0, peak_tflops=H100[0], memory_power_w=200.0) == pytest.approx(
        500.0 / 989.4
    )
    with pytest.raises(ValueError, match="must match"):
        step_energy_j(1.0, pj_per_flop=1.0, moved_bytes=[1.0], pj_per_byte=[])


def test_cost_comparisons() -> None:
    # $3.49 per H100-hour at 50 % utilisation and 1,000 tok/s.
    assert usd_per_token(3.49, utilization_frac=0.5, tokens_per_s=1000.0) == pytest.approx(3.49 / 1.8e6)
    # A costs 2x per hour but is 3x faster: cheaper per task.
    assert device_a_cheaper_per_task(2.0, usd_per_hour_b=1.0, task_s_a=1.0, task_s_b=3.0)
    assert not device_a_cheaper_per_task(4.0, usd_per_hour_b=1.0, task_s_a=1.0, task_s_b=3.0)
    with pytest.raises(ValueError, match="utilization_frac"):
        usd_per_token(1.0, utilization_frac=0.0, tokens_per_s=1.0)


def test_rom_device() -> None:
    assert rom_hbm_share_ratio(140e9, batch=8, kv_bytes_per_seq=1e9) == pytest.approx(18.5)
    t = rom_memory_time_s(140e9, batch=8, kv_bytes_per_seq=1e9, rom_gb_per_s=100_000.0, hbm_gb_per_s=3350.0)
    assert t == pytest.approx(8e9 / 3350e9)


def test_rejects_impossible_inputs() -> None:
    with pytest.raises(ValueError, match="bandwidth_gb_per_s"):
        ridge_flop_per_byte(989.4, bandwidth_gb_per_s=0.0)
    with pytest.raises(ValueError, match="message_bytes"):
        link_edge_s(-1.0, latency_us=1.0, bandwidth_gb_per_s=1.0)


# --- properties ------------------------------------------------------------------------------------

positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(deadline=None, max_examples=50)
@given(bytes_per_weight=st.floats(0.25, 4.0), peak=positive, bw=positive)
def test_critical_batch_sits_on_the_ridge(bytes_per_weight: float, peak: float, bw: float) -> None:
    batch = critical_batch_seqs(bytes_per_weight, peak_tflops=peak, bandwidth_gb_per_s=bw)
    intensity = decode_intensity_flop_per_byte(batch, bytes_per_weight=bytes_per_weight)
    assert intensity == pytest.approx(ridge_flop_per_byte(peak, bandwidth_gb_per_s=bw), rel=1e-9)


@settings(deadline=None, max_examples=50)
@given(rows=st.floats(1.0, 1e6), k=st.integers(1, 16384), n=st.integers(1, 16384))
def test_projection_intensity_grows_with_rows_below_its_limit(rows: float, k: int, n: int) -> None:
    low = projection_intensity_flop_per_byte(rows, k=k, n=n)
    high = projection_intensity_flop_per_byte(2 * rows, k=k, n=n)
    assert low <= high <= k * n / (k + n) * (1 + 1e-12)


@settings(deadline=None, max_examples=50)
@given(i1=st.floats(0.0, 1e4), i2=st.floats(0.0, 1e4), peak=positive, bw=positive)
def test_attainable_monotone_and_capped(i1: float, i2: float, peak: float, bw: float) -> None:
    lo, hi = sorted((i1, i2))
    a_lo = attainable_tflops(lo, peak_tflops=peak, bandwidth_gb_per_s=bw)
    a_hi = attainable_tflops(hi, peak_tflops=peak, bandwidth_gb_per_s=bw)
    assert a_lo <= a_hi <= peak


@settings(deadline=None, max_examples=50)
@given(latency_us=st.floats(0.01, 100.0), bw=positive)
def test_link_edge_at_crossover_is_twice_the_startup(latency_us: float, bw: float) -> None:
    payload = startup_equal_payload_bytes(latency_us, bandwidth_gb_per_s=bw)
    edge = link_edge_s(payload, latency_us=latency_us, bandwidth_gb_per_s=bw)
    assert edge == pytest.approx(2 * latency_us / US_PER_S, rel=1e-9)


@settings(deadline=None, max_examples=50)
@given(target=st.floats(1.0, 1e4), size=st.sampled_from([32, 64, 128, 256]), latency=st.floats(50.0, 2000.0))
def test_outstanding_needed_sustains_target(target: float, size: int, latency: float) -> None:
    needed = outstanding_requests_needed(target, transaction_bytes=size, latency_ns=latency)
    sustained = memory_parallelism_gb_per_s(
        needed, transaction_bytes=size, latency_ns=latency, interface_gb_per_s=1e9
    )
    assert sustained >= target * (1 - 1e-9)
    fewer = memory_parallelism_gb_per_s(
        needed - 1, transaction_bytes=size, latency_ns=latency, interface_gb_per_s=1e9
    )
    assert fewer < target * (1 + 1e-9)


@settings(deadline=None, max_examples=50)
@given(n=st.floats(1.0, 1e12), bits=st.sampled_from([4, 8, 16]), group=st.sampled_from([16, 32, 128]))
def test_quantized_storage_linear_in_values(n: float, bits: int, group: int) -> None:
    one = quantized_storage_bytes(n, bits_per_value=bits, group_size=group, scale_bytes=1.0)
    two = quantized_storage_bytes(2 * n, bits_per_value=bits, group_size=group, scale_bytes=1.0)
    assert two == pytest.approx(2 * one, rel=1e-12)
