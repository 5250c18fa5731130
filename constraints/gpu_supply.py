"""GPU supply: the GPUs replicas use at a site are covered by rented nodes, owned devices and inventory.

    Σ_{k on (g, s)} f_k · Σ_j n_rep[k, j, t]  ≤  Σ_{o ∈ O(g, s)} e_o · unit_o · units[o, t]      ∀ g, s, t
    units[o, t] ≤ max_o                                                                          (variable bound)
    units[o, t] = bought[o] · 1[start(t) ≥ lead_o]                     ∀ buy options o, t             (bought nodes persist)

gpus_k = tp·pp·share (share < 1 when small models share a GPU: planner/performance/sharing.py; shares are
powers of two, so a total that fits whole GPUs packs into them). Groups that need a larger instance than the
smallest offered are also counted by constraints/instance_packing.py.
Notation: f_k the GPUs a replica of k holds (gpus_k, or its footprint in a rack it does not divide:
ledgers.racks.replica_footprint_gpus); O(g, s) the supply options of GPU type g at site s (rent per kind and
instance size, edge devices,
inventory, bought nodes); unit_o GPUs per unit (a node for rent/buy, 1 for a device); e_o the usable
fraction (spot availability × (1 − preemption overhead), 1 otherwise); max_o the devices or inventory there.
"""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.ledgers.racks import replica_footprint_gpus
from planner.problem.context import BuildContext
from planner.problem.supply import SupplyKind


def add_gpu_supply(ctx: BuildContext) -> None:
    """Add one supply row per (gpu, site, period)."""
    options: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, opt in enumerate(ctx.supply):
        options[(opt.gpu, opt.site)].append(i)
    for i, opt in enumerate(ctx.supply):
        if opt.kind is not SupplyKind.BUY:
            continue
        for t in ctx.periods:
            delivered = ctx.start_month[t] >= opt.available_from_month
            rhs = ctx.variables["bought"][i] if delivered else 0
            # written as a difference: on PuLP 4 `variable == variable` is a Python bool, not a row
            ctx.add_row("gpu_supply", ("bought", opt.gpu, opt.site, t), ctx.variables["units"][(i, t)] - rhs == 0)
    groups = ctx.cands.groupby(["gpu", "site"]).groups
    gpus_of = replica_footprints(ctx)
    for (gpu, site), cands in groups.items():
        for t in ctx.periods:
            used = pulp.lpSum(gpus_of[int(k)] * ctx.replicas(int(k), t) for k in cands)
            supplied = pulp.lpSum(
                ctx.supply[i].effective_gpus_frac * ctx.supply[i].unit_gpus * ctx.variables["units"][(i, t)]
                for i in options.get((str(gpu), str(site)), [])
            )
            ctx.add_row("gpu_supply", (gpu, site, t), used <= supplied)


def replica_footprints(ctx: BuildContext) -> dict[int, float]:
    """f_k: the GPUs a replica of each candidate holds — a share of one GPU stays fractional, a whole replica
    holds its rack footprint (planner.ledgers.racks.replica_footprint_gpus)."""
    node_of = {str(g): ctx.gpu(str(g)).gpus_per_node for g in ctx.cands["gpu"].unique()}
    gpu_of = ctx.column("gpu")
    footprint: dict[tuple[int, int], float] = {}  # (replica GPUs, node GPUs) → f: a handful of shapes

    def of(n: int, node: int) -> float:
        if (n, node) not in footprint:
            footprint[(n, node)] = float(replica_footprint_gpus(n, node_gpus=node))
        return footprint[(n, node)]

    return {k: float(n) if float(n) < 1 else of(int(n), node_of[str(gpu_of[k])]) for k, n in ctx.column("gpus").items()}
