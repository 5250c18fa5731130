"""Card 6 — communication ledger: messages and collectives from start-up latency and per-link bytes.

Every time is ``rounds × α + bytes / bandwidth`` (README rule 4). Bandwidths are per direction in decimal
GB/s (1 GB/s = 1e9 B/s), start-up latencies α in µs, message sizes in bytes, results in seconds unless
the name says otherwise. Functions marked "works on numpy arrays" use plain arithmetic only (the integer
rank counts must still be scalars).

References: card 6 (book ch07 §7.1–7.6, ch06 §6.4 ring / tree / busbw); card 11 for the topology side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from planner.ledgers._checks import require_count as _require_ranks
from planner.ledgers._checks import require_non_negative as _require_non_negative
from planner.ledgers._checks import require_positive as _require_positive
from planner.ledgers.collectives import CollectiveFabric, allreduce_choice
from planner.units import BYTES_PER_GB, US_PER_S

Collective = Literal["all_reduce", "reduce_scatter", "all_gather"]


def _bytes_per_s(bandwidth_gb_per_s: float) -> float:
    return bandwidth_gb_per_s * BYTES_PER_GB


def _s(latency_us: float) -> float:
    return latency_us / US_PER_S


# --------------------------------------------------------------------------------------------------
# Single transfers
# --------------------------------------------------------------------------------------------------


def transfer_s(
    volume_bytes: float, *, bandwidth_gb_per_s: float, latency_us: float = 0.0, messages: int = 1
) -> float:
    """Time to move a volume as ``messages`` dependent messages: n·α + V/B, s. Works on numpy arrays.

    Parameters
    ----------
    volume_bytes : float
        Total bytes moved, B.
    bandwidth_gb_per_s : float
        Link bandwidth per direction, GB/s (decimal).
    latency_us : float
        Start-up latency α per message, µs.
    messages : int
        Number of dependent messages (start-ups paid in series).

    Returns
    -------
    float
        Transfer time, s.

    Notes
    -----
    T = n·α + V/B; for one message T_msg = α + M/B.

    References
    ----------
    Card 6 (message time), README rule 4 (book ch07 §7.1; Example 7.1: 360 MiB over 50 GB/s ≈ 7.5 ms).
    """
    _require_non_negative("volume_bytes", volume_bytes)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    _require_non_negative("latency_us", latency_us)
    _require_ranks("messages", messages, 0)
    return transfer_at_s(volume_bytes, startup_s=messages * _s(latency_us), bytes_per_s=_bytes_per_s(bandwidth_gb_per_s))


def transfer_at_s(volume_bytes: float, *, startup_s: float, bytes_per_s: float) -> float:
    """:func:`transfer_s` from its volume-free parts n·α (``startup_s``, s) and B (``bytes_per_s``), inputs
    already checked: n·α + V/B, s (a step table at many loads checks and converts them once)."""
    return startup_s + volume_bytes / bytes_per_s


def latency_bandwidth_crossover_bytes(bandwidth_gb_per_s: float, *, latency_us: float) -> float:
    """Message size at which start-up equals transfer time: M = α·B, bytes. Works on numpy arrays.

    Parameters
    ----------
    bandwidth_gb_per_s : float
        Link bandwidth per direction, GB/s.
    latency_us : float
        Start-up latency α, µs.

    Returns
    -------
    float
        Crossover message size, B. Below it optimise rounds, above it optimise bytes per link.

    Notes
    -----
    α = M/B ⇒ M = α·B (α = 5 µs, B = 50 GB/s → 250,000 B ≈ 244 KiB).

    References
    ----------
    Card 6 (message crossover), card 11 (message-size rule); book ch07 §7.1.
    """
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    _require_non_negative("latency_us", latency_us)
    return _s(latency_us) * _bytes_per_s(bandwidth_gb_per_s)


def nic_effective_gb_per_s(port_gb_per_s: float, *, ports: int, slot_gb_per_s: float) -> float:
    """Usable NIC bandwidth: all ports together, capped by the host slot, GB/s.

    Parameters
    ----------
    port_gb_per_s : float
        Bandwidth of one NIC port per direction, GB/s.
    ports : int
        Ports in use.
    slot_gb_per_s : float
        Host slot (PCIe) bandwidth per direction, GB/s.

    Returns
    -------
    float
        min(ports·B_port, B_slot), GB/s.

    Notes
    -----
    A dual-port CX-7 (2 × 25 GB/s) behind a PCIe Gen4 x16 slot gives min(50, 32) = 32 GB/s.

    References
    ----------
    Card 6 (book ch07 §7.2 PCIe reference configuration: one port 14.1 ms vs two ports 11.0 ms).
    """
    _require_positive("port_gb_per_s", port_gb_per_s)
    _require_ranks("ports", ports)
    _require_positive("slot_gb_per_s", slot_gb_per_s)
    return min(ports * port_gb_per_s, slot_gb_per_s)


# --------------------------------------------------------------------------------------------------
# Flat collectives
# --------------------------------------------------------------------------------------------------


def ring_allreduce_rounds(ranks: int) -> int:
    """Dependent rounds of a ring all-reduce: 2(n − 1) (reduce-scatter then all-gather).

    References
    ----------
    Card 6 (ring all-reduce), book ch06 §6.4.
    """
    _require_ranks("ranks", ranks)
    return 2 * (ranks - 1)


def ring_allreduce_bytes_per_rank(message_bytes: float, *, ranks: int) -> float:
    """Bytes each rank sends in a ring all-reduce: 2(n − 1)·M/n, B. Works on numpy arrays.

    Parameters
    ----------
    message_bytes : float
        Size M of the buffer being all-reduced, B.
    ranks : int
        Ranks n in the ring.

    Returns
    -------
    float
        Bytes sent per rank, B.

    Notes
    -----
    V = 2(n − 1)·M/n (TPU v4 example: 8 chips, 8 MiB → 14 MiB per chip).

    References
    ----------
    Card 6, card 11 (book ch06 §6.4, §6.5).
    """
    _require_non_negative("message_bytes", message_bytes)
    _require_ranks("ranks", ranks)
    return 2 * (ranks - 1) * message_bytes / ranks


def ring_allreduce_s(
    message_bytes: float, *, ranks: int, bandwidth_gb_per_s: float, latency_us: float
) -> float:
    """Ring all-reduce time, s. Works on numpy arrays.

    Parameters
    ----------
    message_bytes : float
        Size M of the buffer being all-reduced, B.
    ranks : int
        Ranks n in the ring.
    bandwidth_gb_per_s : float
        Bandwidth of the slowest ring edge per direction, GB/s.
    latency_us : float
        Start-up latency α per round, µs.

    Returns
    -------
    float
        T_ring, s.

    Notes
    -----
    T_ring = 2(n − 1)·α + 2(n − 1)·M/(n·B).

    References
    ----------
    Card 6, card 11 (book ch06 eq. (6-10), ch07 §7.6: 8 ranks, α = 5 µs, 8 MiB at 50 GB/s → 364 µs).
    """
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    _require_non_negative("latency_us", latency_us)
    rounds = ring_allreduce_rounds(ranks)
    return rounds * _s(latency_us) + ring_allreduce_bytes_per_rank(message_bytes, ranks=ranks) / _bytes_per_s(
        bandwidth_gb_per_s
    )


def ring_latency_crossover_bytes(ranks: int, *, bandwidth_gb_per_s: float, latency_us: float) -> float:
    """Message size at which a ring all-reduce spends as long on start-ups as on bytes: M = n·α·B, bytes.

    Parameters
    ----------
    ranks : int
        Ranks n in the ring (at least 2).
    bandwidth_gb_per_s : float
        Ring edge bandwidth per direction, GB/s.
    latency_us : float
        Start-up latency α per round, µs.

    Returns
    -------
    float
        Crossover size, B.

    Notes
    -----
    2(n − 1)·α = 2(n − 1)·M/(n·B) ⇒ M = n·α·B (8 ranks, 5 µs, 50 GB/s → 2 MB = 1.91 MiB).

    References
    ----------
    Card 6 (book ch07 §7.6 decode TP all-reduce over a network).
    """
    _require_ranks("ranks", ranks, 2)
    return ranks * latency_bandwidth_crossover_bytes(bandwidth_gb_per_s, latency_us=latency_us)


def ring_reduce_scatter_s(
    message_bytes: float, *, ranks: int, bandwidth_gb_per_s: float, latency_us: float
) -> float:
    """Ring reduce-scatter (or all-gather, same cost) time, s. Works on numpy arrays.

    Parameters
    ----------
    message_bytes : float
        Full buffer size M (each rank ends with M/n reduced, or starts with M/n to gather), B.
    ranks : int
        Ranks n.
    bandwidth_gb_per_s : float
        Slowest edge bandwidth per direction, GB/s.
    latency_us : float
        Start-up latency α per round, µs.

    Returns
    -------
    float
        Time, s.

    Notes
    -----
    n − 1 rounds of M/n bytes: T = (n − 1)·α + (n − 1)·M/(n·B).

    References
    ----------
    Card 6 (reduce-scatter / all-gather alone), book ch06 §6.4.
    """
    _require_non_negative("message_bytes", message_bytes)
    _require_ranks("ranks", ranks)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    _require_non_negative("latency_us", latency_us)
    return (ranks - 1) * _s(latency_us) + (ranks - 1) * message_bytes / (
        ranks * _bytes_per_s(bandwidth_gb_per_s)
    )


ring_all_gather_s = ring_reduce_scatter_s
"""Ring all-gather time, s: identical cost to :func:`ring_reduce_scatter_s` (card 6)."""


def tree_rounds(ranks: int) -> int:
    """Levels of a binomial tree over n ranks: ceil(log2 n) (0 for one rank).

    References
    ----------
    Card 11 (binomial tree), book ch06 eq. (6-10).
    """
    _require_ranks("ranks", ranks)
    return (ranks - 1).bit_length()


def tree_allreduce_s(
    message_bytes: float, *, ranks: int, bandwidth_gb_per_s: float, latency_us: float
) -> float:
    """Binomial-tree all-reduce (reduce then broadcast) time, s. Works on numpy arrays.

    Parameters
    ----------
    message_bytes : float
        Buffer size M, B (the whole buffer moves at every level).
    ranks : int
        Ranks n; non-powers of two use ceil(log2 n) levels.
    bandwidth_gb_per_s : float
        Link bandwidth per direction, GB/s.
    latency_us : float
        Start-up latency α per level, µs.

    Returns
    -------
    float
        T_tree, s.

    Notes
    -----
    T_tree = 2·log2(n)·(α + M/B).

    References
    ----------
    Card 6, card 11 (book ch06 eq. (6-10)).
    """
    _require_non_negative("message_bytes", message_bytes)
    _require_positive("bandwidth_gb_per_s", bandwidth_gb_per_s)
    _require_non_negative("latency_us", latency_us)
    return 2 * tree_rounds(ranks) * (_s(latency_us) + message_bytes / _bytes_per_s(bandwidth_gb_per_s))


# --------------------------------------------------------------------------------------------------
# Hierarchical all-reduce
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HierarchicalAllreduce:
    """Terms of a hierarchical all-reduce, s (total = local + cross + start-up)."""

    local_s: float
    """Intra-node reduce-scatter plus all-gather: 2(q − 1)·(M/q)/B_L."""
    cross_s: float
    """Inter-node ring over the 1/q slices: 2(H − 1)·(M/(q·H))/B_NIC."""
    startup_s: float
    """2(q − 1)·α_L + 2(H − 1)·α_NIC."""

    @property
    def total_s(self) -> float:
        """Sum of the three terms, s."""
        return self.local_s + self.cross_s + self.startup_s


def hierarchical_allreduce_parts(
    message_bytes: float,
    *,
    ranks_per_node: int,
    nodes: int,
    local_bandwidth_gb_per_s: float,
    nic_bandwidth_gb_per_s: float,
    latency_us: float,
    nic_latency_us: float | None = None,
) -> HierarchicalAllreduce:
    """Local, cross-node and start-up terms of a hierarchical all-reduce.

    Parameters
    ----------
    message_bytes : float
        Buffer size M per rank, B.
    ranks_per_node : int
        Ranks q inside one node (or supernode) sharing the fast local fabric.
    nodes : int
        Nodes H.
    local_bandwidth_gb_per_s : float
        Local per-rank bandwidth B_L per direction (NVLink, PCIe P2P), GB/s.
    nic_bandwidth_gb_per_s : float
        Cross-node bandwidth available to each rank B_NIC per direction, GB/s (for a NIC shared by k ranks
        pass its bandwidth divided by k).
    latency_us : float
        Start-up latency per local round α_L, µs.
    nic_latency_us : float, optional
        Start-up latency per cross-node round; defaults to ``latency_us``.

    Returns
    -------
    HierarchicalAllreduce
        The three terms, s.

    Notes
    -----
    Reduce-scatter inside the node, ring across nodes on the 1/q slices, all-gather inside the node:
    T = 2(q − 1)·(M/q)/B_L + 2(H − 1)·(M/(q·H))/B_NIC + 2(q − 1)·α_L + 2(H − 1)·α_NIC;
    2 servers × 8 ranks: 14·(M/8)/B_L + 2·(M/16)/B_NIC + 16α.

    References
    ----------
    Card 6 (hierarchical all-reduce), card 4 (T_grad), book ch07 §7.2, §7.6.4.
    """
    _require_non_negative("message_bytes", message_bytes)
    _require_ranks("ranks_per_node", ranks_per_node)
    _require_ranks("nodes", nodes)
    _require_positive("local_bandwidth_gb_per_s", local_bandwidth_gb_per_s)
    _require_positive("nic_bandwidth_gb_per_s", nic_bandwidth_gb_per_s)
    _require_non_negative("latency_us", latency_us)
    alpha_nic_us = latency_us if nic_latency_us is None else nic_latency_us
    _require_non_negative("nic_latency_us", alpha_nic_us)
    q, h = ranks_per_node, nodes
    local_s = 2 * (q - 1) * (message_bytes / q) / _bytes_per_s(local_bandwidth_gb_per_s)
    cross_s = 2 * (h - 1) * (message_bytes / (q * h)) / _bytes_per_s(nic_bandwidth_gb_per_s)
    startup_s = 2 * (q - 1) * _s(latency_us) + 2 * (h - 1) * _s(alpha_nic_us)
    return HierarchicalAllreduce(local_s=local_s, cross_s=cross_s, startup_s=startup_s)


def hierarchical_allreduce_s(
    message_bytes: float,
    *,
    ranks_per_node: int,
    nodes: int,
    local_bandwidth_gb_per_s: float,
    nic_bandwidth_gb_per_s: float,
    latency_us: float,
    nic_latency_us: float | None = None,
) -> float:
    """Hierarchical all-reduce time, s (sum of :func:`hierarchical_allreduce_parts`).

    Parameters
    ----------
    message_bytes, ranks_per_node, nodes, local_bandwidth_gb_per_s, nic_bandwidth_gb_per_s, latency_us,
    nic_latency_us
        As in :func:`hierarchical_allreduce_parts`.

    Returns
    -------
    float
        T, s.

    Notes
    -----
    T = 2(q − 1)·(M/q)/B_L + 2(H − 1)·(M/(q·H))/B_NIC + 2(q − 1)·α_L + 2(H − 1)·α_NIC.
    It beats the flat ring only when B_L is at least about B_NIC (192 MiB on 2 HGX H100: 7.6 → 1.3 ms;
    PCIe-only A100 box: 11.0 ms flat vs 15.7 ms hierarchical).

    References
    ----------
    Card 6 (book ch07 §7.2, Example 7.6).
    """
    return hierarchical_allreduce_parts(
        message_bytes,
        ranks_per_node=ranks_per_node,
        nodes=nodes,
        local_bandwidth_gb_per_s=local_bandwidth_gb_per_s,
        nic_bandwidth_gb_per_s=nic_bandwidth_gb_per_s,
        latency_us=latency_us,
        nic_latency_us=nic_latency_us,
    ).total_s


def hierarchical_breakeven_local_gb_per_s(
    flat_s: float,
    *,
    message_bytes: float,
    ranks_per_node: int,
    nodes: int,
    nic_bandwidth_gb_per_s: float,
    latency_us: float,
    nic_latency_us: float | None = None,
) -> float:
    """Local bandwidth B_L at which the hierarchical all-reduce ties a given flat-ring time, GB/s.

    Parameters
    ----------
    flat_s : float
        Time of the flat alternative (e.g. :func:`ring_allreduce_s` over all ranks), s.
    message_bytes, ranks_per_node, nodes, nic_bandwidth_gb_per_s, latency_us, nic_latency_us
        As in :func:`hierarchical_allreduce_parts`.

    Returns
    -------
    float
        Break-even B_L, GB/s; ``inf`` if the cross-node and start-up terms alone already exceed ``flat_s``.

    Notes
    -----
    Solve T_flat = 2(q − 1)·(M/q)/B_L + T_cross + T_startup for B_L (PCIe A100 box: ≈ 64 GB/s = 2× the slot).

    References
    ----------
    Card 6 (hierarchical wins iff B_L ≳ B_NIC), book ch07 §7.2.
    """
    _require_positive("flat_s", flat_s)
    parts = hierarchical_allreduce_parts(
        message_bytes,
        ranks_per_node=ranks_per_node,
        nodes=nodes,
        local_bandwidth_gb_per_s=1.0,
        nic_bandwidth_gb_per_s=nic_bandwidth_gb_per_s,
        latency_us=latency_us,
        nic_latency_us=nic_latency_us,
    )
    room_s = flat_s - parts.cross_s - parts.startup_s
    if room_s <= 0:
        return math.inf
    local_bytes = parts.local_s * _bytes_per_s(1.0)
    return local_bytes / room_s / BYTES_PER_GB


# --------------------------------------------------------------------------------------------------
# NCCL-style reporting, round model, bounds
# --------------------------------------------------------------------------------------------------


def algbw_gb_per_s(message_bytes: float, *, time_s: float) -> float:
    """Algorithm bandwidth algbw = M/T, GB/s. Works on numpy arrays.

    Parameters
    ----------
    message_bytes : float
        Buffer size M, B.
    time_s : float
        Measured or modelled collective time, s.

    Returns
    -------
    float
        algbw, GB/s.

    Notes
    -----
    algbw = M/T (NCCL tests convention).

    References
    ----------
    Card 6 (NCCL reporting), book ch06 §6.4.
    """
    _require_non_negative("message_bytes", message_bytes)
    _require_positive("time_s", time_s)
    return message_bytes / time_s / BYTES_PER_GB


def busbw_factor(ranks: int, *, collective: Collective = "all_reduce") -> float:
    """busbw/algbw ratio: 2(n − 1)/n for all-reduce, (n − 1)/n for reduce-scatter and all-gather.

    References
    ----------
    Card 6 (NCCL reporting), book ch06 §6.4.
    """
    _require_ranks("ranks", ranks)
    if collective == "all_reduce":
        return 2 * (ranks - 1) / ranks
    if collective in ("reduce_scatter", "all_gather"):
        return (ranks - 1) / ranks
    raise ValueError(f"unknown collective {collective!r}; use all_reduce, reduce_scatter or all_gather")


def busbw_gb_per_s(algbw_gb_per_s: float, *, ranks: int, collective: Collective = "all_reduce") -> float:
    """Bus bandwidth from algorithm bandwidth, GB/s. Works on numpy arrays.

    Parameters
    ----------
    algbw_gb_per_s : float
        algbw = M/T, GB/s.
    ranks : int
        Ranks n.
    collective : {"all_reduce", "reduce_scatter", "all_gather"}
        Collective whose correction factor applies.

    Returns
    -------
    float
        busbw, GB/s (comparable with the per-direction link bandwidth).

    Notes
    -----
    busbw = algbw × 2(n − 1)/n (all-reduce); × (n − 1)/n (reduce-scatter, all-gather).

    References
    ----------
    Card 6 (NCCL reporting), book ch06 §6.4.
    """
    _require_non_negative("algbw_gb_per_s", algbw_gb_per_s)
    return algbw_gb_per_s * busbw_factor(ranks, collective=collective)


def algbw_from_busbw_gb_per_s(
    busbw_gb_per_s: float, *, ranks: int, collective: Collective = "all_reduce"
) -> float:
    """Algorithm bandwidth from bus bandwidth (inverse of :func:`busbw_gb_per_s`), GB/s.

    Notes
    -----
    algbw = busbw / (2(n − 1)/n) for all-reduce; requires n ≥ 2.

    References
    ----------
    Card 6 (NCCL reporting), book ch06 §6.4.
    """
    _require_ranks("ranks", ranks, 2)
    _require_non_negative("busbw_gb_per_s", busbw_gb_per_s)
    return busbw_gb_per_s / busbw_factor(ranks, collective=collective)


def round_schedule_s(rounds: Sequence[Sequence[tuple[float, float]]], *, latency_us: float) -> float:
    """Time of any round-based schedule: Σ_rounds (α + max_edges V/B), s.

    Parameters
    ----------
    rounds : sequence of sequences of (bytes, GB/s)
        For every dependent round, the (bytes, bandwidth per direction) of each edge used in that round.
    latency_us : float
        Start-up latency α per round, µs.

    Returns
    -------
    float
        T_comm, s.

    Notes
    -----
    T_comm = Σ_r (α + max_e V_{r,e}/B_e); an empty round costs α.

    References
    ----------
    Card 6 (round model), card 11 (Swing vs recursive doubling); book ch06 §6.4.
    """
    _require_non_negative("latency_us", latency_us)
    total_s = 0.0
    for edges in rounds:
        slowest_s = 0.0
        for n_bytes, gb_per_s in edges:
            slowest_s = max(slowest_s, transfer_s(n_bytes, bandwidth_gb_per_s=gb_per_s, messages=0))
        total_s += _s(latency_us) + slowest_s
    return total_s


def cut_set_lower_bound_s(cut_bytes: float, *, cut_bandwidth_gb_per_s: float) -> float:
    """Cut-set lower bound on any schedule: T ≥ V_{A→B}/B_{A→B}, s. Works on numpy arrays.

    Parameters
    ----------
    cut_bytes : float
        Bytes that must cross from partition A to partition B, B.
    cut_bandwidth_gb_per_s : float
        Total bandwidth of the links from A to B per direction, GB/s.

    Returns
    -------
    float
        Lower bound, s.

    References
    ----------
    Card 6 (cut-set bound), book ch07 §7.1.
    """
    return transfer_s(cut_bytes, bandwidth_gb_per_s=cut_bandwidth_gb_per_s, messages=0)


# --------------------------------------------------------------------------------------------------
# Overlap
# --------------------------------------------------------------------------------------------------


def serial_step_s(compute_s: float, *, comm_s: float, update_s: float = 0.0) -> float:
    """Step time with no overlap: T_compute + T_comm + T_update, s. Works on numpy arrays.

    Parameters
    ----------
    compute_s : float
        Compute time, s.
    comm_s : float
        Communication time, s.
    update_s : float
        Optimizer update after the communication, s.

    Returns
    -------
    float
        Step time, s.

    References
    ----------
    Card 6 (overlap vs serial), README rule 2 (serial work adds up); book ch07 Example 7.1, 7.6.
    """
    _require_non_negative("compute_s", compute_s)
    _require_non_negative("comm_s", comm_s)
    _require_non_negative("update_s", update_s)
    return compute_s + comm_s + update_s


def overlapped_step_s(
    compute_s: float, *, comm_s: float, ready_s: float = 0.0, update_s: float = 0.0
) -> float:
    """Step time with communication overlapped behind compute, s.

    Parameters
    ----------
    compute_s : float
        Compute time T_compute, s.
    comm_s : float
        Communication time T_comm, s.
    ready_s : float
        Time into the step at which the first bytes are ready to send T_ready, s.
    update_s : float
        Optimizer update after both finish T_update, s.

    Returns
    -------
    float
        Step time, s.

    Notes
    -----
    T_step = max(T_compute, T_ready + T_comm) + T_update (an ideal lower bound, README rule 2).

    References
    ----------
    Card 6 (overlap), book ch07 Example 7.1, Example 7.6.
    """
    _require_non_negative("compute_s", compute_s)
    _require_non_negative("comm_s", comm_s)
    _require_non_negative("ready_s", ready_s)
    _require_non_negative("update_s", update_s)
    return max(compute_s, ready_s + comm_s) + update_s


def comm_floor_compute_speedup(compute_s: float, *, comm_s: float) -> float:
    """Compute speed-up x at which overlapped communication becomes the floor: x = T_compute/T_comm.

    Parameters
    ----------
    compute_s : float
        Compute time at x = 1, s.
    comm_s : float
        Communication time, s.

    Returns
    -------
    float
        Speed-up beyond which faster compute no longer shortens the overlapped step (dimensionless).

    Notes
    -----
    max(T_c/x, T_n) = T_n once x ≥ T_c/T_n (Example 7.1: 20 ms / 7.5 ms ≈ 2.6).

    References
    ----------
    Card 6 (decision rule on overlap), book ch07 Example 7.1.
    """
    _require_non_negative("compute_s", compute_s)
    _require_positive("comm_s", comm_s)
    return compute_s / comm_s


def comm_speedup_step_ratio(compute_s: float, *, comm_s: float, comm_speedup: float) -> float:
    """Whole-step speed-up when only the communication gets ``comm_speedup`` × faster (serial step).

    Parameters
    ----------
    compute_s : float
        Compute time T_c, s.
    comm_s : float
        Communication time T_n, s.
    comm_speedup : float
        Factor s by which communication is sped up.

    Returns
    -------
    float
        S = (T_c + T_n)/(T_c + T_n/s), dimensionless.

    References
    ----------
    Card 6 (overlap: speed-up S), README rule 5 (Amdahl); book ch07 §7.1.
    """
    _require_non_negative("compute_s", compute_s)
    _require_non_negative("comm_s", comm_s)
    _require_positive("comm_speedup", comm_speedup)
    _require_positive("compute_s + comm_s", compute_s + comm_s)
    return (compute_s + comm_s) / (compute_s + comm_s / comm_speedup)


# --------------------------------------------------------------------------------------------------
# Oversubscription and leaf switches
# --------------------------------------------------------------------------------------------------


def leaf_port_split(radix: int, *, oversubscription_ratio: float) -> tuple[int, int]:
    """Down- and uplink ports of a leaf switch at r:1 oversubscription: (k·r/(r + 1), k/(r + 1)).

    Parameters
    ----------
    radix : int
        Ports k of the leaf switch.
    oversubscription_ratio : float
        r in r:1 (1 = non-oversubscribed); k·r/(r + 1) must be a whole number.

    Returns
    -------
    tuple of int
        (downlink ports, uplink ports).

    Notes
    -----
    3:1 on a 64-port leaf: 48 ports down, 16 up.

    References
    ----------
    Card 11 (oversubscribed leaf), card 6 (oversubscription); book ch07 §7.1.
    """
    _require_ranks("radix", radix, 2)
    _require_positive("oversubscription_ratio", oversubscription_ratio)
    down = radix * oversubscription_ratio / (oversubscription_ratio + 1)
    if abs(down - round(down)) > 1e-9 or round(down) in (0, radix):
        raise ValueError(f"a {radix}-port leaf cannot be split {oversubscription_ratio}:1 into whole ports")
    return int(round(down)), radix - int(round(down))


def leaf_switch_count(endpoints: int, *, radix: int, oversubscription_ratio: float = 1.0) -> int:
    """Leaf switches needed for a partition of endpoints: ceil(endpoints / downlink ports).

    Parameters
    ----------
    endpoints : int
        Cards (NICs) to attach.
    radix : int
        Leaf ports k.
    oversubscription_ratio : float
        r in r:1.

    Returns
    -------
    int
        Leaf count (1,024 cards on 64-port leaves: 32 at 1:1, 22 at 3:1).

    References
    ----------
    Card 6 (oversubscription and per-card bandwidth), book ch07 §7.1.
    """
    _require_ranks("endpoints", endpoints)
    down, _ = leaf_port_split(radix, oversubscription_ratio=oversubscription_ratio)
    return -(-endpoints // down)


def leaf_uplink_count(endpoints: int, *, radix: int, oversubscription_ratio: float = 1.0) -> int:
    """Leaf uplinks of a partition: leaves × uplink ports per leaf.

    References
    ----------
    Card 6 (1,024 cards: 1,024 uplinks at 1:1, 352 at 3:1), book ch07 §7.1.
    """
    _, up = leaf_port_split(radix, oversubscription_ratio=oversubscription_ratio)
    return leaf_switch_count(endpoints, radix=radix, oversubscription_ratio=oversubscription_ratio) * up


def leaf_uplink_capacity_gb_per_s(
    endpoints: int, *, radix: int, port_gb_per_s: float, oversubscription_ratio: float = 1.0
) -> float:
    """Total leaf-to-spine capacity of a partition: uplinks × port rate, GB/s.

    Parameters
    ----------
    endpoints : int
        Cards in the partition.
    radix : int
        Leaf ports k.
    port_gb_per_s : float
        Rate of one switch port per direction, GB/s.
    oversubscription_ratio : float
        r in r:1.

    Returns
    -------
    float
        Uplink capacity, GB/s. Book ch07 §7.1 calls this the partition's bisection (51.2 TB/s at 1:1,
        17.6 TB/s at 3:1 for 1,024 cards); the Clos-level bisection of card 11 is half the uplink capacity,
        see :func:`planner.ledgers.topology.clos_bisection_gb_per_s`.

    References
    ----------
    Card 6 (oversubscription), book ch07 §7.1.
    """
    _require_positive("port_gb_per_s", port_gb_per_s)
    uplinks = leaf_uplink_count(endpoints, radix=radix, oversubscription_ratio=oversubscription_ratio)
    return uplinks * port_gb_per_s


def per_card_uplink_gb_per_s(
    endpoints: int, *, radix: int, port_gb_per_s: float, oversubscription_ratio: float = 1.0
) -> float:
    """Fabric bandwidth per card when every card sends off-leaf at once, GB/s.

    Parameters
    ----------
    endpoints, radix, port_gb_per_s, oversubscription_ratio
        As in :func:`leaf_uplink_capacity_gb_per_s` (the NIC rate equals the port rate).

    Returns
    -------
    float
        min(port rate, uplink capacity / endpoints), GB/s (1,024 cards at 3:1: 17.2 GB/s).

    References
    ----------
    Card 6 (oversubscription and per-card bandwidth), book ch07 §7.1.
    """
    capacity = leaf_uplink_capacity_gb_per_s(
        endpoints, radix=radix, port_gb_per_s=port_gb_per_s, oversubscription_ratio=oversubscription_ratio
    )
    return min(port_gb_per_s, capacity / endpoints)


def uplink_not_bottleneck(leaving_frac: float, *, oversubscription_ratio: float) -> bool:
    """Whether an r:1 leaf uplink keeps up: true iff the fraction f of NIC bytes leaving the leaf ≤ 1/r.

    Parameters
    ----------
    leaving_frac : float
        Fraction f of each card's NIC bytes whose destination is behind another leaf (0..1).
    oversubscription_ratio : float
        r in r:1.

    Returns
    -------
    bool
        True when the uplinks are not the bottleneck.

    References
    ----------
    Card 6 (oversubscription rule), book ch07 §7.1.
    """
    if not 0.0 <= leaving_frac <= 1.0:
        raise ValueError(f"leaving_frac must be in [0, 1], got {leaving_frac!r}")
    _require_positive("oversubscription_ratio", oversubscription_ratio)
    return leaving_frac <= 1.0 / oversubscription_ratio + 1e-12


# --------------------------------------------------------------------------------------------------
# Windows, incast, PFC
# --------------------------------------------------------------------------------------------------


def window_limited_gb_per_s(
    path_gb_per_s: float, *, outstanding_requests: float, request_bytes: float, round_trip_us: float
) -> float:
    """Usable bandwidth of a request/response path with a bounded window, GB/s.

    Parameters
    ----------
    path_gb_per_s : float
        Path bandwidth B_path per direction, GB/s.
    outstanding_requests : float
        Requests u in flight.
    request_bytes : float
        Bytes q per request.
    round_trip_us : float
        Round-trip latency L, µs.

    Returns
    -------
    float
        B_usable = min(B_path, u·q/L), GB/s.

    References
    ----------
    Card 6 (remote window), card 10 (memory pooling access rate); book ch07 §7.3, ch06 §6.5.
    """
    _require_positive("path_gb_per_s", path_gb_per_s)
    _require_non_negative("outstanding_requests", outstanding_requests)
    _require_non_negative("request_bytes", request_bytes)
    _require_positive("round_trip_us", round_trip_us)
    window_gb_per_s = outstanding_requests * request_bytes / _s(round_trip_us) / BYTES_PER_GB
    return min(path_gb_per_s, window_gb_per_s)


def incast_arrival_gb_per_s(senders: int, *, sender_gb_per_s: float) -> float:
    """Aggregate arrival rate at one egress port: senders × per-sender rate, GB/s.

    Parameters
    ----------
    senders : int
        Senders transmitting at once (the book excludes the receiver's own node: N − 1).
    sender_gb_per_s : float
        Rate of each sender, GB/s.

    Returns
    -------
    float
        Arrival rate, GB/s (book: 350 / 750 / 3,150 GB/s for N = 8 / 16 / 64).

    References
    ----------
    Card 6 (incast), book ch07 §7.4–7.5.
    """
    _require_ranks("senders", senders, 0)
    _require_positive("sender_gb_per_s", sender_gb_per_s)
    return senders * sender_gb_per_s


def incast_excess_gb_per_s(arrival_gb_per_s: float, *, egress_gb_per_s: float) -> float:
    """Rate at which the switch buffer fills: max(0, arrival − egress), GB/s.

    References
    ----------
    Card 6 (incast), book ch07 §7.4–7.5.
    """
    _require_non_negative("arrival_gb_per_s", arrival_gb_per_s)
    _require_positive("egress_gb_per_s", egress_gb_per_s)
    return max(0.0, arrival_gb_per_s - egress_gb_per_s)


def incast_tolerable_feedback_us(buffer_bytes: float, *, excess_gb_per_s: float) -> float:
    """Time until a buffer overflows under incast: buffer/(arrival − egress), µs.

    Parameters
    ----------
    buffer_bytes : float
        Free buffer at the congested port, B.
    excess_gb_per_s : float
        Arrival minus egress rate, GB/s (``inf`` returned for zero excess).

    Returns
    -------
    float
        Tolerable feedback delay, µs (1 MiB at 300 GB/s excess: 3.50 µs).

    References
    ----------
    Card 6 (incast), book ch07 §7.4–7.5.
    """
    _require_non_negative("buffer_bytes", buffer_bytes)
    _require_non_negative("excess_gb_per_s", excess_gb_per_s)
    if excess_gb_per_s == 0:
        return math.inf
    return buffer_bytes / _bytes_per_s(excess_gb_per_s) * US_PER_S


def pfc_headroom_bytes(excess_gb_per_s: float, *, round_trip_us: float) -> float:
    """Buffer headroom a PFC pause must cover: excess rate × hop round trip, bytes.

    Parameters
    ----------
    excess_gb_per_s : float
        Arrival minus egress rate, GB/s.
    round_trip_us : float
        One-hop pause round trip (propagation both ways plus reaction), µs.

    Returns
    -------
    float
        Headroom, B (300 GB/s × 0.33 µs = 99 KB).

    References
    ----------
    Card 6 (PFC headroom), book ch07 §7.4–7.5.
    """
    _require_non_negative("excess_gb_per_s", excess_gb_per_s)
    _require_non_negative("round_trip_us", round_trip_us)
    return _bytes_per_s(excess_gb_per_s) * _s(round_trip_us)


def e2e_lossless_feasible(excess_gb_per_s: float, *, round_trip_us: float, free_buffer_bytes: float) -> bool:
    """Whether end-to-end congestion control alone can stay lossless: excess × RTT ≤ free buffer.

    Parameters
    ----------
    excess_gb_per_s : float
        Arrival minus egress rate, GB/s.
    round_trip_us : float
        End-to-end feedback round trip, µs.
    free_buffer_bytes : float
        Free buffer at the congested port, B.

    Returns
    -------
    bool
        True if the buffer absorbs the excess during one feedback round trip.

    References
    ----------
    Card 6 (incast), book ch07 §7.4–7.5.
    """
    _require_non_negative("free_buffer_bytes", free_buffer_bytes)
    return pfc_headroom_bytes(excess_gb_per_s, round_trip_us=round_trip_us) <= free_buffer_bytes


# --------------------------------------------------------------------------------------------------
# MoE expert-parallel traffic
# --------------------------------------------------------------------------------------------------


def ep_remote_bytes(tokens: float, *, top_k: int, token_bytes: float, remote_frac: float) -> float:
    """Bytes one expert-parallel dispatch (or combine) sends off-card, B. Works on numpy arrays.

    Parameters
    ----------
    tokens : float
        Tokens routed in the step.
    top_k : int
        Experts per token k.
    token_bytes : float
        Bytes of one token's hidden state, B.
    remote_frac : float
        Fraction of the (token, expert) pairs whose expert lives on another card (0..1).

    Returns
    -------
    float
        Dispatch bytes = tokens × k × bytes × remote fraction (the combine moves the same), B.

    Notes
    -----
    1,024 tokens × 8 × 8 KiB × 1/2 = 32 MiB dispatch + 32 MiB combine.

    References
    ----------
    Card 6 (MoE expert-parallel traffic), book ch07 §7.2–7.3.
    """
    _require_non_negative("tokens", tokens)
    _require_ranks("top_k", top_k)
    _require_non_negative("token_bytes", token_bytes)
    if np.any((np.asarray(remote_frac) < 0) | (np.asarray(remote_frac) > 1)):
        raise ValueError(f"remote_frac must be in [0, 1], got {remote_frac!r}")
    return tokens * top_k * token_bytes * remote_frac


def nic_relay_gb_per_s(
    destination_gb_per_s: float,
    *,
    own_nic_gb_per_s: float,
    relay_link_gb_per_s: float,
    borrowed_nic_gb_per_s: float,
) -> float:
    """Effective send bandwidth when idle neighbour NICs are borrowed over the local fabric, GB/s.

    Parameters
    ----------
    destination_gb_per_s : float
        What the receiving side can absorb B_D, GB/s.
    own_nic_gb_per_s : float
        The card's own NIC, GB/s.
    relay_link_gb_per_s : float
        Local link to the neighbours (NVLink), GB/s.
    borrowed_nic_gb_per_s : float
        Sum of the neighbour NIC bandwidth that is idle, GB/s.

    Returns
    -------
    float
        B_eff = min(B_D, B_own + min(B_relay, B_borrowed)), GB/s (FuseLink: min(B_D, 50 + min(450, 100))).

    References
    ----------
    Card 6 (NIC relay), book ch07 §7.2–7.3.
    """
    _require_positive("destination_gb_per_s", destination_gb_per_s)
    _require_positive("own_nic_gb_per_s", own_nic_gb_per_s)
    _require_non_negative("relay_link_gb_per_s", relay_link_gb_per_s)
    _require_non_negative("borrowed_nic_gb_per_s", borrowed_nic_gb_per_s)
    return min(destination_gb_per_s, own_nic_gb_per_s + min(relay_link_gb_per_s, borrowed_nic_gb_per_s))


def best_allreduce_s(message_bytes: Any, *, ranks: Any, bandwidth_gb_per_s: Any, latency_us: Any) -> Any:
    """All-reduce time with the faster of ring and binomial tree, as NCCL picks per message size, s.

    Vectorized over every argument (ranks may be an array of TP degrees); one rank costs 0.

    Notes
    -----
    T = min(2(n − 1)·α + 2(n − 1)·M/(n·B), 2·ceil(log2 n)·(α + M/B)); tree wins below the crossover
    message size (≈ 680 KiB for 8 cards at 450 GB/s, α = 0.822 µs), ring above.

    References
    ----------
    Card 6, card 11 (book ch06 eq. (6-10)).
    """
    n = np.maximum(np.asarray(ranks, dtype=float), 1.0)
    fabric = CollectiveFabric(
        ranks=n,
        ranks_per_domain=n,
        local_gb_per_s=bandwidth_gb_per_s,
        local_latency_us=latency_us,
        tree_in_domain=1.0,
    )
    return allreduce_choice(message_bytes, fabric).time_s


def allreduce_startup_s(ranks: Any, *, latency_us: Any) -> Any:
    """Start-up latency of one all-reduce inside a node or TP group: 2(n − 1)·α, s. Works on numpy arrays.

    Parameters
    ----------
    ranks : int or array
        Ranks n (TP degree); one rank costs 0.
    latency_us : float or array
        Start-up latency α per dependent round (one hop), µs.

    Returns
    -------
    float
        2(n − 1)·α, s.

    Notes
    -----
    A small-message all-reduce is start-up bound: every rank waits for 2(n − 1) dependent hops (ring
    reduce-scatter + all-gather). The binomial tree's 2·ceil(log2 n) rounds do not apply inside one node:
    NCCL builds its trees across nodes and chains the GPUs inside a node, so the in-node chain also has
    2(n − 1) hops [U: NCCL design, not in shared/]. The book charges the decode TP all-reduce this way:
    8 ranks, α = 5 µs → 14 × 5 µs = 70 µs (C6.5); 16 ranks in one NVLink domain → 0.822 µs × 30 rounds
    (C8.3), and its measured tiny 16-rank all-reduce (25 µs ≈ 30 rounds × 0.83 µs, card 6) fits the same
    round count. With the catalog α = 0.822 µs (NVLink4, MSCCL++) TP8 pays 11.5 µs per all-reduce, TP4
    4.9 µs, TP2 1.6 µs, where the tree formula gave 4.9 / 3.3 / 1.6 µs.

    References
    ----------
    Card 6 (ring rounds 2(n − 1); α table), card 8 (C8.3), book ch06 §6.4, ch07 §7.6 (C6.5).
    """
    return ring_allreduce_rounds(np.maximum(ranks, 1)) * _s(latency_us)


def collective_launch_s(ranks: Any, *, launch_us: Any) -> Any:
    """Fixed start-up of one collective that no hop count explains (launch + synchronisation), s.

    Works on numpy arrays; one rank costs 0.

    Notes
    -----
    T_launch = τ_e for n > 1, where τ_e is the engine's ``collective_launch_us`` (catalogs/engines.yaml).
    nccl-tests at the smallest sizes measure τ_e + 2(n − 1)·α: 10.14 µs for 2x A100 without CUDA graphs
    (NCCL-583), ≈ 6 µs for 2x H100 with CUDA graphs (NCCL-1259), 17–26 µs at 8 GPUs (MSCCLPP-NDMV4,
    AZ-AIBG-H100), all in shared/reference/measurements/nccl_allreduce_small_msg.csv. With α = 0.8 µs per
    hop these give τ_e ≈ 8.5 µs without graphs and ≈ 4.4 µs with graphs.

    References
    ----------
    Card 6 (α–β model), issue 12 (per-collective latency of tens of µs for small messages).
    """
    return np.where(np.asarray(ranks) > 1, launch_us * 1e-6, 0.0)


def tp_allreduce_s(message_bytes: Any, *, ranks: Any, bandwidth_gb_per_s: Any, latency_us: Any) -> Any:
    """Tensor-parallel activation all-reduce: start-up 2(n − 1)·α + ring bytes 2(n − 1)·M/(n·B), s.

    Vectorized over every argument; one rank costs 0.

    Notes
    -----
    T = :func:`allreduce_startup_s` + 2(n − 1)·M/(n·B). The ring moves the fewest bytes per rank of any
    schedule (2(n − 1)/n·M ≤ 2·log2(n)·M for the tree), so with the in-node start-up of
    :func:`allreduce_startup_s` it is the NCCL time at every message size; it equals
    :func:`ring_allreduce_s`, which computes it. The prefill and decode steps of ``planner/performance/steps.py``
    charge two TP all-reduces per layer through :func:`planner.ledgers.collectives.allreduce_choice`, which
    offers this ring next to in-switch reduction (NVLS) where the NVSwitch reduces (card 11).

    References
    ----------
    Card 6, card 8 (TP ledger: 2 all-reduces per layer), book ch06 eq. (6-10).
    """
    return ring_allreduce_s(
        message_bytes,
        ranks=np.maximum(ranks, 1),
        bandwidth_gb_per_s=bandwidth_gb_per_s,
        latency_us=latency_us,
    )
