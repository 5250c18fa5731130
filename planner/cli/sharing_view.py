"""Terminal view of rental granularity and GPU sharing in a plan (the plan JSON's deployment fields
``gpus``, ``gpu_share_frac``, ``instance_gpus``, ``shares_gpu_with``)."""

from __future__ import annotations

from typing import Any


def gpus_cell(d: dict[str, Any]) -> str:
    """GPUs of a deployment: ``0.5`` for one replica on half a GPU (the lines of :func:`sharing_lines` say
    with whom)."""
    return f"{d['gpus']:g}"


def sharing_lines(data: dict[str, Any]) -> list[str]:
    """One line per deployment that shares GPUs or runs on instances smaller than a node."""
    out = []
    # supply ids of instances smaller than a node end in ':x<GPUs>' (planner.problem.supply.SupplyOption.id)
    instances = {(s["gpu"], s["site"]) for s in data.get("supply", []) if ":x" in s["id"]}
    for d in data["deployments"]:
        who = f"{d['workload']} ({d['model']})"
        if d.get("shares_gpu_with"):
            out.append(
                f"{who} holds {d['gpu_share_frac']:g} of a {d['gpu']} per replica, "
                f"sharing it with {', '.join(d['shares_gpu_with'])}"
            )
        sizes = d.get("instance_gpus") or []
        if (d["gpu"], d["site"]) in instances:
            out.append(f"{who} runs on {'/'.join(str(s) for s in sizes)}-GPU {d['gpu']} instances")
    return list(dict.fromkeys(out))  # one line per workload and model, however many operating points
