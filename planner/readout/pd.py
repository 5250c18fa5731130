"""Prefill/decode disaggregation in a plan: per PD group the P:D ratio and the load of the KV link (card 8).

For each ``pd_group`` (a workload's prefill and decode pools of one model, weight and KV format), every figure
at one period: the one in which the group serves the most (a group may run only outside its workload's peak
period, when renting or owning other GPUs is cheaper there), in its busiest hour block (with an hourly
profile the daily mean counted the quiet hours: a link loaded at 20 req/s read 13.3). A group with one stage
only (no prefill or no decode pool: it serves nothing) is still listed, with 0 req/s, so the idle pool shows:

    served      = Σ prefill pools' served requests/s in the busiest hour block (= Σ decode pools')
    P:D         = prefill GPUs : decode GPUs (and replicas)
    KV load     = served · V_KV                          GB/s over the link between the pools
    KV capacity = min(Σ prefill replicas · B_k, Σ decode replicas · B_k)   (scale-out per direction)
    KV share    = KV load / KV capacity
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from planner.readout.types import Deployment


@dataclass(frozen=True)
class PdGroup:
    """One workload's disaggregated serving: pools, ratio and KV link load."""

    pd_group: str
    workload: str
    served_requests_per_s: float
    prefill_gpus: int
    decode_gpus: int
    prefill_replicas: int
    decode_replicas: int
    pd_ratio: str
    """Prefill GPUs : decode GPUs, e.g. '4:4'."""
    kv_gb_per_request: float
    kv_link_load_gb_per_s: float
    kv_link_capacity_gb_per_s: float
    kv_link_load_frac: float

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def _busiest_period(pre: list[Deployment], pools: list[Deployment]) -> int:
    """The period in which the prefill pools ``pre`` serve the most requests/s, then the one in which the group's
    ``pools`` hold the most replicas (the first of equals). A group left with one stage only (a decode pool the
    optimizer kept without a prefill pool, as it costs nothing on a node paid for anyway) serves nothing: it is
    read where it holds the most replicas."""
    periods = range(len(pools[0].replicas_per_period))
    served = [sum(_busiest(d)[t] for d in pre) for t in periods]
    replicas = [sum(d.replicas_per_period[t] for d in pools) for t in periods]
    return max(periods, key=lambda t: (served[t], replicas[t], -t))


def _busiest(d: Deployment) -> list[float]:
    """Requests/s ``d`` serves per period in its busiest hour block (the daily mean for a record without it)."""
    return d.busiest_served_requests_per_s_per_period or d.served_requests_per_s_per_period


def _in_period(pools: list[Deployment], t: int) -> tuple[int, int, float]:
    """(replicas, GPUs, KV link GB/s) of ``pools`` in period ``t``: each replica holds d.gpus / d.replicas GPUs."""
    replicas = sum(d.replicas_per_period[t] for d in pools)
    gpus = sum(d.replicas_per_period[t] * d.gpus / d.replicas for d in pools if d.replicas)
    link = sum(d.replicas_per_period[t] * d.kv_link_gb_per_s for d in pools)
    return replicas, round(gpus), link  # pools hold whole GPUs


def pd_summary(deployments: list[Deployment]) -> list[PdGroup]:
    """One :class:`PdGroup` per pd_group with deployments (module docstring), sorted by group."""
    out: list[PdGroup] = []
    for group in sorted({d.pd_group for d in deployments if d.pd_group}):
        pre = [d for d in deployments if d.pd_group == group and d.role == "prefill"]
        dec = [d for d in deployments if d.pd_group == group and d.role == "decode"]
        t = _busiest_period(pre, pre + dec)
        served = sum(_busiest(d)[t] for d in pre)
        kv_gb = max(d.kv_handoff_gb_per_request for d in pre + dec)
        (p_reps, p_gpus, p_link), (d_reps, d_gpus, d_link) = _in_period(pre, t), _in_period(dec, t)
        capacity = min(p_link, d_link)
        load = served * kv_gb
        out.append(
            PdGroup(
                pd_group=group,
                workload=(pre + dec)[0].workload,
                served_requests_per_s=served,
                prefill_gpus=p_gpus,
                decode_gpus=d_gpus,
                prefill_replicas=p_reps,
                decode_replicas=d_reps,
                pd_ratio=f"{p_gpus}:{d_gpus}",
                kv_gb_per_request=kv_gb,
                kv_link_load_gb_per_s=load,
                kv_link_capacity_gb_per_s=capacity,
                kv_link_load_frac=load / capacity if capacity > 0 else 0.0,
            )
        )
    return out
