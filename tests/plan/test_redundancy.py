"""Redundancy (constraints/redundancy.py): the SLO holds with replicas, a node or a site down; cost rises only
where the rule binds. Tiny synthetic tables (planner/tests helpers) and a brute-force oracle."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from planner.catalog import Catalog
from planner.optimize.solver import solve_context
from planner.problem.context import build_context
from planner.scenario_base import Redundancy
from tests.plan.helpers import scenario, table


def _with_rule(requests_per_s: float, rule: dict[str, Any] | None, **extra: Any) -> Any:
    # whole-node rent (hyperstack): the node arithmetic of these cases assumes 8-GPU units
    scen = scenario(requests_per_s=requests_per_s, **{"rent_providers": ["hyperstack"], **extra})
    if rule is None:
        return scen
    w = scen.workloads[0]
    return scen.model_copy(update={"workloads": [w.model_copy(update={"redundancy": Redundancy(**rule)})]})


def _solve(catalog: Catalog, scen: Any, cands: list[dict[str, Any]]) -> tuple[Any, Any]:
    points = [{"cand": i, "cap": c["cap"]} for i, c in enumerate(cands)]
    ctx = build_context(catalog, scen, table(catalog, scen, cands, points), prune=False)
    return ctx, solve_context(ctx)


def _replicas(sol: Any) -> dict[int, int]:
    out: dict[int, int] = {}
    for (k, _j, _t), v in sol.values["n_rep"].items():
        out[k] = out.get(k, 0) + round(v)
    return out


def test_one_spare_replica_on_a_one_replica_plan_doubles_it(catalog: Catalog) -> None:
    cands = [{"gpu": "h100_sxm", "tp": 8, "cap": 1.0}]  # one replica = one whole node
    _, bare = _solve(catalog, _with_rule(0.8, None), cands)
    ctx, spare = _solve(catalog, _with_rule(0.8, {"spare_replicas": 1}), cands)
    assert _replicas(bare) == {0: 1} and _replicas(spare) == {0: 2}
    assert spare.costs_usd["rent"] == pytest.approx(2 * bare.costs_usd["rent"])
    assert [n for n in ctx.rows if n.startswith("redundancy")]


def test_a_loose_rule_costs_nothing_and_zero_spares_add_no_row(catalog: Catalog) -> None:
    """TP1 on an 8-GPU node: 3 replicas fill 3 of the node's 8 GPUs, so a 4th replica is free."""
    cands = [{"gpu": "h100_sxm", "tp": 1, "cap": 1.0}]
    _, bare = _solve(catalog, _with_rule(3.0, None), cands)
    _, loose = _solve(catalog, _with_rule(3.0, {"spare_replicas": 1}), cands)
    zero_ctx, zero = _solve(catalog, _with_rule(3.0, {"spare_replicas": 0}), cands)
    assert loose.costs_usd["rent"] == pytest.approx(bare.costs_usd["rent"])
    assert _replicas(loose)[0] >= 4
    assert not [n for n in zero_ctx.rows if n.startswith("redundancy")]
    assert zero.costs_usd["rent"] == pytest.approx(bare.costs_usd["rent"])


def test_node_domain_loses_every_replica_on_the_node(catalog: Catalog) -> None:
    """TP1 on 8-GPU nodes: a node down takes 8 replicas, so 3 req/s needs 3 + 8 replicas (two nodes)."""
    cands = [{"gpu": "h100_sxm", "tp": 1, "cap": 1.0}]
    _, bare = _solve(catalog, _with_rule(3.0, None), cands)
    _, node = _solve(catalog, _with_rule(3.0, {"spare_replicas": 1, "failure_domain": "node"}), cands)
    assert _replicas(node)[0] >= 11
    assert node.costs_usd["rent"] == pytest.approx(2 * bare.costs_usd["rent"])


def test_site_domain_covers_the_demand_without_either_site(catalog: Catalog) -> None:
    extra = {"sites": [{"name": "us_east"}, {"name": "us_west"}]}
    scen_sites = ["us_east", "us_west"]
    cands = [
        {"gpu": "h100_sxm", "tp": 8, "cap": 1.0, "site": "us_east"},
        {"gpu": "h100_sxm", "tp": 8, "cap": 1.0, "site": "us_west"},
    ]

    def run(rule: dict[str, Any] | None) -> Any:
        scen = _with_rule(3.0, rule, **extra)
        w = scen.workloads[0].model_copy(update={"sites": scen_sites})
        return _solve(catalog, scen.model_copy(update={"workloads": [w]}), cands)[1]

    bare, site = run(None), run({"spare_replicas": 1, "failure_domain": "site"})
    assert sum(_replicas(bare).values()) == 3
    assert _replicas(site) == {0: 3, 1: 3}


@pytest.mark.parametrize(("demand", "spare"), [(2.5, 1), (3.2, 1), (4.0, 2), (1.2, 2)])
def test_replica_domain_matches_a_brute_force_oracle(catalog: Catalog, demand: float, spare: int) -> None:
    """Two whole-node deployments (H100 TP8 at 1.6 req/s, A100 TP8 at 1.0 req/s): the cheapest replica
    counts with Σ cap·n ≥ D and Σ cap·n − r·(largest cap in use) ≥ D, enumerated."""
    cands = [{"gpu": "h100_sxm", "tp": 8, "cap": 1.6}, {"gpu": "a100_sxm_80gb", "tp": 8, "cap": 1.0}]
    ctx, sol = _solve(catalog, _with_rule(demand, {"spare_replicas": spare}, rent_providers=None), cands)
    price = {}
    for opt in ctx.supply:  # a TP8 replica holds 8 GPUs: a whole node, or 8 cards billed per card
        per_replica = opt.usd_per_unit_month * 8 / opt.unit_gpus
        price[opt.gpu] = min(price.get(opt.gpu, float("inf")), per_replica)
    caps = [1.6, 1.0]
    unit = [price["h100_sxm"], price["a100_sxm_80gb"]]
    best = min(
        n[0] * unit[0] + n[1] * unit[1]
        for n in itertools.product(range(12), repeat=2)
        if sum(c * m for c, m in zip(caps, n, strict=True)) - spare * max([c for c, m in zip(caps, n, strict=True) if m] or [0.0])
        >= demand - 1e-9
    )
    assert sol.status == "optimal"
    assert sol.costs_usd["rent"] == pytest.approx(best, rel=1e-6)
