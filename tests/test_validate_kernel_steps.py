"""Compiled decode step of the kernel check (planner/validate/kernel_steps.py) and the KV-stream efficiency
(ledgers.efficiency.kv_stream_efficiency_frac) it anchors."""

from __future__ import annotations

import dataclasses
import math

import pytest

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.ledgers import efficiency as eff
from planner.performance.mixed_step import mixed_step
from planner.validate import kernel_steps as S

BETA = 4800e9  # H200 SXM HBM3e, B/s
WEIGHTS_READ = 15_009_849_344  # Llama-3.1-8B bf16 without the embedding table (its B rows are gathered, not streamed)
KV_PER_TOKEN = 4096 * 32  # 8 KV heads × 128 × 2 (K, V) × 2 B per layer, 32 layers
COMPUTE = 989.5e12 * 0.6  # H200 bf16 dense peak × the decode GEMMs' η_max, FLOP/s
LINEAR_FLOP_PER_TOKEN = 2 * (32 * 218_103_808 + 4096 * 128_256)  # 2 per weight of the 32 layers' GEMMs + LM head
ATTENTION_FLOP_PER_TOKEN = 4 * 128 * 32 * 32  # 4·d_head·heads per (query, key) pair per layer, 32 layers
Q = 2.85  # ledgers.efficiency.OPERATOR_OVERLAP_EXPONENT


def _ridge(compute_s: float, memory_s: float) -> float:
    """One operator group's time with the ridge loss, (T_c^q + T_m^q)^(1/q), s."""
    return float((compute_s**Q + memory_s**Q) ** (1 / Q))


def _linear_s(batch: int, weights_s: float) -> float:
    """The step's GEMMs: B·F/(Π·η_max) against ``weights_s``, F = 15.01 GFLOP per token."""
    return _ridge(batch * LINEAR_FLOP_PER_TOKEN / COMPUTE, weights_s)


def _attention_s(batch: int, context: int, kv_frac: float = 0.65) -> float:
    """The step's attention: B·H·4·d·h·L FLOPs against B·H KV tokens at ``kv_frac`` of β."""
    return _ridge(batch * context * ATTENTION_FLOP_PER_TOKEN / COMPUTE, batch * context * KV_PER_TOKEN / (BETA * kv_frac))


@pytest.fixture(scope="module")
def rows(catalog: Catalog) -> list[S.StepRow]:
    return S.step_rows(catalog)


def test_every_compiled_step_row_is_predicted(rows: list[S.StepRow]) -> None:
    assert [(r.batch, r.context_tokens) for r in rows] == [(1, 512), (1, 8192), (16, 2048), (64, 2048), (256, 1024)]
    assert [r.measured_ms for r in rows] == pytest.approx([4.85382, 5.08669, 5.84074, 8.9983, 15.00048])
    assert all(r.layers == 32 for r in rows)


def test_worked_example_batch_1_context_512(rows: list[S.StepRow]) -> None:
    """B = 1, H = 512: weights 15.01 GB / (4.8 TB/s · 0.65) = 4.8108 ms + KV 512·131,072 B / (4.8 TB/s · 0.65)
    = 21.5 µs → 4.832 ms (host 1.4 ms + 10 µs and the 0.1 ms step overhead excluded) vs 4.854 measured (−0.4 %);
    the ridge loss against the GEMMs' 25.3 µs and the attention's 0.45 µs of compute adds 0.7 ns.
    Kernel-level GEMMs: 15.01 GB / (4.8 TB/s · 0.83) + 129 · 3.6 µs = 4.232 ms; implied per layer
    (4.854 − 4.232 − 0.0215) / 32 = 18.8 µs."""
    r = rows[0]
    kv = 512 * KV_PER_TOKEN / (BETA * 0.65)
    assert r.predicted_ms == pytest.approx((_linear_s(1, WEIGHTS_READ / (BETA * 0.65)) + _attention_s(1, 512)) * 1e3,
                                           rel=1e-9)
    assert r.predicted_ms == pytest.approx((WEIGHTS_READ / (BETA * 0.65) + kv) * 1e3, rel=2e-7)
    assert r.predicted_ms == pytest.approx(4.832, abs=5e-4)
    assert r.error_pct == pytest.approx(-0.44, abs=0.01)
    kernel_weights_s = WEIGHTS_READ / (BETA * 0.83) + 129 * 3.6e-6
    assert r.gemm_ms == pytest.approx(_linear_s(1, kernel_weights_s) * 1e3, rel=1e-9)
    assert r.gemm_ms == pytest.approx(kernel_weights_s * 1e3, rel=2e-7)
    assert r.attention_ms == pytest.approx(_attention_s(1, 512) * 1e3, rel=1e-9)
    assert r.attention_ms == pytest.approx(kv * 1e3, rel=1e-5)
    assert r.implied_layer_us == pytest.approx(18.76, abs=0.01)


