"""Rental granularity: the instance a supply unit is, and which replica groups fit in it.

A rented unit is an instance of ``unit_gpus`` GPUs (1/2/4/8 where a price row lists that size, else a
whole node); a bought unit is a node; owned inventory and edge devices are pooled GPUs of the site, which
host groups up to a node (as before instance sizes existed). A replica's TP×PP group runs inside one
instance, except groups of whole nodes on a site with a scale-out fabric (multi-node, node_packing). A share
of one GPU (planner.performance.sharing) fits any instance.

Sizes are divisors of the node size (1, 2, 4, 8; the catalog loader checks it), so groups and instances form
a divisibility chain and a mix of groups fits the instances iff for every group size s ≥ 1

    Σ_{groups k with min(g_k, G_node) ≥ s} g_k · n_k  ≤  Σ_{units o with size_o ≥ s} size_o · u_o      (★)

(place the largest groups first: the free room left in instances ≥ s is then a multiple of s). The s = smallest
row is gpu_supply's; constraints/instance_packing.py adds the others where a smaller instance is offered.
"""

from __future__ import annotations

import pandas as pd

from planner.catalog.loader import Catalog
from planner.problem.supply import Procurement, SupplyKind, SupplyOption


def instance_gpus(option: SupplyOption, gpus_per_node: int) -> int:
    """Largest group one unit of ``option`` can host, GPUs: the instance size for rent, a node for buy,
    a node for pooled inventory and edge devices."""
    if option.kind in (SupplyKind.OWNED, SupplyKind.EDGE_DEVICE):
        return gpus_per_node
    return option.unit_gpus


def packing_size(group_gpus: float, gpus_per_node: int) -> float:
    """The size a replica group counts with in (★): its GPUs, capped at a node (multi-node groups take
    whole nodes); a share of one GPU counts as its fraction."""
    return min(group_gpus, float(gpus_per_node))


def useful_instances(
    supply: list[SupplyOption], group_sizes: dict[tuple[str, str], set[float]]
) -> list[SupplyOption]:
    """Drop rent instances that can never lower the cost: an instance of u GPUs is dominated by one of the
    same kind, GPU type and site of u' < u GPUs that costs no more per GPU when no replica group at that
    (gpu, site) has a size in (u', u] (u/u' of the smaller host everything the larger hosts, for no more),
    and an instance smaller than every group there hosts nothing. ``group_sizes``: (gpu, site) → the
    packing sizes of its candidates (planner.problem.instances.packing_size)."""
    keep = []
    for o in supply:
        sizes = group_sizes.get((o.gpu, o.site), set())
        if o.procurement is not Procurement.RENT or not o.node_gpus:
            keep.append(o)
            continue
        if sizes and o.unit_gpus < min(sizes):
            continue  # hosts no group
        per_gpu = o.usd_per_unit_month / o.unit_gpus
        dominated = any(
            p.kind is o.kind
            and p.gpu == o.gpu
            and p.site == o.site
            and p.unit_gpus < o.unit_gpus
            and p.usd_per_unit_month / p.unit_gpus <= per_gpu
            and not any(p.unit_gpus < s <= o.unit_gpus for s in sizes)
            and not (sizes and p.unit_gpus < min(sizes))
            for p in supply
        )
        if not dominated:
            keep.append(o)
    return keep


def group_sizes(catalog: Catalog, cands: pd.DataFrame) -> dict[tuple[str, str], set[float]]:
    """(gpu, site) → the packing sizes (:func:`packing_size`) of the candidates there."""
    out: dict[tuple[str, str], set[float]] = {}
    for gpu, site, gpus in cands[["gpu", "site", "gpus"]].itertuples(index=False, name=None):
        node = catalog.accelerators[str(gpu)].gpus_per_node
        out.setdefault((str(gpu), str(site)), set()).add(packing_size(float(gpus), node))
    return out
