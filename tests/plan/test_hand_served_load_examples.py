"""Hand checks of the served-load split on the bundled examples: the demand each period is computed here
from the scenario's own figures (rate, monthly growth, period length), the split from the deployments'
capacities, and the budget's served scale from the served total."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import planner.plan as plan_module
from planner.catalog import Catalog
from planner.plan import plan
from planner.readout.result import PlanResult
from planner.scenario import load_scenario, parse_scenario
from tests.plan.test_hand_served_load import QP_TOL, _check_split, _json, _paid, _reproduces, two_sites

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(catalog: Catalog, name: str) -> PlanResult:
    return plan(catalog, load_scenario(EXAMPLES / name / "scenario.yaml", catalog), with_alternatives=False)


def _utilization(d: Any, t: int) -> float:
    return float(d.served_requests_per_s_per_period[t]) / float(
        d.replicas_per_period[t] * d.capacity_per_replica_requests_per_s
    )


def test_redundant_spare_shares_the_load_by_capacity(catalog: Catalog) -> None:
    # 8 req/s with one spare node: every replica, spare included, at 8 / (the plan's capacity) < 1
    result = _example(catalog, "chat_p99_redundant")
    _check_split(result, {"chat": 8.0})
    total_cap = sum(d.replicas * d.capacity_per_replica_requests_per_s for d in result.deployments)
    assert total_cap > 8.0 * 2  # the spare node's capacity is there ...
    for d in result.deployments:
        assert _utilization(d, 0) == pytest.approx(8.0 / total_cap, rel=QP_TOL)  # ... and carries its share
        _reproduces(d)


def test_buy_vs_rent_serves_each_quarters_peak_month_at_one_utilization(catalog: Catalog) -> None:
    # 20 req/s growing 3 %/month, quarterly periods planned for their last (peak) month: 20 · 1.03^(3p + 2)
    result = _example(catalog, "buy_vs_rent")
    periods = len(result.deployments[0].replicas_per_period)
    assert periods == 12
    for p in range(periods):
        demand = 20.0 * 1.03 ** (3 * p + 2)
        running = [d for d in result.deployments if d.replicas_per_period[p]]
        assert sum(d.served_requests_per_s_per_period[p] for d in result.deployments) == pytest.approx(demand, rel=1e-9)
        capacity = sum(d.replicas_per_period[p] * d.capacity_per_replica_requests_per_s for d in running)
        for d in running:
            assert _utilization(d, p) == pytest.approx(demand / capacity, rel=QP_TOL), (p, d.gpu, d.site)
    # two deployments (bought dc1, rented us_east H100) share one quarter at one utilization (the rented H200
    # replica of the roofline max left the plan with the ridge loss and the H100's 0.68 MBU)
    assert max(sum(1 for d in result.deployments if d.replicas_per_period[p]) for p in range(periods)) == 2
    for d in result.deployments:
        _reproduces(d)


def test_buy_vs_rent_pays_as_the_milp_did(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    balanced = _json(_example(catalog, "buy_vs_rent"))
    with monkeypatch.context() as m:
        m.setattr(plan_module, "balanced_flows", lambda ctx, sol: sol)
        vertex = _json(_example(catalog, "buy_vs_rent"))
    assert _paid(balanced) == _paid(vertex)
    assert balanced == _json(_example(catalog, "buy_vs_rent"))  # and the same JSON again


def test_pd_card8_pools_serve_one_stream(catalog: Catalog) -> None:
    # max_throughput on the owned 4 A100 + 4 H20: the prefill pool and the decode pool carry the same req/s,
    # the served total of the plan, the stated 3.5 req/s times the served scale
    result = _example(catalog, "pd_card8")
    j = _json(result)
    prefill = [d for d in result.deployments if d.role == "prefill"]
    decode = [d for d in result.deployments if d.role == "decode"]
    assert prefill and decode and len(prefill) + len(decode) == len(result.deployments)
    served = sum(d.served_requests_per_s for d in prefill)
    assert sum(d.served_requests_per_s for d in decode) == pytest.approx(served, rel=1e-9)
    assert j["served_requests_per_s"]["design_case"] == pytest.approx(served, rel=1e-9)
    # the second stage holds the first stage's scale to within its hold tolerance (served_scale.HOLD_REL)
    assert served == pytest.approx(3.5 * j["served_scale"], rel=1e-6)
    assert served <= 3.5 * j["served_scale"] * (1 + 1e-12)
    for d in result.deployments:
        assert d.served_requests_per_s <= d.replicas * d.capacity_per_replica_requests_per_s * (1 + 1e-9)
        _reproduces(d)


def test_shared_gpus_each_workload_serves_its_rate(catalog: Catalog) -> None:
    result = _example(catalog, "small_models_shared")
    assert any(d.gpu_share_frac < 1.0 for d in result.deployments)
    _check_split(result, {"helpdesk": 0.2, "summarizer": 0.2})
    for d in result.deployments:
        _reproduces(d)


def test_budget_serves_the_scaled_demand_at_one_utilization(catalog: Catalog) -> None:
    # `planner budget`: the two-site scenario as max_throughput under $1,500/month: every replica it pays for
    # at one utilization, the served total 40 req/s × the served scale
    data = two_sites()
    data.update(objective="max_throughput", budget={"opex_usd_per_month": 1500})
    result = plan(catalog, parse_scenario(data, catalog=catalog), with_alternatives=False)
    j = _json(result)
    scale = j["served_scale"]
    assert 0 < scale < 1
    # the second stage serves the first stage's scale to within its hold tolerance (served_scale.HOLD_REL)
    _check_split(result, {"chat": 40.0 * scale}, sum_rel=1e-6)
    assert j["opex_usd_per_month"] <= 1500 * (1 + 1e-9)
    for d in result.deployments:
        _reproduces(d)


def test_the_decomposed_path_splits_as_the_whole_milp(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    # chat_70b_cloud forced down planner/optimize/decompose.py: the same plan, 8 req/s over one B200 and one
    # INT4 H100 at 8 / (their capacity) in every month, as the whole MILP's plan
    import planner.optimize.decompose as decompose

    whole = _example(catalog, "chat_70b_cloud")
    monkeypatch.setattr(decompose, "LARGE_INTEGER_VARIABLES", 0)
    parts = _example(catalog, "chat_70b_cloud")
    assert parts.total_cost_usd == pytest.approx(whole.total_cost_usd, rel=1e-9)
    _check_split(parts, {"chat": 8.0})
    for a, b in zip(parts.deployments, whole.deployments, strict=True):
        assert (a.gpu, a.quantization, a.replicas_per_period) == (b.gpu, b.quantization, b.replicas_per_period)
        assert a.served_requests_per_s == pytest.approx(b.served_requests_per_s, rel=QP_TOL)
        assert a.ttft_ms == pytest.approx(b.ttft_ms, rel=1e-4)
