"""Dominance pruning before the MILP: candidates and operating points that can never lower the cost.

Each rule keeps at least one optimal plan: a dropped candidate or point is matched by a kept one that uses
no more GPUs, is no dearer and serves at least as much.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from planner.catalog.loader import Catalog
from planner.catalog.schema import Site
from planner.costs import instance_sizes, rent_quote
from planner.scenario import Scenario


def _values(column: pd.Series) -> list[Any]:
    """A column's values as a list, read through numpy (a string column's own iteration boxes every cell)."""
    return list(column.to_numpy().tolist())


def prune_dominated(cands: pd.DataFrame) -> pd.DataFrame:
    """Drop candidates dominated within (workload, role, gpu, site): another one uses no more GPUs, has no worse
    quality tier and at least the same best capacity (ties keep the lower candidate id); for prefill and decode
    pools also one whose whole number of smaller replicas serves at least as much on the same GPUs."""
    keep: list[int] = []
    groups: dict[tuple[str, str, str, str], list[tuple[int, float, int, float]]] = defaultdict(list)
    roles = cands["role"] if "role" in cands.columns else pd.Series("colocated", index=cands.index)
    names = ["cand", "workload", "gpu", "site", "gpus", "quality_tier", "best_capacity_requests_per_s"]
    cols = zip(cands.index.tolist(), *(_values(cands[c]) for c in names[1:]), _values(roles), strict=True)
    for cand, workload, gpu, site, gpus, tier, cap, role in cols:  # column lists: no per-cell pandas boxing
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


def spread_workloads(scenario: Scenario) -> set[str]:
    """Workloads whose SLO must hold with a site down (their copies at every site are kept)."""
    return {w.name for w in scenario.workloads if w.redundancy is not None and w.redundancy.sites_down}


def unlimited_site(site: Site) -> bool:
    """A cloud site without GPU or power limits (the only sites whose copies may be dropped)."""
    return site.kind == "cloud" and site.max_gpus is None and site.max_power_kw is None


def rent_quotes(catalog: Catalog, scenario: Scenario, gpu_id: str, site: Site) -> tuple[float, ...]:
    """USD per GPU-hour of ``gpu_id`` at ``site`` for every rental kind and instance size (inf: no quote): a cheap
    1-GPU quote is not a node's."""
    gpu = catalog.accelerators[gpu_id]
    out = []
    for kind in scenario.rental_kinds:
        for size in instance_sizes(gpu):
            quote = rent_quote(catalog, gpu, site, kind, scenario.rent_providers, instance_gpus=size)
            out.append(quote.usd_per_gpu_hour if quote else float("inf"))
    return tuple(out)


def copy_key(cands: pd.DataFrame) -> list[str]:
    """The columns that make candidates at different sites copies of one deployment."""
    key_cols = ["workload", "model", "quantization", "kv_dtype", "gpu", "tp", "pp", "share_frac"]
    key_cols += ["ep"] if "ep" in cands else []  # expert-parallel layouts are their own configuration
    return key_cols + (["role"] if "role" in cands.columns else [])


def prune_dominated_sites(
    cands: pd.DataFrame, catalog: Catalog, scenario: Scenario, sites: dict[str, Site]
) -> pd.DataFrame:
    """Drop a candidate at an unlimited cloud site when the same deployment at another unlimited cloud site
    is no more expensive for every rental kind and serves at least as much.

    Without site limits nothing forces traffic apart, and pooling GPUs at one site never needs more whole
    nodes than splitting them, so the dominated copy cannot lower the optimum. Sites with GPU or power
    limits, edge sites and data centers are always kept, and so is every site of a workload whose SLO must
    hold with a site down (``redundancy.failure_domain: site``): that forces its traffic apart (it was left
    with one site and no plan).

    k2 dominates k (same deployment, both at unlimited cloud sites) when cap2 ≥ cap, k2's quotes are no higher
    than k's for every kind and instance size, and k2 is strictly better somewhere or wins the tie (a lower
    quote, more capacity, else the lower id). That is a strict partial order (transitive: prices and
    capacities compare component-wise, the tie by id), so the candidates kept are its maximal ones — every
    dominated one is dominated by a maximal one — and all pairs of a deployment's copies are compared at once.
    """
    spread = spread_workloads(scenario)
    key_cols = copy_key(cands)
    if "share_frac" not in cands:  # tables built without GPU sharing
        cands = cands.assign(share_frac=1.0)
    site_of = cands["site"].to_numpy()
    open_sites = [str(s) for s in pd.unique(site_of) if unlimited_site(sites[str(s)])]
    rows = np.isin(site_of, open_sites) & ~np.isin(cands["workload"].to_numpy(), sorted(spread))
    at = np.flatnonzero(rows)
    if len(at) < 2:
        return cands
    group = cands.iloc[at].groupby(key_cols, sort=False, dropna=False).ngroup().to_numpy()
    k_of, g_of = cands.index.to_numpy()[at].astype(np.int64), cands["gpu"].to_numpy()[at]
    cap_of, s_of = cands["best_capacity_requests_per_s"].to_numpy(dtype=float)[at], site_of[at]
    # every ordered pair (k, k2) of one deployment's copies
    order = np.argsort(group, kind="stable")
    sizes = np.bincount(group)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    member_size = sizes[group[order]]
    first = np.repeat(order, member_size)  # each row, as often as its group has members
    offset = np.arange(len(first)) - np.repeat(np.cumsum(member_size) - member_size, member_size)
    second = order[starts[group[first]] + offset]
    pair = first != second
    first, second = first[pair], second[pair]
    # per (GPU, site of k2, site of k): k2's quotes no higher than k's for every kind and size, and some differs
    # (rows at one site have the same quotes)
    gpu_code, gpus = pd.factorize(g_of)
    site_code, site_names = pd.factorize(s_of)
    n_sites = len(site_names)
    triple = (gpu_code[first] * n_sites + site_code[second]) * n_sites + site_code[first]
    distinct, where = np.unique(triple, return_inverse=True)
    quotes: dict[tuple[str, str], tuple[float, ...]] = {}
    le_of, differs_of = np.ones(len(distinct), dtype=bool), np.zeros(len(distinct), dtype=bool)
    for i, code in enumerate(distinct.tolist()):
        gpu, rest = divmod(code, n_sites * n_sites)
        site2, site = divmod(rest, n_sites)
        if site2 == site:
            continue
        for s in (site, site2):
            if (gpus[gpu], site_names[s]) not in quotes:
                quotes[(gpus[gpu], site_names[s])] = rent_quotes(catalog, scenario, gpus[gpu], sites[site_names[s]])
        p2, p1 = quotes[(gpus[gpu], site_names[site2])], quotes[(gpus[gpu], site_names[site])]
        le_of[i], differs_of[i] = all(a <= b for a, b in zip(p2, p1, strict=True)), p2 != p1
    le, differs = le_of[where], differs_of[where]
    cap, cap2 = cap_of[first], cap_of[second]
    dominates = (cap2 >= cap) & le & (differs | (cap2 > cap) | (k_of[second] < k_of[first]))
    drop = np.unique(k_of[first[dominates]])
    return cands.drop(index=drop.tolist())


