"""`planner compare`: buy-only vs rent-only vs hybrid for one scenario, with crossover and flip points.

Each option is a full plan (same SLOs, same candidates) with the procurement restricted. Reported per
option: horizon TCO, capex, average opex per month, cost per million output tokens and the monthly cash
flow (capex in month 0, recurring costs while in use, the resale of the remaining book value at the end).
Across options: the cumulative-cost crossover month (buying vs renting), the break-even utilization of the
rented GPU (reserved price / on-demand price, card 12) and the flip points — the rent and purchase price
multipliers at which the recommendation changes, found by bisection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planner.catalog.loader import Catalog
from planner.ledgers.economics import residual_value_usd
from planner.ledgers.edge_cloud import breakeven_utilization_frac
from planner.plan import PlanResult, plan
from planner.scenario import Scenario, merged_sites
from planner.solve import SolverName
from planner.units import S_PER_MONTH

OPTIONS: dict[str, list[str]] = {"buy_only": ["buy"], "rent_only": ["rent"], "hybrid": ["rent", "buy"]}
BISECTION_STEPS = 6


@dataclass
class Comparison:
    """The three options and the cross-option figures."""

    options: dict[str, PlanResult]
    cash_flow_usd: dict[str, list[float]]
    recommendation: str | None
    crossover_month: int | None
    breakeven_utilization_frac: float | None
    flip_points: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        """``planner compare --json``."""
        rows = []
        for name, result in self.options.items():
            data = result.to_json()
            rows.append(
                {
                    "name": name,
                    "status": data["status"],
                    "total_cost_usd": data["total_cost_usd"],
                    "capex_usd": data["capex_usd"],
                    "opex_usd_per_month": data["opex_usd_per_month"],
                    "cost_usd_per_million_output_tokens": cost_per_million_output_tokens(result),
                    "deployments": data["deployments"],
                    "cash_flow_usd_per_month": self.cash_flow_usd.get(name, []),
                    "infeasibility": data["infeasibility"],
                }
            )
        return {
            "scenario": next(iter(self.options.values())).scenario.name,
            "options": rows,
            "recommendation": self.recommendation,
            "crossover_month": self.crossover_month,
            "breakeven_utilization_frac": self.breakeven_utilization_frac,
            "flip_points": self.flip_points,
        }


def cost_per_million_output_tokens(result: PlanResult) -> float | None:
    """Horizon cost / output tokens served over the horizon × 1e6 (served req/s × G × seconds)."""
    if result.status == "infeasible":
        return None
    tokens = 0.0
    for row in result.schedule:
        for w in result.scenario.workloads:
            tokens += (
                row["served_requests_per_s"][w.name]
                * w.output_tokens
                * S_PER_MONTH
                * result.scenario.period_months
            )
    return result.total_cost_usd / tokens * 1e6 if tokens else None


def monthly_cash_flow_usd(result: PlanResult) -> list[float]:
    """Cash out per month: capex at month 0, rent and running costs each month, resale credited at the end."""
    sc = result.scenario
    flow = [0.0] * sc.horizon_months
    unit_cost = {
        (s["kind"], f"{s['gpu']}@{s['site']}"): s["usd_per_unit_month"] / s["unit_gpus"]
        for s in result.supply
    }
    for s in result.supply:
        if s["kind"] != "buy":
            continue
        flow[0] += s["capex_usd"]
        life = sc.economics.lifetime_years or 4.0
        flow[-1] -= residual_value_usd(
            s["capex_usd"],
            horizon_months=sc.horizon_months,
            lifetime_years=life,
            resale_frac=sc.economics.resale_frac,
        )
    for row in result.schedule:
        monthly = 0.0
        for bucket, kinds in (
            ("bought_gpus", ("buy",)),
            ("rented_gpus", None),
            ("owned_gpus", ("owned", "edge_device")),
        ):
            for key, gpus in row[bucket].items():
                costs = [
                    c
                    for (kind, k), c in unit_cost.items()
                    if k == key
                    and (kinds is None and kind.startswith("rent_") or kinds is not None and kind in kinds)
                ]
                monthly += gpus * (min(costs) if costs else 0.0)
        for m in range(row["start_month"], min(sc.horizon_months, row["start_month"] + sc.period_months)):
            flow[m] += monthly
    return flow


def _cheapest(options: dict[str, PlanResult]) -> str | None:
    feasible = {n: r.total_cost_usd for n, r in options.items() if r.status != "infeasible"}
    return min(feasible, key=lambda n: (feasible[n], n)) if feasible else None


def _with(scenario: Scenario, procurement: list[str], **economics: float) -> Scenario:
    econ = scenario.economics.model_copy(update=economics) if economics else scenario.economics
    return scenario.model_copy(update={"procurement": procurement, "economics": econ})


def _recommend(catalog: Catalog, scenario: Scenario, solver: SolverName, **economics: float) -> str | None:
    """rent_only unless buying (hybrid or buy-only) is strictly cheaper: 'rent_only' or 'buy'."""
    results = {
        n: plan(catalog, _with(scenario, p, **economics), solver=solver, with_alternatives=False)
        for n, p in OPTIONS.items()
        if n != "buy_only"
    }
    best = _cheapest(results)
    if best is None:
        return None
    rent = results["rent_only"]
    if rent.status != "infeasible" and results["hybrid"].total_cost_usd >= rent.total_cost_usd * (1 - 1e-9):
        return "rent_only"
    return "buy" if best == "hybrid" else best


def _flip(
    catalog: Catalog, scenario: Scenario, solver: SolverName, field: str, base: str | None
) -> dict[str, Any] | None:
    """Bisection on a price multiplier in [0.25, 4] for the point where buy-only vs rent-only flips."""
    lo, hi = 0.25, 4.0
    at_lo = _recommend(catalog, scenario, solver, **{field: lo})
    at_hi = _recommend(catalog, scenario, solver, **{field: hi})
    if at_lo == at_hi or None in (at_lo, at_hi):
        return None
    for _ in range(BISECTION_STEPS):
        mid = math.sqrt(lo * hi)
        if _recommend(catalog, scenario, solver, **{field: mid}) == at_lo:
            lo = mid
        else:
            hi = mid
    factor = math.sqrt(lo * hi)
    what = "rent" if field == "rent_price_scale" else "purchase price"
    winner = at_lo if field == "rent_price_scale" else at_hi
    direction = "falls below" if field == "rent_price_scale" else "rises above"
    if winner != "rent_only":
        winner, direction = (
            at_hi if field == "rent_price_scale" else at_lo,
            "rises above" if field == "rent_price_scale" else "falls below",
        )
    return {
        "parameter": field,
        "factor": factor,
        "sentence": f"{'renting' if winner == 'rent_only' else 'buying'} wins if the {what} {direction} "
        f"{factor:.2f}× the catalog price (currently {base or 'n/a'} wins)",
    }


def _provider_breakeven(catalog: Catalog, gpu_id: str, site_id: str) -> float | None:
    """Reserved / on-demand price ratio from one provider quoting both (card 12 utilisation crossover)."""
    quotes = [p for p in catalog.rental_prices(gpu_id) if not p.sites or site_id in p.sites]
    pairs = []
    for od in (q for q in quotes if q.kind == "on_demand"):
        for rs in (q for q in quotes if q.kind == "reserved_1y" and q.provider == od.provider):
            pairs.append((od.usd_per_gpu_hour, rs.usd_per_gpu_hour, od.provider))
    if not pairs:
        return None
    od_price, rs_price, _provider = min(pairs, key=lambda p: (p[0], p[2]))
    return breakeven_utilization_frac(rs_price, on_demand_usd_per_hour=od_price)


def compare(
    catalog: Catalog, scenario: Scenario, *, solver: SolverName = "highs", flip_points: bool = True
) -> Comparison:
    """Plan the scenario three times (buy only, rent only, hybrid) and derive the comparison."""
    options = {
        name: plan(catalog, _with(scenario, proc), solver=solver, with_alternatives=False)
        for name, proc in OPTIONS.items()
    }
    flows = {name: monthly_cash_flow_usd(r) for name, r in options.items() if r.status != "infeasible"}
    crossover = None
    buying = "buy_only" if "buy_only" in flows else "hybrid"
    if buying in flows and "rent_only" in flows and options[buying].capex_usd > 0:
        cum_buy = cum_rent = 0.0
        for month, (b, r) in enumerate(zip(flows[buying], flows["rent_only"], strict=True)):
            cum_buy, cum_rent = cum_buy + b, cum_rent + r
            if month > 0 and cum_buy <= cum_rent:
                crossover = month
                break
    breakeven = None
    rent = options["rent_only"]
    if rent.status != "infeasible" and rent.deployments:
        d = rent.deployments[0]
        gpu, site = catalog.accelerators[d["gpu"]], merged_sites(catalog, scenario).get(d["site"])
        if site is not None:
            breakeven = _provider_breakeven(catalog, gpu.id, site.id)
    best = _cheapest(options)
    flips: list[dict[str, Any]] = []
    if flip_points:
        base = _recommend(catalog, scenario, solver)
        for field in ("rent_price_scale", "purchase_price_scale"):
            found = _flip(catalog, scenario, solver, field, base)
            if found:
                flips.append(found)
        if not flips:
            flips.append(
                {
                    "parameter": None,
                    "factor": None,
                    "sentence": "no single price change within 0.25×–4× flips buying vs renting; "
                    "the extra measurement buys confidence, not a different choice",
                }
            )
    return Comparison(options, flows, best, crossover, breakeven, flips)
