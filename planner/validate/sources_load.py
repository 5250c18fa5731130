"""Readers of the serving sources added for issue 12 that are measured at a load or as static batches.

SGLang vs vLLM (sglang_repo_benchmarks), SGLang on H200 rate sweeps (datacrunch_sglang_h200), LMDeploy
static batches (lmdeploy_a100_fp16), vLLM on MI300X (rocm_vllm_mi300x), vLLM FP8-KV ITL fits
(vllm_blog_fp8_kvcache), points from issue threads (github_issue_serving_points) and TensorRT-LLM on GB200
(azure_gb200_trtllm). Rows at a Poisson rate or a client concurrency are predicted by the engine scheduler
(:mod:`planner.validate.load_cases`); rows that cannot be expressed are listed with the reason.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from planner import performance as perf
from planner.catalog.schema import Accelerator, NumericFormat
from planner.units import MS_PER_S
from planner.validate.cases import MAX_OFFLINE_BATCH, _Builder, _fitting_batch, _num
from planner.validate.finite_runs import finite_run_output_rate, start_transient_reason
from planner.validate.names import KV_FORMAT_IDS

SHAREGPT_INPUT_TOKENS = 230.0
SHAREGPT_OUTPUT_TOKENS = 224.0
"""Mean ShareGPT V3 lengths (Lambda raw result file; the SGLang README does not print them) [U]."""
UNCERTAIN = "secondary or incomplete source [U]"
MEDIAN = 50.0
"""Percentile of a median column (median_ttft_ms, median_itl_ms): what SGLang's and vLLM's benchmark scripts print."""
Config = tuple[Accelerator, NumericFormat, perf.DeploymentTerms, str]
"""What _Builder.terms returns: accelerator, weight format, deployment terms, engine id."""


def _engine_batch(cfg: Config, *, context_tokens: float) -> float:
    """Sequences the replica holds: memory at ``context_tokens`` and the engine's sequence limit."""
    t = cfg[2]
    return _fitting_batch(t, context_tokens=context_tokens, cap=float(t.max_running_sequences))


def _load_rows(b: _Builder, src: str, label: str, cfg: Config, *, p_tok: float, g_tok: float,
               rate: float = 0.0, concurrency: float = 0.0, ttft: float | None = None,
               tpot: float | None = None, tput: float | None = None, note: str = "",
               prompts: float | None = None, percentile: float | None = MEDIAN) -> None:
    """TTFT, TPOT and throughput cases of one row measured at a load. ``prompts``: the run's request count N
    where stated — a finite run never holds more than N sequences, so the batch limit is min(B_lim, N).
    ``percentile``: the statistic its TTFT and TPOT columns report (:data:`MEDIAN`, or None for means)."""
    batch = min(_engine_batch(cfg, context_tokens=p_tok + g_tok), prompts or math.inf)
    kw = {"batch": batch, "prompt_tokens": p_tok, "output_tokens": g_tok, "requests_per_s": rate,
          "concurrency": concurrency, "note": note, "fitted": False}
    b.add(src, "ttft_or_prefill", label, ttft, cfg, percentile=percentile, **kw)
    b.add(src, "tpot_itl", label, tpot, cfg, percentile=percentile, **kw)
    b.add(src, "throughput", label, tput, cfg, **kw)


