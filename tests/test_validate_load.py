"""Prefill GEMM efficiency η(n, t), and validation rows measured at a load (planner/validate/load_cases.py,
sources_load.py): saturated open loop, closed loop, and a hand-made SGLang rate-sweep file."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner import performance as perf
from planner import validate as v
from planner.catalog.loader import Catalog
from planner.ledgers import efficiency as eff
from planner.performance.load import serve_at_load
from planner.performance.mixed_step import mixed_step
from planner.validate.load_cases import closed_loop_point, open_loop_point, saturated_point


def _terms(catalog: Catalog, model: str = "llama_3_1_8b", tp: int = 1) -> perf.DeploymentTerms:
    return perf.deployment_terms(
        catalog, model=catalog.model(model), gpu=catalog.gpu("h100_sxm"), weight_format=catalog.format("bf16"),
        kv_format=catalog.format("bf16"), tp=tp, engine="sglang",
    )


# ------------------------------------------------------------------------------------------ prefill η(n, t)


def test_prefill_efficiency_worked_values() -> None:
    """η = 0.6 · (n/t)/(n/t + 64): 256 tokens at TP1 0.48; 8192 tokens at TP8 = 1024 rows per GPU → 0.5647."""
    terms = eff.EfficiencyTerms(prefill_mfu_frac=0.6, prefill_half_tokens=64.0)
    assert eff.prefill_compute_efficiency_frac(terms, 256.0) == pytest.approx(0.48)
    assert eff.prefill_compute_efficiency_frac(terms, 8192.0, 8.0) == pytest.approx(0.6 * 1024 / 1088)
    # TP shards the columns: TP4 at 4n tokens is TP1 at n tokens
    assert eff.prefill_compute_efficiency_frac(terms, 1024.0, 4.0) == pytest.approx(
        eff.prefill_compute_efficiency_frac(terms, 256.0, 1.0)
    )


@settings(max_examples=60, deadline=None)
@given(n=st.floats(1.0, 1e5), tp=st.sampled_from([1.0, 2.0, 4.0, 8.0]), half=st.floats(0.0, 512.0))
def test_prefill_efficiency_is_monotone(n: float, tp: float, half: float) -> None:
    """More tokens never lower η; a larger TP never makes the per-GPU GEMM time F/t/η longer."""
    terms = eff.EfficiencyTerms(prefill_mfu_frac=0.6, prefill_half_tokens=half)
    e = eff.prefill_compute_efficiency_frac
    assert e(terms, n * 1.5, tp) >= e(terms, n, tp) - 1e-15
    assert n / (2 * tp) / e(terms, n, 2 * tp) <= n / tp / e(terms, n, tp) * (1 + 1e-12)


def test_short_prompt_prefill_is_faster_than_with_the_ridge_sized_half_point(catalog: Catalog) -> None:
    """Issue 12: a 256-token prompt was 1.5x too slow with n_half = 256 (the ridge); with 64 it is ≥ 1.3x faster."""
    terms = _terms(catalog)
    ridge = perf.DeploymentTerms(**{**terms.__dict__, "efficiency": eff.EfficiencyTerms(
        **{**terms.efficiency.as_dict(), "prefill_half_tokens": 256.0})})
    now = float(perf.prefill_step(terms, prompt_tokens=256.0).total_s)
    before = float(perf.prefill_step(ridge, prompt_tokens=256.0).total_s)
    assert terms.efficiency.prefill_half_tokens == 64.0
    assert before / now > 1.3


# ------------------------------------------------------------------------------------------ load rows


def test_saturated_point_runs_at_the_batch_limit(catalog: Catalog) -> None:
    """Above capacity the engine decodes B_lim sequences per step and admits B_lim·P/G prompt tokens."""
    terms = _terms(catalog, "llama_3_3_70b", tp=4)
    pt = saturated_point(terms, input_tokens=500.0, output_tokens=500.0, max_batch=300.0)
    step = float(mixed_step(terms, decode_batch=300.0, decode_context_tokens=750.0, prefill_tokens=300.0,
                            prompt_tokens=500.0))
    assert float(pt.tpot_s) == pytest.approx(step, rel=1e-12)
    assert float(pt.output_tokens_per_s) == pytest.approx(300.0 / step, rel=1e-12)
    assert math.isinf(float(pt.ttft_s)) and not pt.stable
    # an offline burst (λ = inf) is that point; a light load is the scheduler's steady state
    burst = open_loop_point(terms, requests_per_s=math.inf, input_tokens=500.0, output_tokens=500.0,
                            max_batch=300.0)
    assert float(burst.tpot_s) == pytest.approx(step, rel=1e-12)
    light = open_loop_point(terms, requests_per_s=0.5, input_tokens=500.0, output_tokens=500.0, max_batch=300.0)
    direct = serve_at_load(terms, requests_per_s=0.5, input_tokens=500.0, output_tokens=500.0, max_batch=300.0)
    assert float(light.ttft_s) == pytest.approx(float(direct.ttft_s), rel=1e-12)
    assert float(light.tpot_s) < float(burst.tpot_s)


def test_closed_loop_obeys_littles_law(catalog: Catalog) -> None:
    """N clients: λ·(TTFT + (G − 1)·TPOT) = N at the solved point."""
    terms = _terms(catalog)
    pt = closed_loop_point(terms, concurrency=8.0, input_tokens=2000.0, output_tokens=200.0, max_batch=256.0)
    latency = float(pt.ttft_s) + 199.0 * float(pt.tpot_s)
    assert float(pt.requests_per_s) * latency == pytest.approx(8.0, rel=1e-3)
    assert float(pt.running_batch) < 8.0


def test_a_lone_client_decodes_alone_and_others_prompts_slow_its_tokens(catalog: Catalog) -> None:
    """Arrival theorem: one client's decode steps carry the other clients' prompt chunks, never its own.
    N = 1 (DeepSeek-V3, whose prompt chunks would touch every expert): TPOT is the lone step at any prompt
    length, though the replica at the client's own λ would mix its prefill into the steps; N = 8: more than
    the lone step, less than the steps the whole λ gives."""
    terms = perf.deployment_terms(
        catalog, model=catalog.model("deepseek_v3"), gpu=catalog.gpu("h100_sxm"), weight_format=catalog.format("int4"),
        kv_format=catalog.format("bf16"), tp=8, engine="vllm",
    )
    for prompt in (128.0, 4096.0):
        lone = float(mixed_step(terms, decode_batch=1.0, decode_context_tokens=prompt + 64.0, prefill_tokens=0.0,
                                prompt_tokens=prompt))
        pt = closed_loop_point(terms, concurrency=1.0, input_tokens=prompt, output_tokens=128.0, max_batch=256.0)
        assert float(pt.tpot_s) == pytest.approx(lone, rel=1e-12)
        mixed = serve_at_load(terms, requests_per_s=float(pt.requests_per_s), input_tokens=prompt,
                              output_tokens=128.0, max_batch=256.0)
        if prompt > 1000:
            assert float(mixed.tpot_s) > 1.5 * lone  # what the client's own λ would have charged
    eight = closed_loop_point(terms, concurrency=8.0, input_tokens=4096.0, output_tokens=128.0, max_batch=256.0)
    whole = serve_at_load(terms, requests_per_s=float(eight.requests_per_s), input_tokens=4096.0,
                          output_tokens=128.0, max_batch=256.0)
    assert lone < float(eight.tpot_s) < float(whole.tpot_s)


DATACRUNCH_HEADER = ["model", "gpu", "gpu_count", "tp", "engine", "engine_version", "weights_precision",
                     "num_prompts", "request_rate_per_s", "mean_input_tokens_derived", "mean_output_tokens_derived",
                     "median_ttft_ms", "median_itl_ms", "output_tokens_per_s"]


def _write_datacrunch(tmp_path: Path, rows: list[list[str]]) -> None:
    """A datacrunch_sglang_h200.csv of ``rows`` (columns :data:`DATACRUNCH_HEADER`) in ``tmp_path``."""
    with (tmp_path / "datacrunch_sglang_h200.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(DATACRUNCH_HEADER)
        w.writerows(rows)


def test_hand_made_sglang_rate_sweep(tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """datacrunch-style rows: a Poisson row gives TTFT/ITL/throughput cases; an offline burst skips its TTFT."""
    _write_datacrunch(tmp_path, [
        ["meta-llama/Llama-3.3-70B-Instruct", "H200", "4", "4", "SGLang", "0.4", "BF16", "300", "1.0", "500", "500",
         "80", "14", "500"],
        ["meta-llama/Llama-3.3-70B-Instruct", "H200", "4", "4", "SGLang", "0.4", "BF16", "3000", "inf", "500", "500",
         "90000", "150", "4500"],
    ])
    monkeypatch.setenv(v.MEASUREMENTS_ENV, str(tmp_path))
    cases, skipped = v.build_cases(catalog)
    assert [(c.metric, c.requests_per_s) for c in cases] == [
        ("ttft_or_prefill", 1.0), ("tpot_itl", 1.0), ("throughput", 1.0), ("tpot_itl", math.inf),
        ("throughput", math.inf),
    ]
    assert all(c.engine == "sglang" and not c.fitted for c in cases)
    assert any("offline burst" in s.reason for s in skipped)
    rows = v.evaluate(catalog, cases)
    light_throughput = rows[2].predicted
    assert light_throughput == pytest.approx(1.0 * 500.0, rel=1e-9)  # stable: λ·G
    assert rows[0].predicted > float(perf.prefill_step(cases[0].terms, prompt_tokens=500.0).total_s) * 1e3 * 0.9


def test_a_finite_run_holds_at_most_its_prompts(tmp_path: Path, catalog: Catalog,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An offline burst of N = 40 prompts runs at most 40 sequences, whatever the memory would hold: the case's
    batch is 40 and its output rate is the saturated point at B = 40 (8B on one H200: B_lim = 801 at 1,000 tokens
    in SGLang's 0.88 share of the memory)."""
    _write_datacrunch(tmp_path, [
        ["meta-llama/Llama-3.1-8B-Instruct", "H200", "1", "1", "SGLang", "0.4", "BF16", prompts, "inf", "500", "500",
         "", "20", "3000"]
        for prompts in ("40", "40000")
    ])
    monkeypatch.setenv(v.MEASUREMENTS_ENV, str(tmp_path))
    cases, _skipped = v.build_cases(catalog)
    burst = [c for c in cases if c.metric == "throughput"]
    assert [c.batch for c in burst][0] == 40.0
    assert burst[1].batch == 801.0  # 40,000 prompts: memory at 1,000 tokens binds (801 < SGLang's 1,024)
    rows = {r.label: r.predicted for r in v.evaluate(catalog, burst)}
    at_40 = saturated_point(burst[0].terms, input_tokens=500.0, output_tokens=500.0, max_batch=40.0)
    assert rows[burst[0].label] == pytest.approx(float(at_40.output_tokens_per_s), rel=1e-9)
    assert rows[burst[0].label] < rows[burst[1].label]  # fewer sequences in flight: a lower output rate