def test_large_batch_steps_are_predicted_slow_by_the_kv_read_at_the_decode_mbu(rows: list[S.StepRow]) -> None:
    """B = 64, H = 2,048: 17.18 GB of KV at 0.65 of 4.8 TB/s = 5.51 ms of the 10.39 ms predicted vs 9.00 ms
    measured (+15.5 %; the GEMMs' 1.62 ms of compute against their 4.33 ms weight stream add 0.07 ms of ridge
    loss); the decomposition then leaves a negative per-layer time (−26 µs)."""
    r = rows[3]
    assert r.attention_ms == pytest.approx(_attention_s(64, 2048) * 1e3, rel=1e-9)
    assert r.attention_ms == pytest.approx(64 * 2048 * KV_PER_TOKEN / (BETA * 0.65) * 1e3, rel=1e-5)
    assert r.error_pct == pytest.approx(15.49, abs=0.05)
    assert r.implied_layer_us == pytest.approx(-26.06, abs=0.01)
    assert S.implied_layer_kernels_us(rows) == pytest.approx(7.20, abs=0.01)  # median of 18.8 16.0 7.2 −26 −97


def test_implied_layer_time_closes_the_step(catalog: Catalog, rows: list[S.StepRow]) -> None:
    """The kernel-level step with τ_layer = a row's implied time reproduces that row's measured time (rows with
    a positive implied time; at B = 256 the GEMMs are compute-bound, so a negative τ cannot shorten them) up to
    the ridge loss: τ_layer is part of the weight stream T_m, inside the GEMMs' (T_c^q + T_m^q)^(1/q), where
    L·τ adds less than itself (the implied time was taken with it outside). B = 16: T_c = 0.40 ms against
    T_m = 4.23 + 0.23 ms, 0.17 µs short of 5.841 ms."""
    parts = S.kernel_gemm_terms(S.step_terms(catalog))
    kernel_weights_s = WEIGHTS_READ / (BETA * 0.83) + 129 * 3.6e-6
    for r in rows[:3]:
        terms = dataclasses.replace(
            parts, efficiency=dataclasses.replace(parts.efficiency, layer_kernels_s=r.implied_layer_us * 1e-6)
        )
        layers_s = 32 * r.implied_layer_us * 1e-6
        short_s = _linear_s(r.batch, kernel_weights_s) + layers_s - _linear_s(r.batch, kernel_weights_s + layers_s)
        step_ms = S.gpu_step_ms(terms, batch=r.batch, context_tokens=r.context_tokens)
        assert step_ms == pytest.approx(r.measured_ms - short_s * 1e3, rel=1e-9)
        assert 0.0 <= short_s * 1e3 < 2e-4


def test_kv_at_the_attention_kernels_rate_makes_the_implied_time_one_number(
    catalog: Catalog, rows: list[S.StepRow]
) -> None:
    """KV at 0.9 of β (attn_decode rows, B ≥ 32: 4.10-4.46 TB/s): the implied time per layer is 18.9-21.7 µs
    on the four rows up to B = 64 (median of all five 18.9) instead of +19 … −97 µs. At B = 256 the GEMMs sit
    at 0.65 of the ridge (T_c = 256 · 15.01 GFLOP / 593.7 TFLOP/s = 6.47 ms against T_m = 4.23 ms), where the
    ridge loss charges 6.47 · ((1 + 0.654^q)^(1/q) − 1) = 0.62 ms that the compiled step does not take: −1.4 µs
    per layer, 18.0 under the max (q = ∞)."""
    base = S.step_terms(catalog)
    parts = S.kernel_gemm_terms(
        dataclasses.replace(base, efficiency=dataclasses.replace(base.efficiency, kv_stream_frac=0.9))
    )
    roofline = dataclasses.replace(parts, efficiency=dataclasses.replace(parts.efficiency, overlap_exponent=math.inf))

    def implied(terms: perf.DeploymentTerms) -> list[float]:
        out = []
        for r in rows:
            step = perf.decode_step(terms, batch=r.batch, context_tokens=r.context_tokens)
            out.append((r.measured_ms - float(step.linear_ops_s + step.attention_ops_s) * 1e3) / 32 * 1e3)
        return out

    shipped, at_max = implied(parts), implied(roofline)
    assert min(shipped[:4]) > 17.5 and max(shipped[:4]) < 25.0
    assert sorted(shipped)[2] == pytest.approx(18.9, abs=0.05)
    assert shipped[4] == pytest.approx(-1.42, abs=0.05)
    assert at_max[4] == pytest.approx(17.97, abs=0.05)
    gemm_s, weights_s = 256 * LINEAR_FLOP_PER_TOKEN / COMPUTE, WEIGHTS_READ / (BETA * 0.83) + 129 * 3.6e-6
    assert (at_max[4] - shipped[4]) * 32e-6 == pytest.approx(_ridge(gemm_s, weights_s) - gemm_s, rel=0.01)