def _sglang_repo(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "sglang_repo_benchmarks"
    for row in rows:
        engine = _sglang_repo_engine(row)
        tp = int(row["tp"])
        label = f"{row['model']} {row['gpu']} TP{tp} {row['engine']} {row['engine_version']} rate {row['request_rate_per_s']}"
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"].split(" ")[0],
                      tp=tp, engine=engine)
        if cfg is None:
            continue
        rate = float(row["request_rate_per_s"])
        p_tok = _num(row, "input_tokens_nominal") or SHAREGPT_INPUT_TOKENS
        stated = stated_mean_output_tokens(row)
        g_tok = _num(row, "output_tokens_nominal") or stated or SHAREGPT_OUTPUT_TOKENS
        note = "ShareGPT mean lengths assumed (230/224) [U]" if row["dataset"] == "ShareGPT" else UNCERTAIN
        if row["dataset"] == "ShareGPT" and stated:
            note = f"ShareGPT mean output {stated:.1f} (the run's output tok/s / request/s), input 230 assumed [U]"
        if row["dataset"] != "ShareGPT":
            note += "; nominal lengths are maxima, the range ratio is not recorded"
        _load_rows(b, src, label, cfg, p_tok=p_tok, g_tok=g_tok, rate=rate,
                   ttft=_num(row, "median_ttft_ms"), tpot=_num(row, "median_tpot_ms"),
                   tput=_num(row, "output_tokens_per_s"), note=note, prompts=_num(row, "num_prompts"))
        if engine == "vllm" and _num(row, "median_itl_ms") is not None:
            b.skip(src, label + " ITL", "vLLM multi-step (10 steps) ITL counts 10-token bursts; TPOT is used")


def stated_mean_output_tokens(row: dict[str, str]) -> float | None:
    """Mean output tokens per request that a run states through its two rates, G = output tok/s ÷ request/s
    (bench_serving prints both over the same run), else None.

    SGLang's benchmark_vllm_060 offline rows (5,000 ShareGPT prompts): 4,281.51 / 22.03 = 194.3 (SGLang 8B),
    3,856.01 / 19.84 = 194.4 (SGLang 70B), 4,132.37 / 21.27 = 194.3 and 3,700.64 / 19.04 = 194.4 (vLLM): one
    prompt sample, 13 % below the 224 of Lambda's 320-prompt file that SHAREGPT_OUTPUT_TOKENS holds."""
    out, req = _num(row, "output_tokens_per_s"), _num(row, "request_throughput_per_s")
    return out / req if out and req else None


def _sglang_repo_engine(row: dict[str, str]) -> str:
    """Engine of a SGLang-vs-vLLM row: SGLang v0.3 (before the overlap scheduler), vLLM V0 multi-step where the
    row states ``--num-scheduler-steps``, else the current entries."""
    if row["engine"] == "SGLang":
        return "sglang_v03" if row["engine_version"].startswith("v0.3") else "sglang"
    return "vllm_v0_multistep" if "--num-scheduler-steps" in row["notes"] else "vllm"


def _datacrunch(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "datacrunch_sglang_h200"
    for row in rows:
        tp = int(row["tp"])
        rate = float(row["request_rate_per_s"])
        p_tok = float(row["mean_input_tokens_derived"])
        g_tok = float(row["mean_output_tokens_derived"])
        label = f"{row['model']} H200 TP{tp} rate {row['request_rate_per_s']} {p_tok:g}/{g_tok:g} n={row['num_prompts']}"
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"], tp=tp,
                      engine="sglang")
        if cfg is None:
            continue
        cfg = with_stated_memory_share(cfg, row.get("notes", ""))
        ttft = _num(row, "median_ttft_ms")
        if math.isinf(rate):
            b.skip(src, label + " TTFT", "offline burst (all requests at t=0): TTFT is the queue of the burst")
            ttft = None
        elif _overloaded(cfg, row, rate, p_tok, g_tok):
            b.skip(src, label + " TTFT", "overloaded run (output rate below λ·G/(1 + λ·E2E/N), what a finite run "
                   "that keeps up reports, or λ·E2E more sequences than the replica holds): TTFT is the queue "
                   "built up over the run, not a steady state")
            ttft = None
        _load_rows(b, src, label, cfg, p_tok=p_tok, g_tok=g_tok, rate=rate, ttft=ttft,
                   tpot=_num(row, "median_itl_ms"), tput=_num(row, "output_tokens_per_s"),
                   note="uniform random lengths predicted at their means", prompts=_num(row, "num_prompts"))


MEM_FRACTION = re.compile(r"--mem-frac(?:tion-static)?[ =]([0-9.]+)")
"""SGLang's launch flag for the share of GPU memory it claims (weights, KV pool), as a row's notes print it."""


