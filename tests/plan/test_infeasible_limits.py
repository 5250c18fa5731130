"""An infeasible plan names the limit that is used up in the user's words, and its relaxation works.

It used to print the MILP's row names ("binding: gpu_supply rtx_4090/shop/0 … or relax gpu_supply
rtx_4090/shop/0"), named an owned inventory as binding when only the site's 4-GPU limit was used up (a
supply row is tight in every optimal plan), and said "no single resource row" when a site's power limit
left less than one more GPU's kW (the row keeps slack)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.scenario import Scenario
from tests.plan.helpers import starter

H100_TDP_KW = 0.700  # catalogs/accelerators.yaml h100_sxm tdp_w


def _plan(catalog: Catalog, data: dict[str, Any]) -> Any:
    return plan(catalog, Scenario.model_validate(data, context={"catalog": catalog}), with_alternatives=False)


def _edge(devices: int, requests_per_s: float) -> dict[str, Any]:
    return starter(
        {"requests_per_s": requests_per_s, "sites": ["shop"], "slo": {"ttft_ms": 2000, "tpot_ms": 60}},
        hardware={"gpus": ["rtx_4090"], "tp": [1], "pp": [1]},
        sites=[{"name": "shop", "kind": "edge", "rtt_ms": 5, "devices": {"rtx_4090": devices}}],
        procurement=["rent"],
    )


def _cage(**limits: float) -> dict[str, Any]:
    return starter(
        {"requests_per_s": 100, "sites": ["cage"]},
        hardware={"gpus": ["h100_sxm"], "tp": [1], "pp": [1]},
        sites=[{"name": "cage", "kind": "datacenter", "rtt_ms": 10, "pue": 1.25, **limits}],
        procurement=["owned"],
        inventory=[{"gpu": "h100_sxm", "count": 64, "site": "cage"}],
    )


def test_used_up_edge_devices_are_named_and_adding_them_serves_the_demand(catalog: Catalog) -> None:
    result = _plan(catalog, _edge(2, 40))
    assert result.status == "infeasible"
    (short,) = result.infeasibility
    assert "binding: the 2 rtx_4090 edge devices at shop (all in use)" in short.message
    assert "add rtx_4090 devices at shop (sites.shop.devices.rtx_4090: 2 now)" in short.relaxation
    assert "gpu_supply" not in short.message + short.relaxation
    # devices serve in proportion: enough of them for the whole demand is a plan
    needed = math.ceil(2 * 40 / short.best_value_requests_per_s)
    assert _plan(catalog, _edge(needed, 40)).status == "optimal"


@pytest.mark.parametrize(
    ("limits", "what", "relax"),
    [
        # 5 kW at PUE 1.25 holds ⌊5 / (0.7 · 1.25)⌋ = 5 H100s: 4.375 kW, less than one more GPU's 0.875 kW left
        ({"max_power_kw": 5}, "the power limit of site cage (4.4 of 5 kW in use)", "raise sites.cage.max_power_kw (5 now)"),
        ({"max_gpus": 3}, "the GPU limit of site cage (3 of 3 GPUs in use)", "raise sites.cage.max_gpus (3 now)"),
    ],
)
def test_a_site_limit_is_named_not_the_inventory_it_leaves_unused(
    catalog: Catalog, limits: dict[str, float], what: str, relax: str
) -> None:
    assert math.floor(5 / (H100_TDP_KW * 1.25)) * H100_TDP_KW * 1.25 == pytest.approx(4.375)
    result = _plan(catalog, _cage(**limits))
    assert result.status == "infeasible"
    (short,) = result.infeasibility
    assert short.message.endswith(f"binding: {what}")
    assert relax in short.relaxation
    assert "owned h100_sxm" not in short.message  # 64 owned, at most 5 in use


def test_a_used_up_inventory_is_named_with_the_fix(catalog: Catalog) -> None:
    data = _cage()
    data["inventory"] = [{"gpu": "h100_sxm", "count": 2, "site": "cage"}]
    (short,) = _plan(catalog, data).infeasibility
    assert "binding: the 2 owned h100_sxm at cage (all in use)" in short.message
    assert "add h100_sxm at cage to the inventory (2 now), allow rent or buy in procurement" in short.relaxation


def test_a_spot_only_fleet_over_its_spot_cap_names_the_cap(catalog: Catalog) -> None:
    data = starter(
        hardware={"gpus": ["h100_sxm"], "tp": [1], "pp": [1]}, procurement=["rent"], rental_kinds=["spot"],
        economics={"max_spot_frac": 0.5},
    )
    (short,) = _plan(catalog, data).infeasibility
    assert "binding: the spot share cap (economics.max_spot_frac 0.5: spot carries at most 50% of the load)" in short.message
    assert short.relaxation.startswith("raise economics.max_spot_frac, or add on_demand")
    data["rental_kinds"] = ["spot", "on_demand"]
    assert _plan(catalog, data).status == "optimal"
