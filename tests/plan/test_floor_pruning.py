"""Replica columns held at zero by the first plan's cost (planner.optimize.floor_pruning) cut off no plan
that costs as little:

- brute force: on small random workloads (co-located points and a prefill/decode group, 0-4 replicas each),
  every point's bound B is at most the cheapest weighted cost of a replica mix that serves the demand with
  one of its replicas, and equals it on some;
- oracle: on examples with the workload cost floors built (their size threshold lifted) and a first plan 3 %
  above the optimum, each checked held column forced to one replica makes every plan cost more than that;
- the exact solve with the held columns has the optimum found without them;
- nothing is held where a purchase or a volume discount may cost less than the floors' prices, nor without
  floor rows.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

import constraints.workload_cost_floor as floor
from planner.candidate_cache import candidates_for
from planner.catalog import Catalog
from planner.optimize import solver as solver_module
from planner.optimize.floor_pruning import held_at_zero, replica_bounds
from planner.optimize.solver import objective_usd, snapshot, solve_context
from planner.problem.context import BuildContext, build_context
from planner.scenario import load_scenario

HELD_EXAMPLES = ("mixed_fleet", "small_models_shared", "chat_70b_cloud")
FIRST_PLAN_ABOVE = 1.03
"""The first plan's cost as a multiple of the optimum in the oracle: columns some plan between the two
uses must not be held."""
CHECKED = 8
"""Held columns forced in per example (a solve each)."""


MAX_REPLICAS = 4


def _servable(co: int, pre: int, caps: list[float], n: tuple[int, ...]) -> float:
    """Req/s served by replica counts ``n`` of ``co`` co-located points, ``pre`` prefill points, then decode."""
    served = [cap * k for cap, k in zip(caps, n, strict=True)]
    return sum(served[:co]) + min(sum(served[co : co + pre]), sum(served[co + pre :]))


def test_no_replica_mix_costs_less_than_its_points_bound() -> None:
    tight = above_floor = 0
    for seed in range(60):
        rng = random.Random(seed)
        co = [(rng.choice((0.5, 1, 2, 4)) * rng.uniform(0.5, 2.0), rng.uniform(0.5, 12.0)) for _ in range(rng.randint(1, 3))]
        pre = [(rng.uniform(0.5, 8.0), rng.uniform(1.0, 12.0)) for _ in range(rng.randint(0, 2))]
        dec = [(rng.uniform(0.5, 8.0), rng.uniform(1.0, 20.0)) for _ in range(rng.randint(1, 2) if pre else 0)]
        points = co + pre + dec
        cost, caps = [c for c, _ in points], [cap for _, cap in points]
        least_pre, least_dec = (min((c for c, _ in pool), default=0.0) for pool in (pre, dec))
        other: list[float | None] = [None] * len(co) + [least_dec] * len(pre) + [least_pre] * len(dec)
        demand = rng.uniform(0.2, 25.0)
        mixes = [
            (sum(c * k for c, k in zip(cost, n, strict=True)), n)
            for n in itertools.product(range(MAX_REPLICAS + 1), repeat=len(points))
            if _servable(len(co), len(pre), caps, n) >= demand
        ]
        if not mixes:
            continue
        floor = min(total for total, _n in mixes)
        for i, bound in enumerate(replica_bounds(cost, caps, other, demand, floor)):
            forced = min((total for total, n in mixes if n[i] >= 1), default=None)
            if forced is None:
                continue
            assert bound <= forced * (1 + 1e-9), (seed, i, points, demand)
            tight += bound >= forced * (1 - 1e-9)
            above_floor += bound > floor * (1 + 1e-9)
    assert tight >= 10 and above_floor >= 10  # the bounds are exact on some points and say more than L on others


def _context(catalog: Catalog, example: str, **update: object) -> BuildContext:
    scenario = load_scenario(Path(f"examples/{example}/scenario.yaml"), catalog)
    if update:
        scenario = scenario.model_copy(update=update)
    return build_context(catalog, scenario, candidates_for(catalog, scenario))


@pytest.fixture
def floors_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workload cost floors built on every problem (examples are below their size threshold)."""
    monkeypatch.setattr(floor, "MIN_REPLICA_COLUMNS", 0)


