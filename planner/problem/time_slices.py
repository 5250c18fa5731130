"""The time dimension of the MILP: demand vectors, representative periods, hour blocks and time slices.

A slice of hour block b in representative period t has demand D[w, t] · f[w, b] and is billed
months(t) · share(b). Periods with identical demand (and identical deliveries) are merged and weighted by
their months, each at its present value (planner.ledgers.economics.discount_factor).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.demand import demand_per_period
from planner.ledgers.economics import discount_factor
from planner.scenario import Scenario


def demand_vectors(scenario: Scenario) -> list[tuple[float, ...]]:
    """Per period of the horizon, every workload's peak requests/s (scenario order)."""
    series = [
        demand_per_period(w, periods=scenario.periods, period_months=scenario.period_months)
        for w in scenario.workloads
    ]
    return [tuple(values[t] for values in series) for t in range(scenario.periods)]


def representative_periods(
    scenario: Scenario, lead_times_months: tuple[float, ...] = ()
) -> tuple[list[int], dict[int, float], dict[tuple[str, int], float], dict[int, int]]:
    """Merge periods with identical demand vectors: (periods, months per period, demand[(w, t)], period → its
    representative).

    Valid because rented capacity follows each period and bought capacity is one decision per order
    window whose availability only depends on whether a period starts after its delivery month (part of
    the key), so identical periods have identical optimal decisions; the cost of a merged period is
    weighted by its months, each discounted to the present with the cost of capital
    (planner.ledgers.economics.discount_factor, as bought nodes are), so rent and purchases compare at
    present value.
    """
    vectors = demand_vectors(scenario)
    first_of: dict[tuple[float, ...], int] = {}
    months: dict[int, float] = {}
    representative_of: dict[int, int] = {}
    for t in range(scenario.periods):
        start = t * scenario.period_months
        vector = vectors[t] + tuple(start >= lead for lead in lead_times_months)
        rep = first_of.setdefault(vector, t)
        representative_of[t] = rep
        # cost weight: the period's months, each at its present value (1 per month without a cost of capital)
        months[rep] = months.get(rep, 0.0) + sum(
            discount_factor(m, cost_of_capital_frac_per_year=scenario.economics.cost_of_capital_frac_per_year)
            for m in range(start, start + scenario.period_months)
        )
    periods = sorted(months)
    demand = {(w.name, t): vectors[t][i] for i, w in enumerate(scenario.workloads) for t in periods}
    return periods, months, demand, representative_of


def hour_blocks(scenario: Scenario) -> list[tuple[float, dict[str, float]]]:
    """Hours of the day grouped by the load they carry: [(share of the day, {workload: fraction of its peak
    demand})]. Hours with the same fractions for every workload form one block; without any hourly profile
    there is a single block (share 1, every fraction 1)."""
    if all(w.hourly_profile_frac is None for w in scenario.workloads):
        return [(1.0, {w.name: 1.0 for w in scenario.workloads})]
    hours: dict[tuple[float, ...], int] = {}
    for h in range(24):
        vector = tuple(
            w.hourly_profile_frac[h] if w.hourly_profile_frac else 1.0
            for w in scenario.workloads
        )
        hours[vector] = hours.get(vector, 0) + 1
    return [
        (count / 24, {w.name: f for w, f in zip(scenario.workloads, vector, strict=True)})
        for vector, count in sorted(hours.items(), reverse=True)
    ]


@dataclass(frozen=True)
class TimeSlices:
    """Index sets of the time dimension (see :class:`planner.problem.context.BuildContext` for each field)."""

    months: dict[int, float]
    representative_of: dict[int, int]
    slices_of: dict[int, list[int]]
    start_month: dict[int, int]
    hours_frac: dict[int, float]
    demand: dict[tuple[str, int], float]


def time_slices(scenario: Scenario, lead_times_months: tuple[float, ...] = ()) -> TimeSlices:
    """Representative periods (:func:`representative_periods`) split into hour blocks (:func:`hour_blocks`).

    A slice of block b in period t has demand D[w, t] · f[w, b] and is billed months(t) · share(b): capacity
    that can follow the hours (on-demand and spot rent) is paid only for the hours it runs, while
    persistent capacity (bought, owned, reserved) is held equal over a period's slices (commitments).
    Without a profile each period is one slice carrying the period's id.
    """
    periods, months, demand, representative_of = representative_periods(scenario, lead_times_months)
    blocks = hour_blocks(scenario)
    out_months: dict[int, float] = {}
    slices_of: dict[int, list[int]] = {}
    start: dict[int, int] = {}
    share_of: dict[int, float] = {}
    out_demand: dict[tuple[str, int], float] = {}
    for t in periods:
        slices_of[t] = []
        for b, (share, frac) in enumerate(blocks):
            s = t if len(blocks) == 1 else t * len(blocks) + b
            slices_of[t].append(s)
            out_months[s] = months[t] * share
            start[s] = t * scenario.period_months
            share_of[s] = share
            for w in scenario.workloads:
                out_demand[(w.name, s)] = demand[(w.name, t)] * frac[w.name]
    return TimeSlices(out_months, representative_of, slices_of, start, share_of, out_demand)
