"""Kernel check, whole step: the model's decode-step GPU time against a compiled, graph-replayed H200 step.

``measurements/h200_kernels_extra.csv`` rows ``decode_step_compiled`` (tools/measure_gpu_kernels.py
``measure_compiled_steps``, one H200 SXM, 2026-12-04): a Llama-3.1-8B-shaped bf16 decode step (32 layers,
bf16 KV over a contiguous cache) with everything but attention compiled by torch.compile / Inductor (fused
RMSNorm, RoPE-like scaling, SwiGLU and residual adds, as vLLM V1 runs them), one SDPA call per layer and an
in-graph argmax, replayed as ONE CUDA graph: no host work and no launch gaps. Like the kernel rows these are
never a serving target nor part of any fit.

Predicted = :func:`planner.performance.decode_step` of Llama-3.1-8B bf16 (weights and KV) on ``h200_sxm`` at
TP1 at the row's batch B and history H, minus its ``overhead_s``, which holds exactly:

- the engine's host time ``host_s`` = host_step_ms + L·host_per_layer_us + B·host_per_sequence_us
  (catalogs/engines.yaml, default engine): the graph replay has no scheduler, no launches, no bookkeeping;
- the GPU-side ``step_overhead_ms`` of the calibration record (sampling, logits copy, stream sync): the
  replay ends at the in-graph argmax, with no copy and no synchronisation per step.

What is left is linear_ops + attention_ops (+ the TP/PP communication, 0 at TP1 on one stage).

Implied small-kernel time per layer = (measured − GEMMs and LM head − attention) / L, with the GEMMs and
the attention of the model's own step (``linear_ops_s``, ``attention_ops_s``) on the kernel-level weight
stream (:data:`KERNEL_GEMM_TERMS` where the catalog leaves them unset) and no per-layer term: the fused
norms, RoPE, SwiGLU, residual adds, KV writes and each attention kernel's fixed time.
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
from planner.validate.kernels import h200_terms
from planner.validate.scores import TimedRow

STEP_CSV = Path(__file__).resolve().parents[2] / "measurements" / "h200_kernels_extra.csv"
"""In-house timings (measurements/README.md); absent in an installed package → no step table."""
STEP_KIND = "decode_step_compiled"
STEP_MODEL, STEP_FORMAT = "llama_3_1_8b", "bf16"
KERNEL_GEMM_TERMS = {"weight_stream_frac": 0.83, "gemm_launch_s": 3.6e-6}
"""Memory-bound cuBLAS GEMMs on the H200 (h200_kernels.csv, 1-32 rows, bf16 and FP8): 3.6 µs + W / (0.83·β)."""


@dataclass(frozen=True)
class StepRow(TimedRow):
    """One compiled decode step: measured and predicted GPU time and the model's parts of it (ms)."""

    batch: int
    context_tokens: int
    layers: int
    measured_ms: float
    predicted_ms: float
    """decode_step total − overhead_s (host and step overhead excluded, see the module docstring)."""
    gemm_ms: float
    """linear_ops_s with the kernel-level weight stream and no per-layer term (4 GEMMs per layer + LM head)."""
    attention_ms: float
    """attention_ops_s of the same terms (KV read against attention FLOPs)."""

    @property
    def implied_layer_us(self) -> float:
        """(measured − GEMMs − attention) / L, µs per layer: the fused small kernels the step does not model."""
        return (self.measured_ms - self.gemm_ms - self.attention_ms) / self.layers * 1e3


def step_terms(catalog: Catalog) -> DeploymentTerms:
    """Deployment terms of the measured step: Llama-3.1-8B, bf16 weights and KV, H200 SXM, TP1."""
    return h200_terms(catalog, model_id=STEP_MODEL, weight_format=STEP_FORMAT)


def kernel_gemm_terms(terms: DeploymentTerms) -> DeploymentTerms:
    """``terms`` with the kernel-level weight stream (the catalog's where set, else :data:`KERNEL_GEMM_TERMS`)
    and no per-layer small-kernel time: the step's GEMMs and attention alone."""
    e = terms.efficiency
    return dataclasses.replace(terms, efficiency=dataclasses.replace(
        e,
        weight_stream_frac=e.weight_stream_frac or KERNEL_GEMM_TERMS["weight_stream_frac"],
        gemm_launch_s=e.gemm_launch_s or KERNEL_GEMM_TERMS["gemm_launch_s"],
        layer_kernels_s=0.0,
    ))


def gpu_step_ms(terms: DeploymentTerms, *, batch: float, context_tokens: float) -> float:
    """decode_step total − overhead_s (engine host time and step overhead), ms."""
    step = perf.decode_step(terms, batch=batch, context_tokens=context_tokens)
    return float(step.total_s - step.overhead_s) * MS_PER_S


def step_rows(catalog: Catalog, path: Path = STEP_CSV) -> list[StepRow]:
    """Every ``decode_step_compiled`` row with the model's GPU step time and its GEMM / attention parts."""
    if not path.is_file():
        return []
    terms = step_terms(catalog)
    parts = kernel_gemm_terms(terms)
    out: list[StepRow] = []
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["kind"] != STEP_KIND:
                continue
            b, h = int(row["batch"]), int(row["context_tokens"])
            step = perf.decode_step(parts, batch=b, context_tokens=h)
            out.append(StepRow(
                b, h, terms.layers, float(row["time_ms"]), gpu_step_ms(terms, batch=b, context_tokens=h),
                float(step.linear_ops_s) * MS_PER_S, float(step.attention_ops_s) * MS_PER_S,
            ))
    return out


def implied_layer_kernels_us(rows: list[StepRow]) -> float:
    """Median over the compiled steps of the implied small-kernel time per layer, µs."""
    return statistics.median(r.implied_layer_us for r in rows)


def step_markdown(rows: list[StepRow]) -> list[str]:
    """The compiled-step table of the "Kernel check" section (empty without rows)."""
    if not rows:
        return []
    lines = [
        "### Compiled decode step (Llama-3.1-8B bf16, H200, TP1; measurements/h200_kernels_extra.csv)",
        "",
        "torch.compile (Inductor) step, one SDPA per layer, replayed as one CUDA graph. Predicted = decode_step",
        "total − overhead_s, i.e. without the engine's host time (host_step_ms + L·host_per_layer_us +",
        "B·host_per_sequence_us) and the GPU-side step_overhead_ms (sampling, logits copy, sync): the replay has",
        "none of them. GEMMs (4 per layer + LM head) and attention: the model's linear_ops / attention_ops with",
        "the kernel-level weight stream (0.83 of β + 3.6 µs per GEMM) and no per-layer term; implied per layer =",
        "(measured − GEMMs − attention) / 32.",
        "",
        "| Batch | Context | Measured ms | Predicted ms | Error | GEMMs ms | Attention ms | Implied µs/layer |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.batch} | {r.context_tokens} | {r.measured_ms:.3f} | {r.predicted_ms:.3f} | {r.error_pct:+.1f} % | "
            f"{r.gemm_ms:.3f} | {r.attention_ms:.3f} | {r.implied_layer_us:.1f} |"
        )
    return [*lines, "", f"Median implied small-kernel time: {implied_layer_kernels_us(rows):.1f} µs per layer.", ""]
