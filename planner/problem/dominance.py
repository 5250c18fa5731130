"""Dominance pruning before the MILP: candidates and operating points that can never lower the cost.

Each rule keeps at least one optimal plan: a dropped candidate or point is matched by a kept one that uses
no more GPUs, is no dearer and serves at least as much.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from planner.catalog.loader import Catalog
from planner.catalog.schema import Site
from planner.costs import instance_sizes, rent_quote
from planner.scenario import Scenario


def prune_dominated(cands: pd.DataFrame) -> pd.DataFrame:
    """Drop candidates dominated within (workload, role, gpu, site): another one uses no more GPUs, has no worse
    quality tier and at least the same best capacity (ties keep the lower candidate id); for prefill and decode
    pools also one whose whole number of smaller replicas serves at least as much on the same GPUs."""
    keep: list[int] = []
    groups: dict[tuple[str, str, str, str], list[tuple[int, float, int, float]]] = defaultdict(list)
    roles = cands["role"] if "role" in cands.columns else pd.Series("colocated", index=cands.index)
    cols = cands[["workload", "gpu", "site", "gpus", "quality_tier", "best_capacity_requests_per_s"]]
    for (cand, workload, gpu, site, gpus, tier, cap), role in zip(cols.itertuples(name=None), roles, strict=True):
        key = (str(workload), str(role), str(gpu), str(site))
        # gpus is fractional for a share of one GPU (planner.performance.sharing)
        groups[key].append((int(cand), float(gpus), int(tier), float(cap)))
    for (_w, role, _g, _s), rows in groups.items():
        rows.sort(key=lambda r: (r[1], r[2], -r[3], r[0]))
        frontier: list[tuple[float, int, float]] = []
        for cand, gpus, tier, cap in rows:
            if not any(
                g <= gpus and q <= tier and (c >= cap or (role != "colocated" and _replaces(g, c, gpus, cap)))
                for g, q, c in frontier
            ):
                frontier.append((gpus, tier, cap))
                keep.append(cand)
    return cands.loc[sorted(keep)]


def _replaces(gpus: float, cap: float, other_gpus: float, other_cap: float) -> bool:
    """Prefill/decode pools: other_gpus/gpus replicas of the smaller replica (a whole number) use the same GPUs,
    KV link bandwidth (GPUs × per-GPU link) and node slots as one larger replica and serve at least as much."""
    if gpus < 1 or other_gpus < 1:
        return False
    return int(other_gpus) % int(gpus) == 0 and cap * (int(other_gpus) // int(gpus)) >= other_cap


def prune_dominated_sites(
    cands: pd.DataFrame, catalog: Catalog, scenario: Scenario, sites: dict[str, Site]
) -> pd.DataFrame:
    """Drop a candidate at an unlimited cloud site when the same deployment at another unlimited cloud site
    is no more expensive for every rental kind and serves at least as much.

    Without site limits nothing forces traffic apart, and pooling GPUs at one site never needs more whole
    nodes than splitting them, so the dominated copy cannot lower the optimum. Sites with GPU or power
    limits, edge sites and data centers are always kept.
    """

    def unlimited(site_id: str) -> bool:
        site = sites[site_id]
        return site.kind == "cloud" and site.max_gpus is None and site.max_power_kw is None

    def prices(gpu_id: str, site_id: str) -> tuple[float, ...]:
        gpu, site = catalog.accelerators[gpu_id], sites[site_id]
        out = []
        for kind in scenario.rental_kinds:
            for size in instance_sizes(gpu):  # every instance size: a cheap 1-GPU quote is not a node's
                quote = rent_quote(catalog, gpu, site, kind, scenario.rent_providers, instance_gpus=size)
                out.append(quote.usd_per_gpu_hour if quote else float("inf"))
        return tuple(out)

    key_cols = ["workload", "model", "quantization", "kv_dtype", "gpu", "tp", "pp", "share_frac"]
    key_cols += ["ep"] if "ep" in cands else []  # expert-parallel layouts are their own configuration
    if "role" in cands.columns:
        key_cols.append("role")
    groups: dict[tuple[Any, ...], list[tuple[int, str, tuple[float, ...], float]]] = defaultdict(list)
    price_cache: dict[tuple[str, str], tuple[float, ...]] = {}
    if "share_frac" not in cands:  # tables built without GPU sharing
        cands = cands.assign(share_frac=1.0)
    cols = cands[[*key_cols, "site", "best_capacity_requests_per_s"]]
    for k, *key, site, cap in cols.itertuples(name=None):
        if not unlimited(str(site)):
            continue
        gpu = str(key[4])
        if (gpu, str(site)) not in price_cache:
            price_cache[(gpu, str(site))] = prices(gpu, str(site))
        groups[tuple(key)].append((int(k), str(site), price_cache[(gpu, str(site))], float(cap)))
    drop: set[int] = set()
    for rows in groups.values():
        if len(rows) < 2:
            continue
        for k, _site, pk, cap in rows:
            for k2, _site2, pk2, cap2 in rows:
                if k2 == k or k2 in drop:
                    continue
                no_dearer = all(a <= b for a, b in zip(pk2, pk, strict=True))
                strictly = pk2 != pk or cap2 > cap or k2 < k
                if no_dearer and cap2 >= cap and strictly:
                    drop.add(k)
                    break
    return cands.drop(index=sorted(drop))


def prune_dominated_points(points: pd.DataFrame) -> pd.DataFrame:
    """Keep, per candidate, the operating points no other point beats on capacity.

    A replica costs the same at every point of its curve (same GPUs), so a point with less capacity than
    another of the same candidate never lowers the cost; only the best point (ties: the smaller batch,
    i.e. lower latency) reaches the MILP. The full curve stays in the candidate table for reports.
    """
    ordered = points.sort_values(["cand", "capacity_requests_per_s", "batch"], ascending=[True, False, True])
    return ordered.drop_duplicates("cand", keep="first").sort_values(["cand", "batch"])
