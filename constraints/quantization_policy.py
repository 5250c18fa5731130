"""Quantization / quality policy: a workload is served only in formats it allows, up to its quality tier.

    flow[k, t] = 0     ∀ k with q_k ∉ Q_w, or kv_k ∉ Q^KV_w, or tier(q_k, kv_k) > tier_max(w),  ∀ t

Notation: Q_w the workload's ``quantizations``, Q^KV_w its ``kv_dtypes``, tier the format quality tier
(0 bf16/fp16, 1 fp8/int8, 2 4-bit) and tier_max(w) its ``max_quality_tier``.
"""

from __future__ import annotations

from planner.problem.context import BuildContext


def add_quantization_policy(ctx: BuildContext) -> None:
    """Forbid candidates whose formats the workload's policy excludes."""
    flow = ctx.variables["flow"]
    workloads = {w.name: w for w in ctx.scenario.workloads}
    cols = ctx.cands[["workload", "quantization", "kv_dtype"]]
    for cand, workload, quantization, kv_dtype in cols.itertuples(name=None):
        w = workloads[str(workload)]
        tier = max(
            ctx.catalog.formats[str(quantization)].quality_tier,
            ctx.catalog.formats[str(kv_dtype)].quality_tier,
        )
        if quantization in w.quantizations and kv_dtype in w.kv_dtypes and tier <= w.max_quality_tier:
            continue
        for t in ctx.periods:
            ctx.add_row("quantization_policy", (int(cand), t), flow[(int(cand), t)] <= 0)
