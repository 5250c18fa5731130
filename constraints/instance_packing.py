"""Instance packing: a replica's TP×PP group runs inside one rented instance (1/2/4/8 GPUs).

    Σ_{k on (g, s), min(gpus_k, G_node) ≥ σ} gpus_k · Σ_j n_rep[k, j, t]
        ≤  Σ_{o ∈ O(g, s), size_o ≥ σ} e_o · unit_o · units[o, t]              ∀ g, s, t, σ ∈ Σ(g, s)

Notation: Σ(g, s) the group sizes σ > 1 of the candidates at (g, s) for which some option's instance is
smaller than σ (elsewhere the row is implied by gpu_supply); size_o the largest group one unit of o hosts
(planner.problem.instances.instance_gpus: the instance size for rent, a node for buy, inventory and edge
devices). With sizes on a divisibility chain these rows and gpu_supply's (σ = the smallest size) are exact:
any replica mix satisfying them packs into the units (planner/problem/instances.py, (★)).
"""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.problem.context import BuildContext
from planner.problem.instances import instance_gpus, packing_size


def add_instance_packing(ctx: BuildContext) -> None:
    """Add one row per (gpu, site, period, group size) where smaller instances could not host the group."""
    options: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, opt in enumerate(ctx.supply):
        options[(opt.gpu, opt.site)].append(i)
    for (gpu_id, site), cands in ctx.cands.groupby(["gpu", "site"]).groups.items():
        node = ctx.gpu(str(gpu_id)).gpus_per_node
        opts = options.get((str(gpu_id), str(site)), [])
        size_of = {i: instance_gpus(ctx.supply[i], node) for i in opts}
        smallest = min(size_of.values(), default=node)
        gpus_of = ctx.column("gpus")
        group = {int(k): packing_size(float(gpus_of[int(k)]), node) for k in cands}
        for sigma in sorted({g for g in group.values() if g > smallest}):
            for t in ctx.periods:
                used = pulp.lpSum(
                    float(gpus_of[k]) * ctx.replicas(k, t) for k, g in group.items() if g >= sigma
                )
                hosts = pulp.lpSum(
                    ctx.supply[i].effective_gpus_frac * ctx.supply[i].unit_gpus * ctx.variables["units"][(i, t)]
                    for i in opts
                    if size_of[i] >= sigma
                )
                ctx.add_row("instance_packing", (gpu_id, site, t, sigma), used <= hosts)
