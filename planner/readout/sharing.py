"""Instance sizes and GPU sharing of a plan's deployments, for the readout.

Which deployments share a GPU is not a decision of the MILP (its supply rows only count shares; powers of
two pack whenever they fit): here the fractional replicas of each (GPU, site) are packed first-fit
decreasing into GPUs, period by period, and every deployment lists the others that landed on its GPUs.
"""

from __future__ import annotations

import dataclasses
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


def annotate_sharing(deps: list[Deployment], supply: list[SupplyLine]) -> list[Deployment]:
    """Attach the instance sizes at each deployment's (GPU, site) and its GPU co-residents."""
    sizes: dict[tuple[str, str], set[int]] = defaultdict(set)
    for s in supply:
        sizes[(s.gpu, s.site)].add(s.unit_gpus)
    shared = co_residents(deps)
    return [
        dataclasses.replace(
            d,
            instance_gpus=sorted(sizes[(d.gpu, d.site)]),
            shares_gpu_with=sorted(f"{deps[j].workload}/{deps[j].model}" for j in shared.get(i, set())),
        )
        for i, d in enumerate(deps)
    ]
