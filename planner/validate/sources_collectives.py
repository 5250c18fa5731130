"""Readers of the collective measurements: all-reduce bus bandwidth at large messages (nccl.csv) and all-reduce
time at small ones (nccl_allreduce_small_msg.csv), both predicted by the all-reduce the planner charges
(ledgers.collectives.allreduce_choice on the catalog's links for the stated GPUs and nodes).

Small messages: the time an engine pays per TP all-reduce, T = τ_launch + T_allreduce(M) — the launch and
synchronisation floor of catalogs/engines.yaml (collective_launch_us: 8.5 µs without CUDA graphs, the
nccl-tests default; 4.4 µs with them, ``-G``) plus, inside one node, the all-reduce an engine step charges
(ledgers.collectives.in_domain_allreduce_s: ring 2(n − 1)·α + 2(n − 1)·M/(n·B), or NVLS α_S + M/B_S), across
nodes the hierarchical one of allreduce_choice. Two rows set the floors (NCCL-583, NCCL-1259); every other
row is predicted, from 32 B to 1 GiB.
"""

from __future__ import annotations

from collections.abc import Callable

from planner import performance as perf
from planner.catalog.schema import Accelerator
from planner.errors import InputError
from planner.ledgers.collectives import CollectiveFabric, allreduce_choice, in_domain_allreduce_s
from planner.ledgers.communication import busbw_gb_per_s, collective_launch_s
from planner.units import BYTES_PER_GB, US_PER_S
from planner.validate.cases import _Builder, _num
from planner.validate.names import GPU_IDS

GRAPH_ENGINE, EAGER_ENGINE = "vllm", "vllm_eager"
"""Engines whose collective_launch_us is the floor with / without CUDA graphs (catalogs/engines.yaml)."""
FLOOR_SOURCES = ("NCCL-583", "NCCL-1259")
LINK_ALIASES = {"H100 80GB HBM3": "H100", "A100-SXM4-40GB": "A100-SXM4-80GB"}
"""GPU names of the small-message rows read as the catalog GPU with the same links (memory plays no part)."""
"""Rows the engines' collective_launch_us were read from (catalogs/engines.yaml comments)."""


def _fabric(
    b: _Builder, src: str, label: str, acc: Accelerator, *, ranks: int, nodes: int, nvls: bool, interconnect: str
) -> tuple[CollectiveFabric, str] | None:
    """The catalog's all-reduce fabric of ``ranks`` GPUs of ``acc`` over ``nodes`` nodes, with the note of what
    differs from the measured setup; None (and a skipped row) where the catalog cannot express it."""
    try:
        links = perf.group_links(b.catalog, acc, tp=min(ranks, acc.gpus_per_node), pp=1)
    except InputError as exc:
        b.skip(src, label, str(exc))
        return None
    if links.tp is None:
        b.skip(src, label, "single GPU")
        return None
    link_eff = acc.efficiency.link_efficiency_frac
    red = links.tp.in_switch_reduction if nvls else None
    nic = b.catalog.interconnect(acc.scale_out) if nodes > 1 and acc.scale_out is not None else None
    fabric = CollectiveFabric(
        ranks=ranks,
        ranks_per_domain=ranks // nodes if nic is not None else ranks,
        local_gb_per_s=links.tp.gb_per_s_per_direction * link_eff,
        local_latency_us=links.tp.latency_us,
        cross_gb_per_s=nic.gb_per_s_per_direction * link_eff if nic is not None else 0.0,
        cross_latency_us=nic.latency_us if nic is not None else 0.0,
        in_switch_gb_per_s=red.algbw_gb_per_s if red is not None else 0.0,
        in_switch_latency_us=red.latency_us if red is not None else 0.0,
        tree_in_domain=1.0,
    )
    note = ""
    if nic is not None:
        note = f" over the catalog scale-out link ({nic.id}); the cluster's NICs may differ"
    if "NVLink bridge" in interconnect and links.tp.id != "nvlink_bridge":
        note = f"; catalog {acc.id} pairs over {links.tp.id}, not the NVLink bridge this setup used"
    if nvls and red is None:
        note = f"; NVLS in-switch reduction: {links.tp.id} has no in_switch_reduction figures in the catalog"
    return fabric, note


