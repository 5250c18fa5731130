"""QA of `planner predict` as a user reads it: a configuration that does not fit names the smallest layout that
holds it, a mistyped id gets the id meant, and `--explain` shows terms that add up to their totals.

Before: a model that did not fit got "try more --tp/--pp, a smaller --quant or --kv-dtype" with no layout;
`--gpu a100` got "did you mean a10g?", `--gpu A100` "did you mean h100_sxm?", `--model QWEN3_8B` a list of ids,
`--engine VLLM` / `trt-llm` / `llama.cpp` "not an engine id" with no suggestion; `--explain` listed the step terms
(weights read, compute, linear ops, TP latency ...) in one column under a total that is the sum of only five of
them, and showed the batch's whole KV cache (kv_cache_gb) beside a per-GPU memory it does not add up to."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.cli.predict_cmd import STEP_SUMMANDS, TTFT_PARTS, memory_rows, ttft_column

runner = CliRunner()


def _predict(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, ["predict", *args])
    return res.exit_code, res.stdout, res.stderr


# --- a configuration that does not fit names the smallest layout that does -----------------------------------


def test_70b_bf16_on_one_h100_names_three_stages_and_fp8_on_two_gpus() -> None:
    # 141.1 GB of BF16 weights: TP2 holds 70.6 + 2.15 workspace + 8.0 vLLM reserve (0.1 × 80) + 0.38 KV = 81.1 GB
    # > 80; three stages hold, on the first (27 of 80 layers and the embedding), 27 × 1.711 + 2.10 = 48.31 + 2.15
    # + 8.0 + 0.25 (2,304 tokens × 327,680 B × 27/80) = 58.7 GB. FP8 (72.66 GB)
    # on TP2: 36.33 + 2.15 + 8.0 + 0.38 = 46.9 GB.
    code, out, err = _predict("--model", "llama_3_1_70b", "--gpu", "h100_sxm")
    assert code == 3 and not out and len(err.strip().splitlines()) == 1
    assert "the smallest layout that holds batch 1: --tp 1 --pp 3 (3 GPUs, 58.7 of 80 GB per GPU)" in err
    assert "or --quant fp8 --tp 2 (2 GPUs, 46.9 of 80 GB per GPU)" in err
    # the layouts named run; every 2-GPU layout in BF16 does not
    assert _predict("--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--pp", "3")[0] == 0
    assert _predict("--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--quant", "fp8", "--tp", "2")[0] == 0
    assert _predict("--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--tp", "2")[0] == 3
    assert _predict("--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--pp", "2")[0] == 3


def test_70b_fp8_on_l40s_names_tp2_and_int4_on_one_gpu() -> None:
    # 72.66 GB FP8 on 48 GB: TP2 36.33 + 2.15 + 4.8 (0.1 × 48) + 0.38 = 43.7 GB; INT4 (39.50 GB) on one:
    # 39.50 + 2.15 + 4.8 + 0.755 = 47.2 GB.
    code, _, err = _predict("--model", "llama_3_1_70b", "--gpu", "l40s", "--quant", "fp8")
    assert code == 3
    assert "--tp 2 (2 GPUs, 43.7 of 48 GB per GPU); or --quant int4 --tp 1 (a whole GPU, 47.2 of 48 GB per GPU)" in err


def test_a_gpu_share_that_is_too_small_names_the_whole_gpu() -> None:
    code, _, err = _predict("--model", "qwen3_8b", "--gpu", "l4", "--gpu-share-frac", "0.5")
    assert code == 3
    assert "the smallest layout that holds batch 1: --gpu-share-frac 1 (21.3 of 24 GB per GPU)" in err
    assert "or --quant int4 --gpu-share-frac 0.5 (9.8 of 12 GB per GPU)" in err


def test_a_batch_no_layout_holds_says_so() -> None:
    # 100,000 sequences × 2,304 tokens × 147,456 B = 34.0 TB of KV: more than 512 H100s hold after their weights
    code, _, err = _predict("--model", "qwen3_8b", "--gpu", "h100_sxm", "--batch", "100000")
    assert code == 3 and "max batch 157" in err
    assert "no TP×PP layout up to 512 h100_sxm GPUs holds it in --quant bf16 --kv-dtype bf16" in err
    # 79 GiB of workspace = 84.8 GB on every GPU of any layout: the workspace is named too
    code, _, err = _predict("--model", "qwen3_8b", "--gpu", "h100_sxm", "--workspace-gib", "79")
    assert code == 3 and "109.5 GB per GPU" in err and "a smaller --batch or --workspace-gib)" in err
    # a request longer than the context window runs on no layout: no layout is named
    code, _, err = _predict("--model", "qwen3_8b", "--gpu", "h100_sxm", "--input-tokens", "1000000")
    assert code == 3 and "context window" in err and "smallest layout" not in err


# --- a mistyped id gets the id meant ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "typed", "meant"),
    [
        ("--model", "QWEN3_8B", "did you mean qwen3_8b?"),
        ("--model", "Llama-3.1-70B", "did you mean llama_3_1_70b?"),
        ("--model", "qwen3_235b", "did you mean qwen3_235b_a22b?"),
        ("--gpu", "A100", "did you mean a100_pcie_80gb or a100_sxm_80gb?"),
        ("--gpu", "a100", "did you mean a100_pcie_80gb or a100_sxm_80gb?"),
        ("--gpu", "RTX 4090", "did you mean rtx_4090?"),
        ("--engine", "VLLM", "did you mean vllm?"),
        ("--engine", "trt-llm", "did you mean trtllm?"),
        ("--engine", "tensorrt-llm", "did you mean trtllm?"),
        ("--engine", "llama.cpp", "did you mean llamacpp?"),
        ("--engine", "SGLang[memory_claim_frac=0.9]", "did you mean sglang?"),
        ("--quant", "FP8", "did you mean fp8?"),
    ],
)
def test_a_mistyped_id_gets_the_id_meant(option: str, typed: str, meant: str) -> None:
    args = {"--model": "qwen3_8b", "--gpu": "h100_sxm", option: typed}
    code, out, err = _predict(*[x for kv in args.items() for x in kv])
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert f"{option}: unknown" in err and meant in err


def test_suggest_falls_back_to_the_valid_ids() -> None:
    from planner.errors import did_you_mean as suggest  # the one matcher every input check uses

    assert suggest("tgi", ["vllm", "sglang", "trtllm"]) == " — valid values: sglang, trtllm, vllm"
    assert suggest("h100", ["h100_sxm", "h100_pcie", "h100_nvl", "h200_sxm"]) == (
        " — did you mean h100_nvl or h100_pcie or h100_sxm?"
    )


# --- --explain: terms that add up ---------------------------------------------------------------------------

TP4 = ["--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--tp", "4", "--quant", "fp8", "--batch", "16",
       "--input-tokens", "8192"]


def test_explain_memory_rows_add_up_to_memory_per_gpu() -> None:
    # per GPU: 72.66 GB / 4 = 18.164; KV 16 × 8,448 × 327,680 B = 44.29 GB over 4 KV shards = 11.073; 2 GiB =
    # 2.147 GB; vLLM leaves 0.1 × 80 = 8 GB: 39.385 GB
    code, out, _ = _predict(*TP4, "--json")
    assert code == 0
    rows = {k: v for k, v, _ in memory_rows(json.loads(out))}
    assert rows["weights_per_gpu_gb"] == pytest.approx(18.164, abs=5e-4)
    assert rows["kv_cache_per_gpu_gb"] == pytest.approx(11.073, abs=5e-4)
    assert rows["workspace_gb"] == pytest.approx(2.147, abs=5e-4)
    assert rows["engine_reserve_gb"] == pytest.approx(8.0)
    parts = ("weights_per_gpu_gb", "kv_cache_per_gpu_gb", "workspace_gb", "engine_reserve_gb")
    assert math.fsum(rows[k] for k in parts) == pytest.approx(rows["memory_per_gpu_gb"], rel=1e-12)
    assert rows["memory_per_gpu_gb"] == pytest.approx(39.385, abs=5e-4)


def test_explain_prints_each_term_with_how_it_enters_the_total() -> None:
    code, out, _ = _predict(*TP4, "--explain")
    assert code == 0
    lines = out.splitlines()
    for needle in (
        "memory per GPU at batch 16, context 8,448 tokens (GB = 1e9 B)",
        "decode step at batch 16, history 8,320 tokens (P + G/2), ms (efficiency applied)",
        "prefill step at 8,192 prompt tokens, ms (efficiency applied)",
    ):
        assert any(needle in line for line in lines), needle
    row = next(line for line in lines if "kv_cache_per_gpu_gb" in line)
    assert "11.073" in row and "+" in row
    row = next(line for line in lines if "tp_latency_ms" in line)
    assert "in tp_comm_ms" in row
    row = next(line for line in lines if "decode_read_gb_per_step" in line)
    assert "113.5" in row  # 70.56 GB of weights read (72.66 − 2.10 GB of BF16 embeddings) + 16 × 8,192 × 327,680 B


@pytest.mark.parametrize(
    "args",
    [
        TP4,
        ["--model", "qwen3_8b", "--gpu", "rtx_pro_6000", "--ideal"],
        ["--model", "llama_3_1_8b", "--gpu", "h100_sxm", "--pp", "2", "--batch", "8"],
        ["--model", "qwen3_30b_a3b", "--gpu", "h200_sxm", "--batch", "64", "--engine", "sglang"],
        ["--model", "qwen3_235b_a22b", "--gpu", "h200_sxm", "--ep", "8", "--quant", "fp8", "--batch", "64"],
        ["--model", "llama_3_1_70b", "--gpu", "a100_sxm_80gb", "--tp", "8", "--batch", "32", "--engine", "trtllm"],
    ],
)
def test_the_summed_step_terms_are_the_step(args: list[str]) -> None:
    code, out, _ = _predict(*args, "--json")
    assert code == 0
    data = json.loads(out)
    for phase in ("decode", "prefill"):
        terms = data["breakdown"][phase]
        assert math.fsum(terms[k] for k in STEP_SUMMANDS) == pytest.approx(terms["total_ms"], rel=1e-9)
        assert terms["tp_latency_ms"] <= terms["tp_comm_ms"] + 1e-12
        assert terms["attention_compute_ms"] <= terms["compute_ms"] + 1e-12
    assert data["breakdown"]["decode"]["total_ms"] == pytest.approx(data["decode_step_ms"], rel=1e-12)
    assert data["breakdown"]["prefill"]["total_ms"] == pytest.approx(data["ttft_ms"], rel=1e-12)


# --- the scheduler's TTFT under load: its parts add up ----------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "5", "--site", "us_east"],
        ["--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "8", "--engine", "vllm_v0"],
        ["--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "9", "--role", "prefill"],
        ["--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--tp", "4", "--quant", "fp8", "--input-tokens", "20000",
         "--requests-per-s", "0.5"],
        ["--model", "llama_3_1_70b", "--gpu", "h100_sxm", "--tp", "2", "--quant", "fp8", "--requests-per-s", "2",
         "--prefix-hit-frac", "0.7", "--prefix-tokens", "1500"],
    ],
)
def test_the_mean_ttft_under_load_is_the_sum_of_its_parts(args: list[str]) -> None:
    code, out, _ = _predict(*args, "--json")
    assert code == 0
    at = json.loads(out)["at_load"]
    how = ttft_column(at, None)
    parts = [k for k, v in how.items() if v == "+"]
    assert set(parts) == set(TTFT_PARTS)
    assert math.fsum(at[k] for k in parts) == pytest.approx(at["ttft_ms"], rel=1e-9)


def test_the_load_table_shows_how_ttft_adds_up() -> None:
    # Qwen3-8B on H100 at 5 req/s from us_east: 9.578 ms queue + 56.10 ms prefill chunk + 5.052 ms step in flight
    # + 15.66 ms network (RTT 15 ms + 2,048 tokens uploaded) = 86.38 ms (86.8 at the H100's former MBU 0.65)
    args = ["--model", "qwen3_8b", "--gpu", "h100_sxm", "--requests-per-s", "5", "--site", "us_east"]
    code, out, _ = _predict(*args, "--json")
    at = json.loads(out)["at_load"]
    assert at["ttft_ms"] == pytest.approx(86.38, abs=0.005)
    assert at["queue_wait_ms"] == pytest.approx(9.578, abs=5e-4) and at["network_ms"] == pytest.approx(15.66, abs=5e-3)
    code, out, _ = _predict(*args)
    assert code == 0
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") >= 4}
    assert "= sum of the + rows" in rows["ttft_ms"] and "86.38" in rows["ttft_ms"]
    assert all(rows[k].rstrip("│ ").endswith("+") for k in TTFT_PARTS)
    code, out, _ = _predict(*args, "--ttft-percentile", "99")
    row = next(line for line in out.splitlines() if line.startswith("│ ttft_ms") and "p99" in line)
    assert "the + rows are means" in row
