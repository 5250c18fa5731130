"""buy_vs_rent under `budget: {total_usd: 100000}` listed, after "raise budget.total_usd to 812,759", shortfalls
such as "chat: at most 38.3 of 47.1 req/s can be served in period 9" with the relaxation "lower
chat.requests_per_s or growth_frac_per_month so that period 9 asks 38.3 req/s, or raise budget.total_usd …":
lowering one period's demand does not make the plan fit a budget every period shares. Under a budget cause, a
workload short in several periods gets the budget's relaxation for each (short in one period, lowering its demand
there is still offered: tests/plan/test_budget_explanation.py)."""

from __future__ import annotations

from pathlib import Path

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import Budget, load_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_budget_shortfalls_name_only_the_budget(catalog: Catalog) -> None:
    scenario = load_scenario(ROOT / "examples" / "buy_vs_rent" / "scenario.yaml", catalog)
    result = plan(catalog, scenario.model_copy(update={"budget": Budget(total_usd=100_000.0)}), with_alternatives=False)
    assert result.status == "infeasible"
    budget, *shortfalls = result.infeasibility
    assert budget.requirement == "budget" and budget.relaxation == "raise budget.total_usd to 812,759"
    assert shortfalls and all(e.relaxation == budget.relaxation for e in shortfalls)
    assert any((e.best_value_requests_per_s or 0) > 0 for e in shortfalls)  # a period partly served: was "lower …"
