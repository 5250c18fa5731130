"""Deployments of a solved plan: one record per (candidate, operating point) in use, with its replicas per
period of the horizon and its share of the supply cost (read from the cost ledger's supply lines)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

import pandas as pd

from planner.optimize.solver import Solution
from planner.problem.context import BuildContext
from planner.problem.roles import role_fields
from planner.readout.moe_terms import deployment_moe_terms
from planner.readout.optimizations import deployment_optimizations
from planner.readout.sharing import annotate_sharing, gpus_of
from planner.readout.types import Deployment, SupplyLine
from planner.scenario import Workload


def limited_by(cand: pd.Series, point: Any, w: Workload) -> str:
    """Which limit stopped the batch from growing at the operating point: memory, the TPOT SLO, the TTFT SLO or
    the batch cap (the audit then reads a co-located whole-GPU replica's at its capacity at the SLO:
    planner.readout.limits)."""
    if int(point.batch) >= int(cand["max_batch"]):
        return "memory"
    if float(point.tpot_ms) >= 0.97 * w.slo.tpot_ms:
        return "tpot_slo"
    if float(point.ttft_ms) >= 0.97 * w.slo.ttft_ms:
        return "ttft_slo"
    return "throughput_peak"


def _per_period(ctx: BuildContext, by_slice: dict[int, float], *, mean: bool) -> list[float]:
    """A per-slice quantity per period of the horizon: the hours-weighted daily mean (``mean``) or the
    largest over the period's hour blocks."""
    out = []
    for t in range(ctx.scenario.periods):
        slices = ctx.slices_of[ctx.representative_of[t]]
        if mean:
            weight = sum(ctx.hours_frac[s] for s in slices)
            out.append(sum(ctx.hours_frac[s] * by_slice[s] for s in slices) / weight)
        else:
            out.append(max(by_slice[s] for s in slices))
    return out


def _busiest_per_replica(ctx: BuildContext, served: dict[int, float], reps: dict[int, int]) -> list[float]:
    """Per period of the horizon: the largest load one replica serves in any of the period's hour blocks
    (served ÷ replicas of the block; 0 where it runs none). Without an hourly profile a period is one block,
    and this is its served load ÷ replicas."""
    out = []
    for t in range(ctx.scenario.periods):
        slices = ctx.slices_of[ctx.representative_of[t]]
        out.append(max((served[s] / reps[s] for s in slices if reps[s] > 0), default=0.0))
    return out


def deployments(ctx: BuildContext, sol: Solution, supply: list[SupplyLine]) -> list[Deployment]:
    """Every operating point with replicas in some slice, at its workload's peak slice, with per-period
    replicas and served requests/s, and its share of the supply cost."""
    n_rep, flow = sol.values["n_rep"], sol.values["flow"]
    workloads = {w.name: w for w in ctx.scenario.workloads}
    peak_t = {
        # the last of equal peaks: with a flat demand, the steady state after every delivery (a month-0 peak
        # showed a bought deployment, delivered in month 2, serving 0 req/s)
        w.name: max(ctx.periods, key=lambda t, name=w.name: (ctx.demand[(name, t)], t))  # type: ignore[misc]
        for w in ctx.scenario.workloads
    }
    out: list[Deployment] = []
    for p in ctx.points.itertuples():
        k, j = int(p.cand), int(p.point)
        reps = {t: round(n_rep[(k, j, t)]) for t in ctx.periods}
        if max(reps.values()) == 0:
            continue
        c = ctx.cands.loc[k]
        w = workloads[str(c["workload"])]
        at_peak = reps[peak_t[w.name]]
        replicas = at_peak if at_peak else max(reps.values())
        served = {t: max(float(flow[(k, t)]), 0.0) for t in ctx.periods}  # the solver's -1e-13 is 0
        out.append(
            Deployment(
                workload=w.name,
                model=str(c["model"]),
                gpu=str(c["gpu"]),
                site=str(c["site"]),
                placement=ctx.sites[str(c["site"])].kind,
                quantization=str(c["quantization"]),
                kv_dtype=str(c["kv_dtype"]),
                engine=str(c.get("engine", "vllm")),
                tp=int(c["tp"]),
                pp=int(c["pp"]),
                ep=int(c.get("ep", 1)),
                moe=deployment_moe_terms(ctx.catalog, c, int(p.batch)),
                replicas=replicas,
                gpus=gpus_of(replicas, float(c["gpus"])),
                batch=int(p.batch),
                ttft_ms=None if c.get("role") == "decode" else float(p.ttft_ms),  # a pool's other half: no figure
                tpot_ms=None if c.get("role") == "prefill" else float(p.tpot_ms),
                decode_step_ms=None if c.get("role") == "prefill" else float(p.decode_step_ms),
                ttft_slo_ms=w.slo.ttft_ms,
                tpot_slo_ms=w.slo.tpot_ms,
                memory_per_gpu_gb=float(p.memory_per_gpu_gb),
                capacity_per_replica_requests_per_s=float(p.capacity_requests_per_s),
                capacity_requests_per_s=replicas * float(p.capacity_requests_per_s),
                served_requests_per_s=served[peak_t[w.name]],
                replicas_per_period=[int(r) for r in _per_period(ctx, reps, mean=False)],  # type: ignore[arg-type]
                served_requests_per_s_per_period=_per_period(ctx, served, mean=True),
                busiest_served_requests_per_s_per_period=_per_period(ctx, served, mean=False),
                busiest_served_per_replica_requests_per_s_per_period=_busiest_per_replica(ctx, served, reps),
                limited_by=limited_by(c, p, w),
                sync_ratio=float(getattr(p, "sync_ratio", 0.0)),
                cand=k,
                optimizations=deployment_optimizations(c, w, engine=str(c.get("engine", "vllm"))),
                **role_fields(c),
                gpu_share_frac=float(c.get("share_frac", 1.0)),
            )
        )
    return annotate_sharing(allocate_costs(out, supply), supply)


def gpu_periods(d: Deployment) -> float:
    """GPUs ``d`` holds summed over the periods of the horizon (periods are equally long): replicas per period
    × GPUs per replica (TP·EP·PP·share, :attr:`Deployment.gpus` ÷ :attr:`Deployment.replicas`)."""
    per_replica = d.gpus / d.replicas if d.replicas else 0.0
    return per_replica * sum(d.replicas_per_period)


def allocate_costs(deps: list[Deployment], supply: list[SupplyLine]) -> list[Deployment]:
    """Split each (gpu, site)'s supply cost per month over its deployments by the GPUs each uses over the
    horizon (GPU-periods: a deployment that runs one period of four at 4 GPUs uses as much as one that runs
    every period on 1 GPU); attach procurement labels."""
    cost: dict[tuple[str, str], float] = defaultdict(float)
    lines: dict[tuple[str, str], list[SupplyLine]] = defaultdict(list)
    for s in supply:
        cost[(s.gpu, s.site)] += s.cost_usd_per_month
        lines[(s.gpu, s.site)].append(s)
    used: dict[tuple[str, str], float] = defaultdict(float)
    for d in deps:
        used[(d.gpu, d.site)] += gpu_periods(d)
    out = []
    for d in deps:
        key = (d.gpu, d.site)
        here = lines[key]
        rental = sorted({s.rental_kind for s in here if s.rental_kind})
        out.append(
            dataclasses.replace(
                d,
                cost_usd_per_month=cost[key] * gpu_periods(d) / used[key] if used[key] else 0.0,
                procurement="+".join(sorted({s.procurement for s in here})),
                rental_kind="+".join(rental) or None,
            )
        )
    return out
