"""Which of ``planner compare``'s options to recommend, and why (planner/compare.py's module docstring):
the cheapest feasible option, ties (relative 1e-9) to the simpler one in the order rent_only, buy_only,
hybrid — a hybrid plan that buys nothing is rent_only; why no plan can buy; a plan that rents and buys
nothing (the owned GPUs serve the demand)."""

from __future__ import annotations

from planner.catalog.loader import Catalog
from planner.costs import buy_allowed
from planner.readout.result import PlanResult
from planner.scenario import Scenario, merged_sites

PREFERENCE = ("rent_only", "buy_only", "hybrid")
"""Among options of equal cost, the simpler one is recommended."""
TIE_REL = 1e-9


def recommend(options: dict[str, PlanResult]) -> tuple[str | None, str]:
    """The cheapest feasible option (ties to the simpler one, a hybrid that buys nothing is rent-only) and why."""
    feasible = {n: r.total_cost_usd for n, r in options.items() if r.feasible}
    if not feasible:
        return None, "no option has a plan"
    low = min(feasible.values())
    best = next(n for n in PREFERENCE if n in feasible and feasible[n] <= low + abs(low) * TIE_REL)
    if best == "hybrid" and options["hybrid"].capex_usd <= 0 and "rent_only" in feasible:
        best = "rent_only"
    others = [n for n in PREFERENCE if n in feasible and n != best]
    if not others:
        return best, f"{best} is the only option with a plan"
    runner_up = min(others, key=lambda n: feasible[n])
    saving = feasible[runner_up] - feasible[best]
    if saving < -abs(feasible[best]) * TIE_REL:  # a cheaper hybrid that buys nothing (a time-limited solve)
        return best, (
            f"{best}: the cheapest plan, {runner_up} at ${feasible[runner_up]:,.0f}, buys nothing "
            f"(${-saving:,.0f} less than the rent_only solve found)"
        )
    if saving <= abs(feasible[best]) * TIE_REL:
        simpler = "it buys nothing" if best == "rent_only" else "it rents nothing"
        return best, f"{best} costs the same as {runner_up} and is simpler ({simpler})"
    return best, (
        f"{best} is cheapest: ${feasible[best]:,.0f} over the horizon, ${saving:,.0f} "
        f"({saving / feasible[runner_up]:.1%}) less than {runner_up}"
    )


def owned_only(result: PlanResult) -> bool:
    """The plan rents and buys nothing: every GPU it uses is owned (inventory or edge devices)."""
    return result.feasible and all(line.procurement == "owned" for line in result.supply)


def buying_blocker(catalog: Catalog, scenario: Scenario) -> str | None:
    """Why no plan can buy in ``scenario`` (None when buying is possible): buying needs a datacenter site
    among the workloads' sites, a candidate GPU with a purchase price, and delivery before the horizon."""
    if "buy" not in scenario.procurement:
        return "the scenario's procurement does not include buy"
    sites = merged_sites(catalog, scenario)
    # a workload without sites runs at every cloud site (planner.candidates.workload_sites), never a datacenter
    allowed = {s for w in scenario.workloads for s in (w.sites or ())}
    if not any(buy_allowed(sites[s]) for s in allowed if s in sites):
        return "no site of the workloads is a datacenter (cloud regions rent, edge devices are owned)"
    gpus = [
        catalog.accelerators[g]
        for g in (scenario.hardware.gpus or catalog.accelerators)
        if g in catalog.accelerators
    ]
    buyable = [g for g in gpus if g.purchase is not None and g.placement == "datacenter"]
    if not buyable:
        return "no candidate GPU has a purchase price"
    lead = min(g.purchase.lead_time_months for g in buyable if g.purchase is not None)
    if lead >= scenario.horizon_months:
        return f"the shortest lead time ({lead:g} months) is not inside the {scenario.horizon_months}-month horizon"
    return None
