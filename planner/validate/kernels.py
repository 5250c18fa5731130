"""Kernel check: the step functions' GEMM and attention times against in-house H200 kernel timings.

``measurements/h200_kernels.csv`` (``tools/measure_gpu_kernels.py``, one H200 SXM, 2026-12-04; see
measurements/README.md) times single cuBLAS GEMMs of the Llama-3.1-8B / 70B TP1-TP8 weight shapes at 1-16,384
rows (bf16 and FP8), causal flash attention of 512-32,768 tokens and one-token decode attention over a
contiguous KV cache. These are KERNEL timings, not serving rows: they are never a serving target nor part of
any fit; they anchor the efficiency terms physically.

Each row is predicted by the performance model's own step functions (:func:`planner.performance.decode_step`,
:func:`planner.performance.prefill_step`), on the deployment terms of the row's model, format and TP degree
cut down to the one kernel:

- GEMM Y[m×n] = X[m×k]·Wᵀ of a TP-t shard: a one-layer model whose linear layers are that GEMM at full width
  (F = 2·m·n·k·t FLOP, W = n·k·b·t bytes; the step divides both by t), no LM head, no attention, no host
  or step overhead; the time is the step's ``linear_ops_s``. Two paths: ``decode`` (a decode step of batch
  m) and ``prefill`` (a prefill of m tokens, η_p(m, t)).
- attention prefill of S tokens: a one-layer model with attention only, ``prefill_step(S).attention_ops_s``.
- decode attention of B sequences at history H: ``decode_step(B, H).attention_ops_s``.

Regimes (GEMM rows m): memory-bound m ≤ 64, ridge 64 < m < 1024, compute-bound m ≥ 1024.
"""

from __future__ import annotations

import csv
import dataclasses
import statistics
from dataclasses import dataclass
from pathlib import Path

from planner import performance as perf
from planner.catalog.loader import Catalog
from planner.performance.terms import DeploymentTerms
from planner.units import MS_PER_S
from planner.validate.scores import TimedRow

KERNEL_CSV = Path(__file__).resolve().parents[2] / "measurements" / "h200_kernels.csv"
"""In-house kernel timings (measurements/README.md); absent in an installed package → no kernel section."""
KERNEL_GPU = "h200_sxm"
MODEL_OF_SHAPE = {"8b": "llama_3_1_8b", "70b": "llama_3_1_70b"}
FORMAT_OF_DTYPE = {"bf16": "bf16", "fp8": "fp8"}
MEMORY_BOUND_MAX_ROWS = 64
COMPUTE_BOUND_MIN_ROWS = 1024


@dataclass(frozen=True)
class KernelRow(TimedRow):
    """One kernel timing and the model's time for it on one path (ms)."""

    kind: str
    """gemm, attn_prefill or attn_decode."""
    name: str
    dtype: str
    regime: str
    """memory (m ≤ 64), ridge, compute (m ≥ 1024); attention: prefill, or decode."""
    path: str
    """decode or prefill: the step function that charged the kernel."""
    label: str
    predicted_ms: float
    measured_ms: float


def gemm_regime(rows: float) -> str:
    """memory (m ≤ 64), ridge, or compute (m ≥ 1024)."""
    if rows <= MEMORY_BOUND_MAX_ROWS:
        return "memory"
    return "compute" if rows >= COMPUTE_BOUND_MIN_ROWS else "ridge"


def shape_tp(name: str) -> tuple[str, int]:
    """(model id, TP degree) of a shape name such as ``70b_tp4_down`` (``8b_qkv``: TP1)."""
    parts = name.split("_")
    tp = int(parts[1][2:]) if len(parts) > 2 and parts[1].startswith("tp") else 1
    return MODEL_OF_SHAPE[parts[0]], tp


def h200_terms(catalog: Catalog, *, model_id: str, weight_format: str = "bf16", tp: int = 1) -> DeploymentTerms:
    """Deployment terms of ``model_id`` on the measured H200 with ``weight_format`` weights, a bf16 KV cache
    and TP ``tp`` (the measured deployments: these kernels and the compiled step of kernel_steps.py)."""
    return perf.deployment_terms(
        catalog,
        model=catalog.model(model_id),
        gpu=catalog.gpu(KERNEL_GPU),
        weight_format=catalog.format(weight_format),
        kv_format=catalog.format("bf16"),
        tp=tp,
    )


def _bare_terms(terms: DeploymentTerms) -> DeploymentTerms:
    """``terms`` with one layer, no weights, FLOPs, host or step overhead."""
    return dataclasses.replace(
        terms,
        layers=1,
        full_attention_layers=0,
        window_layers=0,
        weights_read_fixed_bytes=0.0,
        linear_flop_per_token=0.0,
        lm_head_flop_per_token=0.0,
        attention_flop_per_pair_per_layer=0.0,
        host_step_ms=0.0,
        host_per_layer_us=0.0,
        host_per_sequence_us=0.0,
        efficiency=dataclasses.replace(terms.efficiency, step_overhead_s=0.0, layer_kernels_s=0.0),
        gemm_kernels=1.0,
    )


