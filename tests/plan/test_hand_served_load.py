"""Hand checks of the served-load split (planner.optimize.balanced_flows), on scenarios written here: per
workload and period the served req/s add up to the stated demand; every replica of a workload (of a PD pool)
runs at one utilization, so each deployment serves demand × its capacity / the workload's capacity; each
deployment's predict command gives its TTFT, TPOT and decode step; nothing the plan pays for moves against
the MILP's own flows; the same input gives the same JSON; CBC plans split the same way."""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import planner.plan as plan_module
from planner.catalog import Catalog
from planner.cli.main import app
from planner.plan import plan
from planner.readout.result import PlanResult
from planner.scenario import parse_scenario
from tests.plan.test_repeatable import needs_cbc

TIMING = ("solve_seconds", "total_seconds", "optimizer_seconds", "time_limit_s")
QP_TOL = 1e-5  # HiGHS's QP tolerance on utilizations (balanced_flows' docstring: about 1e-6)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

EDGE_SHOP = {"name": "shop", "kind": "edge", "rtt_ms": 5, "devices": {"rtx_4090": 3}}


def _chat(name: str, requests_per_s: float, **extra: Any) -> dict[str, Any]:
    w: dict[str, Any] = {
        "name": name,
        "models": ["qwen3_8b"],
        "quantizations": ["bf16", "fp8"],
        "requests_per_s": requests_per_s,
        "input_tokens": 1000,
        "output_tokens": 250,
        "slo": {"ttft_ms": 1500, "tpot_ms": 60},
        "sites": ["shop", "us_east"],
    }
    w.update(extra)
    return w


def two_sites() -> dict[str, Any]:
    """40 req/s of Qwen3-8B: 3 owned RTX 4090s at an edge shop cannot carry it, the rest is rented in us_east."""
    return {
        "name": "two-sites",
        "horizon_months": 12,
        "workloads": [_chat("chat", 40)],
        "hardware": {"gpus": ["rtx_4090", "h100_sxm", "l40s"], "tp": [1, 2], "pp": [1]},
        "sites": [EDGE_SHOP],
        "procurement": ["rent"],
    }


def quant_policy() -> dict[str, Any]:
    """Two workloads of one model: ``strict`` allows bf16 only, ``loose`` bf16, fp8 and int4."""
    return {
        "name": "quant-policy",
        "horizon_months": 12,
        "workloads": [
            _chat("strict", 12, quantizations=["bf16"]),
            _chat("loose", 12, quantizations=["bf16", "fp8", "int4"]),
        ],
        "hardware": {"gpus": ["rtx_4090", "l40s", "h100_sxm"], "tp": [1, 2], "pp": [1]},
        "sites": [EDGE_SHOP],
        "procurement": ["rent"],
    }


def pd_on() -> dict[str, Any]:
    """20 req/s of 4,000-token prompts with ``disaggregation: on``: prefill and decode pools only."""
    return {
        "name": "pd-on",
        "horizon_months": 12,
        "workloads": [
            _chat("chat", 20, quantizations=["bf16"], input_tokens=4000, output_tokens=500,
                  slo={"ttft_ms": 2000, "tpot_ms": 40}, sites=["us_east"], disaggregation="on"),
        ],
        "hardware": {"gpus": ["h100_sxm", "l40s", "a100_sxm_80gb"], "tp": [1, 2], "pp": [1]},
        "procurement": ["rent"],
    }


HOURLY_FRAC = [0.3] * 8 + [0.6] * 4 + [1.0] * 6 + [0.6] * 4 + [0.3] * 2


def hourly() -> dict[str, Any]:
    """30 req/s at the peak, 6 h at 100 %, 8 h at 60 %, 10 h at 30 %."""
    return {
        "name": "hourly",
        "horizon_months": 12,
        "workloads": [_chat("chat", 30, hourly_profile_frac=HOURLY_FRAC, sites=["us_east"])],
        "hardware": {"gpus": ["h100_sxm", "l40s"], "tp": [1, 2], "pp": [1]},
        "procurement": ["rent"],
    }


def _plan(catalog: Catalog, data: dict[str, Any], **kw: Any) -> PlanResult:
    return plan(catalog, parse_scenario(data, catalog=catalog), with_alternatives=False, **kw)


def _json(result: PlanResult) -> dict[str, Any]:
    return {k: v for k, v in result.to_json().items() if k not in TIMING}


def _periods(result: PlanResult) -> int:
    return len(result.deployments[0].replicas_per_period)


def _capacity(d: Any, t: int) -> float:
    return float(d.replicas_per_period[t] * d.capacity_per_replica_requests_per_s)


