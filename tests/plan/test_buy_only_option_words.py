"""A relaxation says what actually changes: "add rent to procurement" where the scenario leaves rent out, a
cloud site where rent is allowed but the workload lists none, and — in `planner compare`, whose buy_only
option leaves rent out by construction — the rent_only / hybrid option that rents (it said "allow rent",
or "add rent to procurement" to a scenario that already allows rent)."""

from __future__ import annotations

from pathlib import Path

from planner.catalog import Catalog
from planner.compare import compare
from planner.plan import plan
from planner.scenario import Budget, Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _buy_vs_rent(catalog: Catalog, **update: object) -> Scenario:
    stated = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    return stated.model_copy(update=update)


def test_compare_buy_only_on_cloud_sites_names_the_renting_options(catalog: Catalog) -> None:
    """chat_70b_cloud rents at us_east / us_west: its buy_only option has no datacenter; renting is not a
    change to the scenario (it allows rent) but the other two options."""
    comparison = compare(catalog, load_scenario(ROOT / "examples/chat_70b_cloud/scenario.yaml", catalog), flip_points=False)
    (cause,) = comparison.options["buy_only"].infeasibility
    assert cause.message == "chat: no site allows buying (buying needs a datacenter site; its sites: us_east, us_west)"
    assert cause.relaxation == (
        "add a datacenter site (dc1) to chat.sites or add inventory (renting instead: the rent_only and hybrid options)"
    )


def test_capex_budget_below_one_node_says_how_to_rent(catalog: Catalog) -> None:
    """Buy-only with $1,000 of capex: the fix is more capex or renting — "add rent to procurement and rent at
    us_east" (buy_vs_rent's workload lists us_east and dc1), not "allow rent"."""
    scenario = _buy_vs_rent(catalog, procurement=["buy"], objective="max_throughput", budget=Budget(capex_usd=1000))
    result = plan(catalog, scenario, with_alternatives=False)
    cheapest = min(catalog.gpu(g).purchase.usd_per_node for g in ("h100_sxm", "h200_sxm"))  # type: ignore[union-attr]
    (cause,) = [e for e in result.infeasibility if e.requirement == "budget"]
    assert cause.relaxation == f"raise budget.capex_usd to {cheapest:,.0f} or add rent to procurement and rent at us_east"
    assert cause.buy_only_option_relaxation == (
        f"raise budget.capex_usd to {cheapest:,.0f} (or rent at us_east: the rent_only and hybrid options)"
    )
    assert "buy_only_option_relaxation" not in cause.to_json()  # compare's words, not the plan's JSON


def test_capex_budget_with_rent_allowed_names_a_cloud_site(catalog: Catalog) -> None:
    """Rent is allowed but the workload lists only dc1: renting needs a cloud site in its sites."""
    stated = _buy_vs_rent(catalog, procurement=["rent", "buy"], objective="max_throughput", budget=Budget(capex_usd=1000))
    dc_only = [w.model_copy(update={"sites": ["dc1"]}) for w in stated.workloads]
    result = plan(catalog, stated.model_copy(update={"workloads": dc_only}), with_alternatives=False)
    (cause,) = [e for e in result.infeasibility if e.requirement == "budget"]
    assert cause.relaxation.endswith(" or rent at a cloud site added to chat.sites (us_east, us_west, eu_west, ap_northeast)")


def test_lead_time_bridge_in_the_buy_only_option_is_the_hybrid_option(catalog: Catalog) -> None:
    """Buy-only: nothing bought arrives before its lead time; the plan says "add rent to procurement and rent at
    us_east until month N, or add inventory", compare's buy_only option the hybrid option that does."""
    result = plan(catalog, _buy_vs_rent(catalog, procurement=["buy"]), with_alternatives=False)
    (cause,) = [e for e in result.infeasibility if e.requirement == "lead_time"]
    first = cause.message.split("before month ")[1].split(" ")[0]
    assert cause.relaxation == f"add rent to procurement and rent at us_east until month {first}, or add inventory"
    assert cause.buy_only_option_relaxation == f"add inventory, or rent at us_east until month {first} (the hybrid option)"


def test_rent_allowed_keeps_the_plan_words(catalog: Catalog) -> None:
    """Where the scenario already rents, the buy_only option's words are the plan's (no procurement change)."""
    stated = _buy_vs_rent(catalog, procurement=["rent", "buy"], objective="max_throughput", budget=Budget(capex_usd=1000))
    dc_only = [w.model_copy(update={"sites": ["dc1"]}) for w in stated.workloads]
    result = plan(catalog, stated.model_copy(update={"workloads": dc_only}), with_alternatives=False)
    (cause,) = [e for e in result.infeasibility if e.requirement == "budget"]
    assert cause.buy_only_option_relaxation == cause.relaxation
