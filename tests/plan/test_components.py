"""A built MILP of independent parts is solved part by part (planner.optimize.components), exactly.

- a rent-only buy_vs_rent (12 quarterly slices, nothing across slices) splits into one part per slice, and the
  parts' optima add up to the optimum of the whole problem solved as one MILP by HiGHS;
- allowed to buy, the same scenario splits only into the first quarter (before any delivery) and the rest (a
  bought node serves every slice after its delivery);
- one infeasible part makes the whole problem infeasible; a part stopped by its node limit keeps a plan and
  the sum of the parts' dual bounds is reported as the bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulp
import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize.build import build_problem
from planner.optimize.components import columns, parts, solve_parts
from planner.optimize.solver import make_solver, objective_usd, solve_context, solve_status
from planner.problem.context import BuildContext, build_context
from planner.scenario import load_scenario

BUY_VS_RENT = Path("examples/buy_vs_rent/scenario.yaml")


def _context(catalog: Catalog, procurement: list[str]) -> BuildContext:
    scenario = load_scenario(BUY_VS_RENT, catalog).model_copy(update={"procurement": procurement})
    return build_context(catalog, scenario, candidates_for(catalog, scenario))


def test_rent_only_plan_splits_by_slice_and_matches_the_whole_milp(catalog: Catalog) -> None:
    by_parts = _context(catalog, ["rent"])
    sol = solve_context(by_parts)
    split = parts(by_parts)
    assert split is not None and len(split) == len(by_parts.periods) == 12
    cols, _ = columns(by_parts)
    slice_of = {var.name: key[2] for key, var in by_parts.variables["n_rep"].items()}
    slices_of_part = [{slice_of[cols[i].name] for i in part if cols[i].name in slice_of} for part in split]
    assert sorted(min(s) for s in slices_of_part) == by_parts.periods  # one slice's replicas per part
    assert all(len(s) == 1 for s in slices_of_part)
    whole = _context(catalog, ["rent"])
    build_problem(whole)
    status, has, optimal = solve_status(whole.prob, make_solver("highs", time_limit_s=None))
    assert has and optimal
    assert sol.status == "optimal"
    assert sol.objective_usd == pytest.approx(objective_usd(whole), rel=1e-6)
    assert sol.cost_usd == pytest.approx(838_512.0, rel=1e-6)  # the rent-only option of `planner compare`


def test_buying_couples_the_slices_after_the_first_delivery(catalog: Catalog) -> None:
    ctx = _context(catalog, ["rent", "buy"])
    build_problem(ctx)
    split = parts(ctx)
    assert split is not None and len(split) == 2
    cols, _ = columns(ctx)
    slice_of = {var.name: key[2] for key, var in ctx.variables["n_rep"].items()}
    first, rest = ({slice_of[cols[i].name] for i in part if cols[i].name in slice_of} for part in split)
    # the first quarter is served before any bought node arrives (lead times 2-3 months): rent only
    assert first == {0} and rest == set(ctx.periods[1:])


def test_an_infeasible_part_makes_the_problem_infeasible(catalog: Catalog) -> None:
    ctx = _context(catalog, ["rent"])
    build_problem(ctx)
    split = parts(ctx)
    assert split is not None
    # the last slice may use no GPU at all: its demand can no longer be served
    t = ctx.periods[-1]
    units = [ctx.variables["units"][(i, t)] for i in range(len(ctx.supply))]
    ctx.add_row("test", ("no_supply", t), pulp.lpSum(units) <= 0)
    assert solve_parts(ctx, split, time_limit_s=None).status == "infeasible"


def test_a_node_limit_keeps_the_plan_and_adds_the_bounds(catalog: Catalog) -> None:
    ctx = _context(catalog, ["rent"])
    build_problem(ctx)
    split = parts(ctx)
    assert split is not None
    outcome = solve_parts(ctx, split, time_limit_s=None, max_nodes=1)
    assert outcome.status in ("optimal", "feasible")
    objective = float(pulp.value(ctx.prob.objective))
    assert objective >= 838_512.0 * (1 - 1e-6)  # a plan, no better than the optimum
    assert outcome.bound <= objective * (1 + 1e-9)
    assert outcome.bound > 0.8 * 838_512.0  # the parts' LP bounds at least, added up


def test_cheapest_buying_plan_answers_the_price_flip_question(catalog: Catalog) -> None:
    """planner.flip_probe.cheapest_buying_plan: at catalog prices buying wins and the cheapest buying plan is
    the hybrid optimum (812,758.44 USD, the compare example's hybrid option); below the rent flip (0.93×)
    every buying plan costs more than renting only (0.85 × 838,512.00); without buy options none."""
    from planner.flip_probe import cheapest_buying_plan

    base = load_scenario(BUY_VS_RENT, catalog)
    sol = cheapest_buying_plan(catalog, base, "highs")
    assert sol is not None and sol.status == "optimal"
    assert sol.cost_usd == pytest.approx(812_758.44, rel=1e-6)
    assert sum(sol.values["bought"].values()) >= 1
    cheap_rent = base.model_copy(update={"economics": base.economics.model_copy(update={"rent_price_scale": 0.85})})
    below = cheapest_buying_plan(catalog, cheap_rent, "highs")
    assert below is not None and below.cost_usd > 0.85 * 838_512.0
    rent_only = base.model_copy(update={"procurement": ["rent"]})
    none = cheapest_buying_plan(catalog, rent_only, "highs")
    assert none is not None and none.status == "infeasible"


def test_a_split_problem_gets_a_first_plan_and_keeps_its_optimum(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """buy_vs_rent splits into two parts (the first quarter, the rest): it is handed a first plan from a
    restriction (planner.optimize.incumbent, as a one-part problem is; HiGHS 1.46 → 0.97-1.07 s), and the
    optimum is the one solved without it."""
    from planner.optimize import solver as solver_module
    from planner.optimize.incumbent import restricted_start as real

    found: list[int] = []

    def recording(ctx: BuildContext, **kwargs: Any) -> Any:
        start = real(ctx, **kwargs)
        found.append(0 if start is None else len(start))
        return start

    monkeypatch.setattr(solver_module, "restricted_start", recording)
    started = solve_context(_context(catalog, ["rent", "buy"]))
    assert len(found) == 1 and found[0] > 100
    monkeypatch.setattr(solver_module, "restricted_start", lambda ctx, **kwargs: None)
    bare = solve_context(_context(catalog, ["rent", "buy"]))
    assert started.status == bare.status == "optimal"
    assert started.cost_usd == pytest.approx(bare.cost_usd, rel=1e-9)
    assert started.cost_usd == pytest.approx(812_758.4377, abs=0.01)


def test_a_poor_first_plan_still_ends_at_the_optimum(catalog: Catalog) -> None:
    """A part handed a first plan runs without HiGHS's own plan searches (components.HEURISTICS_OFF_WITH_A_START):
    branch-and-bound alone must still reach the optimum from a plan 3 % above it. The start is buy_vs_rent's
    best plan that buys nothing (838,512.29 USD), handed to the same scenario allowed to buy."""
    from planner.optimize.solver import snapshot

    def no_buying(ctx: BuildContext) -> None:
        for v in ctx.variables["bought"].values():
            v.upBound = 0

    renting = _context(catalog, ["rent", "buy"])
    assert solve_context(renting, extra_rows=no_buying).cost_usd == pytest.approx(838_512.0, rel=1e-6)
    start = snapshot(renting)
    started, bare = _context(catalog, ["rent", "buy"]), _context(catalog, ["rent", "buy"])
    objectives = []
    for ctx, first in ((started, start), (bare, None)):
        build_problem(ctx)
        split = parts(ctx)
        assert split is not None and len(split) == 2
        assert solve_parts(ctx, split, time_limit_s=None, start=first).status == "optimal"
        objectives.append(objective_usd(ctx))
    assert objectives[0] == pytest.approx(objectives[1], rel=1e-6)
    assert objectives[0] == pytest.approx(812_758.44, abs=1.0)  # the hybrid optimum, 3.1 % below the start
    assert round(sum(v.varValue or 0.0 for v in started.variables["bought"].values())) >= 1


def test_the_parts_bound_counts_the_objective_constant(catalog: Catalog) -> None:
    """The parts' models leave the objective's constant out (components.highs_model); the bound of the whole
    adds it back, so it compares with the objective PuLP reads (which holds it)."""
    bounds, objectives = [], []
    for constant in (0.0, 1_000.0):
        ctx = _context(catalog, ["rent"])
        build_problem(ctx)
        ctx.prob.setObjective(ctx.prob.objective + constant)  # PuLP 4 ignores setting .constant
        split = parts(ctx)
        assert split is not None
        outcome = solve_parts(ctx, split, time_limit_s=None, max_nodes=1)
        bounds.append(outcome.bound)
        objectives.append(float(pulp.value(ctx.prob.objective)))
    assert bounds[1] - bounds[0] == pytest.approx(1_000.0, abs=1e-6)
    assert objectives[1] - objectives[0] == pytest.approx(1_000.0, abs=1e-6)
    assert bounds[1] <= objectives[1] * (1 + 1e-9)


def test_the_exact_solve_branches_with_its_reliability_setting(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every part of solve_context's exact solve runs with solver.EXACT_RELIABLE_BRANCHINGS as HiGHS's
    mip_pscost_minreliable (HiGHS's own default, 8, took 15-45 % more LP iterations on the 20-workload bench);
    a node-limited solve_parts without it keeps HiGHS's default."""
    import planner.optimize.components as components_module
    from planner.highs_threads import option_value
    from planner.optimize.solver import EXACT_RELIABLE_BRANCHINGS

    models: list[Any] = []
    real = components_module.solver_model

    def recording(*args: Any, **kwargs: Any) -> Any:
        model = real(*args, **kwargs)
        models.append(model)
        return model

    monkeypatch.setattr(components_module, "solver_model", recording)
    assert solve_context(_context(catalog, ["rent", "buy"])).status == "optimal"
    settings = {option_value(model.h, "mip_pscost_minreliable") for model in models}
    assert len(models) >= 2 and settings == {EXACT_RELIABLE_BRANCHINGS} and EXACT_RELIABLE_BRANCHINGS != 8
    models.clear()
    ctx = _context(catalog, ["rent"])
    build_problem(ctx)
    split = parts(ctx)
    assert split is not None
    solve_parts(ctx, split, time_limit_s=None, max_nodes=1)
    assert models and {option_value(model.h, "mip_pscost_minreliable") for model in models} == {8}