def prune_dominated_points(points: pd.DataFrame) -> pd.DataFrame:
    """Keep, per candidate, the operating points no other point beats on capacity.

    A replica costs the same at every point of its curve (same GPUs), so a point with less capacity than
    another of the same candidate never lowers the cost; only the best point (ties: the smaller batch,
    i.e. lower latency) reaches the MILP. The full curve stays in the candidate table for reports.
    """
    ordered = points.sort_values(["cand", "capacity_requests_per_s", "batch"], ascending=[True, False, True])
    return ordered.drop_duplicates("cand", keep="first").sort_values(["cand", "batch"])


SPLIT_SAME = ("workload", "gpu", "site", "model", "quantization", "kv_dtype")
"""Columns a co-located candidate and the smaller replicas that replace it share (:func:`prune_split_replicas`)."""


def prune_split_replicas(cands: pd.DataFrame, catalog: Catalog, scenario: Scenario) -> pd.DataFrame:
    """Drop a co-located candidate k of n_k GPUs when m = n_k / n_k' whole replicas of a smaller co-located
    candidate k' (same workload, GPU type, site, model and formats) use the same GPUs and serve at least as
    much: m · cap_k' ≥ cap_k.

    Exact (keeps an optimal plan): replace each replica of k by m replicas of k'. The GPUs, hence every
    supply, site, power, budget and spot row, are unchanged (m · footprint(n_k') ≤ footprint(n_k)); the
    smaller groups fit every instance k's fit (instance_packing) and pack into whole nodes because n_k'
    divides the node (node_packing); k' has no worse quality tier, the same formats (quantization policy)
    and meets the TTFT SLO's network + prefill test (placement_rtt), and its capacity rows carry the flow. Workloads with a
    ``redundancy`` rule are left alone: a node failure takes out more capacity of the denser replicas.
    Best capacities in requests/s (``best_capacity_requests_per_s``), replica sizes in GPUs (``gpus``)."""
    guarded = {w.name for w in scenario.workloads if w.redundancy is not None and w.redundancy.spare_replicas > 0}
    roles = cands["role"] if "role" in cands.columns else pd.Series("colocated", index=cands.index)
    ttft_ms = {w.name: w.slo.ttft_ms for w in scenario.workloads}
    cols = [*SPLIT_SAME, "gpus", "quality_tier", "best_capacity_requests_per_s", "prefill_ms", "network_ms"]
    groups: dict[tuple[Any, ...], list[tuple[int, float, int, float, bool]]] = defaultdict(list)
    for (cand, *key, gpus, tier, cap, prefill, network), role in zip(
        cands[cols].itertuples(name=None), roles, strict=True
    ):
        if role == "colocated" and str(key[0]) not in guarded and float(gpus) >= 1:
            in_time = float(network) + float(prefill) < ttft_ms[str(key[0])]  # placement_rtt's time test
            groups[tuple(key)].append((int(cand), float(gpus), int(tier), float(cap), in_time))
    drop: set[int] = set()
    for key, rows in groups.items():
        node = catalog.accelerators[str(key[1])].gpus_per_node
        for k, gpus, tier, cap, _in_time in rows:
            for _k2, gpus2, tier2, cap2, in_time2 in rows:
                whole = gpus2 < gpus and int(gpus) % int(gpus2) == 0 and node % int(gpus2) == 0
                if whole and in_time2 and tier2 <= tier and cap2 * (gpus // gpus2) >= cap:
                    drop.add(k)
                    break
    return cands.drop(index=sorted(drop))
