"""Card 6 (communication) subcommands of `planner ledger`: ``planner.ledgers.communication``.

Also holds the options shared with card 11 (message size, ranks, bandwidth, latency). Defaults are the
book's ch06/ch07 inputs so every command runs bare.
"""

from __future__ import annotations

import math
from enum import StrEnum

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.ledgers import communication as comm
from planner.units import MS_PER_S, US_PER_S

MESSAGE_BYTES = Param("message_bytes", float, 8 * 2**20, "M, message (buffer) size", "bytes", min=0)
RANKS = Param("ranks", int, 8, "n, ranks in the collective", min=1)
BANDWIDTH_GB_PER_S = Param(
    "bandwidth_gb_per_s", float, 50.0, "B, link bandwidth per direction", "GB/s", min=0.0
)
LATENCY_US = Param("latency_us", float, 5.0, "α, start-up latency per round", "µs", min=0.0)


class CollectiveName(StrEnum):
    """Collectives with an NCCL busbw correction factor."""

    all_reduce = "all_reduce"
    reduce_scatter = "reduce_scatter"
    all_gather = "all_gather"


def message_transfer(
    volume_bytes: float, bandwidth_gb_per_s: float, latency_us: float, messages: int
) -> dict[str, Value]:
    t = comm.transfer_s(
        volume_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us, messages=messages
    )
    crossover = comm.latency_bandwidth_crossover_bytes(bandwidth_gb_per_s, latency_us=latency_us)
    return {"time_s": t, "time_ms": t * MS_PER_S, "crossover_bytes": crossover}


def ring_allreduce(
    message_bytes: float, ranks: int, bandwidth_gb_per_s: float, latency_us: float
) -> dict[str, Value]:
    t = comm.ring_allreduce_s(
        message_bytes, ranks=ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
    )
    # one rank sends nothing: T = 0 and the bandwidths M/T are undefined (— in the table, null in --json)
    algbw = comm.algbw_gb_per_s(message_bytes, time_s=t) if ranks >= 2 else None
    return {
        "time_s": t,
        "time_us": t * US_PER_S,
        "rounds": comm.ring_allreduce_rounds(ranks),
        "bytes_per_rank": comm.ring_allreduce_bytes_per_rank(message_bytes, ranks=ranks),
        "algbw_gb_per_s": algbw,
        "busbw_gb_per_s": comm.busbw_gb_per_s(algbw, ranks=ranks) if algbw is not None else None,
        "latency_crossover_bytes": (
            comm.ring_latency_crossover_bytes(
                ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
            )
            if ranks >= 2
            else None
        ),
    }


def tree_allreduce(
    message_bytes: float, ranks: int, bandwidth_gb_per_s: float, latency_us: float
) -> dict[str, Value]:
    tree = comm.tree_allreduce_s(
        message_bytes, ranks=ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
    )
    ring = comm.ring_allreduce_s(
        message_bytes, ranks=ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
    )
    return {
        "time_s": tree,
        "time_us": tree * US_PER_S,
        "rounds": 2 * comm.tree_rounds(ranks),
        "ring_time_us": ring * US_PER_S,
        "tree_faster": tree < ring,
    }


