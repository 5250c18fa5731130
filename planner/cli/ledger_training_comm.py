"""`planner ledger ...` subcommands for cards 4 (training), 6 (communication), 10 (supernode), 11 (topology).

Each command evaluates one formula family of ``planner.ledgers.training``, ``communication``,
``supernode`` or ``topology``; ``--json`` prints a JSON object with unit-suffixed keys, otherwise a small
table. Defaults are the book's reference inputs so every command runs bare.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated

import typer

from planner.cli.ledger_common import JsonFlag, Value
from planner.cli.ledger_common import emit as _emit
from planner.cli.ledger_common import guard as _guard
from planner.ledgers import communication as comm
from planner.ledgers import supernode as sn
from planner.ledgers import topology as topo
from planner.ledgers import training as tr
from planner.units import (
    BYTES_PER_GB,
    BYTES_PER_GIB,
    BYTES_PER_KIB,
    MS_PER_S,
    S_PER_HOUR,
    US_PER_S,
)

S_PER_DAY = 24 * S_PER_HOUR

MessageBytes = Annotated[float, typer.Option(help="M, message (buffer) size, bytes.", min=0)]
Ranks = Annotated[int, typer.Option(help="n, ranks in the collective.", min=1)]
BandwidthGbPerS = Annotated[float, typer.Option(help="B, link bandwidth per direction, GB/s.", min=0.0)]
LatencyUs = Annotated[float, typer.Option(help="α, start-up latency per round, µs.", min=0.0)]


class CollectiveName(StrEnum):
    """Collectives with an NCCL busbw correction factor."""

    all_reduce = "all_reduce"
    reduce_scatter = "reduce_scatter"
    all_gather = "all_gather"


# --- card 6: communication ---------------------------------------------------------------------------


def message_transfer(
    volume_bytes: Annotated[float, typer.Option(help="V, bytes moved.", min=0)] = 360 * 2**20,
    bandwidth_gb_per_s: BandwidthGbPerS = 50.0,
    latency_us: LatencyUs = 5.0,
    messages: Annotated[int, typer.Option(help="n, dependent messages (start-ups in series).", min=0)] = 1,
    as_json: JsonFlag = False,
) -> None:
    """Transfer T = n·α + V/B; start-up equals transfer at M = α·B (card 6, book ch07 §7.1)."""

    def compute() -> dict[str, Value]:
        t = comm.transfer_s(
            volume_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us, messages=messages
        )
        crossover = comm.latency_bandwidth_crossover_bytes(bandwidth_gb_per_s, latency_us=latency_us)
        return {"time_s": t, "time_ms": t * MS_PER_S, "crossover_bytes": crossover}

    _emit("Message transfer (card 6)", _guard(compute), as_json)


def ring_allreduce(
    message_bytes: MessageBytes = 8 * 2**20,
    ranks: Ranks = 8,
    bandwidth_gb_per_s: BandwidthGbPerS = 50.0,
    latency_us: LatencyUs = 5.0,
    as_json: JsonFlag = False,
) -> None:
    """Ring all-reduce T = 2(n − 1)α + 2(n − 1)M/(nB), with algbw and busbw
    (cards 6 and 11, ch06 eq. 6-10).
    """

    def compute() -> dict[str, Value]:
        t = comm.ring_allreduce_s(
            message_bytes, ranks=ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
        )
        algbw = comm.algbw_gb_per_s(message_bytes, time_s=t)
        return {
            "time_s": t,
            "time_us": t * US_PER_S,
            "rounds": comm.ring_allreduce_rounds(ranks),
            "bytes_per_rank": comm.ring_allreduce_bytes_per_rank(message_bytes, ranks=ranks),
            "algbw_gb_per_s": algbw,
            "busbw_gb_per_s": comm.busbw_gb_per_s(algbw, ranks=ranks),
            "latency_crossover_bytes": (
                comm.ring_latency_crossover_bytes(
                    ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
                )
                if ranks >= 2
                else None
            ),
        }

    _emit("Ring all-reduce (cards 6, 11)", _guard(compute), as_json)


def tree_allreduce(
    message_bytes: MessageBytes = 256 * 2**10,
    ranks: Ranks = 8,
    bandwidth_gb_per_s: BandwidthGbPerS = 450.0,
    latency_us: LatencyUs = 0.822,
    as_json: JsonFlag = False,
) -> None:
    """Binomial-tree all-reduce T = 2·ceil(log2 n)·(α + M/B), compared with the ring
    (cards 6 and 11, ch06).
    """

    def compute() -> dict[str, Value]:
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

    _emit("Binomial-tree all-reduce (cards 6, 11)", _guard(compute), as_json)


def hierarchical_allreduce(
    message_bytes: MessageBytes = 192 * 2**20,
    ranks_per_node: Annotated[int, typer.Option(help="q, ranks per node on the local fabric.", min=1)] = 8,
    nodes: Annotated[int, typer.Option(help="H, nodes.", min=1)] = 2,
    local_bandwidth_gb_per_s: Annotated[
        float, typer.Option(help="B_L, local per-rank bandwidth (NVLink, PCIe P2P), GB/s.", min=0.0)
    ] = 450.0,
    nic_bandwidth_gb_per_s: Annotated[
        float,
        typer.Option(help="B_NIC per rank, GB/s (a NIC shared by k ranks: its bandwidth / k).", min=0.0),
    ] = 50.0,
    latency_us: LatencyUs = 0.83,
    nic_latency_us: Annotated[
        float | None, typer.Option(help="α per cross-node round, µs (default: --latency-us).", min=0.0)
    ] = None,
    flat_bandwidth_gb_per_s: Annotated[
        float | None,
        typer.Option(
            help="Slowest edge of the flat ring over all ranks, GB/s (default: min(B_L, B_NIC)).", min=0.0
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Hierarchical all-reduce 2(q−1)(M/q)/B_L + 2(H−1)(M/(qH))/B_NIC + start-ups vs the flat ring
    (card 6, ch07 §7.2).
    """

    def compute() -> dict[str, Value]:
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

    _emit("Hierarchical vs flat all-reduce (card 6)", _guard(compute), as_json)


