"""Rented plans checked by hand: replicas = ⌈demand / (0.9 · capacity)⌉ with the capacity from `planner predict`,
cost = GPUs × the cheapest catalog quote × 720 h, $/Mtok = cost ÷ output tokens; instance sizes, reserved
terms, spot shares, N+1 redundancy, growth periods and hourly profiles priced from the catalog's quotes."""

from __future__ import annotations

import math

import pytest

from planner.catalog import Catalog
from tests.plan.hand_scenarios import (
    HOURS,
    cheapest_quote,
    output_tokens,
    plan_json,
    replicas_for,
    saturation_qwen3_8b_h100,
)

REL = 1e-9


@pytest.fixture(scope="module")
def saturation() -> float:
    return saturation_qwen3_8b_h100()


def test_one_gpu_type_on_demand(catalog: Catalog, saturation: float) -> None:
    """20 req/s: ⌈20 / (0.9 × 18.41)⌉ = 2 one-GPU instances at runpod's $2.69 → $3,873.60 a month, $46,483.20
    over 12 months, $0.299 per million output tokens (1.5552e11 tokens)."""
    d = plan_json(catalog)
    n = replicas_for(20, saturation)
    price = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    assert (n, price) == (2, 2.69)
    monthly = n * price * HOURS
    (dep,) = d["deployments"]
    assert dep["replicas"] == n and dep["gpus"] == n
    assert d["cost_usd_per_month"] == pytest.approx(monthly, rel=REL)
    assert d["total_cost_usd"] == pytest.approx(12 * monthly, rel=REL)
    tokens = output_tokens(20, 250, 12)
    assert d["cost_usd_per_million_output_tokens"] == pytest.approx(12 * monthly / (tokens / 1e6), rel=1e-9)
    assert d["capex_usd"] == 0


@pytest.mark.parametrize("side", [-1, 1])
def test_replica_count_flips_at_the_capacity(catalog: Catalog, saturation: float, side: int) -> None:
    """Just below 2 × 0.9 × capacity two replicas serve; just above, three."""
    demand = 2 * 0.9 * saturation * (1 + side * 1e-4)
    d = plan_json(catalog, chat={"requests_per_s": demand})
    assert d["deployments"][0]["replicas"] == (2 if side < 0 else 3)
    price = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    assert d["total_cost_usd"] == pytest.approx(12 * (2 if side < 0 else 3) * price * HOURS, rel=REL)


def test_growth_is_planned_per_period_peak(catalog: Catalog, saturation: float) -> None:
    """10 req/s growing 10 %/month in quarters: each quarter's peak month 12.1, 16.1, 19.5, 23.6 req/s needs
    1, 1, 2, 2 replicas; 18 GPU-months at $2.69 × 720; tokens are each month's own rate."""
    d = plan_json(catalog, period_months=3, chat={"requests_per_s": 10, "growth_frac_per_month": 0.1})
    peaks = [10 * 1.1 ** (3 * q + 2) for q in range(4)]
    reps = [replicas_for(p, saturation) for p in peaks]
    assert reps == [1, 1, 2, 2]
    assert d["deployments"][0]["replicas_per_period"] == reps
    price = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    total = 3 * sum(reps) * price * HOURS
    assert d["total_cost_usd"] == pytest.approx(total, rel=REL)
    tokens = sum(output_tokens(10 * 1.1**m, 250, 1) for m in range(12))
    assert d["cost_usd_per_million_output_tokens"] == pytest.approx(total / (tokens / 1e6), rel=1e-9)


def test_reserved_term_against_on_demand(catalog: Catalog, saturation: float) -> None:
    """130 req/s = 8 replicas. Quotes: on demand $2.69 per GPU (runpod), reserved 1 y $2.40 (8-GPU nodes).
    6 months: on demand (a reservation pays 12); 12 months: reserved; 18 months: reserved for the first
    term, on demand after (a second term would be paid to month 24)."""
    providers = ["runpod", "market_estimate"]
    n = replicas_for(130, saturation)
    assert n == 8
    od = n * cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1, tuple(providers)) * HOURS
    rsv = 8 * cheapest_quote(catalog, "h100_sxm", "us_east", "reserved_1y", 8, tuple(providers)) * HOURS
    expect = {6: min(6 * od, 12 * rsv), 12: min(12 * od, 12 * rsv), 18: min(18 * od, 12 * rsv + 6 * od, 24 * rsv)}
    assert expect == pytest.approx({6: 6 * od, 12: 12 * rsv, 18: 12 * rsv + 6 * od})
    for horizon, total in expect.items():
        d = plan_json(
            catalog, horizon_months=horizon, chat={"requests_per_s": 130},
            rental_kinds=["on_demand", "reserved_1y"], rent_providers=providers,
        )  # fmt: skip
        assert d["total_cost_usd"] == pytest.approx(total, rel=REL), horizon