def _gpu(b: _Builder, src: str, label: str, row: dict[str, str]) -> Accelerator | None:
    """The catalog accelerator of ``row`` (None and a skipped row when it is not stated or not listed)."""
    gpu = row["gpu"]
    if not gpu or GPU_IDS.get(gpu) is None or not row["gpu_count"]:
        b.skip(src, label, "GPU type or count not reported" if not gpu else f"GPU '{gpu}' not in the catalog")
        return None
    return b.catalog.gpu(str(GPU_IDS[gpu]))


def _nccl(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "nccl"
    for row in rows:
        if row["metric"] != "busbw" or not row["test"].startswith("all_reduce"):
            continue
        label = row["setup"]
        if row["source_key"] == "NCCL-212":
            b.skip(src, label, "vendor guidance, not a measurement")
            continue
        acc = _gpu(b, src, label, row)
        if acc is None:
            continue
        n, nodes = int(row["gpu_count"]), int(row["node_count"] or 1)
        size = _num(row, "message_size_bytes") or 2e9  # "1 to 4 GB" sweeps: 2 GB, in the bandwidth plateau
        nvls = "NVLS" in label and "NVLS_ENABLE=0" not in label
        built = _fabric(b, src, label, acc, ranks=n, nodes=nodes, nvls=nvls, interconnect=row["interconnect"])
        if built is None:
            continue
        fabric, differs = built
        choice = allreduce_choice(size, fabric)  # card 11: the algorithm the planner charges
        note = f"{choice.algorithm} all-reduce (ledgers.collectives.allreduce_choice)" + differs
        predicted = busbw_gb_per_s(size / float(choice.time_s) / BYTES_PER_GB, ranks=n)
        measured = float(row["value_gb_per_s"])
        b.add(src, "allreduce_busbw", label, measured, (acc, None, None, ""), note=note, fixed_prediction=predicted)


def _nccl_small(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "nccl_allreduce_small_msg"
    for row in rows:
        size = _num(row, "message_size_bytes") or _range_start_bytes(row["message_size_label"])
        label = f"{row['setup']} {row['message_size_label'] or f'{size:g} B'}"
        acc = _gpu(b, src, label, {**row, "gpu": LINK_ALIASES.get(row["gpu"], row["gpu"])})
        if acc is None or size is None:
            continue
        n, nodes = int(row["gpu_count"]), int(row["node_count"] or 1)
        nvls = "NVLS" in row["algorithm"] and "no NVLS" not in row["algorithm"]
        built = _fabric(b, src, label, acc, ranks=n, nodes=nodes, nvls=nvls, interconnect=row["interconnect"])
        if built is None:
            continue
        fabric, differs = built
        graphs = "CUDA graphs" in row["setup"] or "-G" in row["test"]
        engine = b.catalog.engine(GRAPH_ENGINE if graphs else EAGER_ENGINE)
        if nodes == 1:  # a TP group: the all-reduce an engine step pays (planner.performance.steps)
            time_s, _start = in_domain_allreduce_s(
                size, ranks=n, link_gb_per_s=fabric.local_gb_per_s, latency_us=fabric.local_latency_us,
                in_switch_gb_per_s=fabric.in_switch_gb_per_s, in_switch_latency_us=fabric.in_switch_latency_us,
            )
            algorithm = "ring or NVLS (the TP step's)"
        else:
            choice = allreduce_choice(size, fabric)
            time_s, algorithm = choice.time_s, choice.algorithm
        predicted_us = (float(collective_launch_s(n, launch_us=engine.collective_launch_us)) + float(time_s)) * US_PER_S
        note = (
            f"{engine.collective_launch_us:g} µs floor ({engine.id}: {'with' if graphs else 'without'} CUDA graphs) "
            f"+ {algorithm} all-reduce" + differs
        )
        if row["source_key"] in FLOOR_SOURCES:
            note += "; this row sets the floor"
        measured = _num(row, "time_us") or _num(row, "time_us_derived")
        b.add(src, "allreduce_us", label, measured, (acc, None, None, ""), note=note, fixed_prediction=predicted_us)


def _range_start_bytes(label: str) -> float | None:
    """The smallest size of a size range such as "128 B - 64 KiB" (a row that reports one time over the range,
    flat there), bytes; None when ``label`` does not start with a size in B."""
    head = label.split("-")[0].strip().split()
    return float(head[0]) if len(head) == 2 and head[1] == "B" and head[0].isdigit() else None


COLLECTIVE_READERS: dict[str, Callable[[_Builder, list[dict[str, str]]], None]] = {
    "nccl.csv": _nccl,
    "nccl_allreduce_small_msg.csv": _nccl_small,
}
"""Measurement file → reader (called by planner.validate.sources.build_cases)."""
