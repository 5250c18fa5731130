"""Rental granularity: the instance a supply unit is, and which replica groups fit in it.

A rented unit is an instance of ``unit_gpus`` GPUs (1/2/4/8 where a price row lists that size, else a
whole node; sizes sold at one quote form one option billed per smallest instance that hosts groups up to its
largest, ``max_instance_gpus``); a bought unit is a node; owned inventory and edge devices are pooled GPUs of the site, which
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

import dataclasses
import math

import pandas as pd

from planner.catalog.loader import Catalog
from planner.catalog.schema import Site
from planner.problem.supply import Procurement, SupplyKind, SupplyOption
from planner.scenario import Scenario


def instance_gpus(option: SupplyOption, gpus_per_node: int) -> int:
    """Largest group one unit of ``option`` can host, GPUs: the instance size for rent, a node for buy,
    a node for pooled inventory and edge devices."""
    if option.kind in (SupplyKind.OWNED, SupplyKind.EDGE_DEVICE):
        return gpus_per_node
    return max(option.unit_gpus, option.max_instance_gpus)


def packing_size(group_gpus: float, gpus_per_node: int) -> float:
    """The size a replica group counts with in (★): its GPUs, capped at a node (multi-node groups take
    whole nodes); a share of one GPU counts as its fraction."""
    return min(group_gpus, float(gpus_per_node))


def useful_instances(
    supply: list[SupplyOption], group_sizes: dict[tuple[str, str], set[float]]
) -> list[SupplyOption]:
    """Drop rent options that can never lower the cost. With h = the largest group an option's instances
    host (:func:`instance_gpus`), u its billed unit and c its price per GPU, rent option o is dropped when

    - h_o is below every group size at its (gpu, site) (it hosts nothing), or
    - another useful option p of the same kind, GPU type and site has u_p ≤ u_o, c_p ≤ c_o and no group size
      in (h_p, h_o] (p hosts everything o hosts, at least as finely, for no more; exact ties keep the first).

    ``group_sizes``: (gpu, site) → the packing sizes (:func:`packing_size`) of its candidates."""

    def host(o: SupplyOption) -> int:
        return instance_gpus(o, o.node_gpus)

    def useful(o: SupplyOption) -> bool:
        sizes = group_sizes.get((o.gpu, o.site), set())
        return not sizes or host(o) >= min(sizes)

    def price(o: SupplyOption) -> float:
        return o.usd_per_unit_month / o.unit_gpus

    rent = [o for o in supply if o.procurement is Procurement.RENT and o.node_gpus]
    keep = []
    for i, o in enumerate(supply):
        if o.procurement is not Procurement.RENT or not o.node_gpus:
            keep.append(o)
            continue
        if not useful(o):
            continue
        sizes = group_sizes.get((o.gpu, o.site), set())
        dominated = any(
            p is not o
            and (p.kind, p.gpu, p.site) == (o.kind, o.gpu, o.site)
            and useful(p)
            and p.unit_gpus <= o.unit_gpus
            and price(p) <= price(o)
            and not any(host(p) < s <= host(o) for s in sizes)
            and (
                (p.unit_gpus, price(p), -host(p)) != (o.unit_gpus, price(o), -host(o)) or supply.index(p) < i
            )
            for p in rent
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


def bound_small_instances(
    supply: list[SupplyOption], scenario: Scenario, sites: dict[str, Site]
) -> list[SupplyOption]:
    """Bound on-demand instances smaller than a node where whole nodes are cheaper per GPU (a dominance
    bound: it keeps at least one optimal plan).

    With c_s the price per GPU of the small instances and c_n < c_s a node's (same GPU type and site): if a
    plan rents m ≥ G_node GPUs of small instances, G_node GPUs of them (whole instances; sizes are powers of
    two, so some subset sums to exactly G_node) move to one node for G_node·(c_n − c_s) < 0; if
    m·c_s ≥ G_node·c_n with m < G_node, one node holds them all for no more. So some optimal plan has
    m·c_s ≤ G_node·c_n, i.e. units ≤ ⌊G_node·c_n / c_s⌋ / unit. Only where the swap is free: on-demand
    (no reserved term, no spot share), a site without GPU or power limits, no rent volume tiers.
    """
    if scenario.economics.rent_volume_tiers:
        return supply
    out = []
    for o in supply:
        site = sites.get(o.site)
        small = o.kind is SupplyKind.RENT_ON_DEMAND and o.node_gpus and o.unit_gpus < o.node_gpus
        if small and site is not None and site.max_gpus is None and site.max_power_kw is None:
            per_gpu = o.usd_per_unit_month / o.unit_gpus
            node = min(
                (
                    p.usd_per_unit_month / p.unit_gpus
                    for p in supply
                    if (p.kind, p.gpu, p.site) == (o.kind, o.gpu, o.site) and p.unit_gpus == p.node_gpus
                ),
                default=math.inf,
            )
            if node < per_gpu and o.max_units is None:
                o = dataclasses.replace(o, max_units=math.floor(o.node_gpus * node / per_gpu + 1e-9) // o.unit_gpus)
        out.append(o)
    return out

