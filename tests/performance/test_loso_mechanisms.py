"""Mechanisms behind the leave-one-source-out misses of reports/validation.md, as worked examples.

SGLang-vs-vLLM offline rows (sglang_repo_benchmarks, SGL-VLLM060): the run prints its request rate and its
output-token rate, so its mean output length is stated, G = output tok/s ÷ request/s = 194.3 tokens on all
four rows (one 5,000-prompt ShareGPT sample); the harness used Lambda's 224 (a 320-prompt file), which
understates the prompt work per output token by 13 % (230/224 = 1.027 vs 230/194.3 = 1.183 prompt tokens per
output token) and so overstates a saturated engine's output rate.

datacrunch_sglang_h200 405B TP8 rows: the launch command states ``--mem-frac 0.87``; the engine default (0.88)
gave each H200 1.41 GB more KV room than the run had.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest

from planner import performance as perf
from planner import validate as v
from planner.catalog.loader import Catalog
from planner.performance.memory import kv_room_bytes
from planner.validate.predictions import case_efficiency, predict_case
from planner.validate.sources_load import (
    SHAREGPT_INPUT_TOKENS,
    SHAREGPT_OUTPUT_TOKENS,
    stated_mean_output_tokens,
    with_stated_memory_share,
)

SGLANG_HEADER = [
    "model",
    "gpu",
    "gpu_count",
    "tp",
    "engine",
    "engine_version",
    "weights_precision",
    "dataset",
    "num_prompts",
    "request_rate_per_s",
    "median_e2e_latency_ms",
    "median_ttft_ms",
    "median_tpot_ms",
    "median_itl_ms",
    "request_throughput_per_s",
    "output_tokens_per_s",
    "notes",
]
OFFLINE_8B = [
    "meta-llama/Llama-3.1-8B-Instruct",
    "A100-80GB",
    "1",
    "1",
    "SGLang",
    "v0.3.0",
    "BF16",
    "ShareGPT",
    "5000",
    "inf",
    "",
    "",
    "",
    "",
    "22.03",
    "4281.51",
    "offline max throughput (all 5000 requests at t=0)",
]
ONLINE_8B = [
    "meta-llama/Llama-3.1-8B-Instruct",
    "A100-80GB",
    "1",
    "1",
    "SGLang",
    "v0.3.0",
    "BF16",
    "ShareGPT",
    "1200",
    "4",
    "1564.17",
    "31.98",
    "13.17",
    "11.93",
    "",
    "",
    "online, Poisson arrivals",
]


def _row(values: list[str]) -> dict[str, str]:
    return dict(zip(SGLANG_HEADER, values, strict=True))


def test_mean_output_length_stated_by_the_two_rates() -> None:
    """4,281.51 tok/s ÷ 22.03 req/s = 194.349 tokens (SGLang 8B); 3,856.01 ÷ 19.84 = 194.355 (SGLang 70B);
    4,132.37 ÷ 21.27 = 194.282 and 3,700.64 ÷ 19.04 = 194.361 (vLLM): the four rows agree to 0.08 tokens."""
    assert stated_mean_output_tokens(_row(OFFLINE_8B)) == pytest.approx(194.349, abs=1e-3)
    rates = [(3856.01, 19.84, 194.355), (4132.37, 21.27, 194.282), (3700.64, 19.04, 194.361)]
    for out, req, g in rates:
        row = _row([*OFFLINE_8B[:14], repr(req), repr(out), ""])
        assert stated_mean_output_tokens(row) == pytest.approx(g, abs=1e-3)


def test_rows_without_both_rates_state_no_length() -> None:
    """The online rows print latencies only, the DeepSeek-V3 rows token rates only: no stated mean."""
    assert stated_mean_output_tokens(_row(ONLINE_8B)) is None
    assert (
        stated_mean_output_tokens({"output_tokens_per_s": "2268.68", "request_throughput_per_s": ""}) is None
    )


def _cases(tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> list[v.Case]:
    with (tmp_path / "sglang_repo_benchmarks.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SGLANG_HEADER)
        w.writerows([OFFLINE_8B, ONLINE_8B])
    monkeypatch.setenv(v.MEASUREMENTS_ENV, str(tmp_path))
    cases, _skipped = v.build_cases(catalog)
    return [c for c in cases if c.source == "sglang_repo_benchmarks"]


def test_offline_row_is_predicted_at_its_stated_length(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The offline row runs at G = 194.349 (prompt 230 still assumed); the online row keeps 230/224. Prompt
    tokens per output token: 230/194.349 = 1.1834 vs 230/224 = 1.0268."""
    cases = _cases(tmp_path, catalog, monkeypatch)
    offline = [c for c in cases if c.requests_per_s == float("inf")]
    online = [c for c in cases if c.requests_per_s == 4.0]
    assert [c.metric for c in offline] == ["throughput"]
    assert offline[0].output_tokens == pytest.approx(194.349, abs=1e-3)
    assert offline[0].prompt_tokens == SHAREGPT_INPUT_TOKENS == 230.0
    assert offline[0].prompt_tokens / offline[0].output_tokens == pytest.approx(1.1834, abs=1e-4)
    assert "194.3" in offline[0].note
    assert {c.output_tokens for c in online} == {SHAREGPT_OUTPUT_TOKENS}


