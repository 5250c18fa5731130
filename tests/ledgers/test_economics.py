"""Buy-side economics: hand-computed TCO cases and the card-12 break-even rules."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.ledgers import economics as eco
from planner.ledgers.edge_cloud import breakeven_utilization_frac


def test_book_value_and_residual() -> None:
    assert eco.book_value_usd(400_000, age_months=24, lifetime_years=4) == pytest.approx(200_000)
    assert eco.book_value_usd(400_000, age_months=60, lifetime_years=4) == 0.0
    assert eco.residual_value_usd(
        400_000, horizon_months=24, lifetime_years=4, resale_frac=0.5
    ) == pytest.approx(100_000)


H100_NODE = {
    "horizon_months": 36,
    "lead_time_months": 2,
    "lifetime_years": 4,
    "resale_frac": 0.5,
    "running_usd_per_month": 1_500,
}
"""8×H100 node $320k over 36 months, 4-year life, resale 50 %, running $1,500/month, 2-month lead time."""


def test_hand_computed_node_tco() -> None:
    # residual = 0.5 × 320k × (1 − 36/48) = 40k; running from month 2 → 34 × 1,500 = 51k;
    # total = 320k − 40k + 51k = 331k
    assert eco.bought_unit_horizon_usd(320_000, **H100_NODE) == pytest.approx(331_000)


def test_running_cost_and_discounting() -> None:
    assert eco.running_usd_per_month(
        power_usd_per_month=400, colocation_usd_per_month=600, ops_overhead_frac=0.1
    ) == pytest.approx(1_100)
    assert eco.discount_factor(12, cost_of_capital_frac_per_year=0.1) == pytest.approx(1 / 1.1)


def test_book_reserved_vs_on_demand_crossover() -> None:
    # card 12 / C12.15: $6.79 reserved vs $8.64 serverless → 78.6 %
    assert breakeven_utilization_frac(6.79, on_demand_usd_per_hour=8.64) == pytest.approx(0.786, abs=0.0005)


def test_buy_breakeven_months_rule() -> None:
    # N > F/(c − v): 300k capex, rent 8 GPUs × $3 × 720 h = 17,280/month, running 2,280 → 20 months
    assert eco.buy_breakeven_months(
        300_000, rent_usd_per_month=17_280, running_usd_per_month=2_280
    ) == pytest.approx(20.0)
    assert math.isinf(
        eco.buy_breakeven_months(300_000, rent_usd_per_month=1_000, running_usd_per_month=1_000)
    )


@settings(deadline=None, max_examples=50)
@given(h=st.integers(min_value=1, max_value=96), lead=st.integers(min_value=0, max_value=6))
def test_longer_horizons_never_cost_less(h: int, lead: int) -> None:
    kw = {
        "lead_time_months": lead,
        "lifetime_years": 4.0,
        "resale_frac": 0.5,
        "running_usd_per_month": 1000.0,
    }
    assert eco.bought_unit_horizon_usd(300_000, horizon_months=h + 1, **kw) >= eco.bought_unit_horizon_usd(
        300_000, horizon_months=h, **kw
    )


def test_hand_computed_later_purchase() -> None:
    # the same node ordered at month 12: age at the horizon 24 months → residual 0.5 × 320k × (1 − 24/48)
    # = 80k; running from month 14 → 22 × 1,500 = 33k; total = 320k − 80k + 33k = 273k
    total = eco.bought_unit_horizon_usd(320_000, **H100_NODE, purchase_month=12)
    assert total == pytest.approx(273_000)
    # discounted at 10 %/year: capex paid a year later is worth 320k / 1.1
    discounted = eco.bought_unit_horizon_usd(
        320_000,
        horizon_months=36,
        lead_time_months=0,
        lifetime_years=4,
        resale_frac=0.0,
        running_usd_per_month=0.0,
        cost_of_capital_frac_per_year=0.1,
        purchase_month=12,
    )
    assert discounted == pytest.approx(320_000 / 1.1)
    with pytest.raises(ValueError, match="purchase_month"):
        eco.bought_unit_horizon_usd(
            1.0,
            horizon_months=12,
            lead_time_months=0,
            lifetime_years=4,
            resale_frac=0.5,
            running_usd_per_month=0.0,
            purchase_month=12,
        )


def test_tiered_rent_is_incremental() -> None:
    from planner.ledgers.economics import tiered_rent_usd_per_month, volume_segments

    tiers = [(64, 0.1), (256, 0.2)]
    assert volume_segments(tiers) == [(0.0, 64.0, 0.0), (64.0, 256.0, 0.1), (256.0, float("inf"), 0.2)]
    # 300 GPUs at $1,000/GPU-month: 64 × 1000 + 192 × 900 + 44 × 800 = 64,000 + 172,800 + 35,200
    assert tiered_rent_usd_per_month(300, 1000.0, tiers) == pytest.approx(272_000)
    assert tiered_rent_usd_per_month(10, 1000.0, []) == pytest.approx(10_000)


@given(
    capex=st.floats(1e3, 1e7),
    horizon=st.integers(2, 72),
    order=st.integers(0, 71),
    lead=st.floats(0, 12),
    running=st.floats(0, 1e5),
    rate=st.floats(0, 0.3),
)
def test_bought_cash_flow_adds_up_to_the_horizon_cost(
    capex: float, horizon: int, order: int, lead: float, running: float, rate: float
) -> None:
    """The cash lines of a bought node: PV sum = bought_unit_horizon_usd; capex first, resale last; nominal
    and PV agree without a cost of capital."""
    order = min(order, horizon - 1)
    kw = {
        "horizon_months": horizon,
        "lead_time_months": lead,
        "lifetime_years": 5.0,
        "resale_frac": 0.4,
        "running_usd_per_month": running,
        "purchase_month": order,
    }
    lines = eco.bought_unit_cash_flow_usd(capex, cost_of_capital_frac_per_year=rate, **kw)
    assert lines[0][:3] == (order, "capex", capex) and lines[-1][:2] == (horizon - 1, "resale")
    assert all(order <= m < horizon for m, *_ in lines)
    total = sum(pv for *_, pv in lines)
    assert total == pytest.approx(eco.bought_unit_horizon_usd(capex, cost_of_capital_frac_per_year=rate, **kw))
    flat = eco.bought_unit_cash_flow_usd(capex, **kw)
    assert sum(usd for _m, _k, usd, _pv in flat) == pytest.approx(sum(pv for *_, pv in flat))
