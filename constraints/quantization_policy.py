"""Quantization / quality policy: a workload is served only in formats it allows, up to its quality tier.

    flow[k, t] = 0     ∀ k with q_k ∉ Q_w(m_k), or kv_k ∉ Q^KV_w, or tier(m_k, q_k, kv_k) > tier_max(w),  ∀ t

Notation: Q_w(m) the weight formats the workload allows on model m (its ``quantizations``, plus m's quantized
released format when they are left at the default), Q^KV_w its ``kv_dtypes``, tier the quality tier (0 16-bit
or the model's released format, 1 fp8/int8, 2 4-bit: planner.format_policy) and tier_max(w) its
``max_quality_tier``.
"""

from __future__ import annotations

from planner.format_policy import allowed_formats, weight_quality_tier
from planner.problem.context import BuildContext


def add_quantization_policy(ctx: BuildContext) -> None:
    """Forbid candidates whose formats the workload's policy excludes."""
    flow = ctx.variables["flow"]
    workloads = {w.name: w for w in ctx.scenario.workloads}
    cols = ctx.cands[["workload", "model", "quantization", "kv_dtype"]]
    for cand, workload, model, quantization, kv_dtype in cols.itertuples(name=None):
        w = workloads[str(workload)]
        tier = max(
            weight_quality_tier(ctx.catalog, str(model), str(quantization)),
            ctx.catalog.formats[str(kv_dtype)].quality_tier,
        )
        allowed = allowed_formats(ctx.catalog, w, str(model))
        if quantization in allowed and kv_dtype in w.kv_dtypes and tier <= w.max_quality_tier:
            continue
        for t in ctx.periods:
            ctx.add_row("quantization_policy", (int(cand), t), flow[(int(cand), t)] <= 0)
