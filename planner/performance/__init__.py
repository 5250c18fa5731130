"""The performance model: one deployment (model, format, GPU, TP, PP) → memory, TTFT, decode step, throughput.

This module composes the ledgers (cards 1, 2, 5, 6, 8) with catalog data and the calibrated efficiency
terms. It is the single code path used by ``planner predict``, by the candidate table of ``planner plan``,
by the plan audit and by ``make validate``.

Two steps:

1. :func:`deployment_terms` turns catalog records into a flat :class:`DeploymentTerms` of floats (bytes,
   FLOPs, peaks, link figures, efficiencies). Nothing else reads the catalog.
2. The time/memory functions (:func:`decode_step`, :func:`prefill_step`, :func:`memory_per_gpu_bytes`, ...)
   are plain arithmetic over those terms and a batch / context, so they accept numpy arrays: the candidate
   table evaluates all candidates × batch breakpoints at once by building a DeploymentTerms of columns.

Decode step of B sequences at history H, TP degree t, PP degree p (B split into p micro-batches):

    T_step = T_overhead + p·[max(T_linear, T_weights) + max(T_attn, T_kv) + T_tp_comm] + (p − 1)·T_pp
    T_linear = F_lin(B/p) / (t·p) / (Π·η_c)             T_weights = R_W(B/p) / (t·p) / (β·η_m)
    T_attn = F_attn(B/p, H) / (t·p) / (Π_a·η_c)         T_kv = (B/p)·c_KV(H) / (s_kv·p) / (β·η_m)
    T_tp_comm = 2·(L/p)·[2(t − 1)·α + 2(t − 1)·M/(t·B_link·η_link)],  M = (B/p)·d·2 B
                (or NVLS α_S + M/B_S where the switch reduces and that is faster: ledgers.collectives)

with s_kv = min(t, n_KV) KV shards (MLA latents are replicated over TP); Π is the dense peak of the weights'
format, Π_a = min(Π, Π of the KV cache's format) that of attention (queries times cached keys and values, in
the wider of the two formats: an FP8-weight model with a bf16 cache attends at the bf16 rate). The linear
layers and attention are serially dependent operator groups, each bound by its own roofline (card 7), so their
times add; the all-reduce start-up 2(t − 1)·α is the in-node NCCL small-message latency (``tp_latency`` in the
breakdown; planner/ledgers/communication.py allreduce_startup_s). Prefill of P tokens:

    T_prefill = T_overhead + max(F_lin(P)/(t·Π·η_p(P)) + F_head/(t·Π·η_d), M_W/(t·β·η_m))
                + max(F_attn(P)/(t·Π_a·η_p(P)), KV_write)
                + 2L·T_allreduce(P·d·2 B, t) + (p − 1)·T_pp      (F_head: the LM head's one row per prompt,
                                                                 a decode-like GEMM at η_d: steps.lm_head_s)

References: cards 1 (step bounds), 2 (bytes and FLOPs), 5 (roofline), 6 (ring/tree all-reduce), 8 (TP ledger).
"""

from __future__ import annotations

from planner.performance.links import Links, UnsupportedDeployment, group_links
from planner.performance.memory import (
    engine_reserve_bytes,
    kv_bytes_per_gpu,
    kv_bytes_per_sequence,
    kv_room_bytes,
    max_batch,
    memory_per_gpu_bytes,
    no_fit_reason,
    weights_bytes_per_gpu,
)
from planner.performance.prediction import Prediction, PredictRequest, predict, resolve
from planner.performance.steps import (
    StepBreakdown,
    decode_step,
    experts_touched,
    mean_decode_context_tokens,
    prefill_step,
    weights_read_bytes,
)
from planner.performance.sync import sync_limit_reason, sync_ratio
from planner.performance.terms import (
    ACTIVATION_BYTES,
    DEFAULT_ENGINE,
    DeploymentTerms,
    Num,
    check_format_supported,
    compute_peak_tflops,
    deployment_terms,
    efficiency_terms,
    engine_fields,
    format_as_run,
    gemm_kernels_per_pass,
)

__all__ = [
    "ACTIVATION_BYTES",
    "DEFAULT_ENGINE",
    "DeploymentTerms",
    "Links",
    "Num",
    "PredictRequest",
    "Prediction",
    "StepBreakdown",
    "UnsupportedDeployment",
    "check_format_supported",
    "compute_peak_tflops",
    "decode_step",
    "deployment_terms",
    "efficiency_terms",
    "engine_fields",
    "experts_touched",
    "format_as_run",
    "gemm_kernels_per_pass",
    "group_links",
    "kv_bytes_per_gpu",
    "kv_bytes_per_sequence",
    "max_batch",
    "mean_decode_context_tokens",
    "memory_per_gpu_bytes",
    "kv_room_bytes",
    "no_fit_reason",
    "engine_reserve_bytes",
    "predict",
    "prefill_step",
    "resolve",
    "sync_limit_reason",
    "sync_ratio",
    "weights_bytes_per_gpu",
    "weights_read_bytes",
]
