"""Card 11 worked examples through the one algorithm chooser (planner.ledgers.collectives.allreduce_choice).

Every expected number is computed by hand from the book's formulas in the comment next to it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.ledgers.collectives import (
    CollectiveFabric,
    allreduce_choice,
    in_domain_allreduce_s,
    in_domain_fabric,
)
from planner.ledgers.racks import replica_footprint_gpus
from planner.ledgers.topology import ring_tree_crossover_bytes

KiB, MiB = 1024, 1024**2


def _nvlink8_with_tree() -> CollectiveFabric:
    """C11.7: 8 cards in one NVLink domain, 450 GB/s per direction, α = 0.822 µs, tree offered."""
    return CollectiveFabric(
        ranks=8, ranks_per_domain=8, local_gb_per_s=450.0, local_latency_us=0.822, tree_in_domain=1
    )


@pytest.mark.parametrize(
    ("message_bytes", "algorithm", "time_us"),
    [
        # tree: 2·3·(0.822 µs + 524,288 B / 450 GB/s) = 6·(0.822 + 1.16508) = 11.9225 µs
        # ring: 14·0.822 + 14/8·524,288/450e9 s = 11.508 + 2.03890 = 13.5469 µs
        (512 * KiB, "tree", 11.9225),
        # ring: 11.508 + 1.75·1,048,576/450e9 = 11.508 + 4.07780 = 15.5858 µs; tree 6·(0.822 + 2.33017) = 18.913
        (1 * MiB, "ring", 15.5858),
    ],
)
def test_c11_7_ring_vs_tree(message_bytes: float, algorithm: str, time_us: float) -> None:
    choice = allreduce_choice(message_bytes, _nvlink8_with_tree())
    assert str(choice.algorithm) == algorithm
    assert float(choice.time_s) * 1e6 == pytest.approx(time_us, rel=1e-4)


def test_c11_7_crossover_is_680_kib() -> None:
    """The chooser switches from tree to ring at the card's crossover (≈ 680 KiB)."""
    cross = ring_tree_crossover_bytes(8, bandwidth_gb_per_s=450.0, latency_us=0.822)
    assert cross / KiB == pytest.approx(680.0, abs=1.0)
    below = allreduce_choice(cross * 0.99, _nvlink8_with_tree())
    above = allreduce_choice(cross * 1.01, _nvlink8_with_tree())
    assert (str(below.algorithm), str(above.algorithm)) == ("tree", "ring")


@pytest.mark.parametrize(
    ("servers", "ring_ms"),
    # ring over S servers of a 24 MiB slice at 50 GB/s, α = 0.83 µs: 2(S − 1)·α + 2(S − 1)/S·24 MiB / 50 GB/s
    [(2, 0.505), (4, 0.760), (8, 0.892), (16, 0.969), (32, 1.027)],
)
def test_c11_1_sharp_vs_ring_on_the_cross_server_stage(servers: int, ring_ms: float) -> None:
    fabric = CollectiveFabric(
        ranks=servers, ranks_per_domain=1, local_gb_per_s=450.0, local_latency_us=0.83,
        cross_gb_per_s=50.0, cross_latency_us=0.83, in_network_reduction=1,
    )
    choice = allreduce_choice(24 * MiB, fabric)
    assert float(choice.times_s["ring"]) * 1e3 == pytest.approx(ring_ms, abs=6e-4)
    # SHARP: α + 24 MiB / 50 GB/s = 0.00083 + 0.50332 = 0.504 ms, whatever S
    assert float(choice.times_s["hierarchical_sharp"]) * 1e3 == pytest.approx(0.504, abs=6e-4)
    assert str(choice.algorithm) == "hierarchical_sharp"  # ties at S = 2 (0.504 vs 0.505), wins from S = 4
    without = allreduce_choice(24 * MiB, CollectiveFabric(**{**fabric.__dict__, "in_network_reduction": 0}))
    assert float(without.time_s) * 1e3 == pytest.approx(ring_ms, abs=6e-4)


