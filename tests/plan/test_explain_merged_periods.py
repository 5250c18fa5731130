"""A shortfall that repeats period after period is one cause (planner.optimize.explain.merged_periods).

buy_vs_rent under `budget: {capex_usd: 1e6, total_usd: 1000}` printed the budget cause and then the same
"chat: at most 0 of … req/s can be served in period t; binding: budget…" with the same relaxation for each of
its 12 quarters."""

from __future__ import annotations

from pathlib import Path

from planner.catalog import Catalog
from planner.optimize.explain import Shortfall, merged_periods
from planner.plan import plan
from planner.scenario import Budget, load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _short(
    period: int, served: float, demand: float, binding: str = "site dc1 power", where: str = ""
) -> Shortfall:
    return Shortfall(
        workload="chat",
        period=period,
        served_requests_per_s=served,
        demand_requests_per_s=demand,
        where=where or f"in period {period}",
        binding=binding,
        relaxation=f"relax {binding}",
    )


def test_a_budget_below_every_plan_is_one_shortfall_for_all_quarters(catalog: Catalog) -> None:
    scenario = load_scenario(ROOT / "examples" / "buy_vs_rent" / "scenario.yaml", catalog)
    budget = Budget(capex_usd=1e6, total_usd=1000.0)
    result = plan(catalog, scenario.model_copy(update={"budget": budget}), with_alternatives=False)
    assert result.status == "infeasible"
    assert [e.requirement for e in result.infeasibility] == ["budget", "requests_per_s"]
    short = result.infeasibility[1]
    assert short.period == 0 and short.periods == list(range(12))
    assert short.message.startswith(
        "chat: at most 0 of 21.2 req/s can be served in period 0, and likewise in periods 1–11;"
    )
    assert short.relaxation == result.infeasibility[0].relaxation == "raise budget.total_usd to 812,759"
    assert result.to_json()["infeasibility"][1]["periods"] == list(range(12))


def test_only_consecutive_alike_periods_merge() -> None:
    merged = merged_periods(
        [
            _short(0, 10, 20),
            _short(1, 10, 22),
            _short(2, 12, 24),  # serves more: its own cause
            _short(3, 12, 26, binding="site dc1 GPUs"),  # another limit
            _short(5, 12, 30, binding="site dc1 GPUs"),  # not next to period 3
            _short(
                6, 12, 31, binding="site dc1 GPUs", where="in period 6 at its peak hours"
            ),  # an hour block
        ]
    )
    assert [(e.period, e.periods) for e in merged] == [
        (0, [0, 1]),
        (2, None),
        (3, None),
        (5, None),
        (6, None),
    ]
    assert (
        merged[0].message
        == "chat: at most 10 of 20 req/s can be served in period 0, and likewise in period 1; binding: site dc1 power"
    )
    assert "periods" not in merged[1].to_json()
