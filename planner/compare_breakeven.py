"""Card-12 reserved-vs-on-demand breakeven of the GPU a rent-only plan uses (``planner compare``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.catalog.loader import Catalog
from planner.catalog.schema import Site
from planner.costs import RentQuote, rent_quote, rent_quotes_by_size
from planner.ledgers.economics import term_tail_months
from planner.ledgers.edge_cloud import breakeven_utilization_frac
from planner.readout.types import ScheduleEntry, SupplyLine
from planner.report.formatting import months_runs_text

RESERVED_TERM_MONTHS = 12
"""Term of the reserved_1y quote the breakeven compares (planner.problem.supply.SupplyKind.term_months)."""


def held_usd_per_hour(quotes: dict[int, RentQuote], gpus: int) -> tuple[float, dict[int, int]] | None:
    """Cheapest hourly price of holding ``gpus`` GPUs in whole instances, and the instances per size: the
    least Σ_s n_s · s · price_s with Σ_s n_s · s ≥ g over the sizes the quotes sell (the idle GPUs of a
    part-used instance are paid too), by dynamic programming over 0 … g GPUs. None without quotes."""
    if not quotes:
        return None
    best: list[tuple[float, dict[int, int]]] = [(0.0, {})]
    for n in range(1, gpus + 1):
        options = []
        for size, quote in sorted(quotes.items()):
            usd, mix = best[max(0, n - size)]
            options.append((usd + size * quote.usd_per_gpu_hour, sum(mix.values()), size, mix))
        usd, _count, size, mix = min(options, key=lambda o: (round(o[0], 9), o[1], -o[2]))  # equal price: fewer instances
        best.append((usd, {**mix, size: mix.get(size, 0) + 1}))
    return best[gpus]


def _held(quotes: dict[int, RentQuote], held: tuple[float, dict[int, int]]) -> str:
    """'$7.84/h for 1 × 8-GPU instance (market_estimate)', sizes largest first."""
    usd, mix = held
    parts = [f"{n} × {size}-GPU" for size, n in sorted(mix.items(), reverse=True)]
    providers = ", ".join(dict.fromkeys(quotes[size].provider for size in sorted(mix, reverse=True)))
    plural = "s" if sum(mix.values()) > 1 else ""
    return f"${usd:.2f}/h for {' + '.join(parts)} instance{plural} ({providers})"


def reserved_breakeven(
    catalog: Catalog,
    gpu_id: str,
    site: Site,
    providers: list[str] | None = None,
    *,
    horizon_months: int | None = None,
    gpus: int | None = None,
) -> tuple[float | None, dict[str, Any] | None]:
    """Card-12 utilisation crossover of renting ``gpu_id`` at ``site``: reserved_1y / on-demand price of the
    quotes the planner uses there (planner.costs.rent_quote), with the sentence that states it.

    With ``gpus`` (the GPUs a plan holds there) each kind is priced as the plan would rent it: whole instances
    of the sizes its quotes sell (:func:`held_usd_per_hour`), so a reserved quote sold only as 8-GPU nodes
    is compared at a node's price for a 1-GPU plan. Without, per GPU at the cheapest quote of any size.

    With ``horizon_months`` H not a multiple of the 12-month term, the last term is paid after the horizon
    too (planner.problem.cost_terms.term_tail): reserving then pays above u* = (reserved / on-demand) ×
    P / H, P = H + the months paid after it. The fraction is None when reserving never pays (u* ≥ 1).
    """
    gpu = catalog.accelerators[gpu_id]
    if gpus is None:
        od = rent_quote(catalog, gpu, site, "on_demand", providers)
        rs = rent_quote(catalog, gpu, site, "reserved_1y", providers)
        if od is None or rs is None:
            return None, None
        od_usd, rs_usd = od.usd_per_gpu_hour, rs.usd_per_gpu_hour
        prices = (
            f"{gpu_id} at {site.id}: reserved 1 y ${rs_usd:.2f}/GPU-h ({rs.provider}) vs on-demand "
            f"${od_usd:.2f}/GPU-h ({od.provider})"
        )
    else:
        pair = _held_prices(catalog, gpu_id, site, providers, gpus)
        if pair is None:
            return None, None
        od_usd, rs_usd, (rs_text, od_text) = pair
        prices = f"{gpus} × {gpu_id} at {site.id}: reserved 1 y {rs_text} vs on-demand {od_text}"
    return _crossover(rs_usd, od_usd, prices, horizon_months)


def _held_prices(
    catalog: Catalog, gpu_id: str, site: Site, providers: list[str] | None, gpus: int
) -> tuple[float, float, tuple[str, str]] | None:
    """(on-demand USD/h, reserved USD/h, (reserved text, on-demand text)) of ``gpus`` of ``gpu_id`` at ``site``
    held in whole instances of the sizes the quotes sell (:func:`held_usd_per_hour`); None without both."""
    gpu = catalog.accelerators[gpu_id]
    od_quotes = rent_quotes_by_size(catalog, gpu, site, "on_demand", providers)
    rs_quotes = rent_quotes_by_size(catalog, gpu, site, "reserved_1y", providers)
    od_held, rs_held = held_usd_per_hour(od_quotes, gpus), held_usd_per_hour(rs_quotes, gpus)
    if od_held is None or rs_held is None:
        return None
    return od_held[0], rs_held[0], (_held(rs_quotes, rs_held), _held(od_quotes, od_held))


def fleet_breakeven(
    catalog: Catalog,
    held: list[tuple[str, Site, int]],
    providers: list[str] | None = None,
    *,
    horizon_months: int | None = None,
) -> tuple[float | None, dict[str, Any] | None]:
    """:func:`reserved_breakeven` of a rent-only plan's whole fleet: ``held`` (GPU type, site, GPUs held there
    at once) for every rented pair, each priced in whole instances of the sizes its quotes sell, summed:
    u* = Σ reserved / Σ on-demand (USD per hour). None when a pair has no reserved quote (the fleet cannot be
    reserved as planned)."""
    if len(held) == 1:
        gpu_id, site, gpus = held[0]
        return reserved_breakeven(catalog, gpu_id, site, providers, horizon_months=horizon_months, gpus=gpus)
    od_total, rs_total, parts = 0.0, 0.0, []
    for gpu_id, site, gpus in held:
        pair = _held_prices(catalog, gpu_id, site, providers, gpus)
        if pair is None:
            return None, None
        od_usd, rs_usd, (rs_text, od_text) = pair
        od_total, rs_total = od_total + od_usd, rs_total + rs_usd
        parts.append(f"{gpus} × {gpu_id} at {site.id}: {rs_text} vs {od_text}")
    prices = f"reserved 1 y ${rs_total:,.2f}/h vs on-demand ${od_total:,.2f}/h for the fleet ({'; '.join(parts)})"
    return _crossover(rs_total, od_total, prices, horizon_months)


def rented_at_once(schedule: list[ScheduleEntry]) -> dict[tuple[str, str], int]:
    """GPUs rented at once per (GPU type, site): the most in any period (any hour block of it, with hourly
    profiles), every supply line of the pair summed within the period. Adding each supply line's own peak
    instead counts lines whose peaks fall in different periods together (buy_vs_rent's rent-only plan: a
    4-GPU instance line peaking in months 6-11 and 3 nodes in months 30-35 are 24 GPUs at once, not 28)."""
    held: dict[tuple[str, str], int] = {}
    for entry in schedule:
        for rented in [b.rented_gpus for b in entry.hour_blocks] or [entry.rented_gpus]:
            for key, gpus in rented.items():
                gpu, site = key.rsplit("@", 1)
                held[(gpu, site)] = max(held.get((gpu, site), 0), int(gpus))
    return held


def _crossover(
    rs_usd: float, od_usd: float, prices: str, horizon_months: int | None
) -> tuple[float | None, dict[str, Any] | None]:
    """The card-12 crossover u* = reserved / on-demand (USD per hour of what is held), stretched by the months
    a 1-year term is paid past the horizon, and its sentence (``prices`` names the quotes)."""
    ratio = breakeven_utilization_frac(rs_usd, on_demand_usd_per_hour=od_usd)
    horizon = horizon_months or 0
    paid = len(term_tail_months(horizon, RESERVED_TERM_MONTHS)) if horizon else 0
    if paid:
        ratio *= (horizon + paid) / horizon
        prices += f"; the {horizon}-month horizon pays {horizon + paid} months of 1-year terms"
    flip = {"parameter": "utilization_frac", "factor": ratio}
    if ratio >= 1:
        return None, {**flip, "sentence": f"reserving the rent_only plan's GPUs never pays at these quotes: {prices}"}
    sentence = f"reserving the rent_only plan's GPUs wins over on-demand if utilization stays above {ratio:.0%} ({prices})"
    return ratio, {**flip, "sentence": sentence}


def reserved_in_plan(supply: Sequence[SupplyLine]) -> str:
    """What the rent-only plan itself reserves, for the breakeven's sentence: "; the rent_only plan reserves
    8 × b200 at us_east for months 0–11, where a term pays" ('' when it reserves nothing). The crossover prices
    the whole fleet reserved over the horizon; a plan that reserves part of it for one term (and rents the
    rest, or the months after, on demand) read as contradicted by "never pays" without it."""
    parts = []
    for line in supply:
        if line.rental_kind != "reserved_1y":
            continue
        months = [m for m, units in enumerate(line.units_per_month) if units > 0]
        parts.append(f"{line.gpus} × {line.gpu} at {line.site}" + (f" for {months_runs_text(months)}" if months else ""))
    return f"; the rent_only plan reserves {', '.join(parts)}, where a term pays" if parts else ""
