"""The flows projected out of the model HiGHS solves (planner.optimize.flow_projection) are exact:

- the projected model has the linear relaxation and the optimum of the model as built, on examples with PD
  pools and with candidates whose flow a policy holds at zero;
- the flows lifted from its answer satisfy every row of the built model;
- a PD flow above what is left of its workload's demand is lowered to it;
- problems whose flows are used otherwise (a redundancy rule, a served fraction) are not projected;
- the plan's own model (planner.optimize.restricted_model) never answers a restriction that a rebuild would
  hand HiGHS projected.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pulp
import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize import components
from planner.optimize.build import build_problem
from planner.optimize.components import columns, highs_model, solve_parts, whole
from planner.optimize.flow_projection import MIN_INTEGER_COLUMNS, flow_projection
from planner.optimize.incumbent import MIN_INTEGER_COLUMNS as REBUILT_FROM
from planner.optimize.solver import objective_usd, violated_rows
from planner.problem.context import BuildContext, build_context
from planner.scenario import load_scenario

PROJECTED = ("buy_vs_rent", "mixed_fleet", "long_context_rag", "small_models_shared", "chat_70b_cloud")


def _built(catalog: Catalog, example: str) -> BuildContext:
    scenario = load_scenario(Path(f"examples/{example}/scenario.yaml"), catalog)
    ctx = build_context(catalog, scenario, candidates_for(catalog, scenario))
    build_problem(ctx)
    return ctx


def _relaxation(h: object) -> float:
    h.setOptionValue("threads", 1)  # type: ignore[attr-defined]  # as every solve here: one scheduler per process
    h.setOptionValue("solve_relaxation", True)  # type: ignore[attr-defined]
    h.run()  # type: ignore[attr-defined]
    return float(h.getInfo().objective_function_value)  # type: ignore[attr-defined]


@pytest.mark.parametrize("example", PROJECTED)
def test_the_projection_keeps_the_relaxation_and_the_optimum(
    catalog: Catalog, example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _built(catalog, example)
    cols, index = columns(ctx)
    projection = flow_projection(ctx, cols, index)
    assert projection is not None and projection.flows and projection.demand
    everything = list(range(len(cols)))
    assert _relaxation(highs_model(ctx, cols, index, everything, projection)) == pytest.approx(
        _relaxation(highs_model(ctx, cols, index, everything)), rel=1e-9, abs=1e-6
    )
    split = whole(ctx)
    assert split is not None
    assert solve_parts(ctx, split, time_limit_s=None).status == "optimal"
    as_built = objective_usd(ctx)
    monkeypatch.setattr(components, "MIN_INTEGER_COLUMNS", 0)  # every model handed projected
    assert solve_parts(ctx, split, time_limit_s=None).status == "optimal"
    assert objective_usd(ctx) == pytest.approx(as_built, rel=1e-6)
    assert violated_rows(ctx) == []  # the lifted flows meet every row, the capacity rows among them
    flows = [v.varValue for v in ctx.variables["flow"].values()]
    assert min(flows) >= 0.0 and sum(flows) > 0.0


def test_the_examples_exercise_pd_pools(catalog: Catalog) -> None:
    """Their demand rows hold PD flows and their pool rows are projected too."""
    pools = 0
    for example in PROJECTED:
        ctx = _built(catalog, example)
        cols, index = columns(ctx)
        projection = flow_projection(ctx, cols, index)
        assert projection is not None
        pools += len(projection.pools)
    assert pools >= 24


def test_a_flow_held_at_zero_serves_nothing_in_the_projection(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidates mixed_fleet's plan deploys are held at zero as a placement rule would (no example has
    such a row: their candidates are filtered before): projected or not, the best plan then serves nothing
    on them, at the same cost."""
    first = _built(catalog, "mixed_fleet")
    split = whole(first)
    assert split is not None and solve_parts(first, split, time_limit_s=None).status == "optimal"
    deployed = {k for (k, _j, _t), v in first.variables["n_rep"].items() if (v.varValue or 0.0) > 0.5}
    optima = []
    for projected in (False, True):
        ctx = _built(catalog, "mixed_fleet")
        for (k, t), flow in ctx.variables["flow"].items():
            if k in deployed:
                ctx.add_row("placement_rtt", (k, t), flow <= 0)
        cols, index = columns(ctx)
        projection = flow_projection(ctx, cols, index)
        assert projection is not None and len(projection.held) == len(deployed) * len(ctx.periods)
        monkeypatch.setattr(components, "MIN_INTEGER_COLUMNS", 0 if projected else 10**9)
        assert solve_parts(ctx, split, time_limit_s=None).status == "optimal"
        assert violated_rows(ctx) == []
        assert not any(v.varValue for (k, _t), v in ctx.variables["flow"].items() if k in deployed)
        optima.append(objective_usd(ctx))
    assert optima[1] == pytest.approx(optima[0], rel=1e-6)


