"""GPU-type alternatives solved on the plan's built model (planner.optimize.restricted_model) are the rebuilt
restrictions: the same candidates, the same HiGHS model (rows, columns, bounds, costs, in order) and so the
same answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize import solve
from planner.optimize.alternatives import alternative
from planner.optimize.build import build_problem
from planner.optimize.components import columns, highs_model
from planner.optimize.restricted_model import PlanModel
from planner.problem.context import build_context
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def _triplets(lp: Any) -> list[tuple[int, int, float]]:
    """(row, column, value) of every nonzero of a HiGHS model, sorted."""
    m = lp.a_matrix_
    outer = np.repeat(np.arange(len(m.start_) - 1), np.diff(np.asarray(m.start_)))
    inner = np.asarray(m.index_)
    rowwise = str(m.format_).endswith("kRowwise")
    rows, cols = (outer, inner) if rowwise else (inner, outer)
    return sorted(zip(rows.tolist(), cols.tolist(), np.asarray(m.value_).tolist(), strict=True))


@pytest.mark.parametrize(("example", "least"), [("mixed_fleet", 3), ("chat_p99_redundant", 1)])
def test_restricted_model_is_the_rebuilt_restriction(catalog: Catalog, example: str, least: int) -> None:
    """mixed_fleet (PD pools, several sites) and chat_p99_redundant (redundancy rows, GPU floor; most of its
    restrictions are rebuilt: their spare-widened replica bounds differ): for every GPU type, and every site
    whose kept candidates are the plan's there, the plan's model restricted to it is, array for array, the
    HiGHS model of the restriction rebuilt from the table (a GPU type's candidates always are the plan's:
    dominance never compares across GPU types), and its answer has the status, cost and worst latencies of the
    alternative the serial loop computes (given the plan, as the loop is: a restriction the plan answers is the
    plan, not another plan of equal cost and other latencies); ``least`` restrictions at least are compared
    model to model."""
    scenario = load_scenario(ROOT / "examples" / example / "scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    sol, ctx = solve(build_context(catalog, scenario, table), "highs", None)
    model = PlanModel.of(ctx, sol, table)
    assert model is not None
    compared = 0
    for column in ("gpu", "site"):
        values = sorted({str(g) for g in table.feasible[column]})
        for value in values:
            rebuilt = build_context(catalog, scenario, table, exclude={column: set(values) - {value}})
            mine = list(ctx.cands.index[ctx.cands[column] == value])
            if column == "gpu":  # dominance never compares across GPU types
                assert list(rebuilt.cands.index) == mine
            elif list(rebuilt.cands.index) != mine:
                continue  # the plan pruned some of the site's candidates: alternatives rebuild it
            made = model.restriction(column, value)
            old, _ = alternative(catalog, scenario, table, "highs", column=column, value=value, main=(sol, ctx))
            if isinstance(made, tuple):
                build_problem(rebuilt)
                cols, index = columns(rebuilt)
                want = highs_model(rebuilt, cols, index, list(range(len(cols)))).getLp()
                got, _positions = made
                for field in ("col_cost_", "col_lower_", "col_upper_", "row_lower_", "row_upper_"):
                    assert np.array_equal(np.asarray(getattr(got, field)), np.asarray(getattr(want, field))), (
                        value, field,
                    )
                assert list(got.integrality_) == list(want.integrality_), value
                assert _triplets(got) == _triplets(want), value
                compared += 1
            outcome = model.solve(column, value, time_limit_s=None, max_nodes=2000)
            if outcome is None:
                continue
            assert outcome.status == old.status, value
            if old.total_cost_usd is None:
                assert outcome.cost_usd is None
            else:
                assert outcome.cost_usd == pytest.approx(old.total_cost_usd, rel=1e-9), value
                assert model.worst_latency_ms(outcome.used) == (old.max_tpot_ms, old.max_ttft_ms), value
    assert compared >= least


def test_plan_of_one_gpu_type_answers_its_alternative(catalog: Catalog) -> None:
    """small_models_shared's plan deploys one GPU type (L40S): that type's restriction is answered by the plan
    (no solve), at the plan's cost. (rag_prefix_cache's did until the ridge loss made an H200 replica part of
    it.)"""
    scenario = load_scenario(ROOT / "examples/small_models_shared/scenario.yaml", catalog)
    table = candidates_for(catalog, scenario)
    sol, ctx = solve(build_context(catalog, scenario, table), "highs", None)
    used = {str(ctx.cands.at[k, "gpu"]) for (k, _j, _t), n in sol.values["n_rep"].items() if n > 0}
    assert len(used) == 1
    model = PlanModel.of(ctx, sol, table)
    assert model is not None
    outcome = model.solve("gpu", used.pop(), time_limit_s=None, max_nodes=2000)
    assert outcome is not None and outcome.status == "optimal" and outcome.seconds == 0.0
    assert outcome.cost_usd == pytest.approx(sol.cost_usd, rel=1e-12)