def busbw(
    message_bytes: MessageBytes = 8 * 2**20,
    time_us: Annotated[float, typer.Option(help="T, collective time, µs.", min=0.0)] = 363.6,
    ranks: Ranks = 8,
    collective: Annotated[CollectiveName, typer.Option(help="Collective (sets the correction factor).")] = (
        CollectiveName.all_reduce
    ),
    as_json: JsonFlag = False,
) -> None:
    """NCCL reporting: algbw = M/T, busbw = algbw × 2(n − 1)/n for all-reduce, × (n − 1)/n otherwise
    (card 6).
    """

    def compute() -> dict[str, Value]:
        algbw = comm.algbw_gb_per_s(message_bytes, time_s=time_us / US_PER_S)
        return {
            "algbw_gb_per_s": algbw,
            "busbw_gb_per_s": comm.busbw_gb_per_s(algbw, ranks=ranks, collective=collective.value),
            "busbw_factor": comm.busbw_factor(ranks, collective=collective.value),
        }

    _emit("algbw / busbw (card 6)", _guard(compute), as_json)


def overlap_step(
    compute_ms: Annotated[float, typer.Option(help="T_compute, ms.", min=0.0)] = 20.0,
    comm_ms: Annotated[float, typer.Option(help="T_comm, ms.", min=0.0)] = 7.6,
    ready_ms: Annotated[
        float, typer.Option(help="T_ready, when the first bytes can be sent, ms.", min=0.0)
    ] = 17.0,
    update_ms: Annotated[float, typer.Option(help="T_update after both finish, ms.", min=0.0)] = 2.0,
    as_json: JsonFlag = False,
) -> None:
    """Serial T_c + T_n + T_u vs overlapped max(T_c, T_ready + T_n) + T_u (card 6, Examples 7.1 and 7.6)."""

    def compute() -> dict[str, Value]:
        c, n, r, u = (x / MS_PER_S for x in (compute_ms, comm_ms, ready_ms, update_ms))
        return {
            "serial_ms": comm.serial_step_s(c, comm_s=n, update_s=u) * MS_PER_S,
            "overlapped_ms": comm.overlapped_step_s(c, comm_s=n, ready_s=r, update_s=u) * MS_PER_S,
            "comm_floor_compute_speedup": comm.comm_floor_compute_speedup(c, comm_s=n) if n > 0 else math.inf,
        }

    _emit("Overlap vs serial (card 6)", _guard(compute), as_json)


def oversubscription(
    endpoints: Annotated[int, typer.Option(help="Cards (NICs) in the partition.", min=1)] = 1024,
    radix: Annotated[int, typer.Option(help="k, leaf switch ports.", min=2)] = 64,
    oversubscription_ratio: Annotated[
        float, typer.Option(help="r in r:1 (1 = non-oversubscribed).", min=0.0)
    ] = 3.0,
    port_gb_per_s: Annotated[
        float, typer.Option(help="Port rate per direction, GB/s (400G = 50).", min=0.0)
    ] = 50.0,
    as_json: JsonFlag = False,
) -> None:
    """Leaves = ceil(cards/down), uplinks, uplink capacity and per-card bandwidth under r:1
    (card 6, ch07 §7.1).
    """

    def compute() -> dict[str, Value]:
        down, up = comm.leaf_port_split(radix, oversubscription_ratio=oversubscription_ratio)
        r = oversubscription_ratio
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

    _emit("Leaf oversubscription (card 6)", _guard(compute), as_json)


