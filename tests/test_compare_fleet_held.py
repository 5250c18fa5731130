"""The reserved-vs-on-demand break-even of `planner compare` prices the GPUs the rent-only plan holds at once.

It added every supply line's own peak: buy_vs_rent's rent-only plan rents H100s at us_east as 1-4-GPU
instances (at most 4, months 6-11 and 27-29) and as 8-GPU nodes (at most 3, months 30-35), so the
sentence priced "28 × h100_sxm" where the plan never holds more than 24 at once
(planner/compare_breakeven.py rented_at_once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog.loader import Catalog
from planner.compare import compare
from planner.compare_breakeven import rented_at_once
from planner.readout.types import HourBlock, ScheduleEntry
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]


def _entry(period: int, rented: dict[str, int], blocks: list[HourBlock] | None = None) -> ScheduleEntry:
    return ScheduleEntry(period, period, [period], period, {}, {}, rented, {}, {}, blocks or [])


def test_peaks_of_lines_in_different_periods_are_not_added() -> None:
    schedule = [
        _entry(0, {"h100_sxm@us_east": 12}),
        _entry(1, {"h100_sxm@us_east": 24, "l40s@us_west": 1}),
        _entry(2, {"h100_sxm@us_east": 20}),
    ]
    assert rented_at_once(schedule) == {("h100_sxm", "us_east"): 24, ("l40s", "us_west"): 1}


def test_hour_blocks_give_the_gpus_held_at_once() -> None:
    """With hourly profiles a period's figure adds each option's busiest block; the blocks are exact."""
    blocks = [HourBlock(12, {"h100_sxm@us_east": 8}, {}), HourBlock(12, {"h100_sxm@us_east": 4}, {})]
    assert rented_at_once([_entry(0, {"h100_sxm@us_east": 12}, blocks)]) == {("h100_sxm", "us_east"): 8}


@pytest.fixture(scope="module")
def buy_vs_rent(catalog: Catalog) -> dict:  # type: ignore[type-arg]
    scenario = load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)
    return compare(catalog, scenario, flip_points=False).to_json()


def test_buy_vs_rent_break_even_prices_24_h100_not_28(buy_vs_rent: dict) -> None:  # type: ignore[type-arg]
    rent = next(o for o in buy_vs_rent["options"] if o["name"] == "rent_only")
    h100 = [d for d in rent["deployments"] if d["gpu"] == "h100_sxm"]
    assert max(d["gpus"] for d in h100) == 24  # 12 TP2 replicas in the last quarter
    (flip,) = [f for f in buy_vs_rent["flip_points"] if f["parameter"] == "utilization_frac"]
    # 24 H100: reserved 3 market_estimate nodes at $2.40/GPU-h vs 3 hyperstack nodes at $1.90 (the rent-only
    # plan holds no H200 since the ridge loss and the H100's MBU 0.68: before, 2 H200 added a reserved 8-GPU
    # node at $3.20/GPU-h vs a 2-GPU book_runpod instance at $4.59)
    reserved, on_demand = 24 * 2.40, 24 * 1.90
    assert {d["gpu"] for d in rent["deployments"]} == {"h100_sxm"}
    assert flip["factor"] == pytest.approx(reserved / on_demand)
    assert buy_vs_rent["breakeven_utilization_frac"] is None
    assert (
        "24 × h100_sxm at us_east: reserved 1 y $57.60/h for 3 × 8-GPU instances (market_estimate) vs on-demand "
        "$45.60/h for 3 × 8-GPU instances (hyperstack)"
    ) in flip["sentence"]
    assert "28 × h100_sxm" not in flip["sentence"]
