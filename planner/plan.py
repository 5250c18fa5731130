"""Plan a scenario end to end: candidates → MILP → solution → audit → alternatives → PlanResult.

``PlanResult.to_json()`` is the ``planner plan --json`` document. An infeasible scenario is an answer:
:func:`explain_infeasible` names the workload and requirement that cannot be met, the best attainable
value and the smallest relaxation that makes it feasible.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from planner.audit import audit_plan
from planner.candidates import CandidateTable, build_candidates
from planner.catalog.loader import Catalog
from planner.costs import tiered_rent_usd_per_month
from planner.large import is_large, solve_large
from planner.model import BuildContext, SupplyOption, build_context
from planner.scenario import Scenario
from planner.solve import Solution, SolverName, solve_context

ALTERNATIVE_TIME_LIMIT_S = 5.0


@dataclass
class PlanResult:
    """A solved (or explained-infeasible) plan."""

    scenario: Scenario
    status: str
    total_cost_usd: float
    costs_usd: dict[str, float]
    deployments: list[dict[str, Any]]
    binding_constraints: list[dict[str, Any]]
    alternatives: list[dict[str, Any]]
    candidates_evaluated: int
    candidates_feasible: int
    solve_seconds: float
    total_seconds: float
    gap: float | None = None
    infeasibility: list[dict[str, Any]] = field(default_factory=list)
    supply: list[dict[str, Any]] = field(default_factory=list)
    schedule: list[dict[str, Any]] = field(default_factory=list)
    capex_usd: float = 0.0
    residual_value_usd: float = 0.0
    served_scale: float | None = None
    """max_throughput: the common fraction of the stated demand that is served."""

    @property
    def cost_usd_per_month(self) -> float:
        """Average monthly cost over the horizon."""
        return self.total_cost_usd / self.scenario.horizon_months if self.status != "infeasible" else math.nan

    def to_json(self) -> dict[str, Any]:
        """The machine-readable plan (``planner plan --json``)."""
        feasible = self.status != "infeasible"
        return {
            "scenario": self.scenario.name,
            "status": self.status,
            "gap": self.gap,
            "objective": self.scenario.objective,
            "horizon_months": self.scenario.horizon_months,
            "total_cost_usd": self.total_cost_usd if feasible else None,
            "cost_usd_per_month": self.cost_usd_per_month if feasible else None,
            "costs_usd": self.costs_usd,
            "capex_usd": self.capex_usd if feasible else None,
            "residual_value_usd": self.residual_value_usd if feasible else None,
            "opex_usd_per_month": (self.total_cost_usd - self.capex_usd + self.residual_value_usd)
            / self.scenario.horizon_months
            if feasible
            else None,
            "served_scale": self.served_scale,
            "served_requests_per_s": _served_by_workload(self.deployments),
            "deployments": self.deployments,
            "supply": self.supply,
            "schedule": self.schedule,
            "binding_constraints": self.binding_constraints,
            "alternatives": self.alternatives,
            "infeasibility": self.infeasibility,
            "candidates_evaluated": self.candidates_evaluated,
            "candidates_feasible": self.candidates_feasible,
            "solve_seconds": self.solve_seconds,
            "total_seconds": self.total_seconds,
        }


# --------------------------------------------------------------------------------------------------
# Reading the solution
# --------------------------------------------------------------------------------------------------


def _served_by_workload(deployments: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for d in deployments:
        out[d["workload"]] += d["served_requests_per_s"]
    out["total"] = sum(v for k, v in out.items() if k != "total")
    return dict(out)


def _billed_units(ctx: BuildContext, sol: Solution, option: int, period: int) -> float:
    """Units of supply ``option`` billed in representative ``period``: Σ over its hour-block slices of
    share of the day × units (the integer unit count without hourly profiles)."""
    slices = ctx.slices_of[period]
    units = [round(sol.values["units"].get((option, s), 0.0)) for s in slices]
    if len(slices) == 1:
        return units[0]
    return sum(ctx.hours_frac[s] * u for s, u in zip(slices, units, strict=True))


def _gpus_in_use(ctx: BuildContext, sol: Solution, slices: list[int]) -> dict[str, dict[str, int]]:
    """GPUs by bucket (bought / rented / owned) and gpu@site at the busiest of ``slices``."""
    out: dict[str, dict[str, int]] = {"bought_gpus": {}, "rented_gpus": {}, "owned_gpus": {}}
    for i, opt in enumerate(ctx.supply):
        units = max(round(sol.values["units"].get((i, s), 0.0)) for s in slices)
        if units:
            bucket = {"buy": "bought_gpus", "owned": "owned_gpus", "edge_device": "owned_gpus"}.get(
                opt.kind, "rented_gpus"
            )
            key = f"{opt.gpu}@{opt.site}"
            out[bucket][key] = out[bucket].get(key, 0) + units * opt.unit_gpus
    return out


def _served(ctx: BuildContext, sol: Solution, slices: list[int]) -> dict[str, float]:
    """Requests/s served per workload, averaged over the day (hours-weighted over ``slices``)."""
    weight = sum(ctx.hours_frac[s] for s in slices)
    return {
        w.name: sum(
            ctx.hours_frac[s] * sol.values["flow"][(int(k), s)]
            for k in ctx.cands_of_workload(w.name)
            for s in slices
        )
        / weight
        for w in ctx.scenario.workloads
    }


def _schedule(ctx: BuildContext, sol: Solution) -> list[dict[str, Any]]:
    """Per demand period: GPUs ordered (capex paid), bought (delivered), rented and owned in use at the
    day's peak, and requests/s served (the daily mean); with hourly profiles also each hour block."""
    rows = []
    for t in range(ctx.scenario.periods):
        rep = ctx.representative_of[t]
        slices = ctx.slices_of[rep]
        months = list(range(t * ctx.scenario.period_months, (t + 1) * ctx.scenario.period_months))
        entry: dict[str, Any] = {
            "period": t,
            "start_month": t * ctx.scenario.period_months,
            "months": months,
            "representative_period": rep,
            "ordered_gpus": {},
            **_gpus_in_use(ctx, sol, slices),
            "served_requests_per_s": _served(ctx, sol, slices),
        }
        for i, opt in enumerate(ctx.supply):
            ordered = round(sol.values["bought"].get(i, 0.0)) if opt.kind == "buy" else 0
            if ordered and opt.purchase_month in months:
                key = f"{opt.gpu}@{opt.site}"
                entry["ordered_gpus"][key] = entry["ordered_gpus"].get(key, 0) + ordered * opt.unit_gpus
        if len(slices) > 1:
            entry["hour_blocks"] = [
                {
                    "hours_per_day": ctx.hours_frac[s] * 24,
                    "rented_gpus": _gpus_in_use(ctx, sol, [s])["rented_gpus"],
                    "served_requests_per_s": _served(ctx, sol, [s]),
                }
                for s in slices
            ]
        rows.append(entry)
    return rows


