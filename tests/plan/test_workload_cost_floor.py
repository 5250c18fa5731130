"""The workload cost floor (constraints/workload_cost_floor.py) is a valid inequality that lifts the bound.

- brute force: on small instances (co-located candidates and a prefill/decode group, replica counts 0..4),
  the workload MILP's bound L is at most the weighted cost of every replica mix that serves the demand (so
  row (1) cuts off no plan), equals the cheapest such mix (it is that MILP's optimum), and exceeds the
  fractional bound min c / cap · D on many instances;
- oracle on a whole tiny model (three candidates, one with two points, rent units): every replica vector the
  other rows admit satisfies the row, which is tight at the cheapest (a bound 1 % too high fails it);
- the linear relaxation of examples/chat_70b_cloud rises from 123,728 to 132,970 USD with the rows, and stays
  below the optimum.
"""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import highspy
import numpy as np
import pytest

import constraints.workload_cost_floor as floor
import planner.optimize.build as build
from constraints import FAMILIES
from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize.components import columns, highs_model
from planner.optimize.solver import solve_context
from planner.problem.context import build_context
from planner.scenario import load_scenario
from tests.plan.helpers import relaxation_usd, scenario, table

MAX_REPLICAS = 4


def _servable(co: list[tuple[float, float]], pre: list[tuple[float, float]], dec: list[tuple[float, float]], n: tuple[int, ...]) -> float:
    """Most req/s the replica counts ``n`` (co-located, then prefill, then decode) serve."""
    caps = [c for _, c in co + pre + dec]
    served = [cap * k for cap, k in zip(caps, n, strict=True)]
    a, b = len(co), len(co) + len(pre)
    return sum(served[:a]) + min(sum(served[a:b]), sum(served[b:]))


def _bound(co: list[tuple[float, float]], pre: list[tuple[float, float]], dec: list[tuple[float, float]], demand: float) -> float:
    pairs = co + pre + dec
    ids = list(range(len(pairs)))
    a, b = len(co), len(co) + len(pre)
    groups = [(ids[a:b], ids[b:])] if pre or dec else []
    bound, _plan = floor.workload_milp(
        [c for c, _ in pairs], [cap for _, cap in pairs], [float(MAX_REPLICAS)] * len(pairs), ids, ids, ids[:a], groups,
        demand,
    )
    return bound


@pytest.mark.parametrize("seed", range(30))
def test_no_serving_replica_mix_is_cut_off(seed: int) -> None:
    rng = random.Random(seed)
    co = [(rng.choice((1, 2, 4, 8)) * rng.uniform(0.5, 2.0), rng.uniform(0.5, 12.0)) for _ in range(rng.randint(0, 2))]
    pd = rng.random() < 0.5 or not co
    pre = [(rng.uniform(1.0, 8.0), rng.uniform(1.0, 12.0))] if pd else []
    dec = [(rng.uniform(1.0, 8.0), rng.uniform(1.0, 20.0))] if pd else []
    pairs = co + pre + dec
    lifted = served = 0
    for demand in (rng.uniform(0.1, 30.0) for _ in range(5)):
        bound = _bound(co, pre, dec, demand)
        costs = [
            sum(c * k for (c, _), k in zip(pairs, n, strict=True))
            for n in itertools.product(range(MAX_REPLICAS + 1), repeat=len(pairs))
            if _servable(co, pre, dec, n) >= demand
        ]
        if not costs:
            assert bound == math.inf  # no plan at all: the workload MILP says so
            continue
        cheapest = min(costs)
        served += 1
        assert bound <= cheapest * (1 + 1e-9), (co, pre, dec, demand)  # (1) holds for every plan
        assert bound == pytest.approx(cheapest, rel=1e-5)  # and is the cheapest one
        colocated = min((c / cap for c, cap in co), default=math.inf)
        pd_pair = sum(min(c / cap for c, cap in pool) for pool in (pre, dec)) if pre and dec else math.inf
        lifted += bound > demand * min(colocated, pd_pair) * (1 + 1e-6)
    assert lifted >= 1 or not served, (co, pre, dec)  # whole replicas add something over the fractional bound


def test_bound_of_a_worked_example() -> None:
    # 11 req/s from replicas of (cost 2, 5 req/s) or (cost 3, 8 req/s): fractional 11 · 0.375 = 4.125;
    # whole replicas: 5 + 8 = 13 req/s for 5, or 2 × 8 for 6, or 3 × 5 for 6 -> 5
    assert _bound([(2.0, 5.0), (3.0, 8.0)], [], [], 11.0) == pytest.approx(5.0, rel=1e-6)
    # a prefill pool without a decode partner serves nothing: no plan
    assert _bound([], [(1.0, 5.0)], [], 3.0) == math.inf