def with_stated_memory_share(cfg: Config, notes: str) -> Config:
    """The row's deployment with the memory share its launch command states (``--mem-frac 0.87``: the engine
    claims u = 0.87 of M, so its KV room is 0.87·M − W − A), else unchanged (the engine's default u)."""
    found = MEM_FRACTION.search(notes)
    if found is None:
        return cfg
    acc, wfmt, terms, engine = cfg
    return acc, wfmt, replace(terms, memory_claim_frac=float(found.group(1))), engine


def _overloaded(cfg: Config, row: dict[str, str], rate: float, p_tok: float, g_tok: float) -> bool:
    """A finite Poisson run that did not keep up: its output rate is below 0.95 of what a run that keeps up
    reports (finite_runs.finite_run_output_rate), or Little's law puts λ·E2E sequences in the replica, more than
    it holds (memory, engine limit): the rest wait in a queue that grows over the run."""
    e2e_ms = _num(row, "median_e2e_latency_ms")
    kept_up = finite_run_output_rate(rate, g_tok, prompts=_num(row, "num_prompts"), e2e_ms=e2e_ms)
    if (_num(row, "output_tokens_per_s") or 0.0) < 0.95 * kept_up:
        return True
    return e2e_ms is not None and rate * e2e_ms / MS_PER_S > _engine_batch(cfg, context_tokens=p_tok + g_tok)


def _lmdeploy(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "lmdeploy_a100_fp16"
    for row in rows:
        tp = int(row["tp"])
        batch = float(row["batch_size"])
        p_tok, g_tok = float(row["input_tokens"]), float(row["output_tokens"])
        label = f"{row['model']} A100 TP{tp} B={batch:g} {p_tok:g}/{g_tok:g}"
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"], tp=tp,
                      engine="trtllm")
        if cfg is None:
            continue
        note = "TurboMind (C++ engine) predicted with the trtllm engine's host costs"
        if batch == 1:
            b.add(src, "ttft_or_prefill", label, _num(row, "first_token_latency_mean_ms"), cfg,
                  prompt_tokens=p_tok, note=note)
        else:
            b.skip(src, label + " first-token latency",
                   "static batch of B prompts: TurboMind admits them in memory-limited waves (13B B=64: 7.8 s)")
        b.add(src, "tpot_itl", label, _num(row, "token_latency_p50_ms"), cfg, batch=batch,
              context_tokens=float(perf.mean_decode_context_tokens(p_tok, g_tok)), note=note)
        b.add(src, "throughput", label, _num(row, "output_tokens_per_s"), cfg, batch=batch,
              prompt_tokens=p_tok, output_tokens=g_tok, note=note)


def _rocm(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "rocm_vllm_mi300x"
    for row in rows:
        tp = int(row["tp"])
        p_tok, g_tok = float(row["input_tokens"]), float(row["output_tokens"])
        offline = row["benchmark"].startswith("benchmark_throughput")
        batch = _num(row, "batch_size")
        label = f"{row['model']} MI300X TP{tp} FP8 {p_tok:g}/{g_tok:g} " + ("offline" if offline else f"B={batch:g}")
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"], tp=tp,
                      engine="vllm", kv=KV_FORMAT_IDS.get(row["kv_precision"]) or "fp8")
        if cfg is None:
            continue
        if offline:
            seqs = _engine_batch(cfg, context_tokens=p_tok + g_tok)
            b.add(src, "throughput", label, _num(row, "throughput_tokens_per_s"), cfg, batch=seqs,
                  prompt_tokens=p_tok, output_tokens=g_tok,
                  note="output-only vs total tokens not stated [U]; vLLM default max_num_seqs 256", fitted=False)
        else:
            b.add(src, "tpot_itl", label, _num(row, "step_ms_derived"), cfg, batch=batch or 1.0,
                  prompt_tokens=p_tok, output_tokens=g_tok, serving=True,
                  context_tokens=float(perf.mean_decode_context_tokens(p_tok, g_tok)),
                  note="end-to-end batch latency / 2048 (includes the prefill share)")