def test_kv_stream_efficiency(catalog: Catalog) -> None:
    """Unset: the decode MBU; set: the KV read and write at that fraction, in decode, mixed and prefill steps."""
    assert eff.kv_stream_efficiency_frac(eff.EfficiencyTerms(decode_mbu_frac=0.65)) == pytest.approx(0.65)
    assert eff.kv_stream_efficiency_frac(eff.EfficiencyTerms(decode_mbu_frac=0.65, kv_stream_frac=0.9)) == 0.9
    base = S.step_terms(catalog)
    fast = dataclasses.replace(base, efficiency=dataclasses.replace(base.efficiency, kv_stream_frac=0.9))
    slow = perf.decode_step(base, batch=64, context_tokens=2048)
    quick = perf.decode_step(fast, batch=64, context_tokens=2048)
    assert quick.kv_read_s == pytest.approx(slow.kv_read_s * 0.65 / 0.9)
    assert quick.weights_read_s == pytest.approx(slow.weights_read_s)
    assert mixed_step(fast, decode_batch=64, decode_context_tokens=2048, prefill_tokens=0.0, prompt_tokens=512) == (
        pytest.approx(float(quick.total_s))
    )
    assert perf.prefill_step(fast, prompt_tokens=4096).kv_read_s < perf.prefill_step(base, prompt_tokens=4096).kv_read_s


def test_markdown_table(rows: list[S.StepRow]) -> None:
    text = "\n".join(S.step_markdown(rows))
    assert "### Compiled decode step" in text
    assert "| 1 | 512 | 4.854 | 4.832 | -0.4 % | 4.232 | 0.022 | 18.8 |" in text
    assert "| 256 | 1024 | 15.000 | 18.349 | +22.3 % | 7.092 | 11.013 | -97.0 |" in text
    assert "Median implied small-kernel time: 7.2 µs per layer." in text
    assert S.step_markdown([]) == []


def test_routed_experts_stream_at_the_decode_mbu(catalog: Catalog) -> None:
    """W/(β·η_w) is a dense-GEMM figure: the routed experts' bytes stream at η_m (grouped expert GEMMs measured
    at 0.47-0.63 of β). Mixtral-8x7B bf16 on an H200 at B = 1 with η_w = 0.83: dense part / (β·0.83) + two
    experts per layer / (β·0.65) + 129 + 32 GEMM kernels' 3.6 µs."""
    kernel = eff.EfficiencyTerms(decode_mbu_frac=0.65, weight_stream_frac=0.83, gemm_launch_s=3.6e-6)
    assert eff.weight_stream_s(kernel, 3e9, BETA, 0.0, expert_bytes=1e9) == pytest.approx(
        2e9 / (BETA * 0.83) + 1e9 / (BETA * 0.65)
    )
    assert eff.weight_stream_s(eff.EfficiencyTerms(decode_mbu_frac=0.65), 3e9, BETA, 0.0, expert_bytes=1e9) == (
        pytest.approx(3e9 / (BETA * 0.65))
    )
    base = perf.deployment_terms(
        catalog, model=catalog.model("mixtral_8x7b"), gpu=catalog.gpu("h200_sxm"),
        weight_format=catalog.format("bf16"), kv_format=catalog.format("bf16"),
    )
    terms = dataclasses.replace(base, efficiency=dataclasses.replace(
        base.efficiency, weight_stream_frac=0.83, gemm_launch_s=3.6e-6
    ))
    experts = perf.moe.expert_read_bytes(terms, perf.moe.routing(terms, 1.0))
    assert experts == pytest.approx(32 * 2 * terms.expert_bytes)
    total = perf.moe.weights_read_bytes(terms, 1.0)
    step = perf.decode_step(terms, batch=1, context_tokens=0.0)
    assert step.weights_read_s == pytest.approx(
        (total - experts) / (BETA * 0.83) + experts / (BETA * 0.65) + terms.gemm_kernels * 3.6e-6
    )
