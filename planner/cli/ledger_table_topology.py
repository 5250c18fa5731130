"""Card 11 (collective topology) subcommands of `planner ledger`: ``planner.ledgers.topology``.

Defaults are the book's ch06/ch07 inputs so every command runs bare.
"""

from __future__ import annotations

import math

from planner.cli.ledger_common import Value
from planner.cli.ledger_spec import LedgerCommand, Param
from planner.cli.ledger_table_communication import BANDWIDTH_GB_PER_S, LATENCY_US, MESSAGE_BYTES, RANKS
from planner.ledgers import communication as comm
from planner.ledgers import topology as topo
from planner.units import BYTES_PER_KIB, MS_PER_S, US_PER_S


def ring_tree_crossover(ranks: int, bandwidth_gb_per_s: float, latency_us: float) -> dict[str, Value]:
    link = {"bandwidth_gb_per_s": bandwidth_gb_per_s, "latency_us": latency_us}
    m_star = topo.ring_tree_crossover_bytes(ranks, **link)
    t = comm.ring_allreduce_s(m_star, ranks=ranks, **link)
    return {
        "crossover_bytes": m_star,
        "crossover_kib": m_star / BYTES_PER_KIB,
        "time_at_crossover_us": t * US_PER_S,
    }


def sharp_vs_ring(
    message_bytes: float, servers: int, bandwidth_gb_per_s: float, latency_us: float
) -> dict[str, Value]:
    link = {"bandwidth_gb_per_s": bandwidth_gb_per_s, "latency_us": latency_us}
    ring = comm.ring_allreduce_s(message_bytes, ranks=servers, **link)
    sharp = topo.sharp_allreduce_s(message_bytes, **link)
    return {
        "ring_ms": ring * MS_PER_S,
        "ring_bytes_per_server": comm.ring_allreduce_bytes_per_rank(message_bytes, ranks=servers),
        "ring_rounds": comm.ring_allreduce_rounds(servers),
        "sharp_ms": sharp * MS_PER_S,
        "sharp_to_ring_ratio": sharp / ring if ring > 0 else math.inf,
    }


def clos(radix: int, tiers: int, oversubscription_ratio: float, port_gb_per_s: float) -> dict[str, Value]:
    r = oversubscription_ratio
    bisection = topo.clos_bisection_gb_per_s(
        radix, tiers=tiers, port_gb_per_s=port_gb_per_s, oversubscription_ratio=r
    )
    return {
        "endpoints": topo.clos_endpoint_count(radix, tiers=tiers, oversubscription_ratio=r),
        "switches": topo.clos_switch_count(radix, tiers=tiers, oversubscription_ratio=r),
        "bisection_tb_per_s": bisection / 1000,
        "per_endpoint_gb_per_s": topo.clos_per_endpoint_gb_per_s(port_gb_per_s, oversubscription_ratio=r),
    }


def switch_uplink(uplink_ports: int, downlink_ports: int, port_gb_per_s: float) -> dict[str, Value]:
    return {
        "uplink_gb_per_s": topo.switch_uplink_gb_per_s(uplink_ports, port_gb_per_s=port_gb_per_s),
        "downlink_gb_per_s": topo.switch_uplink_gb_per_s(downlink_ports, port_gb_per_s=port_gb_per_s),
        "up_to_down_ratio": topo.uplink_to_downlink_ratio(uplink_ports, downlink_ports=downlink_ports),
    }


def swing_vs_recursive_doubling(
    message_bytes: float, nodes: int, bandwidth_gb_per_s: float, latency_us: float
) -> dict[str, Value]:
    out: dict[str, Value] = {}
    schedules: tuple[topo.ButterflySchedule, ...] = ("recursive_doubling", "swing")
    for schedule in schedules:
        loads = topo.ring_reduce_scatter_link_bytes(message_bytes, nodes=nodes, schedule=schedule)
        t = comm.round_schedule_s([[(x, bandwidth_gb_per_s)] for x in loads], latency_us=latency_us)
        out[f"{schedule}_max_link_bytes"] = ", ".join(f"{x:.0f}" for x in loads)
        out[f"{schedule}_us"] = t * US_PER_S
    return out


def ecmp(flows: int, links: int, link_gb_per_s: float) -> dict[str, Value]:
    return {
        "expected_max_flows_per_link": topo.ecmp_expected_max_flows(flows, links=links),
        "slowest_flow_gb_per_s": topo.ecmp_per_flow_gb_per_s(link_gb_per_s, flows=flows, links=links),
        "ideal_flow_gb_per_s": link_gb_per_s / math.ceil(flows / links),
    }


