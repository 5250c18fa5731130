"""The served load of a plan is spread over its deployments by capacity (planner.optimize.balanced_flows):
every deployment of a workload at the same utilization where no row forbids it, nothing the plan pays
for changed, and the split independent of the vertex the MILP ended at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import planner.plan as plan_module
from planner.catalog import default_catalog
from planner.plan import plan
from planner.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _plan(name: str, *, balanced: bool = True, monkeypatch: pytest.MonkeyPatch | None = None) -> Any:
    catalog = default_catalog()
    if not balanced:
        assert monkeypatch is not None
        monkeypatch.setattr(plan_module, "balanced_flows", lambda ctx, sol: sol)
    return plan(catalog, load_scenario(EXAMPLES / name / "scenario.yaml", catalog), with_alternatives=False)


def _utilizations(result: Any, period: int) -> list[float]:
    """served / capacity of each deployment serving in ``period`` (its replicas there at its point)."""
    out = []
    for d in result.deployments:
        replicas = d.replicas_per_period[period]
        if replicas:
            out.append(d.served_requests_per_s_per_period[period] / (replicas * d.capacity_per_replica_requests_per_s))
    return out


def test_two_deployments_of_one_workload_run_at_the_same_utilization() -> None:
    # chat_70b_cloud: 8 req/s on one B200 (6.71 req/s at the SLO) and one INT4 H100 (1.71): both at 8 / 8.42 = 95 %
    result = _plan("chat_70b_cloud")
    caps = sorted(d.capacity_per_replica_requests_per_s for d in result.deployments)
    assert caps == pytest.approx([1.7117, 6.7084], abs=1e-4)
    for period in range(len(result.deployments[0].replicas_per_period)):
        assert _utilizations(result, period) == pytest.approx([8.0 / sum(caps)] * 2, rel=1e-5)  # QP tolerance
    served = sum(d.served_requests_per_s_per_period[0] for d in result.deployments)
    assert served == pytest.approx(8.0, rel=1e-9)


def test_the_milp_vertex_left_one_deployment_at_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    # what the balancing replaces: the MILP's flows put the H100 at its full capacity, the B200 below it
    result = _plan("chat_70b_cloud", balanced=False, monkeypatch=monkeypatch)
    assert sorted(_utilizations(result, 0)) == pytest.approx([6.2883 / 6.7084, 1.0], abs=1e-4)


def test_a_redundant_spare_shares_the_load() -> None:
    # chat_p99_redundant holds one replica beyond the demand for a failure; the MILP left it idle (0 req/s)
    result = _plan("chat_p99_redundant")
    assert all(d.served_requests_per_s_per_period[0] > 0 for d in result.deployments)
    assert sum(d.served_requests_per_s_per_period[0] for d in result.deployments) == pytest.approx(8.0, rel=1e-9)
    assert max(_utilizations(result, 0)) < 1.0


@pytest.mark.parametrize("name", ["buy_vs_rent", "mixed_fleet", "long_context_rag"])
def test_nothing_paid_for_changes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    balanced = _plan(name)
    with monkeypatch.context() as m:
        vertex = _plan(name, balanced=False, monkeypatch=m)
    assert balanced.total_cost_usd == pytest.approx(vertex.total_cost_usd, rel=1e-12)
    assert [(d.gpu, d.site, d.replicas_per_period) for d in balanced.deployments] == [
        (d.gpu, d.site, d.replicas_per_period) for d in vertex.deployments
    ]
    for period in range(len(balanced.deployments[0].replicas_per_period)):
        for workload in {d.workload for d in balanced.deployments}:
            total = [sum(d.served_requests_per_s_per_period[period] for d in r.deployments if d.workload == workload)
                     for r in (balanced, vertex)]
            assert total[0] == pytest.approx(total[1], rel=1e-9)


def test_buy_vs_rent_serves_every_quarter_at_one_utilization() -> None:
    # buy_vs_rent: H100 TP2 replicas bought at dc1 and rented in us_east, one model and point: one utilization
    result = _plan("buy_vs_rent")
    for period in range(1, len(result.deployments[0].replicas_per_period)):
        used = _utilizations(result, period)
        assert max(used) - min(used) < 1e-5, (period, used)  # QP tolerance
