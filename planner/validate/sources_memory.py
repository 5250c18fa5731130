"""Memory rows of the public measurements (vllm_memory_h100.csv): weights per GPU and the KV room vLLM
reported, against the plan's memory account (planner.performance.memory)."""

from __future__ import annotations

import dataclasses
from typing import Any

from planner import performance as perf
from planner.units import BYTES_PER_GB, BYTES_PER_GIB
from planner.validate.cases import WORKSPACE_GIB, _Builder, _num
from planner.validate.names import MEMORY_MODEL_FORMATS, MODEL_IDS


def _vllm_memory(b: _Builder, rows: list[dict[str, str]]) -> None:
    src = "vllm_memory_h100"
    for row in rows:
        tp = int(row["tp_gpus"])
        name = row["model"]
        label = f"{name} H100 TP{tp} weights per GPU"
        measured = _num(row, "weights_gib_per_gpu")
        if measured is None:
            b.skip(src, label, "no weight size reported (load failed)")
            continue
        if MODEL_IDS.get(name) is None:
            b.skip(src, label, f"model '{name}' is not in the catalog")
            continue
        model = b.catalog.model(str(MODEL_IDS[name]))
        fmt = b.catalog.format(MEMORY_MODEL_FORMATS[name])
        acc = b.catalog.gpu("h100_sxm")
        note = ""
        try:
            t = perf.deployment_terms(
                b.catalog, model=model, gpu=acc, weight_format=fmt, kv_format=b.catalog.format("bf16"), tp=tp
            )
            predicted = float(perf.weights_bytes_per_gpu(t)) / BYTES_PER_GIB
        except perf.UnsupportedDeployment:
            # vLLM runs MXFP4 on Hopper through weight-only kernels; the bytes are the same.
            t = perf.deployment_terms(
                b.catalog,
                model=model,
                gpu=b.catalog.gpu("b200"),
                weight_format=fmt,
                kv_format=b.catalog.format("bf16"),
                tp=tp,
            )
            predicted = float(perf.weights_bytes_per_gpu(t)) / BYTES_PER_GIB
            note = "MXFP4 is weight-only on H100; bytes from the same terms on a native GPU"
        b.add(src, "memory", label, measured, (acc, fmt, t, ""), note=note, fixed_prediction=predicted)
        _kv_room(b, row, src, f"{name} H100 TP{tp} KV cache room", dataclasses.replace(
            t, memory_capacity_bytes=acc.memory_gb * BYTES_PER_GB
        ), acc, fmt)


def _kv_room(
    b: _Builder, row: dict[str, str], src: str, label: str, t: perf.DeploymentTerms, acc: Any, fmt: Any
) -> None:
    """The KV room the plan's memory account gives (planner.performance.memory.kv_room_bytes: the vllm
    engine's 0.9 share less weights and the 2 GiB workspace) against what vLLM reported; a row that
    failed to load (no room) is listed with the model's verdict."""
    predicted = float(perf.kv_room_bytes(t, workspace_bytes=WORKSPACE_GIB * BYTES_PER_GIB)) / BYTES_PER_GIB
    measured = _num(row, "kv_available_gib")
    if measured is None or measured <= 0 or row["result"] != "ok":
        verdict = "does not fit either" if predicted <= 0 else "fits (wrong)"
        b.skip(src, label, f"vLLM left no KV room ({row['notes'] or row['result']}); the model: "
               f"{predicted:.2f} GiB, {verdict}")
        return
    note = "vLLM gpu_memory_utilization 0.9; measured device memory 79.18 GiB vs the catalog's 80 GB"
    b.add(src, "memory", label, measured, (acc, fmt, t, ""), note=note, fixed_prediction=predicted)


MEMORY_READERS = {"vllm_memory_h100.csv": _vllm_memory}
"""Measurement file → reader (called by planner.validate.sources.build_cases)."""