def _running_usd_per_month(ctx: BuildContext, opt: SupplyOption, units: int) -> float:
    """Monthly cost of ``units`` units of a non-bought supply option: the quote × units, with rent net of
    the scenario's volume discounts (planner.costs.tiered_rent_usd_per_month)."""
    tiers = [(t.min_gpus, t.discount_frac) for t in ctx.scenario.economics.rent_volume_tiers]
    if opt.procurement != "rent" or not tiers:
        return units * opt.usd_per_unit_month
    return tiered_rent_usd_per_month(units * opt.unit_gpus, opt.usd_per_unit_month / opt.unit_gpus, tiers)


def _supply_used(ctx: BuildContext, sol: Solution) -> list[dict[str, Any]]:
    rows = []
    for i, opt in enumerate(ctx.supply):
        units = [round(sol.values["units"][(i, t)]) for t in ctx.periods]
        if max(units) == 0:
            continue
        bought = round(sol.values["bought"][i]) if opt.kind == "buy" else 0
        rows.append(
            {
                "gpu": opt.gpu,
                "site": opt.site,
                "kind": opt.kind,
                "procurement": opt.procurement,
                "rental_kind": opt.rental_kind,
                "unit_gpus": opt.unit_gpus,
                "units": max(units),
                "gpus": max(units) * opt.unit_gpus,
                "usd_per_unit_month": opt.usd_per_unit_month,
                "cost_usd_per_month": (
                    bought * opt.horizon_usd_per_unit / ctx.scenario.horizon_months
                    if opt.kind == "buy"
                    else sum(
                        _running_usd_per_month(ctx, opt, u) * ctx.months[t]
                        for u, t in zip(units, ctx.periods, strict=True)
                    )
                    / ctx.scenario.horizon_months
                ),
                "capex_usd": bought * opt.capex_usd_per_unit,
                "residual_usd": bought * opt.residual_usd_per_unit,
                "available_from_month": opt.available_from_month,
                "purchase_month": opt.purchase_month if opt.kind == "buy" else None,
                "units_per_period": [_billed_units(ctx, sol, i, t) for t in ctx.slices_of],
                "units_per_month": [
                    _billed_units(ctx, sol, i, ctx.representative_of[m // ctx.scenario.period_months])
                    for m in range(ctx.scenario.horizon_months)
                ],
                "volume_discount_usd": sum(
                    (u * opt.usd_per_unit_month - _running_usd_per_month(ctx, opt, u)) * ctx.months[t]
                    for u, t in zip(units, ctx.periods, strict=True)
                ),
                "source": opt.source,
            }
        )
    return rows


def _deployments(ctx: BuildContext, sol: Solution, supply: list[dict[str, Any]]) -> list[dict[str, Any]]:
    n_rep, flow = sol.values["n_rep"], sol.values["flow"]
    peak_t = {
        w.name: max(ctx.periods, key=lambda t, name=w.name: ctx.demand[(name, t)])  # type: ignore[misc]
        for w in ctx.scenario.workloads
    }
    out: list[dict[str, Any]] = []
    for p in ctx.points.itertuples():
        k, j = int(p.cand), int(p.point)
        reps = [round(n_rep[(k, j, t)]) for t in ctx.periods]
        if max(reps) == 0:
            continue
        c = ctx.cands.loc[k]
        t = peak_t[str(c["workload"])]
        w = next(x for x in ctx.scenario.workloads if x.name == c["workload"])
        at_peak = reps[ctx.periods.index(t)]
        replicas = at_peak if at_peak else max(reps)
        out.append(
            {
                "workload": str(c["workload"]),
                "model": str(c["model"]),
                "gpu": str(c["gpu"]),
                "site": str(c["site"]),
                "placement": str(c["placement"]),
                "quantization": str(c["quantization"]),
                "kv_dtype": str(c["kv_dtype"]),
                "tp": int(c["tp"]),
                "pp": int(c["pp"]),
                "replicas": replicas,
                "gpus": replicas * int(c["gpus"]),
                "batch": int(p.batch),
                "ttft_ms": float(p.ttft_ms),
                "tpot_ms": float(p.tpot_ms),
                "ttft_slo_ms": w.slo.ttft_ms,
                "tpot_slo_ms": w.slo.tpot_ms,
                "memory_per_gpu_gb": float(p.memory_per_gpu_gb),
                "capacity_per_replica_requests_per_s": float(p.capacity_requests_per_s),
                "capacity_requests_per_s": replicas * float(p.capacity_requests_per_s),
                "served_requests_per_s": float(flow[(k, t)]),
                "replicas_per_period": reps,
                "limited_by": _limited_by(c, p, w),
                "cand": k,
            }
        )
    _allocate_costs(ctx, out, supply)
    return out


def _limited_by(c: pd.Series, p: Any, w: Any) -> str:
    """Which limit stopped the batch from growing: memory, the TPOT SLO, the TTFT SLO or the batch cap."""
    if int(p.batch) >= int(c["max_batch"]):
        return "memory"
    if float(p.tpot_ms) >= 0.97 * w.slo.tpot_ms:
        return "tpot_slo"
    if float(p.ttft_ms) >= 0.97 * w.slo.ttft_ms:
        return "ttft_slo"
    return "throughput_peak"


def _allocate_costs(
    ctx: BuildContext, deployments: list[dict[str, Any]], supply: list[dict[str, Any]]
) -> None:
    """Split each (gpu, site) supply cost over its deployments by GPUs used; attach procurement labels."""
    cost: dict[tuple[str, str], float] = defaultdict(float)
    kinds: dict[tuple[str, str], list[str]] = defaultdict(list)
    for s in supply:
        cost[(s["gpu"], s["site"])] += s["cost_usd_per_month"]
        kinds[(s["gpu"], s["site"])].append(s["kind"])
    used: dict[tuple[str, str], int] = defaultdict(int)
    for d in deployments:
        used[(d["gpu"], d["site"])] += d["gpus"]
    for d in deployments:
        key = (d["gpu"], d["site"])
        d["cost_usd_per_month"] = cost[key] * d["gpus"] / used[key] if used[key] else 0.0
        labels = sorted(set(kinds[key]))
        d["procurement"] = "+".join(
            "rent" if k.startswith("rent_") else ("owned" if k in ("owned", "edge_device") else k)
            for k in labels
        )
        d["rental_kind"] = "+".join(k.removeprefix("rent_") for k in labels if k.startswith("rent_")) or None


# --------------------------------------------------------------------------------------------------
# Infeasibility
# --------------------------------------------------------------------------------------------------


def explain_workload_candidates(table: CandidateTable, scenario: Scenario) -> list[dict[str, Any]]:
    """For each workload without an SLO-feasible candidate: what binds, the best value, the relaxation."""
    out: list[dict[str, Any]] = []
    cands = table.candidates
    for w in scenario.workloads:
        rows = cands[cands["workload"] == w.name]
        if rows["feasible"].any():
            continue
        fits = rows[rows["max_batch"] >= 1]
        if fits.empty:
            reasons = rows["reason"].value_counts()
            out.append(
                {
                    "workload": w.name,
                    "requirement": "memory",
                    "message": (
                        f"{w.name}: no allowed (model, format, GPU, TP, PP, site) fits in memory or can run; most common reason: "
                        f"{reasons.index[0] if len(reasons) else 'no candidates'}"
                    ),
                    "relaxation": "allow larger TP/PP degrees, a 4-bit format or GPUs with more memory",
                }
            )
            continue
        best_tpot = fits.loc[fits["tpot_floor_ms"].idxmin()]
        if best_tpot["tpot_floor_ms"] > w.slo.tpot_ms:
            out.append(
                {
                    "workload": w.name,
                    "requirement": "tpot_ms",
                    "best_value_ms": float(best_tpot["tpot_floor_ms"]),
                    "slo_ms": w.slo.tpot_ms,
                    "message": (
                        f"lowest TPOT for {best_tpot['model']} on any allowed GPU is {best_tpot['tpot_floor_ms']:.1f} ms on "
                        f"{best_tpot['gpu']} TP{best_tpot['tp']} ({best_tpot['quantization']}); the SLO is {w.slo.tpot_ms:g} ms"
                    ),
                    "relaxation": f"raise {w.name}.slo.tpot_ms to {math.ceil(best_tpot['tpot_floor_ms'] * 10) / 10:g}",
                }
            )
            continue
        ttft_floor = fits["prefill_ms"] + fits["network_ms"]
        best = fits.loc[ttft_floor.idxmin()]
        floor_ms = float(best["prefill_ms"] + best["network_ms"])
        out.append(
            {
                "workload": w.name,
                "requirement": "ttft_ms",
                "best_value_ms": floor_ms,
                "slo_ms": w.slo.ttft_ms,
                "message": (
                    f"lowest TTFT for {best['model']} is {floor_ms:.0f} ms (prefill {best['prefill_ms']:.0f} ms + network "
                    f"{best['network_ms']:.0f} ms) on {best['gpu']} TP{best['tp']} at {best['site']}; the SLO is {w.slo.ttft_ms:g} ms"
                ),
                "relaxation": f"raise {w.name}.slo.ttft_ms to {math.ceil(floor_ms * 1.1):g} (with queueing headroom)",
            }
        )
    return out


def explain_capacity(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, solver: SolverName
) -> list[dict[str, Any]]:
    """Re-solve with a penalized shortfall per workload to name the limit that binds (devices, site GPUs, power)."""
    ctx = build_context(catalog, scenario, table)
    ctx.elastic = True
    sol = solve_context(ctx, solver=solver, time_limit_s=ALTERNATIVE_TIME_LIMIT_S)
    out: list[dict[str, Any]] = []
    if sol.status == "infeasible":
        return [
            {
                "workload": None,
                "requirement": "unknown",
                "message": "the model stays infeasible even with unlimited shortfall",
            }
        ]
    limits = [b for b in sol.binding if b["family"] in ("gpu_supply", "site_capacity", "budget_max")]
    limit_text = (
        "; ".join(f"{b['family']} {'/'.join(b['key'])}" for b in limits[:4]) or "no single resource row"
    )
    for (w_name, t), short in sorted(sol.values.get("short", {}).items()):
        if short <= 1e-6:
            continue
        demand = ctx.demand[(w_name, t)]
        out.append(
            {
                "workload": w_name,
                "period": t,
                "requirement": "requests_per_s",
                "best_value_requests_per_s": demand - short,
                "demand_requests_per_s": demand,
                "message": f"{w_name}: at most {demand - short:.3g} of {demand:.3g} req/s can be served in period {t}; binding: {limit_text}",
                "relaxation": f"lower {w_name}.requests_per_s to {demand - short:.3g}, or relax {limit_text}",
            }
        )
    return out


# --------------------------------------------------------------------------------------------------
# Alternatives
# --------------------------------------------------------------------------------------------------


def _solve_restricted(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, solver: SolverName, *, column: str, keep: str
) -> tuple[Solution, BuildContext]:
    others = set(table.feasible[column]) - {keep}
    ctx = build_context(catalog, scenario, table, exclude={column: others})
    return _solve(ctx, solver, ALTERNATIVE_TIME_LIMIT_S)


def _solve(ctx: BuildContext, solver: SolverName, time_limit_s: float | None) -> tuple[Solution, BuildContext]:
    """The exact MILP, or for large min-cost problems the bounded shortlist method of planner.large (which
    answers with the context of the problem it solved)."""
    if is_large(ctx):
        return solve_large(ctx, solver=solver, time_limit_s=time_limit_s)
    return solve_context(ctx, solver=solver, time_limit_s=time_limit_s), ctx


def _worst_latency_ms(ctx: BuildContext, sol: Solution) -> tuple[float | None, float | None]:
    """(max TPOT ms, max TTFT ms) over the operating points a solution deploys in any period."""
    used = {(int(k), int(j)) for (k, j, _t), reps in sol.values["n_rep"].items() if round(reps)}
    tpot_ms: float | None = None
    ttft_ms: float | None = None
    for p in ctx.points.itertuples():
        if (int(p.cand), int(p.point)) not in used:
            continue
        tpot_ms = float(p.tpot_ms) if tpot_ms is None else max(tpot_ms, float(p.tpot_ms))
        ttft_ms = float(p.ttft_ms) if ttft_ms is None else max(ttft_ms, float(p.ttft_ms))
    return tpot_ms, ttft_ms


def _lost_alternative(why: str) -> dict[str, Any]:
    """The fields of an alternative that has no feasible plan."""
    return {
        "status": "infeasible",
        "total_cost_usd": None,
        "cost_delta_usd": None,
        "max_tpot_ms": None,
        "max_ttft_ms": None,
        "lost_because": why,
    }


def alternatives(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, best_cost: float, solver: SolverName
) -> list[dict[str, Any]]:
    """Best plan per GPU type and per site: cost delta, why it lost, worst deployed TPOT and TTFT.

    ``max_tpot_ms`` / ``max_ttft_ms`` are the largest predicted TPOT / TTFT over the deployments of that
    alternative plan (None when it is infeasible): the latency side of the cost-vs-TPOT frontier.
    """
    out = []
    for column in ("gpu", "site"):
        for value in sorted(set(table.candidates[column])):
            rows = table.candidates[table.candidates[column] == value]
            entry: dict[str, Any] = {"kind": column, column: value}
            if not rows["feasible"].any():
                reasons = rows["reason"].value_counts()
                first = reasons.index[0] if len(reasons) else "none"
                entry.update(_lost_alternative(f"no SLO-feasible candidate: {first}"))
                out.append(entry)
                continue
            sol, ctx = _solve_restricted(catalog, scenario, table, solver, column=column, keep=value)
            if sol.status == "infeasible":
                uncovered = [
                    w.name for w in scenario.workloads if not (ctx.cands["workload"] == w.name).any()
                ]
                why = (
                    f"cannot serve {', '.join(uncovered)} within the SLOs"
                    if uncovered
                    else "supply or site limits cannot cover the demand (gpu_supply/site_capacity)"
                )
                entry.update(_lost_alternative(why))
            else:
                cost = sol.objective_usd - sol.costs_usd.get("tie_break", 0.0)
                delta = cost - best_cost
                max_tpot_ms, max_ttft_ms = _worst_latency_ms(ctx, sol)
                entry.update(
                    status=sol.status,
                    total_cost_usd=cost,
                    cost_delta_usd=delta,
                    cost_usd_per_month=cost / scenario.horizon_months,
                    max_tpot_ms=max_tpot_ms,
                    max_ttft_ms=max_ttft_ms,
                    lost_because="chosen"
                    if abs(delta) <= 1e-6 * max(1.0, best_cost)
                    else f"costs ${delta:,.0f} more over the horizon (objective: min cost)",
                )
            out.append(entry)
    return out


# --------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------


def _infeasible(
    scenario: Scenario,
    evaluated: int,
    feasible: int,
    solve_s: float,
    start: float,
    items: list[dict[str, Any]],
) -> PlanResult:
    """A PlanResult that answers 'infeasible' with the explanation ``items``."""
    return PlanResult(
        scenario,
        "infeasible",
        math.nan,
        {},
        [],
        [],
        [],
        evaluated,
        feasible,
        solve_s,
        time.perf_counter() - start,
        infeasibility=items,
    )


def plan(
    catalog: Catalog,
    scenario: Scenario,
    *,
    solver: SolverName = "highs",
    time_limit_s: float | None = None,
    with_alternatives: bool = True,
) -> PlanResult:
    """Plan ``scenario``; never returns a plan that fails the audit."""
    start = time.perf_counter()
    table = build_candidates(catalog, scenario)
    evaluated, feasible = (
        len(table.candidates),
        int(table.candidates["feasible"].sum()) if len(table.candidates) else 0,
    )
    missing = explain_workload_candidates(table, scenario)
    if missing:
        return _infeasible(scenario, evaluated, feasible, 0.0, start, missing)
    served_scale = None
    if scenario.objective == "max_throughput":
        first = build_context(catalog, scenario, table)
        stage1 = solve_context(first, solver=solver, time_limit_s=time_limit_s)
        if stage1.status == "infeasible":
            return _infeasible(
                scenario,
                evaluated,
                feasible,
                stage1.solve_seconds,
                start,
                [
                    {
                        "workload": None,
                        "requirement": "budget",
                        "message": "no plan fits the budget",
                        "relaxation": "raise the budget",
                    }
                ],
            )
        served_scale = stage1.values["scale"][()]
    ctx = build_context(catalog, scenario, table)
    if served_scale is not None:
        ctx.scale_floor = served_scale * (1 - 1e-7)
    sol, ctx = _solve(ctx, solver, time_limit_s)
    if sol.status == "infeasible":
        why = explain_capacity(catalog, scenario, table, solver)
        return _infeasible(scenario, evaluated, feasible, sol.solve_seconds, start, why)
    supply = _supply_used(ctx, sol)
    deployments = _deployments(ctx, sol, supply)
    audit_plan(catalog, scenario, deployments, table.sites)
    costs = {k: v for k, v in sol.costs_usd.items() if k != "tie_break"}
    total = sum(costs.values())
    alts = alternatives(catalog, scenario, table, total, solver) if with_alternatives else []
    return PlanResult(
        scenario=scenario,
        status=sol.status,
        total_cost_usd=total,
        costs_usd=costs,
        deployments=deployments,
        binding_constraints=sol.binding,
        alternatives=alts,
        candidates_evaluated=evaluated,
        candidates_feasible=feasible,
        solve_seconds=sol.solve_seconds,
        total_seconds=time.perf_counter() - start,
        gap=sol.gap,
        supply=supply,
        schedule=_schedule(ctx, sol),
        capex_usd=sum(s["capex_usd"] for s in supply),
        residual_value_usd=sum(s["residual_usd"] for s in supply),
        served_scale=served_scale,
    )
