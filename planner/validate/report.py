"""The validation report: summaries, targets, markdown, JSON and the CSV of every row."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.validate.cases import TIME_METRICS, Skipped
from planner.validate.fit import FIT_PARAMETERS
from planner.validate.report_eager import EAGER_NOTES
from planner.validate.report_moe import MOE_NOTES
from planner.validate.report_throughput import THROUGHPUT_NOTES
from planner.validate.scores import ErrorSummary, ResultRow, summarize

LARGE_ERROR_RATIO = 2.0
TARGET_MEDIAN_PCT = {"tpot_itl": 15.0, "throughput": 15.0, "ttft_or_prefill": 25.0}
"""Median error over all rows of a metric (the first validation targets)."""
LOSO_TARGET_PCT = {"tpot_itl": 20.0, "throughput": 20.0, "ttft_or_prefill": 25.0}
"""Issue 12: leave-one-source-out median error on every source with >= MIN_SOURCE_ROWS rows of the metric."""
CALIBRATED_TARGET_PCT = {"tpot_itl": 12.0, "throughput": 12.0, "ttft_or_prefill": 20.0}
"""Issue 12: median error of the shipped (calibrated) model over all rows of the metric."""
MIN_SOURCE_ROWS = 5


@dataclass
class ValidationReport:
    """Rows, skipped rows, error summaries and calibration diagnostics of one validation run."""

    rows: list[ResultRow]
    skipped: list[Skipped]
    uncalibrated_rows: list[ResultRow] = field(default_factory=list)
    held_out_rows: list[ResultRow] = field(default_factory=list)
    """Each source's time/throughput rows predicted by a calibration fitted without that source."""
    fitted_parameters: dict[str, dict[str, float]] = field(default_factory=dict)

    def by_metric(self) -> list[ErrorSummary]:
        """Error summary per metric (calibrated model)."""
        return summarize(self.rows, key=lambda r: r.metric)

    def by_source(self) -> list[ErrorSummary]:
        """Error summary per source file (calibrated model)."""
        return summarize(self.rows, key=lambda r: r.source)

    def large_errors(self) -> list[ResultRow]:
        """Rows whose prediction is off by more than 2× either way."""
        return [r for r in self.rows if r.ratio > LARGE_ERROR_RATIO or r.ratio < 1.0 / LARGE_ERROR_RATIO]

    def targets(self) -> dict[str, dict[str, Any]]:
        """Median-error targets per metric and whether they are met."""
        medians = {s.group: s.median_pct for s in self.by_metric()}
        return {
            m: {"target_median_pct": t, "median_pct": medians.get(m), "met": medians.get(m, math.inf) <= t}
            for m, t in TARGET_MEDIAN_PCT.items()
        }

    def leave_one_source_out(self) -> list[ErrorSummary]:
        """Leave-one-source-out error per source (time and throughput rows together)."""
        return summarize(self.held_out_rows, key=lambda r: r.source)

    def issue_targets(self) -> dict[str, Any]:
        """Issue 12's targets: per metric, the leave-one-source-out median of every source with at least
        MIN_SOURCE_ROWS rows of it (LOSO_TARGET_PCT), and the calibrated median over all its rows
        (CALIBRATED_TARGET_PCT)."""
        loso = []
        for metric, target in LOSO_TARGET_PCT.items():
            rows = [r for r in self.held_out_rows if r.metric == metric]
            for x in summarize(rows, key=lambda r: r.source):
                if x.rows >= MIN_SOURCE_ROWS:
                    loso.append(
                        {"metric": metric, "source": x.group, "rows": x.rows, "median_pct": x.median_pct,
                         "target_pct": target, "met": x.median_pct <= target}
                    )  # fmt: skip
        medians = {s.group: s.median_pct for s in self.by_metric()}
        calibrated = {
            m: {"median_pct": medians.get(m), "target_pct": t, "met": medians.get(m, math.inf) <= t}
            for m, t in CALIBRATED_TARGET_PCT.items()
        }
        return {"leave_one_source_out": loso, "calibrated": calibrated}

    def _issue_target_lines(self) -> list[str]:
        """Markdown of :meth:`issue_targets`."""
        targets = self.issue_targets()
        loso = targets["leave_one_source_out"]
        met = sum(t["met"] for t in loso)
        lines = [
            f"## Targets of issue 12 (leave-one-source-out: met on {met} of {len(loso)} source × metric groups)",
            "",
            f"Leave-one-source-out median per metric and source with ≥ {MIN_SOURCE_ROWS} rows of the metric:",
            "",
            "| Metric | Source | Rows | LOSO median | Target | Met |",
            "| --- | --- | ---: | ---: | ---: | --- |",
        ]
        for t in loso:
            lines.append(
                f"| {t['metric']} | {t['source']} | {t['rows']} | {t['median_pct']:.1f} % | {t['target_pct']:.0f} % | "
                f"{'yes' if t['met'] else 'NO'} |"
            )
        lines += ["", "Calibrated (shipped catalog) median over all rows:", "", "| Metric | Median | Target | Met |"]
        lines.append("| --- | ---: | ---: | --- |")
        for metric, t in targets["calibrated"].items():
            med = "n/a" if t["median_pct"] is None else f"{t['median_pct']:.1f} %"
            lines.append(f"| {metric} | {med} | {t['target_pct']:.0f} % | {'yes' if t['met'] else 'NO'} |")
        return [*lines, ""]

    def _side_by_side(self) -> list[str]:
        """Rows of the per-source uncalibrated / calibrated / leave-one-source-out table."""
        timed = [r for r in self.rows if r.metric in TIME_METRICS]
        cal = {x.group: x for x in summarize(timed, key=lambda r: r.source)}
        unc = {
            x.group: x
            for x in summarize([r for r in self.uncalibrated_rows if r.metric in TIME_METRICS], key=lambda r: r.source)
        }
        out = [
            "| Source | Rows | Uncalibrated median | Calibrated median | LOSO median | LOSO p90 | LOSO ≤ uncalibrated |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for x in self.leave_one_source_out():
            u, c = unc.get(x.group), cal.get(x.group)
            u_pct = u.median_pct if u else math.nan
            c_pct = c.median_pct if c else math.nan
            ok = "yes" if x.median_pct <= u_pct + 1e-9 else "NO"
            out.append(
                f"| {x.group} | {x.rows} | {u_pct:.1f} % | {c_pct:.1f} % | {x.median_pct:.1f} % | {x.p90_pct:.1f} % | {ok} |"
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON object of ``planner validate-model --json``."""
        return {
            "rows": [_row_json(r) for r in self.rows],
            "skipped": [{"source": s.source, "label": s.label, "reason": s.reason} for s in self.skipped],
            "summary_by_metric": [_summary_json(s) for s in self.by_metric()],
            "summary_by_source": [_summary_json(s) for s in self.by_source()],
            "uncalibrated_summary_by_metric": [
                _summary_json(s) for s in summarize(self.uncalibrated_rows, key=lambda r: r.metric)
            ],
            "leave_one_source_out": [_summary_json(s) for s in self.leave_one_source_out()],
            "targets": self.targets(),
            "issue_targets": self.issue_targets() if self.held_out_rows else None,
            "large_errors": [_row_json(r) for r in self.large_errors()],
            "fitted_parameters": self.fitted_parameters,
        }

    def to_markdown(self) -> str:
        """The text of reports/validation.md."""
        lines = [
            "# Performance-model validation",
            "",
            "Generated by `planner validate-model` (planner/validate/) from",
            "`shared/reference/measurements/*.csv`. Errors are |predicted − measured| / measured.",
            "",
            "## Summary by metric",
            "",
            *_summary_table(self.by_metric(), summarize(self.uncalibrated_rows, key=lambda r: r.metric)),
            "",
            "## Targets",
            "",
            "| Metric | Target median | Measured median | Met |",
            "| --- | ---: | ---: | --- |",
        ]
        for metric, t in self.targets().items():
            med = t["median_pct"]
            med_s = "n/a" if med is None else f"{med:.1f} %"
            lines.append(
                f"| {metric} | {t['target_median_pct']:.0f} % | {med_s} | {'yes' if t['met'] else 'NO'} |"
            )
        lines += ["", "## Summary by source", "", *_summary_table(self.by_source(), None), ""]
        if self.held_out_rows:
            lines += self._issue_target_lines()
            lines += [
                "## Uncalibrated, calibrated and leave-one-source-out (time and throughput rows)",
                "",
                "Median abs error per source: the physics defaults, the shipped catalog, and each source's rows",
                "predicted with parameters fitted on the other sources only. A fit whose leave-one-source-out",
                "error is worse than uncalibrated on any source is not shipped (catalogs/calibration.yaml).",
                "",
                *self._side_by_side(),
                "",
            ]
        if self.fitted_parameters:
            lines += ["## Fitted parameters (per engine)", "", "| Engine | " + " | ".join(FIT_PARAMETERS) + " |"]
            lines.append("| --- |" + " ---: |" * len(FIT_PARAMETERS))
            for fam, params in sorted(self.fitted_parameters.items()):
                lines.append(f"| {fam} | " + " | ".join(f"{params[p]:.3g}" for p in FIT_PARAMETERS) + " |")
            lines.append("")
        lines += [
            "## Method and known gaps",
            "",
            "- Host costs are the engine's (catalogs/engines.yaml): each source is predicted with the engine it",
            "  ran (ML.ENERGY and the book: vllm; TensorRT-LLM and FasterTransformer rows: trtllm; edge rows:",
            "  llamacpp). Each TP all-reduce pays the engine's launch floor (4.4 µs with CUDA graphs, 8.5 µs",
            "  without, from nccl_allreduce_small_msg.csv) on top of the link's 2(t − 1)·α hops.",
            "- Calibration: per ENGINE (its kernels are the same code on every GPU), Nelder-Mead on",
            "  Σ w·ln²(pred/meas) of decode_mbu_scale and prefill_mfu_scale (bounded 0.8-1.25, prior λ = 0.05)",
            "  over the engine's fitted static rows; the step overhead is not fitted. Rows measured at a load",
            "  (Poisson rate or client concurrency) are validated through the scheduler (performance.load) but not",
            "  fitted. The fit is reported above but not shipped while its leave-one-source-out error is worse",
            "  than uncalibrated on some source.",
            "- Prefill GEMM efficiency η(n, t) = η_max·(n/t)/(n/t + n_half): n/t rows of full-width work per TP",
            "  rank, n_half 64 rows (Hopper/Blackwell/Ada/AMD) or 128 (Ampere/Apple), a tile-fill scale rather",
            "  than the roofline ridge (which counted the weight stream twice). Known limit: the curve has a",
            "  compute floor F_row·n_half/η_max, so a 1-token prompt at TP4 (LMDeploy 70B) is 2.9x too slow.",
            "  Saturating in rows n instead (floor F_row·n_half/(t·η_max)) fixes that row (+187 % → −16 %) but",
            "  makes TP4 prompts of 128-500 tokens 15-35 % fast (TTFT median 18.4 → 20.2 %, SGLang-vs-vLLM",
            "  throughput 22 → 43 %): not adopted.",
            "- Serving rows at a load: open loop at λ below capacity = the scheduler's steady state; at or above",
            "  capacity (rate inf, overloaded sweeps) the engine sits at its batch limit, T = T_mixed(B_lim,",
            "  B_lim·P/G); closed loop with N clients: λ = N / (TTFT + (G − 1)·TPOT). TTFT of bursts and of",
            "  overloaded runs is a queue of the finite run, not a steady state: listed as skipped.",
            "- TTFT under load (performance.tail.step_phase_s): an arriving prompt waits for the scheduler to",
            "  admit it, W_phase = (1 − e^(−N))·(n_s/2 + L)·T, T the step in flight; only a busy engine makes it",
            "  wait (N = B + λ·k·T_k requests in service, Poisson below the batch limit). vLLM v0.6 run with",
            "  --num-scheduler-steps 10 (sglang_repo_benchmarks; engine vllm_v0_multistep, prefill-first) admits",
            "  prompts between 10-step blocks, n_s = 10: those TTFT rows went from −66..−76 % to −10..−31 %.",
            "  SGLang ≥ v0.4's overlap scheduler has the next step queued already, L = 1 (datacrunch rows",
            "  −30..−48 % → −13..−32 %); SGLang v0.3 had none (engine sglang_v03, L = 0). Closed-loop rows take",
            "  TTFT at the load of the other N − 1 clients (arrival theorem): one client finds the engine idle",
            "  (Qwen2.5-72B TP2 128-token rows +31/+54 % → −12/+4 %).",
            "- TTFT gaps left: 70B TP4 prompts of 200-500 tokens under load stay 15-30 % fast (SGLang on",
            "  H100/H200, vLLM multi-step).",
            "- DeepSeek-R1 on SGLang (github_issue_serving_points rows 1-4, N = 8-64 clients): random lengths,",
            "  uniform in [0.8, 1]·1024 (1 + (E2E − TTFT)/TPOT = 915-930 output tokens, P ≈ G), predicted at the",
            "  means (validate.sources_load.mean_lengths): TPOT and throughput within 3-20 %. TTFT is skipped",
            "  (validate.finite_runs): p99 1,975-2,741 ms (6.0-6.5x the mean) exceeds the longest TTFT a closed",
            "  loop of N can queue, all N prompts at once, ⌈N·P/C⌉ chunk steps = 123-1,081 ms: a transient of",
            "  the finite run (its start). Without that tail (mean − 0.1·p99 if 10·N prompts, not recorded) the",
            "  means would be 133-162 ms against 55-86 modelled: the steady state is also ≈ 2x fast [U].",
            "  github TTFT leave-one-source-out 29 % (uncalibrated = calibrated 15.7 %): the vllm fit of the other",
            "  sources (prefill scale 0.84, not shipped) slows the Qwen2.5-72B prompts 1.2x (+25..+35 % at 1,024,",
            "  4,096, 8,192 tokens; +5..+14 % uncalibrated) and the AWQ rows are 0.5-1.4x either way.",
            "- Examined, not adopted: expert GEMMs saturating in rows per expert per TP rank (m/t, as the dense",
            "  curve does with n/t). DeepSeek rows 1-4 go 0.17-0.21x → 0.37-0.49x, but the AWQ 128-token",
            "  prefill goes 27 → 148 ms (measured 27-47), github TTFT median 38.0 → 55.5 %, github TPOT",
            "  14.7 → 28.7 %, trtllm_throughput 15.3 → 19.8 %, lambda TPOT 16.1 → 20.3 %.",
            "- The tt-inference-server rows (vLLM, N = 1) fit no per-token prefill cost: DeepSeek-R1-AWQ",
            "  1,024 → 4,096 tokens takes 105 → 120 ms, 3,072 more tokens (≈ 220 TFLOP) in 15 ms ≈ 15 PFLOP/s,",
            "  1.9x the dense peak of the 8 H100s; one 128-token configuration measures 47.3 and 27.3 ms;",
            "  Qwen2.5-72B TP2 at 2,048 tokens (149.5 ms) is under the ideal BF16 roofline (160 ms; the",
            "  precision is presumed) while 1,024 tokens take 129 ms.",
            "- llama.cpp prompt processing (edge_llamacpp): builds of Aug-Oct 2023 ran every quantized matmul",
            "  in dp4a MMQ kernels on the CUDA cores; PR 3776 (24 Oct 2023) moved batches > 32 on Volta+ to",
            "  cuBLAS FP16 (tensor cores) until int8 tensor-core MMQ (mid-2024): ggml-cuda.cu in the",
            "  llama-cpp-python 0.2.11 / 0.2.24 / 0.2.76 sdists. Engine llamacpp_2023_dp4a runs quantized weights",
            "  at Π_dp4a = SMs × 64 × 8 × boost (A100 78.0, H100 PCIe 102.4 TOPS) with the same η(n, t), no new",
            "  parameter. The undated XDAI Llama 2 rows (A100, H100 PCIe) take it; their build is not recorded",
            "  (an assumption): 166 vs 149 ms (+12 %) and 124 vs 105 ms (+18 %), against −71 / −83 % on the",
            "  tensor path. The dated RTX 4090 rows (Dec 2023, May 2024: cuBLAS era) stay on llamacpp (16-17 %).",
            "  The A100/H100 batch-1 TPOT (7.3-7.5 vs 3.8-4.0 ms) looks host-bound (no CUDA graphs, 2.7 ms GPU):",
            "  not modelled. The RTX 5090 row (Docker on WSL2, rate 'approximate', prompt length not stated [U])",
            "  stays an outlier (8x slow): its time assumes 512 tokens, a short prompt is fixed-cost bound.",
            "- The book's RTX PRO 6000 decode rounds and rates (26.3-29.6 ms at B = 1-64) had request logging on",
            "  (§1.3 box: 26.5 ms per step, 12.1 with it off, 10.7 GPU-only; flat from B = 1 to 16): skipped. The",
            "  logging-off step is predicted, not fitted: the vllm host cost and the card's MBU (0.8 = 8.62/10.7 ms,",
            "  not the logging floor's 0.65) come from that box.",
            "- vllm_blog_fp8_kvcache batch-1 ITL fits: Llama-3.1-8B 1.10-1.32x slow, gpt-oss-20b 0.70x. Not the",
            "  FP8 KV: its ITL slope is 0.54 of BF16's on H100 and B200 (model 0.50; < 1 % at 32k). KV streams at",
            "  0.90 (BF16) / 0.83 (FP8) of peak (H100 43.7/23.7 ns per token), and the two GPUs' intercepts give",
            "  Llama-3.1-8B ≈ 2.0 ms fixed per step with weights near peak (gpt-oss-20b ≈ 2.5 ms at ≈ 0.7), vs",
            "  1.5 ms at 0.65 modelled. Not adopted: the 0.65 cards at 0.8 (blog 27.4 → 9.3 %, datacrunch TPOT",
            "  13.3 → 21.2, sglang TPOT 8.3 → 19.0, throughput median 13.4 → 17.4 %); plus a 2-norm for",
            "  max(compute, memory) (TPOT 14.7 → 13.6 %, throughput 13.4 → 14.6, sglang 22.4 → 31.7 %); KV alone",
            "  at 0.9 (blog 24.4 %, throughput 16.3 %). 0.65 stands in for large-batch losses the model lacks.",
            "- Decode and prefill steps add the per-operator rooflines of the linear layers and of attention",
            "  (card 7: serially dependent operators do not overlap), so at large batch the KV read is no longer",
            "  hidden behind compute-bound projections; this closed most of the 1.4-1.55x over-prediction of the",
            "  dense TP4/TP8 TensorRT-LLM rows (70B H100 TP4 1.44 → 1.13, TP8 1.45 → 1.16). Each TP all-reduce",
            "  pays the in-node start-up 2(t − 1)·α (tp_latency, ring/chain hops as in the book's C6.5/C8.3),",
            "  11.5 µs at TP8: the missing time of those rows was 60-75 µs per all-reduce, far more than any",
            "  small-message latency, so the start-up term alone changed the medians by < 0.5 points.",
            "- TP over slower links (L40S PCIe TP4, A100 TP4/TP8) stays 1.4-1.5x optimistic: sharded GEMMs lose",
            "  efficiency and NVLink3/PCIe all-reduces reach less than the modelled bus bandwidth.",
            "- Large-batch decode (issue 12; examined, not adopted): TP>1 rows stay fast (trtllm_throughput dense",
            "  TP2-TP8 +9..+28 %, TP1 median ≈ −2 %; GB200 70B TP4 +38..+68 %). (a) The prefill curve on decode",
            "  GEMMs, η(B/t) with n_half 64 (32): throughput median 13.6 → 14.2 (11.2) %, but its floor",
            "  F_row·n_half slows small-batch TP8 decode (MI300X TPOT 12.7 → 74 (25) %, TPOT median 14.8 → 27.2",
            "  (18.4) %). (b) Wave quantization, ⌈B/128⌉·⌈n/(128·t)⌉ tiles over the SM count, split-K below one",
            "  wave, rows not rounded: throughput 13.6 → 12.8 % (GB200 39.5 → 28.0, rocm 15.0 → 7.4 %), TPOT",
            "  14.8 → 15.0 %, but A100 TP1 rows lose 9-11 points (128 tiles on 108 SMs = 2 waves, which cuBLAS",
            "  avoids with other tiles or stream-K) and tokens/s vs batch becomes a sawtooth: it models kernel",
            "  heuristics, not the GPU. (c) The unsharded residual-add + RMSNorm kernels, 8·d·2 B per token per",
            "  layer on every rank (70B, B = 512: 2.5 ms per H100 step at any TP): throughput 13.6 → 11.7 %",
            "  (trtllm_throughput 15.3 → 11.6, azure_gb200 39.5 → 31.4, sglang 17.2 → 14.6 %), but TPOT 14.8 →",
            "  15.3 % and, charged in prefill too, long-prompt TTFT rows that are already slow get slower and the",
            "  RAG examples cost 15-19 % more. (d) All-reduce at 8.4 MB (B = 512, d = 8192): the GB200 4-GPU",
            "  ring measures 19.5 µs at 1 MiB and 647 GB/s busbw at 1 GiB (72 % of 900) → ≈ 36 µs vs 27 µs",
            "  modelled, +12 % on the 70B TP4 step; engines use custom all-reduce at that size (not measured).",
            "- datacrunch rate-inf rows are slow in TPOT and fast in throughput at once: SGLang runs fewer than the",
            "  modelled 1,024 sequences (B = throughput·TPOT gives 220-900; it reserves KV for future output).",
            "- Throughput rows count output tokens: a total-token reading puts azure_gb200 8B 128/128 at 3.1x and",
            "  rocm 70B 2048/2048 at 2.2x (output reading: +54 %, +8 %), and 70B 128/2048 > 128/128 (21.4K vs",
            "  13.7K) only fits output tokens. The GB200 catalog (2,500/5,000/10,000 TFLOP/s, 8,000 GB/s,",
            "  NVLink5 900 GB/s) matches hardware.md. Efficiency is per accelerator, not per format: NVFP4 MAMF",
            "  6,624/10,000 = 66 % [U] vs BF16 73-78 %, and the B200/GB200 FP4 rows are +33..+42 %.",
            *MOE_NOTES, *THROUGHPUT_NOTES, *EAGER_NOTES,
            "- nccl_allreduce_small_msg is used for the engines' collective floor (catalogs/engines.yaml), not",
            "  predicted row by row; every other file is read, rows that cannot be expressed are listed below.",
            "",
            "## Rows above 2x error",
            "",
        ]
        big = self.large_errors()
        if big:
            lines += [
                "| Source | Metric | Row | Predicted | Measured | Ratio | Reason |",
                "| --- |" * 1 + " --- |" * 6,
            ]
            for r in big:
                lines.append(
                    f"| {r.source} | {r.metric} | {r.label} | {r.predicted:.4g} | {r.measured:.4g} | "
                    f"{r.ratio:.2f} | {r.note or _generic_reason(r)} |"
                )
        else:
            lines.append("None.")
        lines += [
            "",
            "## All rows",
            "",
            "| Source | Metric | Row | Predicted | Measured | Abs error |",
            "| --- | --- | --- | ---: | ---: | ---: |",
        ]
        for r in self.rows:
            lines.append(
                f"| {r.source} | {r.metric} | {r.label} | {r.predicted:.4g} | {r.measured:.4g} | {r.abs_pct_error:.1f} % |"
            )
        lines += ["", "## Skipped rows", "", "| Source | Row | Reason |", "| --- | --- | --- |"]
        for s in self.skipped:
            lines.append(f"| {s.source} | {s.label} | {s.reason} |")
        return "\n".join(lines) + "\n"


def _row_json(r: ResultRow) -> dict[str, Any]:
    return {
        "source": r.source,
        "metric": r.metric,
        "label": r.label,
        "family": r.family,
        "predicted": r.predicted,
        "measured": r.measured,
        "abs_pct_error": r.abs_pct_error,
        "note": r.note,
    }


def _summary_json(s: ErrorSummary) -> dict[str, Any]:
    return {"group": s.group, "rows": s.rows, "median_pct": s.median_pct, "p90_pct": s.p90_pct}


def _summary_table(summaries: list[ErrorSummary], baseline: list[ErrorSummary] | None) -> list[str]:
    base = {s.group: s for s in baseline or []}
    if baseline is None:
        out = ["| Group | Rows | Median abs error | p90 abs error |", "| --- | ---: | ---: | ---: |"]
        return out + [
            f"| {s.group} | {s.rows} | {s.median_pct:.1f} % | {s.p90_pct:.1f} % |" for s in summaries
        ]
    out = [
        "| Metric | Rows | Median abs error | p90 abs error | Uncalibrated median | Uncalibrated p90 |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in summaries:
        b = base.get(s.group)
        bm = f"{b.median_pct:.1f} %" if b else "n/a"
        bp = f"{b.p90_pct:.1f} %" if b else "n/a"
        out.append(f"| {s.group} | {s.rows} | {s.median_pct:.1f} % | {s.p90_pct:.1f} % | {bm} | {bp} |")
    return out


def _generic_reason(r: ResultRow) -> str:
    if r.metric == "allreduce_busbw":
        return "collective fabric differs from the catalog's (NICs per node, protocol, NCCL version)"
    if r.ratio > 1:
        return "model faster than measured: engine/runtime inefficiency not captured by the family fit"
    return "model slower than measured: the engine beats the modelled efficiency or the batch assumption"


def write_reports(report: ValidationReport, directory: Path) -> list[Path]:
    """Write validation.md and validation.csv into ``directory``; returns the paths (JSON: ``to_json``)."""
    directory.mkdir(parents=True, exist_ok=True)
    md = directory / "validation.md"
    md.write_text(report.to_markdown(), encoding="utf-8")
    path_csv = directory / "validation.csv"
    with path_csv.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["source", "metric", "label", "family", "predicted", "measured", "abs_pct_error", "note"])
        for r in report.rows:
            w.writerow(
                [
                    r.source,
                    r.metric,
                    r.label,
                    r.family,
                    f"{r.predicted:.6g}",
                    f"{r.measured:.6g}",
                    f"{r.abs_pct_error:.2f}",
                    r.note,
                ]
            )
    return [md, path_csv]