def _vllm_blog(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "vllm_blog_fp8_kvcache"
    for row in rows:
        kv = KV_FORMAT_IDS.get(row["kv_precision"])
        label = f"{row['model']} {row['gpu'].split(' ')[0]} {row['weights_precision']} KV {row['kv_precision']} {row['measurement']}"
        if kv is None:
            b.skip(src, label, "mixed KV cache (sliding-window layers BF16, others FP8) has no catalog format")
            continue
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"],
                      engine="vllm", kv=kv)
        if cfg is None:
            continue
        g_tok = float(row["output_tokens"])
        if row["measurement"].startswith("single-request"):
            intercept, note = _num(row, "itl_fit_intercept_ms"), "intercept of the post's linear ITL fit"
            if intercept is None:  # H100: one range for the three KV variants, no 32k point
                stated = stated_intercept_range_ms(row.get("notes", ""))
                if stated is None:
                    b.skip(src, label, "the post gives no intercept for this variant (slope only)")
                    continue
                intercept = sum(stated) / 2.0
                note = f"midpoint of the {stated[0]:g}-{stated[1]:g} ms intercepts the post gives across its KV variants"
            b.add(src, "tpot_itl", label + " ITL at ~0 context", intercept, cfg, context_tokens=g_tok / 2.0, note=note)
            b.add(src, "tpot_itl", label + " ITL at 32k context", _num(row, "itl_at_32k_context_ms_derived"),
                  cfg, context_tokens=32768.0 + g_tok / 2.0, note="linear ITL fit evaluated at 32k")
            continue
        _load_rows(b, src, label, cfg, p_tok=float(row["input_tokens"]), g_tok=g_tok,
                   concurrency=float(row["concurrency"]), ttft=_num(row, "median_ttft_ms"),
                   tpot=_num(row, "median_itl_ms"), tput=_num(row, "output_tokens_per_s"),
                   note="GPU not restated (H100 section) [U]; lengths ±15 %")


INTERCEPT_RANGE = re.compile(r"intercept[^;]*?([0-9.]+)-([0-9.]+) ms")
"""An ITL-fit intercept stated as a range in a row's notes ("intercept not given per variant: 4.03-4.07 ms")."""


def stated_intercept_range_ms(notes: str) -> tuple[float, float] | None:
    """(low, high) ms of the intercept a vLLM-blog row's notes state as a range over KV variants, else None."""
    found = INTERCEPT_RANGE.search(notes)
    return None if found is None else (float(found.group(1)), float(found.group(2)))


def _github(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "github_issue_serving_points"
    for i, row in enumerate(rows):
        tp = int(row["tp"] or row["gpu_count"])
        conc = float(row["concurrency_or_batch"])
        p_tok, g_tok = float(row["input_tokens"]), float(row["output_tokens"])
        label = f"row {i + 1} {row['model']} {row['gpu']} TP{tp} {p_tok:g}/{g_tok:g} N={conc:g}"
        old = row["engine_version"].startswith("PR branch")
        engine = "sglang" if row["engine"] == "SGLang" else ("vllm_eager" if old else "vllm")
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"], tp=tp,
                      engine=engine)
        if cfg is None:
            continue
        if old:
            b.add(src, "tpot_itl", label, _num(row, "decode_step_ms_derived"), cfg, batch=conc,
                  prompt_tokens=p_tok, output_tokens=g_tok, serving=True,
                  context_tokens=float(perf.mean_decode_context_tokens(p_tok, g_tok)), fitted=False,
                  note="static batch latency / 256 (Dec 2023 vLLM; NCCL or custom all-reduce pair)")
            continue
        gpus = float(row["gpu_count"])
        per_gpu = _num(row, "output_tokens_per_s_per_gpu")
        p_tok, g_tok = mean_lengths(row, p_tok, g_tok)
        ttft = _num(row, "mean_ttft_ms")
        transient = start_transient_reason(cfg[2], clients=conc, prompt_tokens=p_tok, mean_ttft_ms=ttft,
                                           p99_ttft_ms=_num(row, "p99_ttft_ms"))
        if transient:
            b.skip(src, label + " TTFT", transient)
        _load_rows(b, src, label, cfg, p_tok=p_tok, g_tok=g_tok, concurrency=conc,
                   ttft=None if transient else ttft, tpot=_num(row, "mean_tpot_ms"),
                   tput=per_gpu * gpus if per_gpu is not None else None,
                   note=UNCERTAIN + _moe_layout_note(row), percentile=None)