def gemm_times_ms(bare: DeploymentTerms, row: dict[str, str], bytes_per_value: float) -> dict[str, float]:
    """Model time of one GEMM row per path (``decode``, ``prefill``), ms; ``bare``: :func:`_bare_terms` of the
    row's model, format and TP degree, whose weights take ``bytes_per_value`` B each."""
    tp = bare.tp
    m, n, k = float(row["m_rows"]), float(row["n_cols"]), float(row["k_inner"])
    terms = dataclasses.replace(
        bare, weights_read_fixed_bytes=n * k * bytes_per_value * tp, linear_flop_per_token=2.0 * n * k * tp
    )
    decode = perf.decode_step(terms, batch=m, context_tokens=0.0).linear_ops_s
    prefill = perf.prefill_step(terms, prompt_tokens=m).linear_ops_s
    return {"decode": float(decode) * MS_PER_S, "prefill": float(prefill) * MS_PER_S}


def attention_time_ms(full: DeploymentTerms, row: dict[str, str]) -> float:
    """Model time of one attention row, ms: one layer of ``full`` (the 8B on the H200) with attention only."""
    terms = dataclasses.replace(
        _bare_terms(full), full_attention_layers=1,
        attention_flop_per_pair_per_layer=full.attention_flop_per_pair_per_layer,
    )
    if row["kind"] == "attn_prefill":
        step = perf.prefill_step(terms, prompt_tokens=float(row["seq_tokens"]))
    else:
        step = perf.decode_step(terms, batch=float(row["batch"]), context_tokens=float(row["context_tokens"]))
    return float(step.attention_ops_s) * MS_PER_S


def kernel_rows(catalog: Catalog, path: Path = KERNEL_CSV) -> list[KernelRow]:
    """Every gemm / attention row of the kernel CSV with the model's time on each path it runs on (the terms
    of each measured deployment evaluated once)."""
    if not path.is_file():
        return []
    bare: dict[tuple[str, str, int], DeploymentTerms] = {}
    full = h200_terms(catalog, model_id=MODEL_OF_SHAPE["8b"])
    out: list[KernelRow] = []
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            measured = float(row["time_ms"])
            if row["kind"] == "gemm":
                label = f"{row['name']} {row['dtype']} m={row['m_rows']}"
                regime = gemm_regime(float(row["m_rows"]))
                model_id, tp = shape_tp(row["name"])
                fmt = FORMAT_OF_DTYPE[row["dtype"]]
                key = (model_id, fmt, tp)
                if key not in bare:
                    bare[key] = _bare_terms(h200_terms(catalog, model_id=model_id, weight_format=fmt, tp=tp))
                times = gemm_times_ms(bare[key], row, catalog.format(fmt).bytes_per_value)
                for kernel_path, ms in times.items():
                    out.append(KernelRow("gemm", row["name"], row["dtype"], regime, kernel_path, label, ms, measured))
            elif row["kind"] in ("attn_prefill", "attn_decode"):
                decode = row["kind"] == "attn_decode"
                label = (
                    f"B={row['batch']} H={row['context_tokens']}" if decode else f"S={row['seq_tokens']} causal"
                )
                phase = "decode" if decode else "prefill"
                ms = attention_time_ms(full, row)
                out.append(KernelRow(row["kind"], row["name"], row["dtype"], phase, phase, label, ms, measured))
    return out


@dataclass(frozen=True)
class KernelSummary:
    """Median absolute and median signed error of one (kind, dtype, regime, path) group."""

    kind: str
    dtype: str
    regime: str
    path: str
    rows: int
    median_abs_pct: float
    median_signed_pct: float


REGIME_ORDER = {"memory": 0, "ridge": 1, "compute": 2, "prefill": 3, "decode": 4}


def kernel_summaries(rows: list[KernelRow]) -> list[KernelSummary]:
    """Error summary per (kind, dtype, regime, path), in a stable order."""
    groups: dict[tuple[str, str, str, str], list[KernelRow]] = {}
    for r in rows:
        groups.setdefault((r.kind, r.dtype, r.regime, r.path), []).append(r)
    out = [
        KernelSummary(
            kind, dtype, regime, kpath, len(rs),
            statistics.median(abs(r.error_pct) for r in rs), statistics.median(r.error_pct for r in rs),
        )
        for (kind, dtype, regime, kpath), rs in groups.items()
    ]
    return sorted(out, key=lambda s: (s.kind, s.dtype, s.path, REGIME_ORDER.get(s.regime, 9)))


WORKED_EXAMPLES = ("8b_gate_up bf16 m=1", "8b_gate_up bf16 m=2048", "70b_tp8_gate_up bf16 m=2048",
                   "8b_gate_up fp8 m=2048", "S=8192 causal", "B=1 H=1024", "B=32 H=8192")


