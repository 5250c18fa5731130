"""A min-cost scenario whose budget is below the cheapest plan is explained by its budget: examples/
chat_70b_cloud costs $245,722 at the least; with `budget: {total_usd: 200000}` the explanation said
"binding: gpu_supply b200/us_east/0 ... or relax gpu_supply b200/us_east/0" (a rented GPU line is no
limit: the budget stopped the second GPU)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import Budget, Scenario, load_scenario, parse_scenario
from tests.plan.helpers import starter

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "examples" / "chat_70b_cloud" / "scenario.yaml"
CHEAPEST_USD = 245_721.6  # tests/golden/examples.json


@pytest.mark.parametrize("budget", [Budget(total_usd=200_000), Budget(opex_usd_per_month=6_000)])
def test_a_budget_below_the_cheapest_plan_is_named_with_the_cost_it_needs(catalog: Catalog, budget: Budget) -> None:
    scenario = load_scenario(CHAT, catalog).model_copy(update={"budget": budget})
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "infeasible"
    first = result.infeasibility[0]
    assert first.requirement == "budget"
    assert "$245,722" in first.message
    assert all("gpu_supply" not in (e.relaxation or "") + e.message for e in result.infeasibility)


def test_the_suggested_total_budget_makes_the_plan_feasible(catalog: Catalog) -> None:
    scenario = load_scenario(CHAT, catalog).model_copy(update={"budget": Budget(total_usd=200_000)})
    (first, *_) = plan(catalog, scenario, with_alternatives=False).infeasibility
    assert first.relaxation == f"raise budget.total_usd to {math.ceil(CHEAPEST_USD):,}"
    raised = scenario.model_copy(update={"budget": Budget(total_usd=math.ceil(CHEAPEST_USD))})
    result = plan(catalog, raised, with_alternatives=False)
    assert result.status == "optimal" and result.total_cost_usd == pytest.approx(CHEAPEST_USD, rel=1e-9)


@pytest.mark.parametrize(
    ("budget", "served", "relaxation"),
    [
        (  # what part of the demand the budget serves, or the budget of the cheapest plan (it said "relax … $3,000")
            {"opex_usd_per_month": 3000}, 29.5,
            "lower chat.requests_per_s to 29.5, or raise budget.opex_usd_per_month to 4,882",
        ),
        # nothing at all: lowering the demand to 0 is no relaxation (it was offered)
        ({"total_usd": 1000}, 0.0, "raise budget.total_usd to 12,096"),
    ],
)
def test_a_shortfall_names_what_can_be_served_and_never_a_demand_of_zero(
    catalog: Catalog, budget: dict[str, float], served: float, relaxation: str
) -> None:
    data = starter({"requests_per_s": 50 if served else 5, "quantizations": ["bf16", "fp8"]},
                   hardware={"gpus": ["h100_sxm", "l40s", "a100_sxm_80gb"], "tp": [1, 2, 4], "pp": [1]},
                   budget=budget)
    result = plan(catalog, Scenario.model_validate(data, context={"catalog": catalog}), with_alternatives=False)
    assert result.status == "infeasible"
    short = [e for e in result.infeasibility if e.requirement == "requests_per_s"]
    assert len(short) == 1 and short[0].best_value_requests_per_s == pytest.approx(served, abs=0.05)
    assert short[0].relaxation == relaxation


def test_a_budget_that_serves_none_of_the_demand_names_the_cheapest_plan_that_serves_any(catalog: Catalog) -> None:
    """`planner budget` (max_throughput) on the starter with $10,000 in total: one L40S replica at us_east
    costs $1,008/month, $12,096 over 12 months, so no fraction of the demand fits; the explanation gives that
    plan and the total to raise to (it said "no plan fits the budget / raise the budget"). Raised to it, the
    budget serves a positive share."""
    data = starter(
        objective="max_throughput", budget={"total_usd": 10_000}, hardware={"gpus": ["h100_sxm", "l40s", "a100_sxm_80gb"]}
    )
    scenario = parse_scenario(data)
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "infeasible"
    (first,) = result.infeasibility
    assert first.requirement == "budget"
    assert first.message == (
        "no plan serves any of the demand within the budget: the cheapest that does (one replica of every "
        "workload) costs $12,096 over the horizon, $1,008/month at most, $0 capex; the total budget $10,000 is "
        "below $12,096 over the horizon"
    )
    assert first.relaxation == "raise budget.total_usd to $12,096"
    raised = scenario.model_copy(update={"budget": Budget(total_usd=12_096)})
    served = plan(catalog, raised, with_alternatives=False)
    assert served.status == "optimal" and served.served_scale is not None and served.served_scale > 0


def test_planner_budget_names_its_options_not_scenario_fields(tmp_path: Path) -> None:
    """`planner budget --opex-usd-per-month 100` said "raise budget.opex_usd_per_month to 432" for a scenario
    without a budget section: the limits were the command's options. The cheapest replica is half an
    rtx_4090 at us_east, $0.60/GPU-h × 720 h = $432/month for the one 1-GPU instance it holds."""
    from typer.testing import CliRunner

    from planner.cli.main import app

    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: small\nhorizon_months: 12\nworkloads:\n  - name: chat\n    models: [llama_3_1_8b]\n"
        "    requests_per_s: 2\n    input_tokens: 500\n    output_tokens: 100\n"
        "    slo: {ttft_ms: 2000, tpot_ms: 50}\n    sites: [us_east]\n"
    )
    res = CliRunner().invoke(app, ["budget", str(scenario), "--opex-usd-per-month", "100"])
    assert res.exit_code == 3
    said = " ".join(res.stderr.split())
    assert f"cheapest replica (${round(0.60 * 720):,}/month: 0.5 × rtx_4090 at us_east in one 1-GPU instance" in said
    assert "raise --opex-usd-per-month to 432 at least" in said and "budget.opex" not in said
    assert Budget(opex_usd_per_month=1).line("opex_usd_per_month") == "budget.opex_usd_per_month"
    assert Budget.from_options(total_usd=1).line("total_usd") == "--total-usd"