def _lp_bound_usd(catalog: Catalog, with_rows: bool, monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(floor, "MIN_REPLICA_COLUMNS", 0)
    return relaxation_usd(catalog, "chat_70b_cloud", leave_out=None if with_rows else "workload_cost_floor")


def test_rows_lift_the_relaxation_of_chat_70b_cloud(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    without = _lp_bound_usd(catalog, False, monkeypatch)
    with_rows = _lp_bound_usd(catalog, True, monkeypatch)
    assert without == pytest.approx(123_728.2, rel=1e-4)
    assert with_rows == pytest.approx(132_969.7, rel=1e-4)
    scenario = load_scenario(Path("examples/chat_70b_cloud/scenario.yaml"), catalog)
    sol = solve_context(build_context(catalog, scenario, candidates_for(catalog, scenario)))
    assert sol.status == "optimal"
    assert with_rows <= sol.objective_usd  # still a bound on the optimum (the rows cut off no plan)


@pytest.mark.parametrize("demand", [3.0, 7.0, 11.5])
def test_no_plan_of_a_tiny_model_is_cut_off(catalog: Catalog, monkeypatch: pytest.MonkeyPatch, demand: float) -> None:
    """Oracle on the whole model: every replica vector the other rows admit (found by fixing it and solving
    the rest) satisfies the rows, and the rows are tight at the cheapest of them."""
    monkeypatch.setattr(floor, "MIN_REPLICA_COLUMNS", 0)
    scen = scenario(requests_per_s=demand)
    cands = [{"gpu": "l4", "cap": 2.0}, {"gpu": "l4", "tp": 2, "cap": 5.0}, {"gpu": "h100_sxm", "cap": 9.0}]
    points = [{"cand": 0, "cap": 2.0}, {"cand": 1, "cap": 5.0}, {"cand": 1, "cap": 3.0, "batch": 4}, {"cand": 2, "cap": 9.0}]
    with_rows = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    build.build_problem(with_rows)
    rows = [c for name, c in with_rows.row_constraints.items() if with_rows.rows[name][0] == "workload_cost_floor"]
    assert len(rows) == 1
    (row,) = rows
    monkeypatch.setattr(build, "FAMILIES", tuple(f for f in FAMILIES if f.name != "workload_cost_floor"))
    ctx = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    build.build_problem(ctx)
    cols, index = columns(ctx)
    h = highs_model(ctx, cols, index, list(range(len(cols))))
    keys = sorted(ctx.variables["n_rep"])
    at = np.array([index[ctx.variables["n_rep"][key].name] for key in keys], dtype=np.int32)
    admitted = 0
    slack = math.inf
    for n in itertools.product(*(range(int(ctx.variables["n_rep"][key].upBound) + 1) for key in keys)):
        h.changeColsBounds(len(at), at, np.array(n, dtype=float), np.array(n, dtype=float))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            continue
        admitted += 1
        for key, count in zip(keys, n, strict=True):
            with_rows.variables["n_rep"][key].varValue = count
        lhs = float(row.value())  # Σ c · n − L, the row written as expr >= 0
        assert lhs >= -1e-6 * max(1.0, abs(float(row.constant))), (n, lhs)
        slack = min(slack, lhs)
    assert admitted > 1
    assert slack == pytest.approx(0.0, abs=1e-3 * abs(float(row.constant)))  # tight at the cheapest plan


def test_building_the_rows_prints_nothing_on_stdout() -> None:
    """The rows' MILPs run HiGHS while the problem is built: its banner ("Running HiGHS ...", printed on
    fd 1 once per process) must not reach stdout, where `planner plan --json` writes the plan."""
    import subprocess
    import sys

    code = (
        "import constraints.workload_cost_floor as floor\n"
        "from planner.catalog import default_catalog\n"
        "from planner.candidate_cache import candidates_for\n"
        "from planner.optimize.build import build_problem\n"
        "from planner.problem.context import build_context\n"
        "from planner.scenario import load_scenario\n"
        "floor.MIN_REPLICA_COLUMNS = 0\n"
        "cat = default_catalog()\n"
        "sc = load_scenario('examples/chat_70b_cloud/scenario.yaml', cat)\n"
        "ctx = build_context(cat, sc, candidates_for(cat, sc))\n"
        "build_problem(ctx)\n"
        "import sys; print(sum(f == 'workload_cost_floor' for f, _key in ctx.rows.values()), file=sys.stderr)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stderr.strip().splitlines()[-1]) > 0  # the rows were built (HiGHS ran)
    assert done.stdout == ""