KERNEL_NOTES = [
    "Findings (planner validate-model runs of 2026-12-04; medians TPOT / throughput / TTFT, baseline",
    "14.7 / 13.4 / 16.5 %):",
    "",
    "- Memory-bound GEMMs (1-32 rows, bf16 and FP8 alike) take t = 3.6 µs + W / 3.99 TB/s (0.83 of the",
    "  4.8 TB/s spec; least squares on relative error, median 5 %). The step charges W / (β·0.65): bf16",
    "  m ≤ 64 19.0 % median (+10.8 % signed; small shards fast, large ones slow), 5.2 % with the kernel",
    "  terms `weight_stream_frac` 0.83 + `gemm_launch_us` 3.6 (ledgers.efficiency.weight_stream_s).",
    "- Those terms on the serving rows (Hopper and Blackwell; catalogs/calibration.yaml keys exist, unset):",
    "  alone 14.4 / 14.6 / 17.8 % (SGLang-repo throughput 22.4 → 31.1, datacrunch TPOT 13.3 → 18.2); with",
    "  22 µs per layer of small kernels (`layer_kernels_us`) 13.3 / 12.6 / 17.8 %, leave-one-source-out",
    "  vllm_blog 23.6 → 19.0, github 19.0 → 11.7, lambda 16.1 → 14.3 but rocm 11.0 → 17.5, book",
    "  16.5 → 22.1, lmdeploy 10.0 → 12.4 (the per-engine fit of the other sources moves). Not shipped: the",
    "  0.65 MBU also carries large-batch losses the model lacks. (22 µs was a guess; the compiled step below",
    "  measures 18.9 µs with the KV at 0.9 — ten combinations with it: the report's method notes.)",
    "- Prefill GEMM efficiency: a TP-t shard saturates in its rows m, not m/t (70B TP8 gate_up at 2,048",
    "  rows: 739 TFLOP/s, as the unsharded GEMM). η(m) instead of η(m/t): bf16 TP > 1 ridge 70.9 → 20.8 %,",
    "  compute 23.7 → 18.4 %; on serving rows datacrunch TTFT 20.4 → 36.1 %, SGLang-repo throughput",
    "  22.4 → 43.0 %: the TP loss of the serving rows is not the GEMMs' and the exposed all-reduce does not",
    "  carry it, so η(n/t) stays as its stand-in.",
    "- FP8 GEMMs reach 0.64 of the FP8 peak where bf16 reaches 0.71 of its own (m ≥ 1,024, same shapes:",
    "  ratio 0.89; MAMF H100 0.88, H200 0.91): accelerators.yaml `format_mfu_scale: {fp8: 0.89}` on Hopper.",
    "- Flash-attention prefill saturates at 4-8K tokens (148 TFLOP/s at 512, 613 at 8K); η_p(S) with",
    "  n_half = 64 makes 512-2,048-token attention 29-72 % fast (≈ 0.3 ms on an 8B 512-token prefill).",
    "  Decode attention: ≈ 7.8 µs per kernel floor (B = 1, 1K history) and 0.9 of spec at B ≥ 32 (the KV",
    "  at 0.65 is 31-43 % slow there; KV at 0.9 on serving rows was examined before: throughput 16.3 %).",
    "- decode_step_graph (whole Llama-3.1-8B step, ≈ 30 unfused elementwise kernels per layer): 6.06 ms at",
    "  B = 1 is an upper bound on a fused engine's GPU time (kernel terms: 4.5 ms of GEMMs, 0.25 ms of",
    "  attention, ≈ 41 µs per layer left); eager − graph ≈ 5.6 ms ≈ 5.5 µs per launch (eager host cost).",
    "",
]


def kernel_markdown(rows: list[KernelRow]) -> list[str]:
    """The "Kernel check" section of reports/validation.md (empty without kernel rows)."""
    if not rows:
        return []
    lines = [
        "## Kernel check (in-house H200 kernels; not a serving target, not fitted)",
        "",
        "measurements/h200_kernels.csv (tools/measure_gpu_kernels.py, one H200 SXM at its 700 W limit,",
        "2026-12-04) predicted by the step functions themselves (planner/validate/kernels.py): a GEMM as the",
        "linear layers of a one-layer model on the decode path (decode step of batch m) and on the prefill path",
        "(prefill of m tokens); attention as the attention term of prefill_step / decode_step. Signed error",
        "+ = the model is slow. GEMM regimes: memory m ≤ 64, ridge, compute m ≥ 1024.",
        "",
        "| Kind | Dtype | Regime | Path | Rows | Median abs error | Median signed error |",
        "| --- | --- | --- | --- | ---: | ---: | ---: |",
    ]
    for s in kernel_summaries(rows):
        lines.append(
            f"| {s.kind} | {s.dtype} | {s.regime} | {s.path} | {s.rows} | {s.median_abs_pct:.1f} % | "
            f"{s.median_signed_pct:+.1f} % |"
        )
    lines += ["", "| Kernel | Path | Predicted µs | Measured µs | Error |", "| --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        if r.label in WORKED_EXAMPLES:
            lines.append(
                f"| {r.kind} {r.label} | {r.path} | {r.predicted_ms * 1e3:.1f} | {r.measured_ms * 1e3:.1f} | "
                f"{r.error_pct:+.1f} % |"
            )
    return [*lines, "", *KERNEL_NOTES]
