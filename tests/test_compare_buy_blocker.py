"""`planner compare` on a scenario whose workloads state no sites: they run at every cloud site, where
nothing can be bought — but the blocker read "no sites" as "every site", dc1 included, so compare searched
flip points and printed "renting wins at every purchase price multiplier from 0.25× to 4×" instead of
saying buying is impossible (planner/compare_recommend.py)."""

from __future__ import annotations

import copy

import pytest

from planner.catalog.loader import load_catalog
from planner.compare import compare
from planner.compare_recommend import buying_blocker
from planner.scenario import parse_scenario
from tests.plan.helpers import starter

SCENARIO = starter(
    {"quantizations": ["bf16", "fp8"]},
    name="no-sites",
    hardware={"gpus": ["h100_sxm", "l40s"], "tp": [1, 2], "pp": [1]},
    procurement=["rent", "buy"],
)
del SCENARIO["workloads"][0]["sites"]  # no sites: every cloud site
NO_DATACENTER = "no site of the workloads is a datacenter (cloud regions rent, edge devices are owned)"


def test_a_workload_without_sites_cannot_buy() -> None:
    catalog = load_catalog()
    assert buying_blocker(catalog, parse_scenario(SCENARIO, path="s.yaml")) == NO_DATACENTER
    listed = copy.deepcopy(SCENARIO)
    listed["workloads"][0]["sites"] = ["us_east", "dc1"]
    assert buying_blocker(catalog, parse_scenario(listed, path="s.yaml")) is None


def test_compare_says_buying_is_impossible_instead_of_searching_flips() -> None:
    data = compare(load_catalog(), parse_scenario(SCENARIO, path="s.yaml")).to_json()
    assert data["recommendation"] == "rent_only"
    assert data["recommendation_reason"] == f"buying is not possible: {NO_DATACENTER}"
    rent = next(o for o in data["options"] if o["name"] == "rent_only")
    assert rent["total_cost_usd"] == pytest.approx(12 * 1.40 * 720, rel=1e-12)  # one L40S at $1.40/GPU-h, 720 h a month
    sentences = [f["sentence"] for f in data["flip_points"]]
    assert sentences[0] == f"no flip point: buying is not possible ({NO_DATACENTER})"
    assert not any("purchase price multiplier" in s for s in sentences)