def hierarchical_allreduce(
    message_bytes: float,
    ranks_per_node: int,
    nodes: int,
    local_bandwidth_gb_per_s: float,
    nic_bandwidth_gb_per_s: float,
    latency_us: float,
    nic_latency_us: float | None,
    flat_bandwidth_gb_per_s: float | None,
) -> dict[str, Value]:
    parts = comm.hierarchical_allreduce_parts(
        message_bytes,
        ranks_per_node=ranks_per_node,
        nodes=nodes,
        local_bandwidth_gb_per_s=local_bandwidth_gb_per_s,
        nic_bandwidth_gb_per_s=nic_bandwidth_gb_per_s,
        latency_us=latency_us,
        nic_latency_us=nic_latency_us,
    )
    flat_bw = (
        min(local_bandwidth_gb_per_s, nic_bandwidth_gb_per_s)
        if flat_bandwidth_gb_per_s is None
        else flat_bandwidth_gb_per_s
    )
    flat = comm.ring_allreduce_s(
        message_bytes, ranks=ranks_per_node * nodes, bandwidth_gb_per_s=flat_bw, latency_us=latency_us
    )
    breakeven = comm.hierarchical_breakeven_local_gb_per_s(
        flat,
        message_bytes=message_bytes,
        ranks_per_node=ranks_per_node,
        nodes=nodes,
        nic_bandwidth_gb_per_s=nic_bandwidth_gb_per_s,
        latency_us=latency_us,
        nic_latency_us=nic_latency_us,
    )
    return {
        "local_ms": parts.local_s * MS_PER_S,
        "cross_ms": parts.cross_s * MS_PER_S,
        "startup_ms": parts.startup_s * MS_PER_S,
        "hierarchical_ms": parts.total_s * MS_PER_S,
        "flat_ring_ms": flat * MS_PER_S,
        "hierarchical_faster": parts.total_s < flat,
        "breakeven_local_gb_per_s": breakeven,
    }


def busbw(message_bytes: float, time_us: float, ranks: int, collective: CollectiveName) -> dict[str, Value]:
    algbw = comm.algbw_gb_per_s(message_bytes, time_s=time_us / US_PER_S)
    return {
        "algbw_gb_per_s": algbw,
        "busbw_gb_per_s": comm.busbw_gb_per_s(algbw, ranks=ranks, collective=collective.value),
        "busbw_factor": comm.busbw_factor(ranks, collective=collective.value),
    }


def overlap_step(compute_ms: float, comm_ms: float, ready_ms: float, update_ms: float) -> dict[str, Value]:
    c, n, r, u = (x / MS_PER_S for x in (compute_ms, comm_ms, ready_ms, update_ms))
    return {
        "serial_ms": comm.serial_step_s(c, comm_s=n, update_s=u) * MS_PER_S,
        "overlapped_ms": comm.overlapped_step_s(c, comm_s=n, ready_s=r, update_s=u) * MS_PER_S,
        "comm_floor_compute_speedup": comm.comm_floor_compute_speedup(c, comm_s=n) if n > 0 else math.inf,
    }


def oversubscription(
    endpoints: int, radix: int, oversubscription_ratio: float, port_gb_per_s: float
) -> dict[str, Value]:
    r = oversubscription_ratio
    down, up = comm.leaf_port_split(radix, oversubscription_ratio=r)
    capacity = comm.leaf_uplink_capacity_gb_per_s(
        endpoints, radix=radix, port_gb_per_s=port_gb_per_s, oversubscription_ratio=r
    )
    per_card = comm.per_card_uplink_gb_per_s(
        endpoints, radix=radix, port_gb_per_s=port_gb_per_s, oversubscription_ratio=r
    )
    return {
        "leaf_down_ports": down,
        "leaf_up_ports": up,
        "leaves": comm.leaf_switch_count(endpoints, radix=radix, oversubscription_ratio=r),
        "uplinks": comm.leaf_uplink_count(endpoints, radix=radix, oversubscription_ratio=r),
        "uplink_capacity_tb_per_s": capacity / 1000,
        "per_card_gb_per_s": per_card,
    }


