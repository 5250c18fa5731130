"""The reserved-vs-on-demand break-even of ``planner compare`` prices each kind as a plan rents it: whole
instances of the sizes its quotes sell (planner/compare_breakeven.py held_usd_per_hour)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.catalog.loader import Catalog
from planner.compare_breakeven import fleet_breakeven, held_usd_per_hour, reserved_breakeven
from planner.costs import RentQuote


def _quotes(prices: dict[int, float]) -> dict[int, RentQuote]:
    return {s: RentQuote("g", "s", "on_demand", p, f"p{s}", "src", "2026", s) for s, p in prices.items()}


@given(
    st.dictionaries(st.sampled_from([1, 2, 4, 8]), st.floats(0.5, 5.0), min_size=1),
    st.integers(1, 20),
)
def test_held_price_is_the_cheapest_cover_by_brute_force(prices: dict[int, float], gpus: int) -> None:
    """Every mix of instance counts covering g GPUs (each size at most ⌈g/s⌉ times): the DP finds the least."""
    usd, mix = held_usd_per_hour(_quotes(prices), gpus)  # type: ignore[misc]
    sizes = sorted(prices)
    brute = min(
        sum(n * s * prices[s] for n, s in zip(counts, sizes, strict=True))
        for counts in itertools.product(*(range(math.ceil(gpus / s) + 1) for s in sizes))
        if sum(n * s for n, s in zip(counts, sizes, strict=True)) >= gpus
    )
    assert usd == pytest.approx(brute, rel=1e-9)
    assert sum(s * n for s, n in mix.items()) >= gpus
    assert usd == pytest.approx(sum(s * n * prices[s] for s, n in mix.items()), rel=1e-12)


def test_no_quotes_no_price() -> None:
    assert held_usd_per_hour({}, 3) is None


def test_a_one_gpu_plan_is_not_told_to_reserve_a_node(catalog: Catalog) -> None:
    """L40S at us_east: reserved 1 y $0.98/GPU-h is sold only as 8-GPU nodes, on-demand $1.40 by the card.
    Per GPU reserving pays above 70 % utilization; for the 1 GPU a plan holds, a node costs $7.84/h against
    $1.40/h, so it never pays — and for 8 GPUs it pays above 70 % again."""
    site = catalog.sites["us_east"]
    per_gpu, _ = reserved_breakeven(catalog, "l40s", site)
    assert per_gpu == pytest.approx(0.98 / 1.40)
    one, flip = reserved_breakeven(catalog, "l40s", site, gpus=1)
    assert one is None and flip is not None
    assert flip["factor"] == pytest.approx(7.84 / 1.40)
    assert flip["sentence"] == (
        "reserving the rent_only plan's GPUs never pays at these quotes: 1 × l40s at us_east: reserved 1 y $7.84/h for 1 × 8-GPU instance "
        "(market_estimate) vs on-demand $1.40/h for 1 × 1-GPU instance (runpod)"
    )
    eight, _ = reserved_breakeven(catalog, "l40s", site, gpus=8)
    assert eight == pytest.approx(0.98 / 1.40)


def test_on_demand_mixes_instance_sizes_as_a_plan_does(catalog: Catalog) -> None:
    """28 H100s at us_east on demand: 3 hyperstack 8-GPU nodes at $1.90 + one runpod 4-GPU instance at $2.69
    = $56.36/h, below 4 whole nodes ($60.80/h) and 28 cards at $2.69 ($75.32/h)."""
    _, flip = reserved_breakeven(catalog, "h100_sxm", catalog.sites["us_east"], gpus=28)
    assert flip is not None
    assert flip["factor"] == pytest.approx(76.80 / (3 * 8 * 1.90 + 4 * 2.69))
    assert "on-demand $56.36/h for 3 × 8-GPU + 1 × 4-GPU instances (hyperstack, runpod)" in flip["sentence"]


def test_the_break_even_prices_the_whole_rented_fleet(catalog: Catalog) -> None:
    """A rent-only plan holding 8 L40S and 28 H100 at us_east: reserving pays above Σ reserved / Σ on-demand
    of both (compare named only its first deployment's GPU: 'reserving never pays' for a fleet it did not price).
    L40S: reserved one 8-GPU node $7.84/h vs 8 cards at $1.40; H100: as the test above."""
    site = catalog.sites["us_east"]
    fleet, flip = fleet_breakeven(catalog, [("l40s", site, 8), ("h100_sxm", site, 28)])
    reserved = 8 * 0.98 + 76.80
    on_demand = 8 * 1.40 + 3 * 8 * 1.90 + 4 * 2.69
    assert reserved > on_demand and fleet is None  # the H100 reservation sells 4 whole nodes for 28 GPUs
    assert flip is not None and flip["factor"] == pytest.approx(reserved / on_demand)
    assert flip["sentence"].startswith(
        f"reserving the rent_only plan's GPUs never pays at these quotes: reserved 1 y ${reserved:,.2f}/h vs on-demand ${on_demand:,.2f}/h for "
        "the fleet"
    )
    assert "8 × l40s at us_east" in flip["sentence"] and "28 × h100_sxm at us_east" in flip["sentence"]


def test_a_fleet_of_one_pair_is_the_pair(catalog: Catalog) -> None:
    site = catalog.sites["us_east"]
    assert fleet_breakeven(catalog, [("l40s", site, 1)]) == reserved_breakeven(catalog, "l40s", site, gpus=1)
