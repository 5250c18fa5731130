"""A workload's demand over the horizon, per period of ``period_months`` months.

With ``requests_per_s`` a number and compound monthly growth g, month m carries r · (1 + g)^m. A period is
planned for its peak month — the capacity deployed in a period must carry every month of it — while the
tokens it serves are those of its mean month. With a list, each value is its period's peak and mean.
"""

from __future__ import annotations

from planner.scenario import Workload


def _monthly(workload: Workload, period: int, period_months: int) -> list[float]:
    """Requests/s of each month of ``period`` when ``requests_per_s`` is a number."""
    assert not isinstance(workload.requests_per_s, list)
    growth = 1.0 + workload.growth_frac_per_month
    start = period * period_months
    return [workload.requests_per_s * growth**m for m in range(start, start + period_months)]


def demand_per_period(workload: Workload, *, periods: int, period_months: int) -> list[float]:
    """Peak requests/s of ``workload`` in each period: a list as given (a loaded scenario has one value per
    period: planner.scenario checks it; a shorter list built in code keeps its last value), or a number with
    compound monthly growth — the period's
    largest month, r · max((1 + g)^first, (1 + g)^last) (the last month when growing)."""
    if isinstance(workload.requests_per_s, list):
        values = list(workload.requests_per_s)
        return (values + [values[-1]] * periods)[:periods]
    return [max(_monthly(workload, t, period_months)) for t in range(periods)]


def mean_to_peak_per_period(workload: Workload, *, periods: int, period_months: int) -> list[float]:
    """Per period, its mean month's requests/s over its peak (:func:`demand_per_period`): what the
    capacity planned for the peak actually serves on average (1 for a list, for no growth and for 1-month
    periods; e.g. 3 %/month over a quarter: mean (1 + 1.03 + 1.0609)/3 over peak 1.0609 = 0.9709)."""
    if isinstance(workload.requests_per_s, list):
        return [1.0] * periods
    out = []
    for t in range(periods):
        months = _monthly(workload, t, period_months)
        peak = max(months)
        out.append(sum(months) / len(months) / peak if peak > 0 else 1.0)
    return out
