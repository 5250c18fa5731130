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

from planner.problem.supply import SupplyKind, SupplyOption


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
