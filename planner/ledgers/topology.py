"""Card 11 — collective topology: algorithms and fabric shapes by message size and per-link load.

Ring, tree and hierarchical timings live in :mod:`planner.ledgers.communication` (card 6); this module
adds the choices between them (ring/tree crossover, SHARP vs ring), fabric sizing (Clos, NVSwitch
uplinks, rails), per-link load of butterfly schedules on a ring (Swing vs recursive doubling) and ECMP
collision statistics. Bandwidths per direction in decimal GB/s, latencies in µs, times in seconds.

References: card 11 (book ch06 §6.4–6.5, ch07 §7.1–7.2, §7.4).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from planner.ledgers._checks import require_count as _require_count
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.communication import (
    latency_bandwidth_crossover_bytes,
    leaf_port_split,
    ring_allreduce_rounds,
    ring_allreduce_s,
    transfer_s,
    tree_rounds,
)

ButterflySchedule = Literal["recursive_doubling", "swing"]


# --------------------------------------------------------------------------------------------------
# Algorithm choice by message size
# --------------------------------------------------------------------------------------------------


def ring_tree_crossover_bytes(ranks: int, *, bandwidth_gb_per_s: float, latency_us: float) -> float:
    """Message size where the ring and binomial-tree all-reduce take equal time, bytes (closed form).

    Parameters
    ----------
    ranks : int
        Ranks n.
    bandwidth_gb_per_s : float
        Link bandwidth B per direction, GB/s.
    latency_us : float
        Start-up latency α per round, µs.

    Returns
    -------
    float
        M*, B: the tree is faster below, the ring above; 0 when the ring is never slower (n ≤ 3).

    Notes
    -----
    2(n − 1)α + 2(n − 1)M/(nB) = 2r(α + M/B), r = ceil(log2 n) ⇒
    M* = α·B·(2(n − 1) − 2r) / (2r − 2(n − 1)/n). 8 cards, 450 GB/s, α = 0.822 µs → ≈ 680 KiB.

    References
    ----------
    Card 11 (book ch06 eq. (6-10)).
    """
    _require_count("ranks", ranks, 2)
    r = tree_rounds(ranks)
    startup_gap = ring_allreduce_rounds(ranks) - 2 * r
    byte_gap = 2 * r - 2 * (ranks - 1) / ranks
    if startup_gap <= 0:
        return 0.0
    return (
        latency_bandwidth_crossover_bytes(bandwidth_gb_per_s, latency_us=latency_us) * startup_gap / byte_gap
    )


def sharp_allreduce_s(message_bytes: float, *, bandwidth_gb_per_s: float, latency_us: float) -> float:
    """In-network (SHARP) all-reduce of a slice: sent once, in one round, α + M/B, s. Works on numpy arrays.

    Parameters
    ----------
    message_bytes : float
        Slice each server contributes M, B.
    bandwidth_gb_per_s : float
        NIC bandwidth per direction, GB/s.
    latency_us : float
        Start-up latency α of the round, µs.

    Returns
    -------
    float
        Time, s (24 MiB at 50 GB/s, α = 0.83 µs → 0.504 ms).

    References
    ----------
    Card 11 (in-network reduction), book ch07 §7.2.
    """
    return transfer_s(message_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us, messages=1)


def sharp_to_ring_ratio(
    message_bytes: float, *, servers: int, bandwidth_gb_per_s: float, latency_us: float
) -> float:
    """SHARP time / ring time on the cross-server stage (< 1 means SHARP wins).

    Parameters
    ----------
    message_bytes : float
        Slice M per server, B.
    servers : int
        Servers S in the cross-server ring.
    bandwidth_gb_per_s : float
        NIC bandwidth per direction, GB/s.
    latency_us : float
        α per round, µs.

    Returns
    -------
    float
        Ratio (ties at S = 2; 0.49 at S = 32 for a 24 MiB slice).

    References
    ----------
    Card 11 (use in-network reduction from about four servers), book ch07 §7.2.
    """
    ring = ring_allreduce_s(
        message_bytes, ranks=servers, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
    )
    sharp = sharp_allreduce_s(message_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us)
    return sharp / ring


# --------------------------------------------------------------------------------------------------
# Rails
# --------------------------------------------------------------------------------------------------


def rail_aligned(src_rank: int, dst_rank: int, *, gpus_per_server: int) -> bool:
    """Whether a pair of global ranks stays on one rail (same local index): i ↔ i + 8 yes, i ↔ i + 9 no.

    References
    ----------
    Card 11 (rails), book ch07 §7.2.
    """
    _require_count("gpus_per_server", gpus_per_server)
    if src_rank < 0 or dst_rank < 0:
        raise ValueError("ranks must be non-negative")
    return src_rank % gpus_per_server == dst_rank % gpus_per_server


def spine_bytes(message_bytes: float, *, src_rank: int, dst_rank: int, gpus_per_server: int) -> float:
    """Bytes a cross-server transfer puts on the spine of a rail-optimised fabric, B.

    Parameters
    ----------
    message_bytes : float
        Bytes sent from ``src_rank`` to ``dst_rank``, B.
    src_rank, dst_rank : int
        Global ranks (server = rank // gpus_per_server, rail = rank % gpus_per_server).
    gpus_per_server : int
        Cards per server (one NIC per card, NIC j on rail switch j).

    Returns
    -------
    float
        0 for pairs inside one server or on the same rail (one leaf hop); all bytes otherwise.

    References
    ----------
    Card 11 (rails: keep cross-server pairs rail-aligned), book ch07 §7.2.
    """
    if message_bytes < 0:
        raise ValueError("message_bytes must be non-negative")
    same_server = src_rank // gpus_per_server == dst_rank // gpus_per_server
    if same_server or rail_aligned(src_rank, dst_rank, gpus_per_server=gpus_per_server):
        return 0.0
    return message_bytes


# --------------------------------------------------------------------------------------------------
# Clos sizing and switch uplinks
# --------------------------------------------------------------------------------------------------


def clos_endpoint_count(radix: int, *, tiers: int, oversubscription_ratio: float = 1.0) -> int:
    """Endpoints of a full Clos built from radix-k switches.

    Parameters
    ----------
    radix : int
        Switch ports k.
    tiers : int
        2 (leaf-spine) or 3 (fat tree).
    oversubscription_ratio : float
        r:1 at the leaves (two tiers only): each of the k leaves has k·r/(r + 1) ports down.

    Returns
    -------
    int
        Endpoints: k²/2 (two tiers), k³/4 (three tiers), k·down with r:1 leaves (k = 64: 2,048 / 65,536 /
        3,072 at 3:1).

    References
    ----------
    Card 11 (Clos), book ch07 §7.1.
    """
    _check_clos(radix, tiers, oversubscription_ratio)
    if tiers == 3:
        return radix**3 // 4
    down, _ = leaf_port_split(radix, oversubscription_ratio=oversubscription_ratio)
    return radix * down


def clos_switch_count(radix: int, *, tiers: int, oversubscription_ratio: float = 1.0) -> int:
    """Switches of a full Clos: k leaves + k·up/k spines (two tiers); 5k²/4 (three-tier fat tree).

    Returns
    -------
    int
        Switches (k = 64: 96 two-tier, 5,120 three-tier, 80 two-tier with 3:1 leaves).

    References
    ----------
    Card 11 (Clos), book ch07 §7.1.
    """
    _check_clos(radix, tiers, oversubscription_ratio)
    if tiers == 3:
        return 5 * radix**2 // 4
    _, up = leaf_port_split(radix, oversubscription_ratio=oversubscription_ratio)
    return radix + up


def clos_bisection_gb_per_s(
    radix: int, *, tiers: int, port_gb_per_s: float, oversubscription_ratio: float = 1.0
) -> float:
    """Bisection bandwidth of a full Clos: endpoints/2 × port rate / r, GB/s.

    Returns
    -------
    float
        GB/s (k = 64, 50 GB/s ports: 51.2 TB/s two-tier, 1,638.4 TB/s three-tier, 25.6 TB/s at 3:1).

    References
    ----------
    Card 11 (non-oversubscribed bisection = endpoints/2 × NIC rate), book ch07 §7.1.
    """
    _require_positive("port_gb_per_s", port_gb_per_s)
    endpoints = clos_endpoint_count(radix, tiers=tiers, oversubscription_ratio=oversubscription_ratio)
    return endpoints / 2 * port_gb_per_s / oversubscription_ratio


def clos_per_endpoint_gb_per_s(port_gb_per_s: float, *, oversubscription_ratio: float = 1.0) -> float:
    """Cross-fabric bandwidth per endpoint when all send at once: port rate / r, GB/s (3:1 → 16.7 of 50).

    References
    ----------
    Card 11 (Clos), book ch07 §7.1.
    """
    _require_positive("port_gb_per_s", port_gb_per_s)
    _require_positive("oversubscription_ratio", oversubscription_ratio)
    return port_gb_per_s / oversubscription_ratio


def _check_clos(radix: int, tiers: int, oversubscription_ratio: float) -> None:
    _require_count("radix", radix, 2)
    if radix % 2:
        raise ValueError(f"radix must be even, got {radix}")
    if tiers not in (2, 3):
        raise ValueError(f"tiers must be 2 or 3, got {tiers!r}")
    if tiers == 3 and oversubscription_ratio != 1.0:
        raise ValueError("only the non-oversubscribed three-tier fat tree is modelled")


def switch_uplink_gb_per_s(uplink_ports: int, *, port_gb_per_s: float) -> float:
    """Uplink bandwidth of a switch: uplink ports × port rate, GB/s.

    Notes
    -----
    NVSwitch gen3, 64 NVLink4 ports × 25 GB/s: 32/32 split → 800 GB/s up; 48/16 → 400 GB/s.

    References
    ----------
    Card 11 (NVSwitch), book ch06 §6.5.
    """
    _require_count("uplink_ports", uplink_ports, 0)
    _require_positive("port_gb_per_s", port_gb_per_s)
    return uplink_ports * port_gb_per_s


def uplink_to_downlink_ratio(uplink_ports: int, *, downlink_ports: int) -> float:
    """Convergence of a switch: uplink ports / downlink ports (48 down / 16 up → 1/3).

    References
    ----------
    Card 11 (NVSwitch, oversubscribed leaf), book ch06 §6.5, ch07 §7.1.
    """
    _require_count("uplink_ports", uplink_ports, 0)
    _require_count("downlink_ports", downlink_ports)
    return uplink_ports / downlink_ports


# --------------------------------------------------------------------------------------------------
# Butterfly schedules on a ring: Swing vs recursive doubling
# --------------------------------------------------------------------------------------------------


def _swing_offset(step: int) -> int:
    # ρ_s = Σ_{i≤s} (−2)^i = 1, −1, 3, −5, 11, ...
    power: int = (-2) ** (step + 1)
    return (1 - power) // 3


def ring_reduce_scatter_link_bytes(
    message_bytes: float, *, nodes: int, schedule: ButterflySchedule
) -> list[float]:
    """Maximum bytes on any directed ring link in each round of a butterfly reduce-scatter, B.

    Parameters
    ----------
    message_bytes : float
        Buffer M per node, B (round s sends M/2^(s+1)).
    nodes : int
        Nodes on a bidirectional 1-D ring, a power of two.
    schedule : {"recursive_doubling", "swing"}
        Recursive doubling: node r talks to r ± 2^s (+ if bit s of r is 0). Swing: even nodes talk to
        r + ρ_s, odd nodes to r − ρ_s, ρ_s = 1, −1, 3, −5, …

    Returns
    -------
    list of float
        Max link load per round, B (8 nodes, 8 MiB: 4/4/4 MiB vs 4/2/2 MiB).

    Notes
    -----
    Each message follows the ring in the direction of its signed offset; the load of a link is the sum of
    the messages crossing it in that round.

    References
    ----------
    Card 11 (Swing vs recursive doubling), book ch06 §6.5.
    """
    if message_bytes < 0:
        raise ValueError("message_bytes must be non-negative")
    _require_count("nodes", nodes, 2)
    if nodes & (nodes - 1):
        raise ValueError(f"nodes must be a power of two, got {nodes}")
    if schedule not in ("recursive_doubling", "swing"):
        raise ValueError(f"unknown schedule {schedule!r}; use recursive_doubling or swing")
    loads: list[float] = []
    for step in range((nodes - 1).bit_length()):
        chunk = message_bytes / 2 ** (step + 1)
        plus = [0.0] * nodes  # link r → r + 1
        minus = [0.0] * nodes  # link r → r − 1
        for node in range(nodes):
            if schedule == "recursive_doubling":
                offset = 2**step if not node >> step & 1 else -(2**step)
            else:
                offset = _swing_offset(step) if node % 2 == 0 else -_swing_offset(step)
            for hop in range(abs(offset)):
                if offset > 0:
                    plus[(node + hop) % nodes] += chunk
                else:
                    minus[(node - hop) % nodes] += chunk
        loads.append(max(max(plus), max(minus)))
    return loads


# --------------------------------------------------------------------------------------------------
# ECMP collisions
# --------------------------------------------------------------------------------------------------


def _prob_max_load_at_most(flows: int, links: int, cap: int) -> float:
    # Poissonisation: P(max ≤ c) = P(all m Poisson(λ) ≤ c and their sum = n) / P(Poisson(n) = n), λ = n/m.
    lam = flows / links
    base = np.array(
        [math.exp(-lam + j * math.log(lam) - math.lgamma(j + 1)) for j in range(min(cap, flows) + 1)]
    )
    result = np.array([1.0])
    power = base
    k = links
    while k:
        if k & 1:
            result = np.convolve(result, power)[: flows + 1]
        k >>= 1
        if k:
            power = np.convolve(power, power)[: flows + 1]
    if len(result) <= flows:
        return 0.0
    p_sum = math.exp(-flows + flows * math.log(flows) - math.lgamma(flows + 1))
    return min(1.0, float(result[flows]) / p_sum)


def ecmp_expected_max_flows(flows: int, *, links: int, tolerance: float = 1e-12) -> float:
    """Expected number of flows on the busiest link when n flows hash uniformly onto m links.

    Parameters
    ----------
    flows : int
        Flows n (each pinned to one link by the hash).
    links : int
        Equal-cost links m.
    tolerance : float
        Stop summing when P(max > c) falls below this.

    Returns
    -------
    float
        E[max load], flows (2 flows on 2 links: 1.5).

    Notes
    -----
    E[max] = Σ_{c ≥ 0} P(max > c), with P(max ≤ c) computed exactly by Poissonisation (convolution power
    of the truncated Poisson(n/m) pmf, divided by P(Poisson(n) = n)).

    References
    ----------
    Card 11 (ECMP), card 6; book ch07 §7.4.
    """
    _require_count("flows", flows, 0)
    _require_count("links", links)
    if flows == 0:
        return 0.0
    if links == 1:
        return float(flows)
    expected = float(-(-flows // links))  # P(max > c) = 1 below the pigeonhole bound
    for cap in range(-(-flows // links), flows):
        tail = 1.0 - _prob_max_load_at_most(flows, links, cap)
        if tail < tolerance:
            break
        expected += tail
    return expected


def ecmp_per_flow_gb_per_s(link_gb_per_s: float, *, flows: int, links: int) -> float:
    """Rate of the slowest flow when n equal flows hash onto m links: B_link / E[max load], GB/s.

    Notes
    -----
    Uses the expected maximum load (a first-order estimate of E[B/max]); the busiest link sets the
    completion of a synchronous collective.

    References
    ----------
    Card 11 (ECMP: the maximum load sets the effective speed), book ch07 §7.4.
    """
    _require_positive("link_gb_per_s", link_gb_per_s)
    _require_count("flows", flows)
    return link_gb_per_s / ecmp_expected_max_flows(flows, links=links)
