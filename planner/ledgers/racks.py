"""Card 10 — whole racks as the unit of supply: how many GPUs a replica holds in a scale-up domain.

A GB200 NVL72 rack is one 72-GPU NVLink domain bought or rented whole; a tensor-parallel group must sit
inside one domain, and a replica whose GPU count does not divide the domain leaves GPUs idle.

References: card 10 (supernode size, card packing), issue 13 item 3.
"""

from __future__ import annotations

import math

from planner.ledgers._checks import require_count as _require_count


def replica_footprint_gpus(replica_gpus: int, *, node_gpus: int) -> float:
    """GPUs of supply one replica of ``replica_gpus`` GPUs holds in nodes of ``node_gpus`` GPUs.

    Parameters
    ----------
    replica_gpus : int
        GPUs g of one replica (TP × PP).
    node_gpus : int
        GPUs N of the node (the rack for NVL72), bought or rented whole.

    Returns
    -------
    float
        g ≤ N: N / ⌊N/g⌋ (a node filled with this shape only holds ⌊N/g⌋ replicas); g > N: ⌈g/N⌉·N.

    Notes
    -----
    Equal to g whenever g divides N (so HGX nodes of 8 and TP 1/2/4/8 are unchanged); TP16 in a 72-GPU
    rack holds 72/4 = 18 GPUs (4 replicas, 8 GPUs idle), TP32 36, TP48 72 (24 idle). Charging the
    footprint in the supply rows makes GPU counting exact for racks of one shape and conservative for
    racks that mix shapes.

    References
    ----------
    Card 10 (card packing), issue 13 (NVL72 rack as the node).
    """
    _require_count("replica_gpus", replica_gpus)
    _require_count("node_gpus", node_gpus)
    if replica_gpus <= node_gpus:
        return node_gpus / (node_gpus // replica_gpus)
    return float(math.ceil(replica_gpus / node_gpus) * node_gpus)
