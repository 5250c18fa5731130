"""Why a GPU-type or site alternative has no plan names the workload that cannot run there and why
(planner/optimize/alternatives.py)."""

from __future__ import annotations

from planner.catalog.loader import Catalog
from planner.plan import plan
from planner.scenario import parse_scenario
from tests.plan.helpers import starter


def test_a_site_one_workload_may_not_use_names_that_workload_and_its_sites(catalog: Catalog) -> None:
    """chat may run at us_east or us_west, batch only at us_west: the us_east alternative has no plan because
    batch may not run there — not 'no SLO-feasible candidate' (every chat candidate there is feasible)."""
    data = starter({"sites": ["us_east", "us_west"]}, horizon_months=1)
    batch = {**data["workloads"][0], "name": "batch", "sites": ["us_west"], "requests_per_s": 1}
    data["workloads"].append(batch)
    result = plan(catalog, parse_scenario(data))
    by_value = {(a.kind, a.value): a for a in result.alternatives}
    east = by_value[("site", "us_east")]
    assert east.status == "infeasible"
    assert east.lost_because == "batch may not run at us_east (its sites: us_west)"
