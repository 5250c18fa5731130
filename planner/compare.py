"""`planner compare`: buy-only vs rent-only vs hybrid for one scenario, with crossover and flip points.

Each option is a full plan (same SLOs, same candidates) with the procurement restricted. Reported per
option, from its plan's cost ledger (planner.readout.ledger): horizon TCO, capex, average opex per month,
cost per million output tokens and the monthly cash flow (capex in its order month, recurring costs while
in use, the resale of the remaining book value in the last month).
Across options: the cumulative-cost crossover month (buying vs renting), the break-even utilization of the
rented GPU (reserved price / on-demand price, card 12) and the flip points — the rent and purchase price
multipliers at which the recommendation changes, found by bisection.
"""

from __future__ import annotations

import math
from typing import Any

from planner.catalog.loader import Catalog
from planner.catalog.schema import Site
from planner.costs import rent_quote
from planner.ledgers.edge_cloud import breakeven_utilization_frac
from planner.optimize.solver import SolverName
from planner.plan import plan
from planner.readout.comparison import Comparison
from planner.readout.result import PlanResult
from planner.scenario import Scenario, merged_sites

OPTIONS: dict[str, list[str]] = {"buy_only": ["buy"], "rent_only": ["rent"], "hybrid": ["rent", "buy"]}
BISECTION_STEPS = 6


def _cheapest(options: dict[str, PlanResult]) -> str | None:
    feasible = {n: r.total_cost_usd for n, r in options.items() if r.feasible}
    return min(feasible, key=lambda n: (feasible[n], n)) if feasible else None


def _with(scenario: Scenario, procurement: list[str]) -> Scenario:
    return scenario.model_copy(update={"procurement": procurement})


def scaled_demand(scenario: Scenario, factor: float) -> Scenario:
    """The scenario with every workload's requests/s (a number or each period's value) × ``factor``."""
    workloads = []
    for w in scenario.workloads:
        rate = w.requests_per_s
        scaled = [v * factor for v in rate] if isinstance(rate, list) else rate * factor
        workloads.append(w.model_copy(update={"requests_per_s": scaled}))
    return scenario.model_copy(update={"workloads": workloads})


def _what_if(scenario: Scenario, parameter: str, factor: float) -> Scenario:
    """``scenario`` with one flip parameter at ``factor`` (a price multiplier or the demand level)."""
    if parameter == "demand_scale":
        return scaled_demand(scenario, factor)
    return scenario.model_copy(update={"economics": scenario.economics.model_copy(update={parameter: factor})})