def incast(
    senders: int, sender_gb_per_s: float, egress_gb_per_s: float, buffer_bytes: float, round_trip_us: float
) -> dict[str, Value]:
    arrival = comm.incast_arrival_gb_per_s(senders, sender_gb_per_s=sender_gb_per_s)
    excess = comm.incast_excess_gb_per_s(arrival, egress_gb_per_s=egress_gb_per_s)
    return {
        "arrival_gb_per_s": arrival,
        "excess_gb_per_s": excess,
        "tolerable_feedback_us": comm.incast_tolerable_feedback_us(buffer_bytes, excess_gb_per_s=excess),
        "pfc_headroom_bytes": comm.pfc_headroom_bytes(excess, round_trip_us=round_trip_us),
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "message-transfer",
        6,
        "Message transfer",
        "Transfer T = n·α + V/B; start-up equals transfer at M = α·B",
        source="book ch07 §7.1",
        formulas=(comm.transfer_s, comm.latency_bandwidth_crossover_bytes),
        params=(
            Param("volume_bytes", float, 360 * 2**20, "V, volume moved", "bytes", min=0),
            BANDWIDTH_GB_PER_S,
            LATENCY_US,
            Param("messages", int, 1, "n, dependent messages (start-ups in series)", min=0),
        ),
        outputs=("time_s", "time_ms", "crossover_bytes"),
        compute=message_transfer,
    ),
    LedgerCommand(
        "ring-allreduce",
        6,
        "Ring all-reduce",
        "Ring all-reduce T = 2(n − 1)α + 2(n − 1)M/(nB), with algbw and busbw",
        source="book ch06 eq. 6-10",
        also_cards=(11,),
        formulas=(
            comm.ring_allreduce_s,
            comm.algbw_gb_per_s,
            comm.ring_latency_crossover_bytes,
            comm.ring_allreduce_rounds,
            comm.ring_allreduce_bytes_per_rank,
            comm.busbw_gb_per_s,
        ),
        params=(MESSAGE_BYTES, RANKS, BANDWIDTH_GB_PER_S, LATENCY_US),
        outputs=(
            "time_s",
            "time_us",
            "rounds",
            "bytes_per_rank",
            "algbw_gb_per_s",
            "busbw_gb_per_s",
            "latency_crossover_bytes",
        ),
        compute=ring_allreduce,
    ),
    LedgerCommand(
        "tree-allreduce",
        6,
        "Binomial-tree all-reduce",
        "Binomial-tree all-reduce T = 2·ceil(log2 n)·(α + M/B), compared with the ring",
        source="book ch06",
        also_cards=(11,),
        formulas=(comm.tree_allreduce_s, comm.ring_allreduce_s, comm.tree_rounds),
        params=(
            MESSAGE_BYTES.with_default(256 * 2**10),
            RANKS,
            BANDWIDTH_GB_PER_S.with_default(450.0),
            LATENCY_US.with_default(0.822),
        ),
        outputs=("time_s", "time_us", "rounds", "ring_time_us", "tree_faster"),
        compute=tree_allreduce,
    ),
    LedgerCommand(
        "hierarchical-allreduce",
        6,
        "Hierarchical vs flat all-reduce",
        "Hierarchical all-reduce 2(q−1)(M/q)/B_L + 2(H−1)(M/(qH))/B_NIC + start-ups vs the flat ring",
        source="book ch07 §7.2",
        formulas=(
            comm.hierarchical_allreduce_parts,
            comm.ring_allreduce_s,
            comm.hierarchical_breakeven_local_gb_per_s,
        ),
        params=(
            MESSAGE_BYTES.with_default(192 * 2**20),
            Param("ranks_per_node", int, 8, "q, ranks per node on the local fabric", min=1),
            Param("nodes", int, 2, "H, nodes", min=1),
            Param(
                "local_bandwidth_gb_per_s",
                float,
                450.0,
                "B_L, local per-rank bandwidth (NVLink, PCIe P2P)",
                "GB/s",
                min=0.0,
            ),
            Param(
                "nic_bandwidth_gb_per_s",
                float,
                50.0,
                "B_NIC per rank (a NIC shared by k ranks: its bandwidth / k)",
                "GB/s",
                min=0.0,
            ),
            LATENCY_US.with_default(0.83),
            Param(
                "nic_latency_us",
                float | None,
                None,
                "α per cross-node round (default: --latency-us)",
                "µs",
                min=0.0,
            ),
            Param(
                "flat_bandwidth_gb_per_s",
                float | None,
                None,
                "Slowest edge of the flat ring over all ranks (default: min(B_L, B_NIC))",
                "GB/s",
                min=0.0,
            ),
        ),
        outputs=(
            "local_ms",
            "cross_ms",
            "startup_ms",
            "hierarchical_ms",
            "flat_ring_ms",
            "hierarchical_faster",
            "breakeven_local_gb_per_s",
        ),
        compute=hierarchical_allreduce,
    ),
    LedgerCommand(
        "busbw",
        6,
        "algbw / busbw",
        "NCCL reporting: algbw = M/T, busbw = algbw × 2(n − 1)/n for all-reduce, × (n − 1)/n otherwise",
        formulas=(comm.algbw_gb_per_s, comm.busbw_gb_per_s, comm.busbw_factor),
        params=(
            MESSAGE_BYTES,
            Param("time_us", float, 363.6, "T, collective time", "µs", min=0.0),
            RANKS,
            Param(
                "collective",
                CollectiveName,
                CollectiveName.all_reduce,
                "Collective (sets the correction factor)",
            ),
        ),
        outputs=("algbw_gb_per_s", "busbw_gb_per_s", "busbw_factor"),
        compute=busbw,
    ),
    LedgerCommand(
        "overlap-step",
        6,
        "Overlap vs serial",
        "Serial T_c + T_n + T_u vs overlapped max(T_c, T_ready + T_n) + T_u",
        source="book ch07 Examples 7.1 and 7.6",
        formulas=(comm.serial_step_s, comm.overlapped_step_s, comm.comm_floor_compute_speedup),
        params=(
            Param("compute_ms", float, 20.0, "T_compute", "ms", min=0.0),
            Param("comm_ms", float, 7.6, "T_comm", "ms", min=0.0),
            Param("ready_ms", float, 17.0, "T_ready, when the first bytes can be sent", "ms", min=0.0),
            Param("update_ms", float, 2.0, "T_update after both finish", "ms", min=0.0),
        ),
        outputs=("serial_ms", "overlapped_ms", "comm_floor_compute_speedup"),
        compute=overlap_step,
    ),
    LedgerCommand(
        "oversubscription",
        6,
        "Leaf oversubscription",
        "Leaves = ceil(cards/down), uplinks, uplink capacity and per-card bandwidth under r:1",
        source="book ch07 §7.1",
        formulas=(
            comm.leaf_port_split,
            comm.leaf_switch_count,
            comm.leaf_uplink_count,
            comm.leaf_uplink_capacity_gb_per_s,
            comm.per_card_uplink_gb_per_s,
        ),
        params=(
            Param("endpoints", int, 1024, "Cards (NICs) in the partition", min=1),
            Param("radix", int, 64, "k, leaf switch ports", min=2),
            Param("oversubscription_ratio", float, 3.0, "r in r:1 (1 = non-oversubscribed)", min=0.0),
            Param("port_gb_per_s", float, 50.0, "Port rate per direction (400G = 50)", "GB/s", min=0.0),
        ),
        outputs=(
            "leaf_down_ports",
            "leaf_up_ports",
            "leaves",
            "uplinks",
            "uplink_capacity_tb_per_s",
            "per_card_gb_per_s",
        ),
        compute=oversubscription,
    ),
    LedgerCommand(
        "incast",
        6,
        "Incast and PFC",
        "Incast: tolerable feedback = buffer/(arrival − egress); PFC headroom = excess × hop RTT",
        source="book ch07 §7.4",
        formulas=(
            comm.incast_arrival_gb_per_s,
            comm.incast_excess_gb_per_s,
            comm.incast_tolerable_feedback_us,
            comm.pfc_headroom_bytes,
        ),
        params=(
            Param("senders", int, 7, "Senders at once (the book excludes the receiver: N − 1)", min=0),
            Param("sender_gb_per_s", float, 50.0, "Rate of each sender", "GB/s", min=0.0),
            Param("egress_gb_per_s", float, 50.0, "Egress port rate", "GB/s", min=0.0),
            Param("buffer_bytes", float, 2**20, "Free buffer at the port", "bytes", min=0.0),
            Param("round_trip_us", float, 0.33, "One-hop PFC round trip", "µs", min=0.0),
        ),
        outputs=("arrival_gb_per_s", "excess_gb_per_s", "tolerable_feedback_us", "pfc_headroom_bytes"),
        compute=incast,
    ),
)
