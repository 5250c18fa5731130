"""Site-domain redundancy end to end (`planner plan`): the SLO holds with a site down, so the plan serves the
workload from two sites. Dominance pruning (planner.problem.dominance.prune_dominated_sites) dropped the copies
at the dearer or equal cloud site, which left one site and answered "at most 0 of 5 req/s can be served;
binding: no single resource row"; and with one site allowed, the cause is named."""

from __future__ import annotations

from typing import Any

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import Scenario
from tests.plan.helpers import starter

SITES = {"sites": ["us_east", "us_west"], "redundancy": {"spare_replicas": 1, "failure_domain": "site"}}


def _plan(catalog: Catalog, **workload: object) -> dict[str, Any]:
    data = starter({**SITES, **workload}, hardware={"gpus": ["l40s"], "tp": [1], "pp": [1]})
    result = plan(catalog, Scenario.model_validate(data, context={"catalog": catalog}), with_alternatives=False)
    out: dict[str, Any] = result.to_json()
    return out


def test_a_site_down_leaves_enough_at_the_other(catalog: Catalog) -> None:
    result = _plan(catalog)
    assert result["status"] == "optimal"
    deployments = result["deployments"]
    capacity = {d["site"]: d["capacity_requests_per_s"] for d in deployments}
    assert set(capacity) == {"us_east", "us_west"}
    assert all(c >= 5.0 for c in capacity.values())  # either site alone serves the demand
    bare = _plan(catalog, redundancy=None)
    assert bare["status"] == "optimal" and len(bare["deployments"]) == 1


def test_one_site_cannot_keep_the_slo_with_a_site_down(catalog: Catalog) -> None:
    result = _plan(catalog, sites=["us_east"])
    assert result["status"] == "infeasible"
    (cause,) = result["infeasibility"]
    assert cause["requirement"] == "redundancy"
    assert cause["message"] == (
        "chat: its SLO must hold with 1 site(s) down, so it needs candidates at 2 sites or more; "
        "it can run only at us_east"
    )
    assert cause["relaxation"] == "add a site to chat.sites, or use chat.redundancy.failure_domain node"