def test_c6_hierarchical_wins_with_nvlink_and_loses_over_pcie() -> None:
    """Card 6: 192 MiB gradients. 2 × 8 H100 (NVLink 450, one 50 GB/s NIC per GPU): flat ring 7.6 ms,
    hierarchical 1.3 ms. 2 × 4 PCIe A100 (P2P 32 GB/s, one 32 GB/s NIC slot per server): 11.0 vs 15.7 ms."""
    hgx = CollectiveFabric(
        ranks=16, ranks_per_domain=8, local_gb_per_s=450.0, local_latency_us=0.822,
        cross_gb_per_s=50.0, cross_latency_us=3.76,
    )
    c = allreduce_choice(192 * MiB, hgx)
    # flat ring: 30·3.76 µs + 30/16·192 MiB / 50 GB/s = 0.113 + 7.550 = 7.66 ms
    assert float(c.times_s["ring"]) * 1e3 == pytest.approx(7.66, abs=0.01)
    # hierarchical: 14·24 MiB/450 + 2·12 MiB/50 + 14·0.822 + 2·3.76 µs = 0.783 + 0.503 + 0.019 = 1.305 ms
    assert str(c.algorithm) == "hierarchical" and float(c.time_s) * 1e3 == pytest.approx(1.305, abs=0.002)
    pcie = CollectiveFabric(
        ranks=8, ranks_per_domain=4, local_gb_per_s=32.0, local_latency_us=1.5,
        cross_gb_per_s=32.0, cross_latency_us=3.76, ranks_per_nic=4,
    )
    c = allreduce_choice(192 * MiB, pcie)
    # flat ring: 14·24 MiB / 32 GB/s = 11.01 ms (+ 14·3.76 µs); hierarchical 9.44 + 6.29 = 15.73 ms (+ α)
    assert str(c.algorithm) == "ring" and float(c.time_s) * 1e3 == pytest.approx(11.06, abs=0.01)
    assert float(c.times_s["hierarchical"]) * 1e3 == pytest.approx(15.75, abs=0.01)


def test_in_switch_reduction_pays_only_for_large_messages() -> None:
    """8 × H200 with NVLS (algbw 275.6 GB/s, α_S = 17.1 µs here) against the ring at 450 × 0.8 GB/s,
    α = 0.822 µs: 1 MiB → ring 11.508 + 1.75·1,048,576/360e9 = 16.605 µs < NVLS 17.1 + 3.805 = 20.905 µs;
    64 MiB → ring 11.508 + 326.2 = 337.7 µs > NVLS 17.1 + 243.5 = 260.6 µs. Crossover
    (17.1 − 11.508) µs / (1.75/360e9 − 1/275.6e9 s/B) = 5.592e-6 / 1.2327e-12 ≈ 4.54 MB."""
    fabric = in_domain_fabric(8, link_gb_per_s=360.0, latency_us=0.822, in_switch_gb_per_s=275.6, in_switch_latency_us=17.1)
    sizes = np.array([1 * MiB, 64 * MiB])
    c = allreduce_choice(sizes, fabric)
    assert list(c.algorithm) == ["ring", "in_switch"]
    assert c.time_s * 1e6 == pytest.approx([16.605, 260.59], rel=1e-3)
    crossover = (17.1e-6 - 14 * 0.822e-6) / (1.75 / 360e9 - 1 / 275.6e9)
    assert crossover == pytest.approx(4.54e6, rel=0.01)
    at = allreduce_choice(np.array([crossover * 0.98, crossover * 1.02]), fabric)
    assert list(at.algorithm) == ["ring", "in_switch"]


def test_one_rank_costs_nothing_and_arrays_broadcast() -> None:
    fabric = in_domain_fabric(np.array([[1.0], [2.0], [8.0]]), link_gb_per_s=360.0, latency_us=0.822)
    c = allreduce_choice(np.array([[1e3, 1e6]]), fabric)
    assert c.time_s.shape == (3, 2) and np.all(c.time_s[0] == 0.0)
    # TP2: 2·0.822 µs + 1e6 B / 360 GB/s = 1.644 + 2.778 = 4.422 µs
    assert c.time_s[1, 1] * 1e6 == pytest.approx(4.4218, rel=1e-4)


def test_group_across_domains_without_scale_out_is_not_offered() -> None:
    fabric = CollectiveFabric(ranks=16, ranks_per_domain=8, local_gb_per_s=450.0, local_latency_us=0.822)
    assert np.isinf(allreduce_choice(1e6, fabric).time_s)


