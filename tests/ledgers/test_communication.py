"""Card 6 — communication ledger: worked examples C6.1–C6.13, card-text cases and properties.

Tolerance convention: ``printed(x, d)`` = absolute tolerance of half a unit in the d-th printed decimal.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.ledgers import communication as comm
from planner.units import BYTES_PER_KIB, BYTES_PER_MIB, MS_PER_S, US_PER_S

GRADIENT_BYTES = 192 * BYTES_PER_MIB  # FP32 gradient tensor of ch07 §7.2


def printed(value: float, decimals: int) -> object:
    """Approx with half a unit in the last printed decimal (decimals < 0 for tens, hundreds, ...)."""
    return pytest.approx(value, abs=0.5 * 10.0**-decimals)


# --------------------------------------------------------------------------------------------------
# C6.1 — overlap vs serial (Example 7.1). The book rounds 360 MiB / 50 GB/s = 7.55 ms to 7.5 ms and
# reuses 7.5; the serial/overlapped rows below use the rounded 7.5 as the book does.
# --------------------------------------------------------------------------------------------------


def test_c6_1_transfer() -> None:
    t = comm.transfer_s(360 * BYTES_PER_MIB, bandwidth_gb_per_s=50.0)
    assert t * MS_PER_S == printed(7.5, 1)


@pytest.mark.parametrize(("speedup", "serial_ms", "overlapped_ms"), [(2, 17.5, 10.0), (4, 12.5, 7.5)])
def test_c6_1_serial_and_overlapped(speedup: float, serial_ms: float, overlapped_ms: float) -> None:
    compute_ms = 20.0 / speedup
    assert comm.serial_step_s(compute_ms / MS_PER_S, comm_s=7.5e-3) * MS_PER_S == printed(serial_ms, 1)
    assert comm.overlapped_step_s(compute_ms / MS_PER_S, comm_s=7.5e-3) * MS_PER_S == printed(
        overlapped_ms, 1
    )


def test_c6_1_comm_becomes_the_floor() -> None:
    t_comm = comm.transfer_s(360 * BYTES_PER_MIB, bandwidth_gb_per_s=50.0)
    assert comm.comm_floor_compute_speedup(20e-3, comm_s=t_comm) == printed(2.6, 1)


# --------------------------------------------------------------------------------------------------
# C6.3 — no-NVLink ceiling, 2 servers × 4 A100 PCIe, one dual-port CX-7 (2 × 25 GB/s) per 32 GB/s slot.
# Start-up latency is negligible at these sizes and is set to 0.
# --------------------------------------------------------------------------------------------------

PCIE_P2P = 32.0


def _pcie_nic() -> float:
    return comm.nic_effective_gb_per_s(25.0, ports=2, slot_gb_per_s=32.0)


def test_c6_3_flat_ring() -> None:
    t = comm.ring_allreduce_s(
        GRADIENT_BYTES, ranks=8, bandwidth_gb_per_s=min(PCIE_P2P, _pcie_nic()), latency_us=0.0
    )
    assert comm.ring_allreduce_rounds(8) == 14
    assert comm.ring_allreduce_bytes_per_rank(GRADIENT_BYTES, ranks=8) == 14 * 24 * BYTES_PER_MIB
    assert t * MS_PER_S == printed(11.0, 1)


def test_c6_3_hierarchical_is_slower() -> None:
    # The node's single NIC is shared by its 4 ranks during the cross-node stage: 32 / 4 GB/s per rank.
    parts = comm.hierarchical_allreduce_parts(
        GRADIENT_BYTES,
        ranks_per_node=4,
        nodes=2,
        local_bandwidth_gb_per_s=PCIE_P2P,
        nic_bandwidth_gb_per_s=_pcie_nic() / 4,
        latency_us=0.0,
    )
    assert parts.cross_s * MS_PER_S == printed(6.3, 1)
    assert parts.local_s * MS_PER_S == printed(9.4, 1)
    assert parts.total_s * MS_PER_S == printed(15.7, 1)


def test_c6_3_breakeven_local_bandwidth() -> None:
    flat = comm.ring_allreduce_s(GRADIENT_BYTES, ranks=8, bandwidth_gb_per_s=32.0, latency_us=0.0)
    b_star = comm.hierarchical_breakeven_local_gb_per_s(
        flat,
        message_bytes=GRADIENT_BYTES,
        ranks_per_node=4,
        nodes=2,
        nic_bandwidth_gb_per_s=8.0,
        latency_us=0.0,
    )
    assert b_star == printed(64, 0)


def test_c6_3_nvlink_bridge_pairs() -> None:
    t = comm.hierarchical_allreduce_s(
        GRADIENT_BYTES,
        ranks_per_node=4,
        nodes=2,
        local_bandwidth_gb_per_s=300.0,
        nic_bandwidth_gb_per_s=8.0,
        latency_us=0.0,
    )
    assert t * MS_PER_S == printed(7.3, 1)


def test_c6_3_one_port_vs_two_ports() -> None:
    one = comm.nic_effective_gb_per_s(25.0, ports=1, slot_gb_per_s=32.0)
    two = comm.nic_effective_gb_per_s(25.0, ports=2, slot_gb_per_s=32.0)
    assert (one, two) == (25.0, 32.0)
    t_one = comm.ring_allreduce_s(GRADIENT_BYTES, ranks=8, bandwidth_gb_per_s=one, latency_us=0.0)
    t_two = comm.ring_allreduce_s(GRADIENT_BYTES, ranks=8, bandwidth_gb_per_s=two, latency_us=0.0)
    assert t_one * MS_PER_S == printed(14.1, 1)
    assert t_two * MS_PER_S == printed(11.0, 1)


# --------------------------------------------------------------------------------------------------
# Card 6 decision rule: flat ring over 2 HGX H100 vs hierarchical (α = 0.83 µs per round)
# --------------------------------------------------------------------------------------------------


def test_flat_vs_hierarchical_on_two_hgx() -> None:
    flat = comm.ring_allreduce_s(GRADIENT_BYTES, ranks=16, bandwidth_gb_per_s=50.0, latency_us=0.83)
    hier = comm.hierarchical_allreduce_s(
        GRADIENT_BYTES,
        ranks_per_node=8,
        nodes=2,
        local_bandwidth_gb_per_s=450.0,
        nic_bandwidth_gb_per_s=50.0,
        latency_us=0.83,
    )
    assert flat * MS_PER_S == printed(7.6, 1)
    assert hier * MS_PER_S == printed(1.3, 1)
    # The card's explicit form: 14·(M/8)/B_L + 2·(M/16)/B_NIC + 16α.
    explicit = 14 * (GRADIENT_BYTES / 8) / 450e9 + 2 * (GRADIENT_BYTES / 16) / 50e9 + 16 * 0.83e-6
    assert hier == pytest.approx(explicit, rel=1e-12)


def test_message_crossover() -> None:
    m = comm.latency_bandwidth_crossover_bytes(50.0, latency_us=5.0)
    assert m == pytest.approx(250_000)
    assert m / BYTES_PER_KIB == printed(244, 0)


# --------------------------------------------------------------------------------------------------
# C6.5 — decode TP all-reduce over a network (8 ranks, α = 5 µs)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message_bytes", "bandwidth", "expected_us", "decimals"),
    [
        (8 * BYTES_PER_MIB, 50.0, 364, 0),
        (8 * BYTES_PER_MIB, 150.0, 168, 0),
        (8 * BYTES_PER_KIB, 50.0, 70.3, 1),
        (8 * BYTES_PER_KIB, 150.0, 70.1, 1),
    ],
)
def test_c6_5_ring_times(message_bytes: float, bandwidth: float, expected_us: float, decimals: int) -> None:
    t = comm.ring_allreduce_s(message_bytes, ranks=8, bandwidth_gb_per_s=bandwidth, latency_us=5.0)
    assert t * US_PER_S == printed(expected_us, decimals)


def test_c6_5_serial_all_reduces_and_alpha() -> None:
    # "≈ 5.1 ms either way": 72 × 70.29 µs = 5.06 ms at 50 GB/s; at 150 GB/s 72 × 70.10 µs = 5.047 ms,
    # which the book also calls ≈ 5.1 (it holds to 0.06 ms, not to the half-unit 0.05).
    one_50 = comm.ring_allreduce_s(8 * BYTES_PER_KIB, ranks=8, bandwidth_gb_per_s=50.0, latency_us=5.0)
    one_150 = comm.ring_allreduce_s(8 * BYTES_PER_KIB, ranks=8, bandwidth_gb_per_s=150.0, latency_us=5.0)
    assert 72 * one_50 * MS_PER_S == printed(5.1, 1)
    assert 72 * one_150 * MS_PER_S == pytest.approx(5.1, abs=0.06)
    at_5 = comm.ring_allreduce_s(8 * BYTES_PER_KIB, ranks=8, bandwidth_gb_per_s=50.0, latency_us=5.0)
    at_2 = comm.ring_allreduce_s(8 * BYTES_PER_KIB, ranks=8, bandwidth_gb_per_s=50.0, latency_us=2.0)
    assert 72 * (at_5 - at_2) * MS_PER_S == printed(3.0, 1)


def test_c6_5_crossover() -> None:
    m = comm.ring_latency_crossover_bytes(8, bandwidth_gb_per_s=50.0, latency_us=5.0)
    assert m / 1e6 == printed(2, 0)
    assert m / BYTES_PER_MIB == printed(1.91, 2)


# --------------------------------------------------------------------------------------------------
# C6.7 — oversubscription and per-card bandwidth (1,024 cards, 64-port leaves, 50 GB/s ports)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ratio", "leaves", "uplinks", "capacity_tb_per_s", "per_card"),
    [(1.0, 32, 1024, 51.2, 50.0), (3.0, 22, 352, 17.6, 17.2)],
)
def test_c6_7_partition(
    ratio: float, leaves: int, uplinks: int, capacity_tb_per_s: float, per_card: float
) -> None:
    assert comm.leaf_switch_count(1024, radix=64, oversubscription_ratio=ratio) == leaves
    assert comm.leaf_uplink_count(1024, radix=64, oversubscription_ratio=ratio) == uplinks
    capacity = comm.leaf_uplink_capacity_gb_per_s(
        1024, radix=64, port_gb_per_s=50.0, oversubscription_ratio=ratio
    )
    assert capacity / 1000 == printed(capacity_tb_per_s, 1)
    per = comm.per_card_uplink_gb_per_s(1024, radix=64, port_gb_per_s=50.0, oversubscription_ratio=ratio)
    assert per == printed(per_card, 1)


def test_uplink_rule() -> None:
    assert comm.uplink_not_bottleneck(1 / 3, oversubscription_ratio=3.0)
    assert not comm.uplink_not_bottleneck(0.5, oversubscription_ratio=3.0)
    assert comm.uplink_not_bottleneck(1.0, oversubscription_ratio=1.0)


# --------------------------------------------------------------------------------------------------
# C6.9 — MoE expert-parallel traffic
# --------------------------------------------------------------------------------------------------


def test_c6_9_dispatch_bytes_and_times() -> None:
    dispatch = comm.ep_remote_bytes(1024, top_k=8, token_bytes=8 * BYTES_PER_KIB, remote_frac=0.5)
    assert dispatch == 32 * BYTES_PER_MIB
    assert comm.transfer_s(dispatch, bandwidth_gb_per_s=50.0) * MS_PER_S == printed(0.67, 2)
    assert comm.transfer_s(dispatch, bandwidth_gb_per_s=8 * 50.0) * MS_PER_S == printed(0.08, 2)
    assert comm.transfer_s(dispatch, bandwidth_gb_per_s=32.0) * MS_PER_S == printed(1.05, 2)


@pytest.mark.parametrize(("destination", "expected_ms"), [(50.0, 24.2), (100.0, 12.1), (150.0, 8.1)])
def test_c6_9_nic_relay(destination: float, expected_ms: float) -> None:
    b_eff = comm.nic_relay_gb_per_s(
        destination, own_nic_gb_per_s=50.0, relay_link_gb_per_s=450.0, borrowed_nic_gb_per_s=100.0
    )
    assert b_eff == destination
    assert comm.transfer_s(1.125 * 2**30, bandwidth_gb_per_s=b_eff) * MS_PER_S == printed(expected_ms, 1)


# --------------------------------------------------------------------------------------------------
# C6.11 — incast & PFC (1 MiB buffer, 50 GB/s egress, one-hop round trip 0.33 µs)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("senders", "arrival", "excess", "feedback_us", "headroom_kb"),
    [(7, 350, 300, 3.50, 99), (15, 750, 700, 1.50, 231), (63, 3150, 3100, 0.34, 1023)],
)
def test_c6_11_incast(
    senders: int, arrival: float, excess: float, feedback_us: float, headroom_kb: float
) -> None:
    # The book's N = 8 / 16 / 64 exclude the receiver's own node: N − 1 senders.
    a = comm.incast_arrival_gb_per_s(senders, sender_gb_per_s=50.0)
    e = comm.incast_excess_gb_per_s(a, egress_gb_per_s=50.0)
    assert (a, e) == (arrival, excess)
    assert comm.incast_tolerable_feedback_us(BYTES_PER_MIB, excess_gb_per_s=e) == printed(feedback_us, 2)
    headroom = comm.pfc_headroom_bytes(e, round_trip_us=0.33)
    if headroom_kb < 1000:
        assert headroom / 1e3 == printed(headroom_kb, 0)
    else:
        assert headroom / 1e6 == printed(1.02, 2)


def test_e2e_lossless_feasibility() -> None:
    assert comm.e2e_lossless_feasible(300.0, round_trip_us=3.0, free_buffer_bytes=BYTES_PER_MIB)
    assert not comm.e2e_lossless_feasible(300.0, round_trip_us=10.0, free_buffer_bytes=BYTES_PER_MIB)


# --------------------------------------------------------------------------------------------------
# C6.13 — training step with communication (Example 7.6): compute 20 ms, update 2 ms, ready at 17 ms
# --------------------------------------------------------------------------------------------------


def test_c6_13_step_with_comm() -> None:
    flat = comm.ring_allreduce_s(GRADIENT_BYTES, ranks=16, bandwidth_gb_per_s=50.0, latency_us=0.83)
    hier = comm.hierarchical_allreduce_s(
        GRADIENT_BYTES,
        ranks_per_node=8,
        nodes=2,
        local_bandwidth_gb_per_s=450.0,
        nic_bandwidth_gb_per_s=50.0,
        latency_us=0.83,
    )
    serial = [comm.serial_step_s(20e-3, comm_s=t, update_s=2e-3) * MS_PER_S for t in (flat, hier)]
    overlapped = [
        comm.overlapped_step_s(20e-3, comm_s=t, ready_s=17e-3, update_s=2e-3) * MS_PER_S for t in (flat, hier)
    ]
    assert serial == [printed(29.6, 1), printed(23.3, 1)]
    assert overlapped == [printed(26.6, 1), printed(22.0, 1)]


# --------------------------------------------------------------------------------------------------
# Other formulas
# --------------------------------------------------------------------------------------------------


def test_busbw_conversion() -> None:
    assert comm.busbw_gb_per_s(100.0, ranks=8) == pytest.approx(175.0)
    assert comm.busbw_gb_per_s(100.0, ranks=8, collective="all_gather") == pytest.approx(87.5)
    assert comm.algbw_from_busbw_gb_per_s(175.0, ranks=8) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="unknown collective"):
        comm.busbw_factor(8, collective="broadcast")  # type: ignore[arg-type]


def test_tree_allreduce() -> None:
    t = comm.tree_allreduce_s(1e6, ranks=8, bandwidth_gb_per_s=100.0, latency_us=1.0)
    assert t == pytest.approx(6 * (1e-6 + 1e-5))
    assert comm.tree_rounds(1) == 0
    assert comm.tree_rounds(5) == 3


def test_round_schedule_and_cut_set() -> None:
    rounds = [[(1e9, 100.0), (2e9, 100.0)], [(1e9, 50.0)], []]
    assert comm.round_schedule_s(rounds, latency_us=10.0) == pytest.approx(3 * 10e-6 + 0.02 + 0.02)
    assert comm.cut_set_lower_bound_s(1e9, cut_bandwidth_gb_per_s=100.0) == pytest.approx(0.01)


def test_window_limited_bandwidth() -> None:
    assert comm.window_limited_gb_per_s(
        50.0, outstanding_requests=16, request_bytes=4096, round_trip_us=2.0
    ) == (pytest.approx(16 * 4096 / 2e-6 / 1e9))
    assert (
        comm.window_limited_gb_per_s(50.0, outstanding_requests=1e6, request_bytes=4096, round_trip_us=2.0)
        == 50.0
    )


def test_comm_speedup_step_ratio() -> None:
    assert comm.comm_speedup_step_ratio(20.0, comm_s=10.0, comm_speedup=2.0) == pytest.approx(30 / 25)


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="ranks"):
        comm.ring_allreduce_s(1e6, ranks=0, bandwidth_gb_per_s=50.0, latency_us=1.0)
    with pytest.raises(ValueError, match="message_bytes"):
        comm.ring_allreduce_s(-1.0, ranks=8, bandwidth_gb_per_s=50.0, latency_us=1.0)
    with pytest.raises(ValueError, match="bandwidth"):
        comm.transfer_s(1.0, bandwidth_gb_per_s=0.0)
    with pytest.raises(ValueError, match="whole ports"):
        comm.leaf_port_split(64, oversubscription_ratio=2.0)


def test_ring_works_on_numpy_arrays() -> None:
    import numpy as np

    sizes = np.array([8 * BYTES_PER_KIB, 8 * BYTES_PER_MIB])
    times = comm.ring_allreduce_s(sizes, ranks=8, bandwidth_gb_per_s=50.0, latency_us=5.0)  # type: ignore[arg-type]
    assert times * US_PER_S == pytest.approx([70.287, 363.6], abs=0.05)


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------

sizes = st.floats(min_value=1.0, max_value=1e11)
ranks = st.integers(min_value=2, max_value=4096)
bandwidths = st.floats(min_value=0.1, max_value=2000.0)


@settings(deadline=None, max_examples=50)
@given(sizes, ranks, bandwidths)
def test_busbw_of_latency_free_ring_equals_link_bandwidth(
    message_bytes: float, n: int, bandwidth: float
) -> None:
    t = comm.ring_allreduce_s(message_bytes, ranks=n, bandwidth_gb_per_s=bandwidth, latency_us=0.0)
    algbw = comm.algbw_gb_per_s(message_bytes, time_s=t)
    assert comm.busbw_gb_per_s(algbw, ranks=n) == pytest.approx(bandwidth, rel=1e-9)


@settings(deadline=None, max_examples=50)
@given(sizes, ranks, bandwidths, st.floats(min_value=0.0, max_value=20.0))
def test_reduce_scatter_plus_all_gather_is_all_reduce(
    message_bytes: float, n: int, bw: float, alpha: float
) -> None:
    rs = comm.ring_reduce_scatter_s(message_bytes, ranks=n, bandwidth_gb_per_s=bw, latency_us=alpha)
    ag = comm.ring_all_gather_s(message_bytes, ranks=n, bandwidth_gb_per_s=bw, latency_us=alpha)
    ar = comm.ring_allreduce_s(message_bytes, ranks=n, bandwidth_gb_per_s=bw, latency_us=alpha)
    assert rs + ag == pytest.approx(ar, rel=1e-12)


@settings(deadline=None, max_examples=50)
@given(
    sizes,
    st.floats(min_value=1.0, max_value=2.0),
    ranks,
    bandwidths,
    st.floats(min_value=0.0, max_value=20.0),
)
def test_ring_time_monotone_in_size(
    message_bytes: float, factor: float, n: int, bw: float, alpha: float
) -> None:
    small = comm.ring_allreduce_s(message_bytes, ranks=n, bandwidth_gb_per_s=bw, latency_us=alpha)
    large = comm.ring_allreduce_s(message_bytes * factor, ranks=n, bandwidth_gb_per_s=bw, latency_us=alpha)
    assert large >= small


@settings(deadline=None, max_examples=50)
@given(
    sizes,
    st.integers(min_value=1, max_value=16),
    st.integers(min_value=1, max_value=64),
    bandwidths,
    bandwidths,
)
def test_hierarchical_with_equal_links_never_beats_bandwidth_bound(
    message_bytes: float, q: int, h: int, local: float, nic: float
) -> None:
    t = comm.hierarchical_allreduce_s(
        message_bytes,
        ranks_per_node=q,
        nodes=h,
        local_bandwidth_gb_per_s=local,
        nic_bandwidth_gb_per_s=nic,
        latency_us=0.0,
    )
    if q * h > 1:
        # Every rank must send at least 2(n − 1)/n · M over links no faster than the faster of the two.
        lower = comm.ring_allreduce_bytes_per_rank(message_bytes, ranks=q * h) / (max(local, nic) * 1e9)
        assert t >= lower * (1 - 1e-9)


def test_best_allreduce_picks_tree_below_crossover_and_ring_above() -> None:
    import numpy as np

    from planner.ledgers.communication import best_allreduce_s, ring_allreduce_s, tree_allreduce_s

    kw = {"ranks": 8, "bandwidth_gb_per_s": 450.0, "latency_us": 0.822}
    small, large = 64 * 1024, 8 * 2**20
    assert best_allreduce_s(small, **kw) == pytest.approx(tree_allreduce_s(small, **kw))
    assert best_allreduce_s(large, **kw) == pytest.approx(ring_allreduce_s(large, **kw))
    arr = best_allreduce_s(np.array([small, large]), ranks=np.array([8, 8]), bandwidth_gb_per_s=450.0, latency_us=0.822)
    assert arr[1] == pytest.approx(ring_allreduce_s(large, **kw))
    assert best_allreduce_s(large, ranks=1, bandwidth_gb_per_s=450.0, latency_us=0.822) == 0.0


def test_allreduce_startup_is_two_n_minus_one_hops() -> None:
    import numpy as np

    from planner.ledgers.communication import allreduce_startup_s

    # TP8 over NVLink4, α = 0.822 µs: 2·(8 − 1) = 14 hops → 11.508 µs (the tree formula gave 6 × 0.822 µs).
    assert allreduce_startup_s(8, latency_us=0.822) == pytest.approx(11.508e-6, rel=1e-12)
    # C6.5: 8 ranks, α = 5 µs → 14 × 5 µs = 70 µs; one rank costs nothing.
    assert allreduce_startup_s(8, latency_us=5.0) == pytest.approx(70e-6, rel=1e-12)
    arr = allreduce_startup_s(np.array([1, 2, 4]), latency_us=0.822)
    assert arr == pytest.approx([0.0, 1.644e-6, 4.932e-6], rel=1e-12)


def test_tp_allreduce_is_startup_plus_ring_bytes() -> None:
    import numpy as np

    from planner.ledgers.communication import ring_allreduce_s, tp_allreduce_s

    # Hand value: 8 MiB over TP8 at 450 GB/s, α = 0.822 µs: 14 × 0.822 µs + 1.75 × 8,388,608 B / 450 GB/s
    # = 11.508 µs + 32.6224 µs = 44.1304 µs.
    m = 8 * 2**20
    assert tp_allreduce_s(m, ranks=8, bandwidth_gb_per_s=450.0, latency_us=0.822) == pytest.approx(
        44.1304e-6, rel=1e-5
    )
    # C6.5: 8 ranks, α = 5 µs, 8 MiB at 50 GB/s → 364 µs; 8 KiB → 70.3 µs (start-up bound).
    assert tp_allreduce_s(m, ranks=8, bandwidth_gb_per_s=50.0, latency_us=5.0) == pytest.approx(364e-6, rel=2e-3)
    assert tp_allreduce_s(8192, ranks=8, bandwidth_gb_per_s=50.0, latency_us=5.0) == pytest.approx(70.3e-6, rel=1e-3)
    arr = tp_allreduce_s(np.array([8192.0, m]), ranks=np.array([4, 8]), bandwidth_gb_per_s=450.0, latency_us=0.822)
    assert arr[0] == pytest.approx(ring_allreduce_s(8192.0, ranks=4, bandwidth_gb_per_s=450.0, latency_us=0.822))
    assert arr[1] == pytest.approx(ring_allreduce_s(m, ranks=8, bandwidth_gb_per_s=450.0, latency_us=0.822))
    assert tp_allreduce_s(m, ranks=1, bandwidth_gb_per_s=450.0, latency_us=0.822) == 0.0