def _moe_layout_note(row: dict[str, str]) -> str:
    """The layout a DeepSeek row ran, as the source states it: EP1 (tensor parallel, as predicted) or not stated."""
    if "DeepSeek" not in row["model"]:
        return ""
    return f"; MoE, TP{row['tp']} EP1 as run" if row.get("ep") == "1" else "; MoE, EP not stated (TP assumed)"


def mean_lengths(row: dict[str, str], p_nominal: float, g_nominal: float) -> tuple[float, float]:
    """Mean (prompt, output) tokens of a serving row from its own columns, else the nominal lengths.

    bench_serving reports E2E = TTFT + (G − 1)·TPOT per request, so the mean output is
    G = 1 + (E2E − TTFT)/TPOT; the prompt follows from the token rates, P = G·(total − output)/output.
    Where the lengths are fixed this gives back the nominal ones (tt-inference-server rows: 128.0 and
    1024.5 for 128 / 1024); the InferenceX 1k/1k rows give G ≈ 915-930 and P ≈ G, i.e. random lengths
    uniform in [0.8, 1]·1024 (mean 922), not fixed ones. Kept nominal unless the derived mean is off by > 2 %.
    """
    e2e, ttft, tpot = (_num(row, k) for k in ("end_to_end_latency_ms", "mean_ttft_ms", "mean_tpot_ms"))
    if e2e is None or ttft is None or not tpot:
        return p_nominal, g_nominal
    g_mean = 1.0 + (e2e - ttft) / tpot
    if abs(g_mean / g_nominal - 1.0) <= LENGTH_TOLERANCE_FRAC:
        return p_nominal, g_nominal
    out, total = _num(row, "output_tokens_per_s_per_gpu"), _num(row, "total_tokens_per_s_per_gpu")
    p_mean = g_mean * (total - out) / out if out and total else p_nominal * g_mean / g_nominal
    return p_mean, g_mean


LENGTH_TOLERANCE_FRAC = 0.02
"""Relative gap between the derived and the nominal mean length below which the nominal one is kept."""


def _azure_gb200(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "azure_gb200_trtllm"
    for row in rows:
        tp = int(row["tp"])
        p_tok, g_tok = float(row["input_tokens"]), float(row["output_tokens"])
        label = f"{row['model']} GB200 TP{tp} FP8 {p_tok:g}/{g_tok:g}"
        cfg = b.terms(src, label, model=row["model"], gpu=row["gpu"], quant=row["weights_precision"], tp=tp,
                      engine="trtllm")
        if cfg is None:
            continue
        batch = _fitting_batch(cfg[2], context_tokens=p_tok + g_tok, cap=MAX_OFFLINE_BATCH)
        b.add(src, "throughput", label + f" (B={batch:g})", _num(row, "throughput_tokens_per_s"), cfg,
              batch=batch, prompt_tokens=p_tok, output_tokens=g_tok,
              note="output-only vs total tokens not stated [U]")


LOAD_READERS = {
    "sglang_repo_benchmarks.csv": _sglang_repo,
    "datacrunch_sglang_h200.csv": _datacrunch,
    "lmdeploy_a100_fp16.csv": _lmdeploy,
    "rocm_vllm_mi300x.csv": _rocm,
    "vllm_blog_fp8_kvcache.csv": _vllm_blog,
    "github_issue_serving_points.csv": _github,
    "azure_gb200_trtllm.csv": _azure_gb200,
}
"""Measurement file → reader (called by planner.validate.sources.build_cases)."""