def test_spot_share_cap(catalog: Catalog, saturation: float) -> None:
    """400 req/s = 25 replicas with spot at most half of the serving GPUs. A spot GPU is worth 0.8 × 0.9 =
    0.72 GPUs; two 8-GPU spot nodes (11.52 ≤ 12.5) at $1.40 plus 14 on-demand GPUs at $2.69 are the cheapest
    mix (on demand alone: 25 GPUs; three spot nodes would need 35 serving GPUs)."""
    providers = ("runpod", "market_estimate")
    n = replicas_for(400, saturation)
    assert n == 25
    od = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1, providers) * HOURS
    spot_node = 8 * cheapest_quote(catalog, "h100_sxm", "us_east", "spot", 8, providers) * HOURS
    best = min(
        s * spot_node + max(0, math.ceil(r - 0.72 * 8 * s - 1e-9)) * od
        for s in range(0, 5) for r in range(n, 41)
        if 0.72 * 8 * s <= 0.5 * r
    )  # fmt: skip
    assert best == pytest.approx(2 * spot_node + 14 * od)
    d = plan_json(
        catalog, chat={"requests_per_s": 400}, rental_kinds=["on_demand", "spot"], rent_providers=list(providers),
        economics={"max_spot_frac": 0.5},
    )  # fmt: skip
    assert d["total_cost_usd"] == pytest.approx(12 * best, rel=REL)


def test_one_spare_replica(catalog: Catalog, saturation: float) -> None:
    """N+1 replicas: 20 req/s must hold with one replica down → 3 (2 × 16.6 ≥ 20)."""
    d = plan_json(catalog, chat={"redundancy": {"spare_replicas": 1, "failure_domain": "replica"}})
    n = replicas_for(20, saturation) + 1
    assert d["deployments"][0]["replicas"] == n == 3
    price = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    assert d["total_cost_usd"] == pytest.approx(12 * n * price * HOURS, rel=REL)


def test_site_redundancy_doubles_the_fleet(catalog: Catalog, saturation: float) -> None:
    """Either of us_east and us_west must carry all 20 req/s alone: 2 replicas at each site."""
    d = plan_json(
        catalog, chat={"sites": ["us_east", "us_west"], "redundancy": {"spare_replicas": 1, "failure_domain": "site"}}
    )
    per_site = replicas_for(20, saturation)
    assert sorted((x["site"], x["replicas"]) for x in d["deployments"]) == [("us_east", 2), ("us_west", 2)]
    price = cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    assert d["total_cost_usd"] == pytest.approx(12 * 2 * per_site * price * HOURS, rel=REL)


def test_hourly_profile_rents_by_the_hour(catalog: Catalog, saturation: float) -> None:
    """40 req/s for 12 hours a day, 20 req/s for the other 12: 3 and 2 on-demand GPUs, 60 GPU-hours a day ×
    30 days × $2.69; tokens at the daily mean of 30 req/s."""
    d = plan_json(catalog, chat={"requests_per_s": 40, "hourly_profile_frac": [0.5] * 12 + [1.0] * 12})
    gpu_hours_per_day = 12 * replicas_for(40, saturation) + 12 * replicas_for(20, saturation)
    assert gpu_hours_per_day == 60
    monthly = gpu_hours_per_day * 30 * cheapest_quote(catalog, "h100_sxm", "us_east", "on_demand", 1)
    assert d["total_cost_usd"] == pytest.approx(12 * monthly, rel=REL)
    tokens = output_tokens(30, 250, 12)
    assert d["cost_usd_per_million_output_tokens"] == pytest.approx(12 * monthly / (tokens / 1e6), rel=1e-9)


def test_cost_never_drops_with_more_demand(catalog: Catalog) -> None:
    """More demand, same everything else: the cheapest plan is never cheaper."""
    costs = [plan_json(catalog, chat={"requests_per_s": r})["total_cost_usd"] for r in (5, 17, 33, 34, 80, 140)]
    assert costs == sorted(costs)