def test_a_pd_flow_above_the_demand_left_is_lowered(catalog: Catalog) -> None:
    ctx = _built(catalog, "buy_vs_rent")
    cols, index = columns(ctx)
    projection = flow_projection(ctx, cols, index)
    assert projection is not None
    demand, colocated, pds = next(row for row in projection.demand if row[2])
    values = np.zeros(len(cols))
    values[pds] = 2.0 * demand  # no replica anywhere: the co-located flows and the pools get nothing
    projection.lift(values, set(range(len(cols))))
    assert values[pds].sum() == pytest.approx(demand)
    assert values[pds[0]] == pytest.approx(demand)
    assert not values[colocated].any()
    pooled = [i for pd, flows in projection.pools if pd in pds for i in flows]
    assert pooled and not values[pooled].any()


@pytest.mark.parametrize("example", ["chat_p99_redundant", "pd_card8"])
def test_flows_used_otherwise_are_not_projected(catalog: Catalog, example: str) -> None:
    """A redundancy rule reads the flows (chat_p99_redundant); max_throughput scales the demand (pd_card8)."""
    ctx = _built(catalog, example)
    cols, index = columns(ctx)
    assert flow_projection(ctx, cols, index) is None


def test_the_plans_own_model_answers_only_restrictions_handed_as_built() -> None:
    """planner.optimize.restricted_model answers a restriction below incumbent.MIN_INTEGER_COLUMNS integer
    columns on the plan's model as built, and rebuilds the others: a rebuild below it is never projected."""
    assert MIN_INTEGER_COLUMNS >= REBUILT_FROM


def test_a_small_model_is_handed_as_built(catalog: Catalog) -> None:
    ctx = _built(catalog, "chat_70b_cloud")
    cols, index = columns(ctx)
    integer = sum(v.cat == pulp.LpInteger for v in cols)
    assert integer < MIN_INTEGER_COLUMNS
    model = components.solver_model(ctx, cols, index, list(range(len(cols))), flow_projection(ctx, cols, index))
    assert model.projection is None and model.kept == list(range(len(cols)))


def test_the_large_paths_solves_keep_their_optimum(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """planner.optimize.decompose hands its node-limited problems to HiGHS projected (solve_parts): solved to
    the end, buy_vs_rent has the optimum PuLP's HiGHS finds on the model as built, and the lifted plan meets
    every row."""
    from planner.optimize import decompose
    from planner.optimize.solver import solve_built

    monkeypatch.setattr(components, "MIN_INTEGER_COLUMNS", 0)
    ctx = _built(catalog, "buy_vs_rent")
    has, optimal, bound = decompose._solve(ctx, "highs", 10**6, None)
    assert has and optimal
    assert bound == pytest.approx(objective_usd(ctx), rel=1e-9)
    assert violated_rows(ctx) == []
    as_built = _built(catalog, "buy_vs_rent")
    assert solve_built(as_built, "highs", time_limit_s=None)[1]
    assert objective_usd(ctx) == pytest.approx(objective_usd(as_built), rel=1e-6)


def test_a_forbidding_row_on_a_pd_flow_is_an_unknown_form() -> None:
    """placement_rtt and quantization_policy hold co-located or pool flows at zero; a row of theirs on a PD
    flow is a form the projection does not know, so it declines (it raised IndexError before)."""
    from planner.optimize.flow_projection import _row_kind

    row = SimpleNamespace(sense=pulp.LpConstraintLE, constant=0.0)  # x ≤ 0: all _row_kind reads of the row
    assert _row_kind(("placement_rtt", (0, 0)), row, [(7, 1.0)], flows=set(), pds={7}) is None
    assert _row_kind(("placement_rtt", (0, 0)), row, [(3, 1.0)], flows={3}, pds=set()) == "forbid"
