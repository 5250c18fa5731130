"""Procurement economics: the horizon cost of a bought node (capex, depreciation, resale, running costs).

Rent-side break-evens (N > F/(c − v), reserved/on-demand utilisation) live in
:mod:`planner.ledgers.edge_cloud` (card 12); this module adds the buy side the planner optimizes.

References: card 12 (buy / reserve vs pay-as-you-go, book ch11 §11.4.4), card 4 §4.8.4 (fixed investment,
delivery delay shortens the useful life), hardware.md §4 (depreciation, PUE, colocation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from planner.units import MONTHS_PER_YEAR

BoughtCashKind = Literal["capex", "running", "resale"]
"""Kinds of a bought unit's cash lines (:func:`bought_unit_cash_flow_usd`)."""


def book_value_usd(capex_usd: float, *, age_months: float, lifetime_years: float) -> float:
    """Straight-line book value after ``age_months``: capex·max(0, 1 − age/(12·lifetime)), USD.

    References
    ----------
    hardware.md §4 (server depreciation 4–6 years, straight line).
    """
    if lifetime_years <= 0:
        raise ValueError("lifetime_years must be positive")
    if age_months < 0:
        raise ValueError("age_months must be non-negative")
    return capex_usd * max(0.0, 1.0 - age_months / (lifetime_years * MONTHS_PER_YEAR))


def residual_value_usd(
    capex_usd: float, *, horizon_months: float, lifetime_years: float, resale_frac: float
) -> float:
    """Value recovered at the end of the horizon: book value at the horizon × resale_frac, USD.

    A short horizon therefore does not make buying look cheap: only the resale share of the remaining
    book value comes back.
    """
    if not 0 <= resale_frac <= 1:
        raise ValueError("resale_frac must be in [0, 1]")
    return resale_frac * book_value_usd(capex_usd, age_months=horizon_months, lifetime_years=lifetime_years)


def running_usd_per_month(
    *, power_usd_per_month: float, colocation_usd_per_month: float, ops_overhead_frac: float
) -> float:
    """Running cost of an owned unit per month: (power + colocation)·(1 + ops overhead), USD/month."""
    return (power_usd_per_month + colocation_usd_per_month) * (1.0 + ops_overhead_frac)


def discount_factor(month: float, *, cost_of_capital_frac_per_year: float) -> float:
    """Present-value factor of a payment at ``month``: (1 + r)^(−month/12)."""
    return float((1.0 + cost_of_capital_frac_per_year) ** (-month / MONTHS_PER_YEAR))