def _recommend(catalog: Catalog, scenario: Scenario, solver: SolverName) -> str | None:
    """rent_only unless buying (hybrid or buy-only) is strictly cheaper: 'rent_only' or 'buy'."""
    results = {
        n: plan(catalog, _with(scenario, p), solver=solver, with_alternatives=False)
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


FLIP_WHAT = {
    "rent_price_scale": "rent",
    "purchase_price_scale": "purchase price",
    "demand_scale": "demand",
}
"""Flip parameters: multipliers on every rental price, every purchase price, and every workload's demand."""

CHOICE = {"rent_only": "renting", "buy": "buying"}


def _flip(
    catalog: Catalog, scenario: Scenario, solver: SolverName, parameter: str, base: str | None
) -> dict[str, Any] | None:
    """Bisection (geometric, BISECTION_STEPS steps) on a multiplier in [0.25, 4] of a price or of every
    workload's demand for the point where the recommendation (rent only vs buy) flips."""
    lo, hi = 0.25, 4.0
    at_lo = _recommend(catalog, _what_if(scenario, parameter, lo), solver)
    at_hi = _recommend(catalog, _what_if(scenario, parameter, hi), solver)
    if at_lo == at_hi or at_lo is None or at_hi is None:
        return None
    for _ in range(BISECTION_STEPS):
        mid = math.sqrt(lo * hi)
        if _recommend(catalog, _what_if(scenario, parameter, mid), solver) == at_lo:
            lo = mid
        else:
            hi = mid
    factor = math.sqrt(lo * hi)
    above, below = CHOICE.get(at_hi, at_hi), CHOICE.get(at_lo, at_lo)
    now = f"currently {CHOICE.get(base, base) if base else 'n/a'} wins"
    if parameter == "demand_scale":
        rates = ", ".join(
            f"{w.name} {factor * _peak_requests_per_s(w.requests_per_s):.3g} req/s" for w in scenario.workloads
        )
        sentence = (
            f"{above} wins if demand stays above {factor:.2f}× the stated level ({rates} at peak), "
            f"{below} below it ({now})"
        )
    else:
        sentence = (
            f"{below} wins if the {FLIP_WHAT[parameter]} falls below {factor:.2f}× the catalog price, "
            f"{above} above it ({now})"
        )
    return {"parameter": parameter, "factor": factor, "sentence": sentence}


def _peak_requests_per_s(rate: float | list[float]) -> float:
    return max(rate) if isinstance(rate, list) else rate


def reserved_breakeven(
    catalog: Catalog, gpu_id: str, site: Site, providers: list[str] | None = None
) -> tuple[float | None, dict[str, Any] | None]:
    """Card-12 utilisation crossover of renting ``gpu_id`` at ``site``: reserved_1y / on-demand price of the
    quotes the planner uses there (planner.costs.rent_quote), with the sentence that states it.

    The fraction is None when the reserved quote is no cheaper than on-demand (reserving never pays).
    """
    gpu = catalog.accelerators[gpu_id]
    od = rent_quote(catalog, gpu, site, "on_demand", providers)
    rs = rent_quote(catalog, gpu, site, "reserved_1y", providers)
    if od is None or rs is None:
        return None, None
    ratio = breakeven_utilization_frac(rs.usd_per_gpu_hour, on_demand_usd_per_hour=od.usd_per_gpu_hour)
    prices = (
        f"{gpu_id} at {site.id}: reserved 1 y ${rs.usd_per_gpu_hour:.2f}/GPU-h ({rs.provider}) vs on-demand "
        f"${od.usd_per_gpu_hour:.2f}/GPU-h ({od.provider})"
    )
    flip = {"parameter": "utilization_frac", "factor": ratio}
    if ratio >= 1:
        return None, {**flip, "sentence": f"reserving never pays at these quotes: {prices}"}
    sentence = f"reserving wins over on-demand if utilization stays above {ratio:.0%} ({prices})"
    return ratio, {**flip, "sentence": sentence}


def compare(
    catalog: Catalog, scenario: Scenario, *, solver: SolverName = "highs", flip_points: bool = True
) -> Comparison:
    """Plan the scenario three times (buy only, rent only, hybrid) and derive the comparison."""
    options = {
        name: plan(catalog, _with(scenario, proc), solver=solver, with_alternatives=False)
        for name, proc in OPTIONS.items()
    }
    breakeven, breakeven_flip = None, None
    rent = options["rent_only"]
    if rent.status != "infeasible" and rent.deployments:
        d = rent.deployments[0]
        site = merged_sites(catalog, scenario).get(d.site)
        if site is not None and site.kind == "cloud":
            breakeven, breakeven_flip = reserved_breakeven(catalog, d.gpu, site, scenario.rent_providers)
    best = _cheapest(options)
    flips: list[dict[str, Any]] = []
    if flip_points:
        base = _recommend(catalog, scenario, solver)
        for parameter in FLIP_WHAT:
            found = _flip(catalog, scenario, solver, parameter, base)
            if found:
                flips.append(found)
        if not flips:
            flips.append(
                {
                    "parameter": None,
                    "factor": None,
                    "sentence": "no single change of rent, purchase price or demand within 0.25×–4× flips "
                    "buying vs renting",
                }
            )
    if breakeven_flip is not None:
        flips.append(breakeven_flip)
    return Comparison(options, best, breakeven, flips)