def _check_split(
    result: PlanResult, demand: dict[str, float], *, role: str = "colocated", sum_rel: float = 1e-9
) -> None:
    """(a) the served req/s of ``role`` deployments add up to each workload's demand in every period; (b) each
    serves demand × its capacity / the capacity of its workload's ``role`` deployments there."""
    for workload, rate in demand.items():
        mine = [d for d in result.deployments if d.workload == workload and d.role == role]
        assert mine, (workload, role)
        for t in range(_periods(result)):
            total_cap = sum(_capacity(d, t) for d in mine)
            served = sum(d.served_requests_per_s_per_period[t] for d in mine)
            assert served == pytest.approx(rate, rel=sum_rel)
            for d in mine:
                expected = served * _capacity(d, t) / total_cap
                assert d.served_requests_per_s_per_period[t] == pytest.approx(expected, rel=QP_TOL, abs=1e-9), (
                    workload, d.gpu, d.site, d.quantization, t,
                )


def _reproduces(d: Any) -> None:
    """(c) the deployment's predict command gives its TTFT, TPOT and decode step (null where the plan's is)."""
    words = shlex.split(d.predict_command)
    res = CliRunner().invoke(app, [*words[1:], "--json"])
    assert res.exit_code == 0, (d.predict_command, res.output)
    at = json.loads(res.stdout)["at_load"]
    per_replica = d.read_load_per_replica_requests_per_s()
    if per_replica > 0:
        assert at["requests_per_s"] == pytest.approx(per_replica, rel=1e-10)
    for key in ("ttft_ms", "tpot_ms", "decode_step_ms"):
        mine = getattr(d, key)
        if mine is None:
            assert at[key] is None, (d.predict_command, key)
        else:
            assert math.isclose(at[key], mine, rel_tol=1e-9), (d.predict_command, key, at[key], mine)


def _paid(j: dict[str, Any]) -> Any:
    """What the plan pays for and holds: costs, supply, schedule of GPUs, cost ledger, replicas per deployment."""
    schedule = [{k: v for k, v in e.items() if k not in ("served_requests_per_s", "hour_blocks")}
                for e in j["schedule"]]
    blocks = [[b["rented_gpus"] for b in e["hour_blocks"]] for e in j["schedule"]]
    ledger = [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in c.items()} for c in j["cost_ledger"]]
    deployments = sorted(
        (d["workload"], d["role"], d["gpu"], d["site"], d["quantization"], d["tp"], d["gpu_share_frac"],
         d["replicas_per_period"], round(d["capacity_per_replica_requests_per_s"], 9))
        for d in j["deployments"]
    )
    return (round(j["total_cost_usd"], 6), round(j["capex_usd"], 6), round(j["opex_usd_per_month"], 6),
            j["supply"], schedule, blocks, ledger, deployments)