def term_tail_months(horizon_months: int, term_months: int) -> list[int]:
    """Months after the horizon still paid for a reservation held in the horizon's last term window:
    H, H + 1, …, ⌈H/term⌉·term − 1 (none when the horizon is a multiple of the term).

    Reservations are committed at the start of a term window (months 0, term, 2·term, …; constraints
    commitments) and every month of the term is paid, also those after the horizon.
    """
    if horizon_months < 0 or term_months <= 0:
        raise ValueError("horizon_months must be non-negative and term_months positive")
    end = -(-horizon_months // term_months) * term_months
    return list(range(horizon_months, end))


def delivery_month(available_from_month: float) -> int:
    """The month a node ordered to be usable from ``available_from_month`` (order month + lead time) arrives:
    ⌈available_from_month⌉ (a fraction of a month is the next month); its running cost starts then."""
    return math.ceil(available_from_month - 1e-9)


def bought_unit_cash_flow_usd(
    capex_usd: float,
    *,
    horizon_months: int,
    lead_time_months: float,
    lifetime_years: float,
    resale_frac: float,
    running_usd_per_month: float,
    cost_of_capital_frac_per_year: float = 0.0,
    purchase_month: int = 0,
) -> list[tuple[int, BoughtCashKind, float, float]]:
    """Cash lines of one unit ordered at ``purchase_month``: [(month, kind, USD, present-value USD)] with
    kind 'capex', 'running' or 'resale'.

    Notes
    -----
    capex at month p (PV capex·d(p)); running each month m from delivery ⌈p + lead⌉ to H − 1 (PV
    running·d(m)); the resale −resale_frac·BV(H − p) booked in the horizon's last month H − 1 and
    discounted from the horizon's end, d(H). BV is the straight-line book value (age counted from
    purchase) and d(m) = (1 + r)^(−m/12). Capacity is usable only from delivery, so the lead time
    shortens the useful part of the horizon (card 4 §4.8.4); a later purchase holds more book value at
    the horizon and pays fewer months of running cost.
    """
    if horizon_months <= 0:
        raise ValueError("horizon_months must be positive")
    if not 0 <= purchase_month < horizon_months:
        raise ValueError("purchase_month must be in [0, horizon_months)")
    r = cost_of_capital_frac_per_year
    residual = residual_value_usd(
        capex_usd,
        horizon_months=horizon_months - purchase_month,
        lifetime_years=lifetime_years,
        resale_frac=resale_frac,
    )
    start = min(delivery_month(purchase_month + max(lead_time_months, 0.0)), int(horizon_months))
    lines: list[tuple[int, BoughtCashKind, float, float]] = [
        (purchase_month, "capex", capex_usd, capex_usd * discount_factor(purchase_month, cost_of_capital_frac_per_year=r))
    ]
    lines += [
        (m, "running", running_usd_per_month, running_usd_per_month * discount_factor(m, cost_of_capital_frac_per_year=r))
        for m in range(start, int(horizon_months))
    ]
    lines.append(
        (
            int(horizon_months) - 1,
            "resale",
            -residual,
            -residual * discount_factor(horizon_months, cost_of_capital_frac_per_year=r),
        )
    )
    return lines


def bought_unit_horizon_usd(
    capex_usd: float,
    *,
    horizon_months: int,
    lead_time_months: float,
    lifetime_years: float,
    resale_frac: float,
    running_usd_per_month: float,
    cost_of_capital_frac_per_year: float = 0.0,
    purchase_month: int = 0,
) -> float:
    """Horizon cost of one unit ordered at ``purchase_month``: PV(capex) − PV(residual) + PV(running), USD.

    Notes
    -----
    C = capex·d(p) − resale·BV(H − p)·d(H) + Σ_{m = p + lead}^{H−1} running·d(m): the sum of the present
    values of :func:`bought_unit_cash_flow_usd`.
    """
    lines = bought_unit_cash_flow_usd(
        capex_usd,
        horizon_months=horizon_months,
        lead_time_months=lead_time_months,
        lifetime_years=lifetime_years,
        resale_frac=resale_frac,
        running_usd_per_month=running_usd_per_month,
        cost_of_capital_frac_per_year=cost_of_capital_frac_per_year,
        purchase_month=purchase_month,
    )
    capex, *running, resale = (pv for _month, _kind, _usd, pv in lines)
    return capex + resale + sum(running)


def rent_horizon_usd(
    usd_per_gpu_hour: float, *, gpus: float, months: float, hours_per_month: float = 720.0
) -> float:
    """Horizon rent of ``gpus`` GPUs: price × hours × months × GPUs, USD (the book's 720-hour month)."""
    return usd_per_gpu_hour * hours_per_month * months * gpus


def buy_breakeven_months(
    capex_usd: float, *, rent_usd_per_month: float, running_usd_per_month: float
) -> float:
    """Months after which buying (without resale) costs less than renting: capex / (rent − running).

    Returns inf when renting is no more expensive per month than running an owned unit (c ≤ v in the
    card-12 rule N > F/(c − v)).
    """
    saving = rent_usd_per_month - running_usd_per_month
    return capex_usd / saving if saving > 0 else float("inf")


def volume_segments(tiers: Sequence[tuple[int, float]]) -> list[tuple[float, float, float]]:
    """Rent volume segments [(first GPU, last GPU, discount)] of incremental tiers [(min_gpus, discount)]:
    the first segment from 0 GPUs has no discount, the last one is unbounded (inf)."""
    bounds = [(0, 0.0), *tiers]
    return [
        (float(lo), float(bounds[k + 1][0]) if k + 1 < len(bounds) else float("inf"), d)
        for k, (lo, d) in enumerate(bounds)
    ]


def tiered_rent_usd_per_month(gpus: float, usd_per_gpu_month: float, tiers: Sequence[tuple[int, float]]) -> float:
    """Rent of ``gpus`` GPUs for a month with incremental volume discounts, USD:
    Σ_k price·(1 − d_k)·(GPUs falling in segment k)."""
    return sum(
        usd_per_gpu_month * (1 - d) * max(0.0, min(gpus, hi) - lo) for lo, hi, d in volume_segments(tiers)
    )
