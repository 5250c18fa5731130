"""Memory fit: an operating point may only be used if weights + KV + workspace fit every GPU.

    n_rep[k, j, t] = 0      ∀ (k, j) with M_W/(t·p) + b_j·c_KV(P + G)/(s_kv·p) + M_ws > M_cap(g_k),  ∀ t

Notation: memory per GPU of point j from the candidate table (``memory_per_gpu_gb``), M_cap the GPU's
memory (catalog ``memory_gb``). The candidate table only emits fitting points, so this family is the
guard that keeps a corrupted or hand-edited table from producing an infeasible plan (card 1: capacity
first, then time).
"""

from __future__ import annotations

from planner.problem.context import BuildContext


def add_memory_fit(ctx: BuildContext) -> None:
    """Fix replicas of non-fitting points to zero."""
    n_rep = ctx.variables["n_rep"]
    gpu_of = ctx.cands["gpu"].to_dict()
    for p in ctx.points.itertuples():
        gpu = ctx.gpu(str(gpu_of[int(p.cand)]))
        if float(p.memory_per_gpu_gb) > gpu.memory_gb:
            for t in ctx.periods:
                ctx.add_row(
                    "memory_fit", (int(p.cand), int(p.point), t), n_rep[(int(p.cand), int(p.point), t)] <= 0
                )