def _unbalanced(catalog: Catalog, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> PlanResult:
    with monkeypatch.context() as m:
        m.setattr(plan_module, "balanced_flows", lambda ctx, sol: sol)
        return _plan(catalog, data)


# --- several deployments of one workload at two sites ---------------------------------------------------


def test_two_sites_split_by_capacity(catalog: Catalog) -> None:
    result = _plan(catalog, two_sites())
    assert {d.site for d in result.deployments} == {"shop", "us_east"}
    _check_split(result, {"chat": 40.0})
    shop = next(d for d in result.deployments if d.site == "shop")
    assert max(shop.replicas_per_period) <= 3  # the shop's three devices
    for d in result.deployments:
        _reproduces(d)


def test_two_sites_pays_as_the_milp_did(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    balanced = _json(_plan(catalog, two_sites()))
    vertex = _json(_unbalanced(catalog, two_sites(), monkeypatch))
    assert _paid(balanced) == _paid(vertex)
    assert balanced["served_requests_per_s"]["chat"] == pytest.approx(40.0, rel=1e-9)


def test_same_input_same_json(catalog: Catalog) -> None:
    assert _json(_plan(catalog, two_sites())) == _json(_plan(catalog, two_sites()))


@needs_cbc
def test_cbc_splits_as_highs(catalog: Catalog) -> None:
    highs = _plan(catalog, two_sites())
    cbc = _plan(catalog, two_sites(), solver="cbc")
    assert cbc.total_cost_usd == pytest.approx(highs.total_cost_usd, rel=1e-9)
    _check_split(cbc, {"chat": 40.0})

    def key(d: Any) -> tuple[str, str, str]:
        return (d.gpu, d.site, d.quantization)

    assert sorted((key(d), d.replicas) for d in cbc.deployments) == sorted((key(d), d.replicas) for d in highs.deployments)
    for a, b in zip(sorted(cbc.deployments, key=key), sorted(highs.deployments, key=key), strict=True):
        assert a.served_requests_per_s == pytest.approx(b.served_requests_per_s, rel=QP_TOL)
        assert a.ttft_ms == pytest.approx(b.ttft_ms, rel=1e-4)


# --- a quantization policy that forbids formats for one workload ----------------------------------------


def test_quantization_policy_keeps_strict_in_bf16_and_each_workload_balanced(catalog: Catalog) -> None:
    result = _plan(catalog, quant_policy())
    strict = [d for d in result.deployments if d.workload == "strict"]
    assert strict and {d.quantization for d in strict} == {"bf16"}
    loose = [d for d in result.deployments if d.workload == "loose"]
    assert len(loose) >= 2  # several formats of one workload: one utilization over them
    for name, ds in (("strict", strict), ("loose", loose)):
        roles = {d.role for d in ds}
        if roles == {"colocated"}:
            _check_split(result, {name: 12.0})
        else:  # pools: each pool carries the whole demand
            _check_split(result, {name: 12.0}, role="prefill")
            _check_split(result, {name: 12.0}, role="decode")
    for d in result.deployments:
        _reproduces(d)


# --- PD disaggregation -----------------------------------------------------------------------------------


def test_pd_pools_each_carry_the_demand_at_one_utilization(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _plan(catalog, pd_on())
    assert {d.role for d in result.deployments} == {"prefill", "decode"}
    _check_split(result, {"chat": 20.0}, role="prefill")
    _check_split(result, {"chat": 20.0}, role="decode")
    for d in result.deployments:
        _reproduces(d)
    assert _paid(_json(result)) == _paid(_json(_unbalanced(catalog, pd_on(), monkeypatch)))


# --- hourly profile ---------------------------------------------------------------------------------------


def test_hourly_blocks_serve_the_profile(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _plan(catalog, hourly())
    j = _json(result)
    hours = {frac: HOURLY_FRAC.count(frac) for frac in set(HOURLY_FRAC)}
    daily_mean = sum(30.0 * f * h for f, h in hours.items()) / 24
    for entry in j["schedule"]:
        blocks = {round(b["served_requests_per_s"]["chat"], 9): b["hours_per_day"] for b in entry["hour_blocks"]}
        assert blocks == {round(30.0 * f, 9): float(h) for f, h in hours.items()}
        assert entry["served_requests_per_s"]["chat"] == pytest.approx(daily_mean, rel=1e-9)
    # a deployment's served figure is its load in the busiest block, 30 req/s over the busiest block's replicas
    assert sum(d.served_requests_per_s for d in result.deployments) == pytest.approx(30.0, rel=1e-9)
    for d in result.deployments:
        _reproduces(d)
    assert _paid(j) == _paid(_json(_unbalanced(catalog, hourly(), monkeypatch)))


# --- a co-located deployment beside a PD group of the same workload ---------------------------------------


def pd_beside_colocated() -> dict[str, Any]:
    """examples/pd_card8 as min_cost at 4 req/s with one spare replica on 8 A100 + 8 H20 owned: the plan runs 2
    co-located A100 replicas beside 4 A100 prefill + 4 H20 decode replicas."""
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / "pd_card8" / "scenario.yaml").read_text())
    data.pop("budget")
    data["objective"] = "min_cost"
    data["inventory"] = [{**row, "count": 8} for row in data["inventory"]]
    data["workloads"][0].update(requests_per_s=4.0, redundancy={"spare_replicas": 1, "failure_domain": "replica"})
    return data


def _pd_beside_colocated_plan(catalog: Catalog) -> tuple[Any, Any, Any]:
    result = _plan(catalog, pd_beside_colocated())
    by_role = {d.role: d for d in result.deployments}
    assert sorted(by_role) == ["colocated", "decode", "prefill"] and len(result.deployments) == 3
    return by_role["colocated"], by_role["prefill"], by_role["decode"]


def test_pd_beside_colocated_serves_the_demand_once(catalog: Catalog) -> None:
    colocated, prefill, decode = _pd_beside_colocated_plan(catalog)
    assert prefill.served_requests_per_s == pytest.approx(decode.served_requests_per_s, rel=1e-9)
    assert colocated.served_requests_per_s + prefill.served_requests_per_s == pytest.approx(4.0, rel=1e-9)
    for d in (colocated, prefill, decode):
        assert d.served_requests_per_s <= d.replicas * d.capacity_per_replica_requests_per_s * (1 + 1e-9)
        _reproduces(d)


def test_pd_beside_colocated_at_the_routers_utilization(catalog: Catalog) -> None:
    # a router weighing the co-located replicas and the PD path (its narrower stage) by capacity; the split
    # counted a PD request twice (its prefill and its decode flow), so the co-located replicas ran at 100 %
    # of their SLO capacity (TPOT 99 of 100 ms) beside pools at 73 % / 72 %
    colocated, prefill, decode = _pd_beside_colocated_plan(catalog)
    c_cap = colocated.replicas * colocated.capacity_per_replica_requests_per_s
    path_cap = min(prefill.replicas * prefill.capacity_per_replica_requests_per_s,
                   decode.replicas * decode.capacity_per_replica_requests_per_s)
    utilization = 4.0 / (c_cap + path_cap)
    assert utilization < 0.8
    assert colocated.served_requests_per_s == pytest.approx(utilization * c_cap, rel=1e-3)