def test_median_columns_are_predicted_as_medians(tmp_path: Path, catalog: Catalog,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A rate sweep's median_ttft_ms and median_itl_ms are predicted at the 50th percentile (planner.performance.
    tail, the plan's percentile SLOs), not as means: 70B TP4 on H200 at 4 req/s of 500/500 tokens. The
    admission and queue waits are right-skewed, so the median TTFT is below the mean; the output rate is a mean."""
    _write_datacrunch(tmp_path, [
        ["meta-llama/Llama-3.3-70B-Instruct", "H200", "4", "4", "SGLang", "0.4", "BF16", "1200", "4.0", "500", "500",
         "100", "20", "1900"],
    ])
    monkeypatch.setenv(v.MEASUREMENTS_ENV, str(tmp_path))
    cases, _skipped = v.build_cases(catalog)
    assert [(c.metric, c.percentile) for c in cases] == [
        ("ttft_or_prefill", 50.0), ("tpot_itl", 50.0), ("throughput", None),
    ]
    ttft, tpot, tput = v.evaluate(catalog, cases)
    kw = {"requests_per_s": 4.0, "input_tokens": 500.0, "output_tokens": 500.0, "max_batch": cases[0].batch}
    median = serve_at_load(cases[0].terms, ttft_percentile=50.0, tpot_percentile=50.0, **kw)
    mean = serve_at_load(cases[0].terms, **kw)
    assert ttft.predicted == pytest.approx(float(median.ttft_s) * 1e3, rel=1e-12)
    assert tpot.predicted == pytest.approx(float(median.tpot_s) * 1e3, rel=1e-12)
    assert tput.predicted == pytest.approx(float(mean.output_tokens_per_s), rel=1e-12)
    assert float(median.ttft_s) < float(mean.ttft_s)


def test_closed_loop_median_keeps_the_load_of_the_means(catalog: Catalog) -> None:
    """Under N clients the load is set by the mean latencies (λ = N / (TTFT + (G − 1)·TPOT)); asked for the
    median, the same load reports the median TTFT, below the mean (8B on H100, 16 clients, 2,048/256 tokens)."""
    terms = _terms(catalog)
    kw = {"concurrency": 16.0, "input_tokens": 2048.0, "output_tokens": 256.0, "max_batch": 256.0}
    mean, median = closed_loop_point(terms, **kw), closed_loop_point(terms, percentile=50.0, **kw)
    assert float(median.requests_per_s) == float(mean.requests_per_s)
    assert float(median.output_tokens_per_s) == float(mean.output_tokens_per_s)
    assert float(median.ttft_s) < float(mean.ttft_s)