TABLE: tuple[LedgerCommand, ...] = (
    LedgerCommand(
        "ring-tree-crossover",
        11,
        "Ring vs tree crossover",
        "Ring vs tree crossover M* = αB(2(n−1) − 2r)/(2r − 2(n−1)/n), r = ceil(log2 n): tree below",
        source="book ch06 eq. 6-10",
        formulas=(topo.ring_tree_crossover_bytes, comm.ring_allreduce_s),
        params=(RANKS, BANDWIDTH_GB_PER_S.with_default(450.0), LATENCY_US.with_default(0.822)),
        outputs=("crossover_bytes", "crossover_kib", "time_at_crossover_us"),
        compute=ring_tree_crossover,
    ),
    LedgerCommand(
        "sharp-vs-ring",
        11,
        "SHARP vs ring",
        "SHARP α + M/B vs ring 2(S−1)α + 2(S−1)M/(SB) on the cross-server stage",
        source="book ch07 §7.2",
        formulas=(
            comm.ring_allreduce_s,
            topo.sharp_allreduce_s,
            comm.ring_allreduce_bytes_per_rank,
            comm.ring_allreduce_rounds,
        ),
        params=(
            MESSAGE_BYTES.with_default(24 * 2**20),
            Param("servers", int, 8, "S, servers in the cross-server stage", min=1),
            BANDWIDTH_GB_PER_S,
            LATENCY_US.with_default(0.83),
        ),
        outputs=("ring_ms", "ring_bytes_per_server", "ring_rounds", "sharp_ms", "sharp_to_ring_ratio"),
        compute=sharp_vs_ring,
    ),
    LedgerCommand(
        "clos",
        11,
        "Clos sizing",
        "Clos sizing: k²/2 endpoints (2 tiers), k³/4 (3 tiers); bisection = endpoints/2 × rate / r",
        source="book ch07 §7.1",
        formulas=(
            topo.clos_bisection_gb_per_s,
            topo.clos_endpoint_count,
            topo.clos_switch_count,
            topo.clos_per_endpoint_gb_per_s,
        ),
        params=(
            Param("radix", int, 64, "k, switch ports", min=2),
            Param("tiers", int, 2, "2 (leaf-spine) or 3 (fat tree)", min=2, max=3),
            Param("oversubscription_ratio", float, 1.0, "r:1 at the leaves (two tiers only)", min=0.0),
            Param("port_gb_per_s", float, 50.0, "Port rate per direction", "GB/s", min=0.0),
        ),
        outputs=("endpoints", "switches", "bisection_tb_per_s", "per_endpoint_gb_per_s"),
        compute=clos,
    ),
    LedgerCommand(
        "switch-uplink",
        11,
        "Switch uplink split",
        "Switch (NVSwitch) uplink = up ports × port rate; convergence = up/down",
        source="book ch06 §6.5",
        formulas=(topo.switch_uplink_gb_per_s, topo.uplink_to_downlink_ratio),
        params=(
            Param("uplink_ports", int, 16, "Ports facing up", min=0),
            Param("downlink_ports", int, 48, "Ports facing the cards", min=1),
            Param("port_gb_per_s", float, 25.0, "Port rate per direction (NVLink4: 25)", "GB/s", min=0.0),
        ),
        outputs=("uplink_gb_per_s", "downlink_gb_per_s", "up_to_down_ratio"),
        compute=switch_uplink,
    ),
    LedgerCommand(
        "swing-vs-recursive-doubling",
        11,
        "Swing vs recursive doubling",
        "Max link load per round of a butterfly reduce-scatter on a ring; T = Σ(α + max V/B)",
        source="book ch06 §6.5",
        formulas=(topo.ring_reduce_scatter_link_bytes, comm.round_schedule_s),
        params=(
            MESSAGE_BYTES,
            Param("nodes", int, 8, "Nodes on the ring (power of two)", min=2),
            BANDWIDTH_GB_PER_S,
            LATENCY_US.with_default(0.0),
        ),
        outputs=(
            "recursive_doubling_max_link_bytes",
            "recursive_doubling_us",
            "swing_max_link_bytes",
            "swing_us",
        ),
        compute=swing_vs_recursive_doubling,
    ),
    LedgerCommand(
        "ecmp",
        11,
        "ECMP collisions",
        "ECMP: expected busiest-link load of n flows on m links sets the slowest flow's rate",
        source="book ch07 §7.4",
        formulas=(topo.ecmp_expected_max_flows, topo.ecmp_per_flow_gb_per_s),
        params=(
            Param("flows", int, 16, "n, flows hashed onto the links", min=1),
            Param("links", int, 16, "m, equal-cost links", min=1),
            Param("link_gb_per_s", float, 50.0, "Rate of one link", "GB/s", min=0.0),
        ),
        outputs=("expected_max_flows_per_link", "slowest_flow_gb_per_s", "ideal_flow_gb_per_s"),
        compute=ecmp,
    ),
)