def incast(
    senders: Annotated[
        int, typer.Option(help="Senders at once (the book excludes the receiver: N − 1).", min=0)
    ] = 7,
    sender_gb_per_s: Annotated[float, typer.Option(help="Rate of each sender, GB/s.", min=0.0)] = 50.0,
    egress_gb_per_s: Annotated[float, typer.Option(help="Egress port rate, GB/s.", min=0.0)] = 50.0,
    buffer_bytes: Annotated[float, typer.Option(help="Free buffer at the port, bytes.", min=0.0)] = 2**20,
    round_trip_us: Annotated[float, typer.Option(help="One-hop PFC round trip, µs.", min=0.0)] = 0.33,
    as_json: JsonFlag = False,
) -> None:
    """Incast: tolerable feedback = buffer/(arrival − egress); PFC headroom = excess × hop RTT
    (card 6, ch07 §7.4).
    """

    def compute() -> dict[str, Value]:
        arrival = comm.incast_arrival_gb_per_s(senders, sender_gb_per_s=sender_gb_per_s)
        excess = comm.incast_excess_gb_per_s(arrival, egress_gb_per_s=egress_gb_per_s)
        return {
            "arrival_gb_per_s": arrival,
            "excess_gb_per_s": excess,
            "tolerable_feedback_us": comm.incast_tolerable_feedback_us(buffer_bytes, excess_gb_per_s=excess),
            "pfc_headroom_bytes": comm.pfc_headroom_bytes(excess, round_trip_us=round_trip_us),
        }

    _emit("Incast and PFC (card 6)", _guard(compute), as_json)


# --- card 11: collective topology -------------------------------------------------------------------


def ring_tree_crossover(
    ranks: Ranks = 8,
    bandwidth_gb_per_s: BandwidthGbPerS = 450.0,
    latency_us: LatencyUs = 0.822,
    as_json: JsonFlag = False,
) -> None:
    """Ring vs tree crossover M* = αB(2(n−1) − 2r)/(2r − 2(n−1)/n), r = ceil(log2 n): tree below
    (card 11, eq. 6-10).
    """

    def compute() -> dict[str, Value]:
        m_star = topo.ring_tree_crossover_bytes(
            ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
        )
        t = comm.ring_allreduce_s(
            m_star, ranks=ranks, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
        )
        return {
            "crossover_bytes": m_star,
            "crossover_kib": m_star / BYTES_PER_KIB,
            "time_at_crossover_us": t * US_PER_S,
        }

    _emit("Ring vs tree crossover (card 11)", _guard(compute), as_json)


def sharp_vs_ring(
    message_bytes: MessageBytes = 24 * 2**20,
    servers: Annotated[int, typer.Option(help="S, servers in the cross-server stage.", min=1)] = 8,
    bandwidth_gb_per_s: BandwidthGbPerS = 50.0,
    latency_us: LatencyUs = 0.83,
    as_json: JsonFlag = False,
) -> None:
    """SHARP α + M/B vs ring 2(S−1)α + 2(S−1)M/(SB) on the cross-server stage (card 11, ch07 §7.2)."""

    def compute() -> dict[str, Value]:
        ring = comm.ring_allreduce_s(
            message_bytes, ranks=servers, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
        )
        sharp = topo.sharp_allreduce_s(
            message_bytes, bandwidth_gb_per_s=bandwidth_gb_per_s, latency_us=latency_us
        )
        return {
            "ring_ms": ring * MS_PER_S,
            "ring_bytes_per_server": comm.ring_allreduce_bytes_per_rank(message_bytes, ranks=servers),
            "ring_rounds": comm.ring_allreduce_rounds(servers),
            "sharp_ms": sharp * MS_PER_S,
            "sharp_to_ring_ratio": sharp / ring if ring > 0 else math.inf,
        }

    _emit("SHARP vs ring (card 11)", _guard(compute), as_json)


def clos(
    radix: Annotated[int, typer.Option(help="k, switch ports.", min=2)] = 64,
    tiers: Annotated[int, typer.Option(help="2 (leaf-spine) or 3 (fat tree).", min=2, max=3)] = 2,
    oversubscription_ratio: Annotated[
        float, typer.Option(help="r:1 at the leaves (two tiers only).", min=0.0)
    ] = 1.0,
    port_gb_per_s: Annotated[float, typer.Option(help="Port rate per direction, GB/s.", min=0.0)] = 50.0,
    as_json: JsonFlag = False,
) -> None:
    """Clos sizing: k²/2 endpoints (2 tiers), k³/4 (3 tiers); bisection = endpoints/2 × rate / r
    (card 11, ch07 §7.1).
    """

    def compute() -> dict[str, Value]:
        r = oversubscription_ratio
        bisection = topo.clos_bisection_gb_per_s(
            radix, tiers=tiers, port_gb_per_s=port_gb_per_s, oversubscription_ratio=r
        )
        return {
            "endpoints": topo.clos_endpoint_count(radix, tiers=tiers, oversubscription_ratio=r),
            "switches": topo.clos_switch_count(radix, tiers=tiers, oversubscription_ratio=r),
            "bisection_tb_per_s": bisection / 1000,
            "per_endpoint_gb_per_s": topo.clos_per_endpoint_gb_per_s(
                port_gb_per_s, oversubscription_ratio=oversubscription_ratio
            ),
        }

    _emit("Clos sizing (card 11)", _guard(compute), as_json)


