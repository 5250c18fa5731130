"""What the speed work reuses gives the same answers as computing afresh (issues 16 item 5, 17 item 3).

- candidate tables are shared by scenarios that differ only in prices or demand (planner.candidate_cache):
  such a variant's table equals its own fresh evaluation, on every example;
- a plan made with a warm candidate cache has the same JSON as one made cold;
- inside ``shared_solves`` a problem asked twice is solved once, outside it is solved again;
- the flip bisection's quick probe only answers "buy" where the exact solve answers "buy".
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from planner import candidate_cache
from planner.candidates import build_candidates
from planner.catalog import Catalog
from planner.scenario import Scenario, load_scenario

EXAMPLES = sorted(p for p in Path("examples").glob("*/scenario.yaml") if p.parent.name != "train_8b")


def _variant(scenario: Scenario) -> Scenario:
    """Prices × 0.6 / 1.7, demand × 3, a longer horizon: nothing the candidate evaluation reads."""
    workloads = [
        w.model_copy(
            update={
                "requests_per_s": [3 * v for v in w.requests_per_s]
                if isinstance(w.requests_per_s, list)
                else 3 * w.requests_per_s
            }
        )
        for w in scenario.workloads
    ]
    economics = scenario.economics.model_copy(update={"rent_price_scale": 0.6, "purchase_price_scale": 1.7})
    return scenario.model_copy(
        update={"workloads": workloads, "economics": economics, "horizon_months": scenario.horizon_months + 12}
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.parent.name)
def test_price_and_demand_variants_have_the_same_candidate_table(catalog: Catalog, path: Path) -> None:
    base = load_scenario(path, catalog)
    variant = _variant(base)
    assert candidate_cache.shape_key(variant) == candidate_cache.shape_key(base)
    fresh, again = build_candidates(catalog, base), build_candidates(catalog, variant)
    pd.testing.assert_frame_equal(fresh.candidates, again.candidates)
    pd.testing.assert_frame_equal(fresh.points, again.points)
    assert fresh.sites == again.sites


def test_the_cache_shares_tables_by_shape_only(catalog: Catalog) -> None:
    candidate_cache.clear()
    base = load_scenario(EXAMPLES[0], catalog)
    table = candidate_cache.candidates_for(catalog, base)
    assert candidate_cache.candidates_for(catalog, _variant(base)) is table
    w = base.workloads[0]
    tighter = base.model_copy(
        update={"workloads": [w.model_copy(update={"slo": w.slo.model_copy(update={"tpot_ms": w.slo.tpot_ms / 2})})]}
    )
    assert candidate_cache.shape_key(tighter) != candidate_cache.shape_key(base)
    assert candidate_cache.candidates_for(catalog, tighter) is not table
    other_catalog = catalog.model_copy()
    assert candidate_cache.candidates_for(other_catalog, base) is not table


def test_a_plan_with_warm_caches_is_the_plan_made_cold(catalog: Catalog) -> None:
    from planner.plan import plan

    scenario = load_scenario(Path("examples/chat_70b_cloud/scenario.yaml"), catalog)

    def plan_json() -> str:
        data = plan(catalog, scenario, with_alternatives=True).to_json()
        data.pop("solve_seconds"), data.pop("total_seconds"), data.pop("optimizer_seconds")
        return json.dumps(data, sort_keys=True)

    candidate_cache.clear()
    cold = plan_json()
    warm = plan_json()
    assert warm == cold


def test_shared_solves_answer_a_problem_asked_again(catalog: Catalog) -> None:
    from planner.optimize import solve
    from planner.optimize.reuse import shared_solves
    from planner.problem.context import build_context

    scenario = load_scenario(Path("examples/assistant_8b_edge/scenario.yaml"), catalog)
    table = candidate_cache.candidates_for(catalog, scenario)
    with shared_solves():
        first = solve(build_context(catalog, scenario, table), "highs", None)
        second = solve(build_context(catalog, scenario, table), "highs", None)
        assert second is first
        cheaper = scenario.model_copy(
            update={"economics": scenario.economics.model_copy(update={"purchase_price_scale": 0.5})}
        )
        assert solve(build_context(catalog, cheaper, table), "highs", None) is not first
    third = solve(build_context(catalog, scenario, table), "highs", None)
    assert third is not first
    assert third[0].cost_usd == first[0].cost_usd


def test_quick_probe_says_buy_only_where_the_exact_solve_does(catalog: Catalog) -> None:
    from planner.compare import _cost, _what_if, _with
    from planner.flip_probe import buying_surely_cheaper

    base = load_scenario(Path("examples/buy_vs_rent/scenario.yaml"), catalog)
    answers = []
    for rent_scale in (0.25, 1.0):  # rent at a quarter of the catalog price wins; at the price buying does
        scenario = _what_if(base, "rent_price_scale", rent_scale)
        rent, _ = _cost(catalog, _with(scenario, ["rent"]), "highs")
        hybrid, _ = _cost(catalog, _with(scenario, ["rent", "buy"]), "highs")
        assert rent is not None and hybrid is not None
        threshold = rent * (1 - 1e-9)
        quick = buying_surely_cheaper(catalog, _with(scenario, ["rent", "buy"]), threshold, "highs")
        answers.append((quick, hybrid < threshold))
    assert answers == [(False, False), (True, True)]
