"""The loss rows of the redundancy rule that are valid inequalities (constraints/redundancy.py (5) and (6):
the least loss of any unit, and the loss weighted by where the demand flows; planner.problem.spare):

- on tiny instances they cut off no integer replica vector (brute force: every vector within the data
  bounds is feasible with the rows exactly when it is without them);
- they lift the linear relaxation's bound where one failure takes out a whole node of replicas, (6) beyond
  (5), and leave the optimum as it was.
"""

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
from planner.problem.spare import least_lost_requests_per_s, lost_per_served_request
from planner.scenario_base import Redundancy
from tests.plan.helpers import scenario, table

ROWS = {"least_lost": "least_lost_requests_per_s", "lost_by_flow": "lost_per_served_request"}
"""Row key → the function of constraints.redundancy whose answer adds it (patched to add none)."""


def _built(
    catalog: Catalog, demand: float, rule: dict[str, Any], cands: list[dict[str, Any]], *, rows: set[str]
) -> BuildContext:
    """The built problem with only the valid rows ``rows`` (the others left out by the rule's own code path
    answering 0 / nothing, which adds no row)."""
    scen = scenario(requests_per_s=demand, rent_providers=["hyperstack"])
    w = scen.workloads[0].model_copy(update={"redundancy": Redundancy(**rule)})
    scen = scen.model_copy(update={"workloads": [w]})
    points = [{"cand": i, "cap": c["cap"]} for i, c in enumerate(cands)]
    ctx = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    with pytest.MonkeyPatch.context() as patch:
        for key, name in ROWS.items():
            if key not in rows:
                patch.setattr(redundancy, name, (lambda *_: 0.0) if key == "least_lost" else (lambda *_: {}))
        build_problem(ctx)
    added = {key[1] for fam, key in ctx.rows.values() if fam == "redundancy" and key[1] in ROWS}
    assert added == rows
    return ctx


def _feasible(ctx: BuildContext) -> bool:
    _status, has, _ = solve_status(ctx.prob, make_solver("highs", time_limit_s=None))
    return has


CASES = [
    ("node", 3.0, [{"gpu": "h100_sxm", "tp": 1, "cap": 1.0}, {"gpu": "h100_sxm", "tp": 8, "cap": 5.0}]),
    ("node", 6.5, [{"gpu": "h100_sxm", "tp": 2, "cap": 1.5}, {"gpu": "a100_sxm_80gb", "tp": 4, "cap": 2.0}]),
    ("replica", 2.5, [{"gpu": "h100_sxm", "tp": 8, "cap": 1.6}, {"gpu": "a100_sxm_80gb", "tp": 8, "cap": 1.0}]),
]


@pytest.mark.parametrize(("domain", "demand", "cands"), CASES)
def test_loss_rows_cut_off_no_integer_replica_vector(
    catalog: Catalog, domain: str, demand: float, cands: list[dict[str, Any]]
) -> None:
    rule = {"spare_replicas": 1, "failure_domain": domain}
    with_rows = _built(catalog, demand, rule, cands, rows=set(ROWS))
    without = _built(catalog, demand, rule, cands, rows=set())
    t = with_rows.periods[0]
    bound = {k: int(with_rows.variables["n_rep"][(k, k, t)].upBound) for k in range(len(cands))}
    agree, feasible = 0, 0
    for counts in itertools.product(range(bound[0] + 1), range(bound[1] + 1)):  # every vector within the data bounds
        for ctx in (with_rows, without):
            for k, n in enumerate(counts):
                var = ctx.variables["n_rep"][(k, k, t)]
                var.lowBound = var.upBound = n
        a, b = _feasible(with_rows), _feasible(without)
        assert a == b, counts
        agree += 1
        feasible += a
    assert agree == (bound[0] + 1) * (bound[1] + 1) and 0 < feasible < agree  # both kinds of vector occur


def _relaxation_usd(ctx: BuildContext) -> float:
    for v in ctx.prob.variables():
        v.cat = pulp.LpContinuous
    assert _feasible(ctx)
    return objective_usd(ctx)


def test_loss_rows_lift_the_relaxation_bound_and_keep_the_optimum(catalog: Catalog) -> None:
    """3 req/s on H100 TP1 (1 req/s; one node down removes 8 replicas: 8 req/s) or TP8 (5 req/s, a node):
    any plan loses at least 5 req/s to a node failure, and a plan that routes its demand to TP1 loses 8;
    the relaxation's replica indicators (n/U) miss both."""
    cands = [{"gpu": "h100_sxm", "tp": 1, "cap": 1.0}, {"gpu": "h100_sxm", "tp": 8, "cap": 5.0}]
    rule = {"spare_replicas": 1, "failure_domain": "node"}
    variants = [set(), {"least_lost"}, set(ROWS)]
    built = [_built(catalog, 3.0, rule, cands, rows=rows) for rows in variants]
    t = built[0].periods[0]
    assert least_lost_requests_per_s(built[0], "w", t) == pytest.approx(5.0)
    assert lost_per_served_request(built[0], "w", t) == pytest.approx({0: 8.0 / 3.0, 1: 5.0 / 3.0})
    optima = []
    for ctx in built:
        assert _feasible(ctx)
        optima.append(objective_usd(ctx))
    assert optima[1] == pytest.approx(optima[0], rel=1e-6) and optima[2] == pytest.approx(optima[0], rel=1e-6)  # the gap
    bare, least, both = (_relaxation_usd(ctx) for ctx in built)
    assert least > 1.5 * bare
    assert both > least * (1 + 1e-6)
    assert both <= min(optima) * (1 + 1e-6)