def switch_uplink(
    uplink_ports: Annotated[int, typer.Option(help="Ports facing up.", min=0)] = 16,
    downlink_ports: Annotated[int, typer.Option(help="Ports facing the cards.", min=1)] = 48,
    port_gb_per_s: Annotated[
        float, typer.Option(help="Port rate per direction, GB/s (NVLink4: 25).", min=0.0)
    ] = 25.0,
    as_json: JsonFlag = False,
) -> None:
    """Switch (NVSwitch) uplink = up ports × port rate; convergence = up/down (card 11, ch06 §6.5)."""

    def compute() -> dict[str, Value]:
        return {
            "uplink_gb_per_s": topo.switch_uplink_gb_per_s(uplink_ports, port_gb_per_s=port_gb_per_s),
            "downlink_gb_per_s": topo.switch_uplink_gb_per_s(downlink_ports, port_gb_per_s=port_gb_per_s),
            "up_to_down_ratio": topo.uplink_to_downlink_ratio(uplink_ports, downlink_ports=downlink_ports),
        }

    _emit("Switch uplink split (card 11)", _guard(compute), as_json)


def swing_vs_recursive_doubling(
    message_bytes: MessageBytes = 8 * 2**20,
    nodes: Annotated[int, typer.Option(help="Nodes on the ring (power of two).", min=2)] = 8,
    bandwidth_gb_per_s: BandwidthGbPerS = 50.0,
    latency_us: LatencyUs = 0.0,
    as_json: JsonFlag = False,
) -> None:
    """Max link load per round of a butterfly reduce-scatter on a ring; T = Σ(α + max V/B)
    (card 11, ch06 §6.5).
    """

    def compute() -> dict[str, Value]:
        out: dict[str, Value] = {}
        schedules: tuple[topo.ButterflySchedule, ...] = ("recursive_doubling", "swing")
        for schedule in schedules:
            loads = topo.ring_reduce_scatter_link_bytes(message_bytes, nodes=nodes, schedule=schedule)
            t = comm.round_schedule_s([[(x, bandwidth_gb_per_s)] for x in loads], latency_us=latency_us)
            out[f"{schedule}_max_link_bytes"] = ", ".join(f"{x:.0f}" for x in loads)
            out[f"{schedule}_us"] = t * US_PER_S
        return out

    _emit("Swing vs recursive doubling (card 11)", _guard(compute), as_json)


def ecmp(
    flows: Annotated[int, typer.Option(help="n, flows hashed onto the links.", min=1)] = 16,
    links: Annotated[int, typer.Option(help="m, equal-cost links.", min=1)] = 16,
    link_gb_per_s: Annotated[float, typer.Option(help="Rate of one link, GB/s.", min=0.0)] = 50.0,
    as_json: JsonFlag = False,
) -> None:
    """ECMP: expected busiest-link load of n flows on m links sets the slowest flow's rate
    (card 11, ch07 §7.4).
    """

    def compute() -> dict[str, Value]:
        expected_max = topo.ecmp_expected_max_flows(flows, links=links)
        return {
            "expected_max_flows_per_link": expected_max,
            "slowest_flow_gb_per_s": topo.ecmp_per_flow_gb_per_s(link_gb_per_s, flows=flows, links=links),
            "ideal_flow_gb_per_s": link_gb_per_s / math.ceil(flows / links),
        }

    _emit("ECMP collisions (card 11)", _guard(compute), as_json)


# --- card 4: training --------------------------------------------------------------------------------


