"""Infeasibility causes that name what to change: the cloud sites that could rent until a purchase arrives,
the datacenter that could buy, the devices an edge site has outside hardware.gpus, the rent_providers filter,
and the budget's own raise for every shortfall it causes (planner.optimize.explain, planner.candidates)."""

from __future__ import annotations

from typing import Any

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import parse_scenario
from tests.plan.helpers import starter


def _causes(catalog: Catalog, data: dict[str, Any]) -> list[tuple[str, str]]:
    result = plan(catalog, parse_scenario(data, catalog=catalog), with_alternatives=False)
    assert result.status == "infeasible"
    return [(c.message, c.relaxation or "") for c in result.infeasibility]


def test_a_purchase_lead_time_names_the_cloud_sites_to_rent_at(catalog: Catalog) -> None:
    # rent is allowed, but the workload lists only dc1: renting needs a cloud site in its sites, not "add rent"
    data = starter({"sites": ["dc1"]}, hardware={"gpus": ["h100_sxm"]}, procurement=["buy", "rent"])
    (message, relaxation), = _causes(catalog, data)
    assert "nothing bought arrives before month 2" in message
    assert relaxation == (
        "rent at a cloud site added to chat.sites (us_east, us_west, eu_west, ap_northeast) until month 2, "
        "or add inventory"
    )
    data["procurement"] = ["buy"]
    assert _causes(catalog, data)[0][1].startswith("add rent to procurement and rent at a cloud site added to")


def test_buying_at_a_cloud_site_names_the_datacenter(catalog: Catalog) -> None:
    data = starter(hardware={"gpus": ["h100_sxm"]}, procurement=["buy"])
    (message, relaxation), = _causes(catalog, data)
    assert message == "chat: no site allows buying (buying needs a datacenter site; its sites: us_east)"
    assert relaxation == "add rent to procurement, add a datacenter site (dc1) to chat.sites or add inventory"


def test_an_edge_site_names_its_devices_left_out_of_the_gpu_list(catalog: Catalog) -> None:
    # store_edge holds RTX 4090s; the scenario allows only L40S
    data = starter({"sites": ["store_edge"]}, hardware={"gpus": ["l40s"]})
    (message, relaxation), = _causes(catalog, data)
    assert message.endswith("no l40s devices at edge site store_edge (its devices: rtx_4090, not in hardware.gpus)")
    assert relaxation == "add the edge site's GPU types to hardware.gpus, or allow another site"


def test_a_provider_filter_that_leaves_no_quote_is_named(catalog: Catalog) -> None:
    # runpod rents L40S in us_east ($1.40/GPU-h); aws has no L40S quote there
    data = starter(hardware={"gpus": ["l40s"]}, rent_providers=["aws"])
    (message, relaxation), = _causes(catalog, data)
    assert message.endswith(
        "no on_demand price for l40s at us_east from aws (rent_providers; other providers quote it)"
    )
    assert relaxation == (
        "add a provider that quotes it to rent_providers, or allow another rental kind (rental_kinds), GPU type or site"
    )


def test_a_zero_total_budget_gives_every_shortfall_its_raise(catalog: Catalog) -> None:
    data = starter(budget={"total_usd": 0})
    causes = _causes(catalog, data)
    assert [r for _, r in causes] == ["raise budget.total_usd to 10,368"] * 2  # was "relax budget.total_usd $0"
    assert causes[1][0] == "chat: at most 0 of 5 req/s can be served in period 0; binding: budget.total_usd $0"


def test_a_workload_without_sites_is_said_to_have_every_cloud_site(catalog: Catalog) -> None:
    # it said "its sites: us_east": dominance pruning keeps one of the cloud sites with the same prices
    data = starter(hardware={"gpus": ["h100_sxm"]}, procurement=["buy"])
    del data["workloads"][0]["sites"]
    (message, _), = _causes(catalog, data)
    assert message == (
        "chat: no site allows buying (buying needs a datacenter site; its sites: us_east, us_west, eu_west, ap_northeast)"
    )
