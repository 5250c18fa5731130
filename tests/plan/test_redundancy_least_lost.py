"""The least-loss row of the redundancy rule (constraints/redundancy.py (5), planner.problem.spare
.least_lost_requests_per_s) is a valid inequality: on tiny instances it cuts off no integer replica vector
(brute force: every vector in a box is feasible with the row exactly when it is without it), and it lifts
the linear relaxation's bound where one failure takes out a whole node of replicas."""

from __future__ import annotations

import itertools
from typing import Any

import pulp
import pytest

from constraints import redundancy
from planner.catalog import Catalog
from planner.optimize.build import build_problem
from planner.optimize.solver import make_solver, objective_usd, solve_status
from planner.problem.context import BuildContext, build_context
from planner.problem.spare import least_lost_requests_per_s
from planner.scenario_base import Redundancy
from tests.plan.helpers import scenario, table


def _built(catalog: Catalog, demand: float, rule: dict[str, Any], cands: list[dict[str, Any]], *, row: bool) -> BuildContext:
    """The built problem, with or without the least-loss row (built without it by the rule's own code path
    with a least loss of 0, which adds no row)."""
    scen = scenario(requests_per_s=demand, rent_providers=["hyperstack"])
    w = scen.workloads[0].model_copy(update={"redundancy": Redundancy(**rule)})
    scen = scen.model_copy(update={"workloads": [w]})
    points = [{"cand": i, "cap": c["cap"]} for i, c in enumerate(cands)]
    ctx = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    with pytest.MonkeyPatch.context() as patch:
        if not row:
            patch.setattr(redundancy, "least_lost_requests_per_s", lambda *_: 0.0)
        build_problem(ctx)
    names = [n for n, (fam, key) in ctx.rows.items() if fam == "redundancy" and key[1] == "least_lost"]
    assert bool(names) == row
    return ctx


def _feasible(ctx: BuildContext) -> bool:
    status, has, _ = solve_status(ctx.prob, make_solver("highs", time_limit_s=None))
    return has


CASES = [
    ("node", 3.0, [{"gpu": "h100_sxm", "tp": 1, "cap": 1.0}, {"gpu": "h100_sxm", "tp": 8, "cap": 5.0}]),
    ("node", 6.5, [{"gpu": "h100_sxm", "tp": 2, "cap": 1.5}, {"gpu": "a100_sxm_80gb", "tp": 4, "cap": 2.0}]),
    ("replica", 2.5, [{"gpu": "h100_sxm", "tp": 8, "cap": 1.6}, {"gpu": "a100_sxm_80gb", "tp": 8, "cap": 1.0}]),
]


@pytest.mark.parametrize(("domain", "demand", "cands"), CASES)
def test_least_loss_row_cuts_off_no_integer_replica_vector(
    catalog: Catalog, domain: str, demand: float, cands: list[dict[str, Any]]
) -> None:
    rule = {"spare_replicas": 1, "failure_domain": domain}
    with_row, without = (_built(catalog, demand, rule, cands, row=r) for r in (True, False))
    t = with_row.periods[0]
    bound = {k: int(with_row.variables["n_rep"][(k, k, t)].upBound) for k in range(len(cands))}
    agree, feasible = 0, 0
    for counts in itertools.product(range(bound[0] + 1), range(bound[1] + 1)):  # every vector within the data bounds
        for ctx in (with_row, without):
            for k, n in enumerate(counts):
                var = ctx.variables["n_rep"][(k, k, t)]
                var.lowBound = var.upBound = n
        a, b = _feasible(with_row), _feasible(without)
        assert a == b, counts
        agree += 1
        feasible += a
    assert agree == (bound[0] + 1) * (bound[1] + 1) and 0 < feasible < agree  # both kinds of vector occur


def test_least_loss_row_lifts_the_relaxation_bound_and_keeps_the_optimum(catalog: Catalog) -> None:
    """3 req/s on H100 TP1 (1 req/s; one node down removes 8 replicas: 8 req/s) or TP8 (5 req/s, a node):
    any plan loses at least 5 req/s to a node failure, which the relaxation (replica indicators n/U) misses."""
    cands = [{"gpu": "h100_sxm", "tp": 1, "cap": 1.0}, {"gpu": "h100_sxm", "tp": 8, "cap": 5.0}]
    rule = {"spare_replicas": 1, "failure_domain": "node"}
    with_row, without = (_built(catalog, 3.0, rule, cands, row=r) for r in (True, False))
    assert least_lost_requests_per_s(with_row, "w", with_row.periods[0]) == pytest.approx(5.0)
    optima = [(_feasible(ctx), objective_usd(ctx))[1] for ctx in (with_row, without)]
    assert optima[0] == pytest.approx(optima[1], rel=1e-9)
    bounds = []
    for ctx in (with_row, without):
        for v in ctx.prob.variables():
            v.cat = pulp.LpContinuous
        assert _feasible(ctx)
        bounds.append(objective_usd(ctx))
    assert bounds[0] > 1.5 * bounds[1]
    assert bounds[0] <= optima[0] * (1 + 1e-9)