def training_time(
    params: Annotated[float, typer.Option(help="N, parameters.", min=0.0)] = 1e12,
    tokens: Annotated[
        float | None, typer.Option(help="D, training tokens (default: 20·N, Chinchilla-style).", min=0.0)
    ] = None,
    peak_tflops: Annotated[
        float, typer.Option(help="Π, dense BF16 peak per card, TFLOP/s.", min=0.0)
    ] = 989.4,
    mfu_frac: Annotated[float, typer.Option(help="η, MFU (0..1].", min=0.0, max=1.0)] = 0.40,
    cards: Annotated[int, typer.Option(help="p, cards.", min=1)] = 16_384,
    deadline_days: Annotated[
        float | None, typer.Option(help="If set: cards needed to finish in this many days.", min=0.0)
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Training F ≈ 6ND (120N² at D = 20N); T = F/(pΠη); cards p = ceil(F/(Πη·T_avail))
    (card 4, ch10 §10.1, §10.6).
    """

    def compute() -> dict[str, Value]:
        d = tr.CHINCHILLA_TOKENS_PER_PARAM * params if tokens is None else tokens
        flop = tr.dense_train_flop(params, tokens=d)
        calendar = tr.training_calendar_s(flop, cards=cards, peak_tflops=peak_tflops, mfu_frac=mfu_frac)
        card_s = tr.training_calendar_s(flop, cards=1, peak_tflops=peak_tflops, mfu_frac=mfu_frac)
        out: dict[str, Value] = {
            "tokens": d,
            "train_flop": flop,
            "gpu_hours": card_s / S_PER_HOUR,
            "calendar_days": calendar / S_PER_DAY,
            "cards_for_deadline": None,
        }
        if deadline_days is not None:
            out["cards_for_deadline"] = tr.cards_for_compute(
                flop, peak_tflops=peak_tflops, mfu_frac=mfu_frac, available_s=deadline_days * S_PER_DAY
            )
        return out

    _emit("Training FLOPs, cards and days (card 4)", _guard(compute), as_json)


def completion_time(
    start_days: Annotated[float, typer.Option(help="T_0 before the first step, days.", min=0.0)] = 5.0,
    tokens: Annotated[float, typer.Option(help="D, training tokens.", min=0.0)] = 1e11,
    tokens_per_step: Annotated[float, typer.Option(help="b, tokens per optimizer step.", min=1.0)] = 3
    * 2**20,
    step_s: Annotated[float, typer.Option(help="t_s, normal step time, s.", min=0.0)] = 52.8,
    loss_frac: Annotated[
        float, typer.Option(help="L, failure/recovery overhead fraction.", min=0.0)
    ] = 0.0108,
    deadline_days: Annotated[
        float, typer.Option(help="Deadline from the same origin, days.", min=0.0)
    ] = 30.0,
    as_json: JsonFlag = False,
) -> None:
    """Completion T_finish = T_0 + ceil(D/b)·t_s·(1 + L); per-step budget (T_dl − T_0)/(steps(1 + L))
    (card 4, §10.6).
    """

    def compute() -> dict[str, Value]:
        steps = tr.training_step_count(tokens, tokens_per_step=tokens_per_step)
        finish = tr.completion_time_s(start_days * S_PER_DAY, steps=steps, step_s=step_s, loss_frac=loss_frac)
        budget = tr.step_budget_s(
            deadline_days * S_PER_DAY, start_s=start_days * S_PER_DAY, steps=steps, loss_frac=loss_frac
        )
        return {
            "steps": steps,
            "finish_days": finish / S_PER_DAY,
            "meets_deadline": finish <= deadline_days * S_PER_DAY,
            "spare_days": deadline_days - finish / S_PER_DAY,
            "step_budget_s": budget,
        }

    _emit("Completion time (card 4)", _guard(compute), as_json)


def zero_memory(
    params: Annotated[float, typer.Option(help="N, parameters.", min=0.0)] = 8_190_735_360,
    dp_ranks: Annotated[int, typer.Option(help="d, data-parallel ranks.", min=1)] = 8,
    grad_bytes_per_param: Annotated[
        float, typer.Option(help="Gradient bytes (BF16 2, FP32 4).", min=0.0)
    ] = 2.0,
    activation_gb: Annotated[float, typer.Option(help="Activations per card, GB.", min=0.0)] = 0.0,
    microbatches: Annotated[int, typer.Option(help="m, micro-batches per step (ZeRO-3 traffic).", min=1)] = 1,
    as_json: JsonFlag = False,
) -> None:
    """ZeRO per card: 16N, 4N + 12N/d, 2N + 14N/d, 16N/d (+ activations); ZeRO-3 traffic 3m(d−1)/d·2N
    (card 4, §10.2).
    """

    def compute() -> dict[str, Value]:
        out: dict[str, Value] = {}
        stages: tuple[tr.ZeroStage, ...] = (0, 1, 2, 3)
        for stage in stages:
            per_card = tr.zero_state_bytes_per_card(
                params,
                stage=stage,
                dp_ranks=dp_ranks,
                grad_bytes_per_param=grad_bytes_per_param,
                activation_bytes=activation_gb * BYTES_PER_GB,
            )
            out[f"zero{stage}_gb_per_card"] = per_card / BYTES_PER_GB
            out[f"zero{stage}_gib_per_card"] = per_card / BYTES_PER_GIB
        traffic = tr.zero3_traffic_bytes_per_step(params, microbatches=microbatches, dp_ranks=dp_ranks)
        out["zero3_traffic_gb_per_step"] = traffic / BYTES_PER_GB
        out["checkpoint_gb"] = tr.checkpoint_bytes(params) / BYTES_PER_GB
        return out

    _emit("ZeRO per-card state (card 4)", _guard(compute), as_json)


def pipeline_bubble(
    microbatches: Annotated[int, typer.Option(help="m, micro-batches per step.", min=1)] = 8,
    stages: Annotated[int, typer.Option(help="p, pipeline stages.", min=1)] = 4,
    virtual_stages: Annotated[int, typer.Option(help="v, model chunks per stage (interleaved).", min=1)] = 1,
    forward_ms: Annotated[float, typer.Option(help="t_f per micro-batch per stage, ms.", min=0.0)] = 1.0,
    backward_ms: Annotated[float, typer.Option(help="t_b per micro-batch per stage, ms.", min=0.0)] = 2.0,
    as_json: JsonFlag = False,
) -> None:
    """Pipeline T = (m + p − 1)(t_f + t_b), u = m/(m + p − 1), bubble (1/v)(p − 1)/m (card 4, ch10 §10.2)."""

    def compute() -> dict[str, Value]:
        step = tr.pipeline_step_s(
            microbatches, stages=stages, forward_s=forward_ms / MS_PER_S, backward_s=backward_ms / MS_PER_S
        )
        return {
            "step_ms": step * MS_PER_S,
            "utilization_frac": tr.pipeline_utilization_frac(microbatches, stages=stages),
            "bubble_frac": tr.pipeline_bubble_frac(
                microbatches, stages=stages, virtual_stages=virtual_stages
            ),
        }

    _emit("Pipeline bubble (card 4)", _guard(compute), as_json)


def checkpoint_interval(
    checkpoint_s: Annotated[
        float, typer.Option(help="c, blocking checkpoint write time, s.", min=0.0)
    ] = 60.0,
    job_mtbf_hours: Annotated[
        float, typer.Option(help="Job mean time between failures, h (Meta: 7.9 h on 1,024 cards).", min=0.0)
    ] = 7.9,
    spike_mtbf_hours: Annotated[
        float | None, typer.Option(help="Mean time between loss-spike rollbacks, h (adds λ_spike).", min=0.0)
    ] = None,
    restart_s: Annotated[float, typer.Option(help="r, restart and reload time, s.", min=0.0)] = 600.0,
    interval_s: Annotated[float | None, typer.Option(help="τ to evaluate, s (default: τ*).", min=0.0)] = None,
    as_json: JsonFlag = False,
) -> None:
    """Checkpoint loss L(τ) = c/τ + λτ/2 + λr, optimum τ* = sqrt(2c/λ), λ = λ_hw + λ_spike
    (card 4, ch10 §10.3).
    """

    def compute() -> dict[str, Value]:
        if job_mtbf_hours <= 0:
            raise ValueError("job_mtbf_hours must be positive")
        rate = 1.0 / (job_mtbf_hours * S_PER_HOUR)
        if spike_mtbf_hours is not None:
            if spike_mtbf_hours <= 0:
                raise ValueError("spike_mtbf_hours must be positive")
            rate += 1.0 / (spike_mtbf_hours * S_PER_HOUR)
        tau_star = tr.optimal_checkpoint_interval_s(checkpoint_s, failure_rate_per_s=rate)
        tau = tau_star if interval_s is None else interval_s
        kw = {"checkpoint_s": checkpoint_s, "failure_rate_per_s": rate, "restart_s": restart_s}
        return {
            "failure_rate_per_hour": rate * S_PER_HOUR,
            "optimal_interval_s": tau_star,
            "overhead_at_optimum_frac": tr.checkpoint_overhead_frac(tau_star, **kw),
            "interval_s": tau,
            "overhead_frac": tr.checkpoint_overhead_frac(tau, **kw),
            "throughput_kept_frac": tr.effective_throughput(
                1.0, overhead_frac=tr.checkpoint_overhead_frac(tau, **kw)
            ),
        }

    _emit("Checkpoint interval (card 4)", _guard(compute), as_json)


def straggler(
    mean_s: Annotated[float, typer.Option(help="μ, mean per-worker step time, s.", min=0.0)] = 52.78,
    sigma_s: Annotated[float, typer.Option(help="σ of the varying part, s.", min=0.0)] = 1.044,
    workers: Annotated[int, typer.Option(help="N, workers that wait for each other.", min=1)] = 48,
    as_json: JsonFlag = False,
) -> None:
    """Stragglers: E[max of N normal step times] = μ + E[max Z_N]·σ (1.42σ at 8, 2.23σ at 48)
    (card 4, ch10 §10.4).
    """

    def compute() -> dict[str, Value]:
        factor = tr.expected_max_standard_normal(workers)
        step = tr.straggler_step_s(mean_s, sigma_s=sigma_s, workers=workers)
        return {
            "expected_max_sigmas": factor,
            "expected_step_s": step,
            "slowdown_frac": step / mean_s - 1 if mean_s > 0 else 0.0,
        }

    _emit("Straggler expected maximum (card 4)", _guard(compute), as_json)


def grad_allreduce(
    grad_gb_per_card: Annotated[float, typer.Option(help="G, gradient bytes per card, GB.", min=0.0)] = 8.0,
    supernode_cards: Annotated[int, typer.Option(help="Cards per supernode.", min=1)] = 64,
    total_cards: Annotated[int, typer.Option(help="Cards in the job.", min=1)] = 1024,
    tensor_parallel: Annotated[int, typer.Option(help="TP degree inside the supernode.", min=1)] = 8,
    local_bandwidth_gb_per_s: Annotated[float, typer.Option(help="B_L per card, GB/s.", min=0.0)] = 450.0,
    local_latency_us: Annotated[float, typer.Option(help="α_L, µs.", min=0.0)] = 0.822,
    nic_bandwidth_gb_per_s: Annotated[float, typer.Option(help="B_NIC per card, GB/s.", min=0.0)] = 50.0,
    remote_latency_us: Annotated[float, typer.Option(help="α_R, µs.", min=0.0)] = 3.76,
    oversubscription_ratio: Annotated[float, typer.Option(help="r:1 at the supernode exit.", min=0.0)] = 1.0,
    step_s: Annotated[
        float | None, typer.Option(help="Step time, s, to report the sync ratio.", min=0.0)
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """T_grad = 2(q−1)α_L + 2(q−1)G/(qB_L) + 2(H−1)α_R + max(2(H−1)G/(HqB_NIC), V_out/B_out)
    (card 4, ch07 §7.6.4).
    """

    def compute() -> dict[str, Value]:
        if supernode_cards % tensor_parallel or total_cards % supernode_cards:
            raise ValueError("supernode_cards must be a multiple of tensor_parallel and divide total_cards")
        t = tr.grad_allreduce_supernodes_s(
            grad_gb_per_card * BYTES_PER_GB,
            local_ranks=supernode_cards // tensor_parallel,
            supernodes=total_cards // supernode_cards,
            local_bandwidth_gb_per_s=local_bandwidth_gb_per_s,
            local_latency_us=local_latency_us,
            nic_bandwidth_gb_per_s=nic_bandwidth_gb_per_s,
            remote_latency_us=remote_latency_us,
            exit_bandwidth_gb_per_s=sn.supernode_exit_gb_per_s(
                supernode_cards,
                nic_gb_per_s=nic_bandwidth_gb_per_s,
                oversubscription_ratio=oversubscription_ratio,
            ),
            tensor_parallel=tensor_parallel,
        )
        return {
            "grad_sync_s": t,
            "sync_ratio_frac": None if step_s is None else sn.sync_ratio_frac(t, step_s=step_s),
        }

    _emit("Gradient all-reduce across supernodes (card 4)", _guard(compute), as_json)


def rl_async(
    generate_s: Annotated[float, typer.Option(help="t_gen per cycle, s.", min=0.0)] = 40.0,
    learn_s: Annotated[float, typer.Option(help="t_learn per cycle, s.", min=0.0)] = 16.0,
    sync_s: Annotated[float, typer.Option(help="t_sync per cycle, s.", min=0.0)] = 4.0,
    quality_retention_frac: Annotated[
        float, typer.Option(help="q, useful fraction under async.", min=0.0, max=1.0)
    ] = 0.8,
    as_json: JsonFlag = False,
) -> None:
    """Async RL beats sync iff q > (max(t_g, t_l) + t_s)/(t_g + t_l + t_s) (card 4, ch10 §10.5)."""

    def compute() -> dict[str, Value]:
        kw = {"learn_s": learn_s, "sync_s": sync_s}
        gain = tr.rl_async_gain_ratio(quality_retention_frac, generate_s=generate_s, **kw)
        return {
            "sync_cycle_s": tr.rl_sync_cycle_s(generate_s, **kw),
            "async_cycle_s": tr.rl_async_cycle_s(generate_s, **kw),
            "threshold_frac": tr.rl_async_threshold_frac(generate_s, **kw),
            "async_gain_ratio": gain,
            "prefer_async": gain > 1.0,
        }

    _emit("Async vs sync RL (card 4)", _guard(compute), as_json)


# --- card 10: supernode --------------------------------------------------------------------------------


def power_limited_size(
    power_budget_kw: Annotated[float, typer.Option(help="P_budget, kW.", min=0.0)] = 120.0,
    server_power_kw: Annotated[float, typer.Option(help="P_server, kW (DGX H100: 10.2).", min=0.0)] = 10.2,
    gpus_per_server: Annotated[int, typer.Option(help="g, cards per server.", min=1)] = 8,
    fixed_power_kw: Annotated[float, typer.Option(help="P_0, shared equipment, kW.", min=0.0)] = 0.0,
    rack_limit_kw: Annotated[
        float, typer.Option(help="Per-rack power/cooling limit, kW (air ≈ 40).", min=0.0)
    ] = 40.0,
    as_json: JsonFlag = False,
) -> None:
    """Power-limited size N ≤ g·floor((P_budget − P_0)/P_server); servers per air-cooled rack
    (card 10, eq. 6-11).
    """

    def compute() -> dict[str, Value]:
        cards = sn.power_limited_cards(
            power_budget_kw,
            server_power_kw=server_power_kw,
            gpus_per_server=gpus_per_server,
            fixed_power_kw=fixed_power_kw,
        )
        servers = cards // gpus_per_server
        per_rack = sn.servers_per_rack(rack_limit_kw, server_power_kw=server_power_kw)
        return {
            "servers": servers,
            "cards": cards,
            "power_used_kw": sn.cluster_power_kw(
                cards,
                server_power_kw=server_power_kw,
                gpus_per_server=gpus_per_server,
                fixed_power_kw=fixed_power_kw,
            ),
            "servers_per_rack": per_rack,
            "racks": -(-servers // per_rack) if per_rack else None,
        }

    _emit("Power-limited supernode size (card 10)", _guard(compute), as_json)


def sync_ratio(
    exposed_comm_s: Annotated[
        float, typer.Option(help="Exposed (non-overlapped) communication per step, s.", min=0.0)
    ] = (0.318),
    step_s: Annotated[float, typer.Option(help="Step time, s.", min=0.0)] = 0.939,
    threshold_frac: Annotated[
        float,
        typer.Option(help="Acceptable ratio (planner default 0.30; not a book rule).", min=0.0, max=1.0),
    ] = sn.DEFAULT_SYNC_RATIO_THRESHOLD_FRAC,
    as_json: JsonFlag = False,
) -> None:
    """sync_ratio = exposed communication / step time vs a user threshold (default 0.30, planner's choice)
    (card 10).
    """

    def compute() -> dict[str, Value]:
        ratio = sn.sync_ratio_frac(exposed_comm_s, step_s=step_s)
        return {
            "sync_ratio_frac": ratio,
            "threshold_frac": threshold_frac,
            "acceptable": sn.sync_ratio_acceptable(ratio, threshold_frac=threshold_frac),
        }

    _emit("Sync ratio (card 10)", _guard(compute), as_json)


def ocs_payback(
    reconfig_ms: Annotated[float, typer.Option(help="Reconfiguration time, ms.", min=0.0)] = 1.0,
    before_us: Annotated[
        float, typer.Option(help="Collective time on the current topology, µs.", min=0.0)
    ] = 293.6,
    after_us: Annotated[float, typer.Option(help="Collective time after reconfiguring, µs.", min=0.0)] = 97.9,
    as_json: JsonFlag = False,
) -> None:
    """OCS reconfiguration pays after n ≥ T_reconfig / saving per repetition (card 10, ch06 §6.5)."""

    def compute() -> dict[str, Value]:
        saving_s = (before_us - after_us) / US_PER_S
        return {
            "saving_per_repetition_us": saving_s * US_PER_S,
            "payback_repetitions": sn.ocs_payback_repetitions(
                reconfig_ms / MS_PER_S, saving_per_repetition_s=saving_s
            ),
        }

    _emit("OCS reconfiguration payback (card 10)", _guard(compute), as_json)


def token_time(
    compute_us: Annotated[float, typer.Option(help="Compute/memory term per token, µs.", min=0.0)] = 2689.0,
    comm_us: Annotated[float, typer.Option(help="Communication per token, µs.", min=0.0)] = 76.0,
    fixed_us: Annotated[
        float, typer.Option(help="Fixed overhead per token not in the compute term, µs.", min=0.0)
    ] = 0.0,
    as_json: JsonFlag = False,
) -> None:
    """Token time of a coupled decode domain T = compute + fixed + comm; tokens/s and comm share
    (card 10, eq. 6-15).
    """

    def compute() -> dict[str, Value]:
        t = sn.token_time_s(compute_us / US_PER_S, comm_s=comm_us / US_PER_S, fixed_s=fixed_us / US_PER_S)
        return {
            "token_us": t * US_PER_S,
            "tokens_per_s": 1 / t if t > 0 else math.inf,
            "comm_share_frac": sn.comm_share_frac(comm_us / US_PER_S, token_s=t),
        }

    _emit("Token time (card 10)", _guard(compute), as_json)


_COMMANDS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("message-transfer", message_transfer),
    ("ring-allreduce", ring_allreduce),
    ("tree-allreduce", tree_allreduce),
    ("hierarchical-allreduce", hierarchical_allreduce),
    ("busbw", busbw),
    ("overlap-step", overlap_step),
    ("oversubscription", oversubscription),
    ("incast", incast),
    ("ring-tree-crossover", ring_tree_crossover),
    ("sharp-vs-ring", sharp_vs_ring),
    ("clos", clos),
    ("switch-uplink", switch_uplink),
    ("swing-vs-recursive-doubling", swing_vs_recursive_doubling),
    ("ecmp", ecmp),
    ("training-time", training_time),
    ("completion-time", completion_time),
    ("zero-memory", zero_memory),
    ("pipeline-bubble", pipeline_bubble),
    ("checkpoint-interval", checkpoint_interval),
    ("straggler", straggler),
    ("grad-allreduce", grad_allreduce),
    ("rl-async", rl_async),
    ("power-limited-size", power_limited_size),
    ("sync-ratio", sync_ratio),
    ("ocs-payback", ocs_payback),
    ("token-time", token_time),
)


def register(ledger_app: typer.Typer) -> None:
    """Add this module's formula subcommands to the ``planner ledger`` group."""
    for name, command in _COMMANDS:
        ledger_app.command(name, help=command.__doc__)(command)