def _optimum(catalog: Catalog, example: str) -> tuple[BuildContext, float]:
    ctx = _context(catalog, example)
    assert solve_context(ctx).status == "optimal"
    return ctx, objective_usd(ctx)


@pytest.mark.parametrize("example", HELD_EXAMPLES)
@pytest.mark.usefixtures("floors_everywhere")
def test_a_held_column_forced_in_costs_more_than_the_first_plan(catalog: Catalog, example: str) -> None:
    ctx, best = _optimum(catalog, example)
    assert any(family == "workload_cost_floor" for family, _key in ctx.rows.values())
    first_plan_usd = best * FIRST_PLAN_ABOVE
    held = held_at_zero(ctx, first_plan_usd)
    assert held, "the floors hold some column at the first plan's cost"
    assert not held & {name for name, value in snapshot(ctx).items() if value > 0.5 and name.startswith("n_rep")}
    by_name = {v.name: key for key, v in ctx.variables["n_rep"].items()}
    # the cheapest held replicas first: the plans forcing them in cost least
    cheapest = sorted(held, key=lambda n: (_weight(ctx, by_name[n]), n))[:CHECKED]
    for name in cheapest:
        key = by_name[name]

        def forced(built: BuildContext, key: tuple[int, int, int] = key) -> None:
            built.variables["n_rep"][key].lowBound = 1

        again = _context(catalog, example)
        sol = solve_context(again, extra_rows=forced)
        assert sol.status == "infeasible" or objective_usd(again) > first_plan_usd, name


def _weight(ctx: BuildContext, key: tuple[int, int, int]) -> float:
    """The floor-row weight c of the replica column ``key`` (0 off the rows)."""
    for name, (family, _key) in ctx.rows.items():
        if family == "workload_cost_floor":
            for v, c in ctx.row_constraints[name].items():
                if v is ctx.variables["n_rep"][key]:
                    return float(c)
    return 0.0


@pytest.mark.parametrize("example", HELD_EXAMPLES)
@pytest.mark.usefixtures("floors_everywhere")
def test_the_exact_solve_keeps_its_optimum_with_columns_held(
    catalog: Catalog, example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The solve handed the optimum as its first plan holds columns and still ends at that cost."""
    solved, best = _optimum(catalog, example)
    first = {(f, k): float(v.varValue or 0.0) for f, t in solved.variables.items() for k, v in t.items()}
    counted: list[int] = []

    def recording(ctx: BuildContext, first_plan_usd: float) -> set[str]:
        held = held_at_zero(ctx, first_plan_usd)
        counted.append(len(held))
        return held

    monkeypatch.setattr(solver_module, "held_at_zero", recording)
    again = _context(catalog, example)
    sol = solve_context(again, warm_start=first)
    assert counted and counted[0] > 0
    assert sol.status == "optimal"
    assert objective_usd(again) == pytest.approx(best, rel=1e-6)


@pytest.mark.usefixtures("floors_everywhere")
def test_nothing_is_held_where_buying_may_cost_less_than_the_floors(catalog: Catalog) -> None:
    ctx, best = _optimum(catalog, "buy_vs_rent")
    assert any(family == "workload_cost_floor" for family, _key in ctx.rows.values())
    assert held_at_zero(ctx, best) == set()


def test_nothing_is_held_without_floor_rows(catalog: Catalog) -> None:
    ctx, best = _optimum(catalog, "mixed_fleet")  # below the floors' size threshold
    assert not any(family == "workload_cost_floor" for family, _key in ctx.rows.values())
    assert held_at_zero(ctx, best) == set()
