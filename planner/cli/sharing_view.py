"""Terminal view of rental granularity and GPU sharing in a plan (the plan JSON's deployment fields
``gpus``, ``gpu_share_frac``, ``instance_gpus``, ``shares_gpu_with``)."""

from __future__ import annotations

from typing import Any

from planner.units import count_text


def gpus_cell(d: dict[str, Any]) -> str:
    """GPUs of a deployment: ``0.5`` for one replica on half a GPU (the lines of :func:`sharing_lines` say
    with whom); whole counts with thousands separators ("314,040": ':g' wrote 1,234,567 GPUs as "1.23457e+06")."""
    return count_text(float(d["gpus"]))


def sharing_lines(data: dict[str, Any]) -> list[str]:
    """One line per GPU type and site whose GPUs are shared by several models, and one per GPU type and site
    rented as instances smaller than a node, e.g.
    ``l40s at us_east shared: helpdesk (qwen3_8b) 0.5 + summarizer (llama_3_1_8b) 0.5 of a GPU per replica``."""
    shared: dict[tuple[str, str], dict[str, float]] = {}
    sized: dict[tuple[str, str], dict[str, list[int]]] = {}
    # supply ids of instances smaller than a node end in ':x<GPUs>' (planner.problem.supply.SupplyOption.id)
    instances = {(s["gpu"], s["site"]) for s in data.get("supply", []) if ":x" in s["id"]}
    for d in data["deployments"]:
        who, where = f"{d['workload']} ({d['model']})", (d["gpu"], d["site"])
        if d.get("shares_gpu_with"):
            shared.setdefault(where, {})[who] = d["gpu_share_frac"]
        if where in instances:
            sized.setdefault(where, {}).setdefault(who, []).extend(d.get("instance_gpus") or [])
    out = [
        f"{gpu} at {site} shared: " + " + ".join(f"{who} {frac:g}" for who, frac in users.items())
        + " of a GPU per replica"
        for (gpu, site), users in shared.items()
    ]
    for (gpu, site), users in sized.items():
        sizes = sorted({n for ns in users.values() for n in ns})
        out.append(
            f"{gpu} at {site} rented as {'/'.join(str(n) for n in sizes)}-GPU instances: {', '.join(users)}"
        )
    return out