def test_more_prompt_work_per_output_token_lowers_the_saturated_rate(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same engine at its batch limit: 15 % more prompt tokens per output token → fewer output tokens/s, but by
    less than 15 % (the decode work per output token is unchanged)."""
    (offline,) = [c for c in _cases(tmp_path, catalog, monkeypatch) if c.requests_per_s == float("inf")]
    eff = case_efficiency(catalog, offline)
    at_stated = predict_case(offline, eff)
    at_224 = predict_case(replace(offline, output_tokens=SHAREGPT_OUTPUT_TOKENS), eff)
    assert at_stated < at_224
    assert at_stated > at_224 / 1.153


# ------------------------------------------------------------------ datacrunch: the launch's stated memory share


def test_stated_mem_frac_sets_the_engine_share(catalog: Catalog) -> None:
    """datacrunch 405B launch: ``--mem-frac 0.87`` (SGLang's default share is 0.88): on one H200 (M = 141 GB)
    the KV room k·(u·M − W − A) shrinks by exactly 0.01 · 141e9 = 1.41e9 B per GPU; notes without the flag
    keep the engine's share."""
    terms = perf.deployment_terms(
        catalog,
        model=catalog.model("llama_3_1_405b"),
        gpu=catalog.gpu("h200_sxm"),
        weight_format=catalog.format("bf16"),
        kv_format=catalog.format("bf16"),
        tp=8,
        engine="sglang",
    )
    cfg = (catalog.gpu("h200_sxm"), catalog.format("bf16"), terms, "sglang")
    stated = with_stated_memory_share(
        cfg, "launch: --disable-radix-cache --enable-torch-compile --mem-frac 0.87"
    )
    assert stated[2].memory_claim_frac == 0.87
    assert terms.memory_claim_frac == 0.88
    room = kv_room_bytes(terms, workspace_bytes=2 * 2**30) - kv_room_bytes(
        stated[2], workspace_bytes=2 * 2**30
    )
    assert float(room) == pytest.approx(1.41e9, rel=1e-9)
    assert with_stated_memory_share(cfg, "launch: --disable-radix-cache")[2] is terms


def test_an_intercept_stated_as_a_range_over_kv_variants_is_read_at_its_midpoint() -> None:
    from planner.validate.sources_load import stated_intercept_range_ms

    notes = (
        "linear fit ITL = intercept + slope x input tokens, concurrency 1, 128 output tokens, inputs swept "
        "256-125000 (vllm bench serve); fit parameters as printed; intercept not given per variant: 4.03-4.07 ms "
        "across the three KV variants"
    )
    assert stated_intercept_range_ms(notes) == (4.03, 4.07)
    assert stated_intercept_range_ms(notes.split("; intercept")[0]) is None  # the swept range is no intercept
