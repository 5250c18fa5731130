"""`planner compare`'s demand flip when no option has a plan at one end of the range.

buy_vs_rent at dc1 only with 16 owned H100: the owned GPUs alone serve up to 38.3 req/s (0.68× the 56.3 req/s
peak), above that only buying serves, and at 4× nothing can (the demand before the first delivery outgrows the
owned GPUs). The bisection gave up on the infeasible 4× end and printed "buying wins at every demand level from
0.062× to 4×", though at 0.062× buying nothing wins (planner/compare.py _bisect)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.catalog.loader import Catalog
from planner.compare import compare
from planner.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def owned_then_buy(catalog: Catalog) -> Any:
    data = yaml.safe_load((ROOT / "examples/buy_vs_rent/scenario.yaml").read_text(encoding="utf-8"))
    data["workloads"][0]["sites"] = ["dc1"]
    data["inventory"] = [{"gpu": "h100_sxm", "count": 16, "site": "dc1"}]
    return compare(catalog, parse_scenario(data, path="s.yaml")).to_json()


def test_the_demand_flip_is_found_below_the_stated_level(owned_then_buy: Any) -> None:
    assert owned_then_buy["recommendation"] == "buy_only"
    (demand,) = [f for f in owned_then_buy["flip_points"] if f["parameter"] == "demand_scale"]
    # the owned GPUs serve 38.3 req/s: 38.3 / 56.3 = 0.68× the stated peak
    assert 0.66 < demand["factor"] < 0.72
    assert demand["sentence"].startswith("buying wins if demand stays above 0.69× (between 0.68× and 0.71×)")
    assert "every demand level" not in demand["sentence"]