@pytest.mark.parametrize(
    ("replica", "node", "footprint"),
    [(8, 8, 8.0), (4, 8, 4.0), (16, 8, 16.0), (16, 72, 18.0), (32, 72, 36.0), (48, 72, 72.0), (8, 72, 8.0),
     (144, 72, 144.0), (100, 72, 144.0)],
)
def test_replica_footprint_in_a_rack(replica: int, node: int, footprint: float) -> None:
    """TP16 in a 72-GPU rack: ⌊72/16⌋ = 4 replicas per rack → 18 GPUs each; divisors are unchanged."""
    assert replica_footprint_gpus(replica, node_gpus=node) == footprint


def test_the_performance_model_charges_nvls_where_the_switch_reduces(catalog) -> None:  # type: ignore[no-untyped-def]
    """8 × H200 (NVLink 4 with NVLS): a 16 GiB all-reduce takes 22.5 µs + 17,179,869,184 B / 275.6 GB/s =
    62.359 ms → busbw 2·7/8·M/T = 482.13 GB/s (nccl.csv MLE-NET: 482.26); the ring alone would take
    14·0.822 µs + 1.75·M/(450·0.8 GB/s) = 83.52 ms (busbw 360). A100 (NVLink 3, no NVLS) stays on the ring."""
    from planner import performance as perf
    from planner.performance.steps import tp_allreduce_choice

    def terms(gpu: str):  # type: ignore[no-untyped-def]
        return perf.deployment_terms(
            catalog, model=catalog.models["llama_3_1_70b"], gpu=catalog.gpu(gpu),
            weight_format=catalog.formats["bf16"], kv_format=catalog.formats["bf16"], tp=8,
        )

    m = 16 * 1024**3
    h200 = tp_allreduce_choice(terms("h200_sxm"), m)
    assert str(h200.algorithm) == "in_switch"
    assert float(h200.time_s) * 1e3 == pytest.approx(62.359, abs=0.001)
    assert 1.75 * m / float(h200.time_s) / 1e9 == pytest.approx(482.13, abs=0.01)
    assert float(h200.times_s["ring"]) * 1e3 == pytest.approx(83.52, abs=0.01)
    a100 = tp_allreduce_choice(terms("a100_sxm_80gb"), m)
    assert str(a100.algorithm) == "ring"
    # crossover at TP8: (22.5 − 14 × 0.822) µs / (1.75/360e9 − 1/275.6e9) s/B = 10.992e-6 / 1.2327e-12 ≈ 8.92 MB
    assert str(tp_allreduce_choice(terms("h200_sxm"), 8 * 1024**2).algorithm) == "ring"
    assert str(tp_allreduce_choice(terms("h200_sxm"), 9.0e6).algorithm) == "in_switch"


@given(
    message_bytes=st.floats(min_value=1.0, max_value=1e10),
    ranks=st.sampled_from([1, 2, 4, 8, 16, 32, 72]),
    link_gb_per_s=st.floats(min_value=10.0, max_value=2000.0),
    latency_us=st.floats(min_value=0.1, max_value=20.0),
    in_switch_gb_per_s=st.sampled_from([0.0, 150.0, 275.6, 600.0]),
    in_switch_latency_us=st.floats(min_value=1.0, max_value=40.0),
)
def test_in_domain_fast_path_equals_the_general_choice(
    message_bytes: float,
    ranks: int,
    link_gb_per_s: float,
    latency_us: float,
    in_switch_gb_per_s: float,
    in_switch_latency_us: float,
) -> None:
    """The performance model's fast path gives the general chooser's time and start-up on in-domain fabrics."""
    kw = dict(
        link_gb_per_s=link_gb_per_s,
        latency_us=latency_us,
        in_switch_gb_per_s=in_switch_gb_per_s,
        in_switch_latency_us=in_switch_latency_us,
    )
    choice = allreduce_choice(message_bytes, in_domain_fabric(ranks, **kw))
    time_s, startup_s = in_domain_allreduce_s(message_bytes, ranks=ranks, **kw)
    assert float(time_s) == pytest.approx(float(choice.time_s), rel=1e-12, abs=1e-15)
    assert float(startup_s) == pytest.approx(float(choice.startup_s), rel=1e-12, abs=1e-15)
