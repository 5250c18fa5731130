"""Instance sizes and GPU sharing of a plan's deployments, for the readout.

Which deployments share a GPU is not a decision of the MILP (its supply rows only count shares; powers of
two pack whenever they fit): here the fractional replicas of each (GPU, site) are packed first-fit
decreasing into GPUs, period by period, and every deployment lists the others that landed on its GPUs.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict

from planner.readout.types import Deployment, SupplyLine


def gpus_of(replicas: int, gpus_per_replica: float) -> float:
    """GPUs of ``replicas`` replicas: an int when whole, else the fraction (e.g. 1 × 0.5 GPU → 0.5)."""
    total = replicas * gpus_per_replica
    return int(total) if float(total).is_integer() else total


def co_residents(deps: list[Deployment]) -> dict[int, set[int]]:
    """Index of a deployment → indices of the other deployments packed on one of its GPUs in some period
    (first-fit decreasing of the fractional replicas of one (GPU, site), per period)."""
    out: dict[int, set[int]] = defaultdict(set)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, d in enumerate(deps):
        if d.gpu_share_frac < 1:
            groups[(d.gpu, d.site)].append(i)
    for members in groups.values():
        periods = max(len(deps[i].replicas_per_period) for i in members)
        for t in range(periods):
            items = [
                (deps[i].gpu_share_frac, i)
                for i in members
                for _ in range(deps[i].replicas_per_period[t] if t < len(deps[i].replicas_per_period) else 0)
            ]
            bins: list[tuple[float, set[int]]] = []
            for share, i in sorted(items, key=lambda x: (-x[0], x[1])):
                for b, (free, held) in enumerate(bins):
                    if free >= share - 1e-12:
                        bins[b] = (free - share, held | {i})
                        break
                else:
                    bins.append((1.0 - share, {i}))
            for _free, held in bins:
                for i in held:
                    out[i] |= held - {i}
    return out


def hosting_instances(d: Deployment, supply: list[SupplyLine]) -> list[int]:
    """Instance sizes (GPUs) that can hold one replica of ``d`` among the supply lines at its (GPU, site):
    the group's own size (rounded up to the billed unit) on a quote sold in instances of unit … largest,
    the unit itself where it is a whole node, inventory or a device pool."""
    group = d.tp * d.pp * d.gpu_share_frac
    out = set()
    for s in supply:
        if (s.gpu, s.site) != (d.gpu, d.site) or s.units == 0:
            continue
        top = max(s.max_instance_gpus, s.unit_gpus)
        if group > top and ":x" in s.id:
            continue  # instances smaller than a node (planner.problem.supply.SupplyOption.id) too small for it
        if s.max_instance_gpus > s.unit_gpus:
            out.add(max(s.unit_gpus, math.ceil(group)))
        else:
            out.add(s.unit_gpus)
    return sorted(out)


def annotate_sharing(deps: list[Deployment], supply: list[SupplyLine]) -> list[Deployment]:
    """Attach the instance sizes that hold each deployment's replicas and its GPU co-residents."""
    shared = co_residents(deps)
    return [
        dataclasses.replace(
            d,
            instance_gpus=hosting_instances(d, supply),
            shares_gpu_with=sorted(f"{deps[j].workload}/{deps[j].model}" for j in shared.get(i, set())),
        )
        for i, d in enumerate(deps)
    ]
