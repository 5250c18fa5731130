"""Demand per period (planner/demand.py): a period is planned for its peak month and serves its mean month."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.demand import demand_per_period, mean_to_peak_per_period
from planner.scenario import Workload


def _workload(requests_per_s: object, growth: float = 0.0) -> Workload:
    return Workload.model_validate(
        {
            "name": "w",
            "models": ["llama_3_1_8b"],
            "requests_per_s": requests_per_s,
            "growth_frac_per_month": growth,
            "input_tokens": 100,
            "output_tokens": 100,
            "slo": {"ttft_ms": 1000, "tpot_ms": 50},
        }
    )


def test_quarterly_growth_plans_each_quarter_for_its_last_month() -> None:
    """examples/buy_vs_rent: 20 req/s, 3 %/month, quarters: 20·1.03² = 21.218 first, 20·1.03^35 = 56.28 last;
    the first quarter's mean month is (1 + 1.03 + 1.0609)/3 of 20 = 20.606, 0.9712 of its peak."""
    w = _workload(20, 0.03)
    peaks = demand_per_period(w, periods=12, period_months=3)
    assert peaks[0] == pytest.approx(20 * 1.03**2) and peaks[-1] == pytest.approx(20 * 1.03**35)
    assert peaks[-1] == pytest.approx(56.2772, abs=1e-4)
    fracs = mean_to_peak_per_period(w, periods=12, period_months=3)
    assert fracs[0] == pytest.approx((1 + 1.03 + 1.0609) / 3 / 1.0609)
    assert fracs[0] == pytest.approx(0.97116, abs=1e-5)


def test_shrinking_demand_peaks_in_the_first_month_and_lists_are_taken_as_given() -> None:
    assert demand_per_period(_workload(10, -0.1), periods=2, period_months=2) == pytest.approx([10, 10 * 0.9**2])
    assert demand_per_period(_workload([3, 5]), periods=3, period_months=3) == [3, 5, 5]
    assert mean_to_peak_per_period(_workload([3, 5]), periods=3, period_months=3) == [1.0, 1.0, 1.0]
    assert mean_to_peak_per_period(_workload(10, 0.2), periods=4, period_months=1) == [1.0] * 4


@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(0.1, 1000),
    growth=st.floats(-0.5, 1.0),
    months=st.integers(1, 12),
    periods=st.integers(1, 6),
)
def test_every_month_is_covered_and_the_mean_is_the_months_mean(
    rate: float, growth: float, months: int, periods: int
) -> None:
    """No month of a period asks more than the period's planned demand, and peak × mean-to-peak is the
    period's mean month."""
    w = _workload(rate, growth)
    peaks = demand_per_period(w, periods=periods, period_months=months)
    fracs = mean_to_peak_per_period(w, periods=periods, period_months=months)
    for t in range(periods):
        monthly = [rate * (1 + growth) ** m for m in range(t * months, (t + 1) * months)]
        assert max(monthly) <= peaks[t] * (1 + 1e-12)
        assert peaks[t] * fracs[t] == pytest.approx(sum(monthly) / months, rel=1e-9)
        assert 0 < fracs[t] <= 1 + 1e-12
