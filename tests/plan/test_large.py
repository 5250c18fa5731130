"""Large-problem path (planner.large): a feasible plan whose cost is at least its proven lower bound."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import planner.large
from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_large_path_plan_is_feasible_and_above_its_bound(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    exact = plan(catalog, scenario, with_alternatives=False)
    assert exact.status == "optimal"
    monkeypatch.setattr(planner.large, "LARGE_INTEGER_VARIABLES", 0)  # force the large path
    monkeypatch.setattr(planner.large, "LARGE_TIME_BUDGET_S", 3.0)
    start = time.perf_counter()
    large = plan(catalog, scenario, with_alternatives=False)
    assert time.perf_counter() - start < 10.0
    assert large.status in ("optimal", "feasible") and large.gap is not None and 0.0 <= large.gap <= 1.0
    bound = large.total_cost_usd * (1 - large.gap)
    # the bound is proven: no plan, in particular the exact optimum, costs less
    assert bound <= exact.total_cost_usd * (1 + 1e-6)
    assert large.total_cost_usd >= exact.total_cost_usd * (1 - 1e-6)
    if large.status == "optimal":
        assert large.total_cost_usd == pytest.approx(exact.total_cost_usd, rel=1e-5)
    assert large.deployments and large.supply  # audited like every plan


def test_small_problems_keep_the_exact_path(catalog: Catalog) -> None:
    scenario = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    result = plan(catalog, scenario, with_alternatives=False)
    assert result.status == "optimal" and result.gap is None
