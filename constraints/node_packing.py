"""Node packing: GPUs come in whole nodes and a TP×PP group must pack into them.

    tp_k·pp_k ≤ G_node(g) or is a multiple of it                                          (1)
    tp_k·pp_k ≤ G_node(g)  unless the GPU has a scale-out link and the site a fabric       (2)
    n_rep[k, j, t] = 0 for every k violating (1) or (2)

Notation: G_node(g) GPUs per node of type g. With group sizes that divide the node size, first-fit packs
any mix whose GPU total fits the nodes, so the supply rows (gpu_supply) can count GPUs; whole-node
rounding happens there (rented and bought units are nodes). A size that does not divide the node (TP16
in a 72-GPU NVL72 rack) is charged its footprint G_node/⌊G_node/size⌋ in the supply rows
(ledgers.racks.replica_footprint_gpus), the GPUs it holds in a node filled with its shape.
"""

from __future__ import annotations

from planner.problem.context import BuildContext


def add_node_packing(ctx: BuildContext) -> None:
    """Forbid replica shapes that cannot be packed into whole nodes."""
    n_rep = ctx.variables["n_rep"]
    for cand, gpu_id, site_id, gpus in ctx.cands[["gpu", "site", "gpus"]].itertuples(name=None):
        gpu = ctx.gpu(str(gpu_id))
        node = gpu.gpus_per_node
        if float(gpus) < 1:  # a share of one GPU (planner.performance.sharing) packs into any GPU
            continue
        size = int(gpus)
        packs = size <= node or size % node == 0  # (1)
        fits_node = size <= node or (
            gpu.scale_out is not None and ctx.sites[str(site_id)].has_scale_out_fabric
        )  # (2)
        if packs and fits_node:
            continue
        for p in ctx.points_of(int(cand)):
            for t in ctx.periods:
                ctx.add_row(
                    "node_packing", (int(cand), int(p.point), t), n_rep[(int(cand), int(p.point), t)] <= 0
                )
