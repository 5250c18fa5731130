"""The pooled first plan (planner/optimize/pooled_start.py) is a plan of the full problem, repeatable, and
near the optimum: on the bundled examples it satisfies every row, costs at least the optimum (the golden
costs), and it is the optimum of mixed_fleet (136 candidates, 15 kept) and chat_70b_cloud, and within 3 % of
that of buy_vs_rent (multi-period, buy + rent: at the optimum now, whose replicas are all co-located H100s;
2.7 % above when, with the roofline max and the H100 at MBU 0.65, the optimum disaggregated prefill and
decode; 5.1 % before PD pairs were kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize.build import build_problem
from planner.optimize.pooled_start import kept_candidates, pooled_start
from planner.optimize.solver import objective_usd, violated_rows
from planner.problem.context import build_context
from planner.scenario import load_scenario

GOLDEN = json.loads(Path("tests/golden/examples.json").read_text())


@pytest.mark.parametrize(("example", "within"), [("mixed_fleet", 1e-5), ("chat_70b_cloud", 1e-5), ("buy_vs_rent", 0.03)])
def test_pooled_start_is_a_plan_near_the_optimum(catalog: Catalog, example: str, within: float) -> None:
    scenario = load_scenario(Path(f"examples/{example}/scenario.yaml"), catalog)
    ctx = build_context(catalog, scenario, candidates_for(catalog, scenario))
    build_problem(ctx)
    plan = pooled_start(ctx)
    assert plan is not None
    assert plan == pooled_start(ctx)  # repeatable: node limits, one thread, fixed seed
    kept = kept_candidates(ctx)
    assert 0 < len(kept) < len(ctx.cands)  # a restriction, not the whole problem
    for v in ctx.prob.variables():
        v.varValue = plan.get(v.name, 0.0)
    assert violated_rows(ctx) == []  # a plan of the full problem
    optimum = GOLDEN[example]["total_cost_usd"]
    cost = objective_usd(ctx)  # + the tie-break (well under 1 USD)
    assert optimum * (1 - 1e-6) <= cost <= optimum * (1 + within)
