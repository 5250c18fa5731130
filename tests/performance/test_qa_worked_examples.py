"""The book's worked examples (shared/reference/worked-examples.md) through `planner predict --ideal`, term by
term: weights GB, KV-cache GB, FLOPs, bytes per step, the decode floor and the TP all-reduce, compared at the
printed precision (GB = 1e9 B, GiB = 2^30 B)."""

from __future__ import annotations

from typing import Any

import pytest

from planner.catalog import Catalog
from planner.performance import PredictRequest, predict

GIB = 2**30


def _ideal(catalog: Catalog, **kw: Any) -> dict[str, Any]:
    return predict(catalog, PredictRequest(ideal=True, **kw)).to_json()


def test_c1_9_qwen3_8b_on_rtx_pro_6000_at_2k(catalog: Catalog) -> None:
    # weight read 15.14 GB + KV 0.302 GB → 8.62 ms at 1.792 TB/s; prefill 2,048 tokens 29.69 TFLOP → 58.9 ms at
    # 503.8 TFLOP/s; decode compute 16.34 GFLOP → 0.0324 ms
    r = _ideal(catalog, model="qwen3_8b", gpu="rtx_pro_6000", input_tokens=2048, output_tokens=1)
    d = r["breakdown"]["decode"]
    assert r["weights_bytes"] == 16_381_470_720  # models.md: Qwen3-8B BF16 weights
    assert r["kv_bytes_per_token"] == 147_456
    assert d["weights_read_ms"] * 1.792e9 / 1e9 == pytest.approx(15.14, abs=0.005)
    assert r["kv_cache_gb"] == pytest.approx(0.302, abs=0.0005)
    assert r["decode_step_ms"] == pytest.approx(8.62, abs=0.005)
    assert r["prefill_tflop"] == pytest.approx(29.69, abs=0.005)
    assert r["ttft_ms"] == pytest.approx(58.9, abs=0.05)
    assert r["decode_gflop_per_step"] == pytest.approx(16.34, abs=0.005)
    assert d["compute_ms"] == pytest.approx(0.0324, abs=0.00005)
    assert r["bound"] == "memory"


def test_c2_11_and_the_8k_point_qwen3_8b(catalog: Catalog) -> None:
    # 8,192-token prefill 133.6 TFLOP; one decode step at 8,192 history 19.97 GFLOP; 16.345 GB per step → 9.12 ms
    # (book ch04 §4.7); KV of 8,192 tokens 1.125 GiB (C2.1)
    r = _ideal(catalog, model="qwen3_8b", gpu="rtx_pro_6000", input_tokens=8192, output_tokens=1)
    assert r["prefill_tflop"] == pytest.approx(133.6, abs=0.05)
    assert r["decode_gflop_per_step"] == pytest.approx(19.97, abs=0.005)
    assert r["decode_read_bytes_per_step"] / 1e9 == pytest.approx(16.345, abs=0.0005)
    assert r["decode_step_ms"] == pytest.approx(9.12, abs=0.005)
    assert 8192 * r["kv_bytes_per_token"] / GIB == pytest.approx(1.125)


@pytest.mark.parametrize(
    ("quant", "prompt", "weights_gb", "requests"),
    [("int8", 8192, 73.726, 1), ("int4", 8192, 39.500, 14), ("int4", 32768, 39.500, 3)],
)
def test_c1_7_70b_on_h100_with_quantisation(
    catalog: Catalog, quant: str, prompt: int, weights_gb: float, requests: int
) -> None:
    # 80 GB, 2 GiB reserve, 8K KV 2.5 GiB per request: 8-bit 73.726 GB → 1; 4-bit 39.500 GB → 14; 32K → 3
    r = _ideal(catalog, model="llama_3_1_70b", gpu="h100_sxm", quant=quant, input_tokens=prompt - 1, output_tokens=1)
    assert r["weights_gb"] == pytest.approx(weights_gb, abs=0.0005)
    assert r["kv_cache_gb"] * 1e9 / GIB == pytest.approx(2.5 * prompt / 8192)
    assert r["max_batch"] == requests


@pytest.mark.parametrize(
    ("tp", "per_gpu_gb", "sessions"), [(1, 102.03, 0), (2, 52.09, 2), (4, 27.12, 7), (8, 14.63, 16)]
)
def test_c8_5_qwen3_32b_at_128k_per_tp(catalog: Catalog, tp: int, per_gpu_gb: float, sessions: int) -> None:
    # one 128K session: 65.52 GB / t weights + 34.36 GB / t KV (8 KV heads) + 2 GiB; sessions on 80 GB
    r = _ideal(catalog, model="qwen3_32b", gpu="h100_sxm", tp=tp, input_tokens=131071, output_tokens=1)
    assert r["memory_per_gpu_gb"] == pytest.approx(per_gpu_gb, abs=0.005)
    assert r["max_batch"] == sessions
    assert r["fits"] is (sessions >= 1)


def test_c8_1_qwen3_235b_on_8_h100(catalog: Catalog) -> None:
    # BF16 weights 470.2 GB; KV 188 KiB/token, 8K = 1.58 GB, 0.39 GB per card (4 KV heads over 8 cards);
    # single card would need 473.9 GB; one token reads 43.1 GB + 1.58 GB → 13.3 ms on one H100, 5.79 GB per card
    # → 1.73 ms on 8
    r = _ideal(catalog, model="qwen3_235b_a22b", gpu="h100_sxm", tp=8, input_tokens=8191, output_tokens=1)
    assert r["weights_gb"] == pytest.approx(470.2, abs=0.05)
    assert r["kv_bytes_per_token"] == 188 * 1024
    assert r["kv_cache_gb"] == pytest.approx(1.58, abs=0.005)
    assert r["weights_gb"] + r["kv_cache_gb"] + r["workspace_gb"] == pytest.approx(473.9, abs=0.05)
    assert r["decode_read_bytes_per_step"] / 1e9 / 3.35e3 * 1e3 == pytest.approx(13.3, abs=0.05)
    d = r["breakdown"]["decode"]
    per_card_gb = (d["weights_read_ms"] + d["kv_read_ms"]) * 3.35e12 / 1e3 / 1e9
    assert per_card_gb == pytest.approx(5.79, abs=0.005)
    assert d["linear_ops_ms"] + d["attention_ops_ms"] == pytest.approx(1.73, abs=0.005)


def test_tp_all_reduce_terms_of_the_8_h100_decode_step(catalog: Catalog) -> None:
    # card 6/11: 94 layers × 2 all-reduces of d × 2 B = 8,192 B on an 8-rank NVLink ring (450 GB/s, α 0.822 µs):
    # 14·α = 11.508 µs start-up + 1.75 × 8,192 B / 450 GB/s = 0.0319 µs each → 188 × 11.54 µs = 2.1695 ms
    r = _ideal(catalog, model="qwen3_235b_a22b", gpu="h100_sxm", tp=8, input_tokens=8191, output_tokens=1)
    d = r["breakdown"]["decode"]
    assert d["tp_latency_ms"] == pytest.approx(188 * 14 * 0.822e-3, rel=1e-9)
    assert d["tp_comm_ms"] == pytest.approx(188 * (14 * 0.822e-3 + 1.75 * 8192 / 450e9 * 1e3), rel=1e-9)
    assert r["bound"] == "communication"
