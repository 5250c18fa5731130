"""Unit prices the candidate table and the MILP use: rent per GPU-hour, owned-device monthly cost, power.

Formulas (USD, per GPU):
- rent per month = usd_per_gpu_hour × 720 h (the book's rental month, card 12);
- power per month = (idle + u·(TDP − idle)) W × PUE × USD/kWh × 720 h / 1000;
- colocation per month = draw kW × USD per kW-month;
- depreciation per month = (node price / GPUs per node) / (lifetime_years × 12).

The buy-vs-rent economics over a horizon (capex, resale, lead time) live in :mod:`planner.ledgers.economics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, RentalKind, RentalPrice, Site
from planner.units import HOURS_PER_MONTH, MONTHS_PER_YEAR


@dataclass(frozen=True)
class RentQuote:
    """The cheapest applicable rental price of one GPU type at one site and pricing kind."""

    gpu: str
    site: str
    kind: RentalKind
    usd_per_gpu_hour: float
    provider: str
    source: str
    as_of: str
    gpus_per_instance: int = 0
    """GPUs per rented instance at this price (0 when the quote was looked up for any size)."""


def _applies(price: RentalPrice, site: Site) -> bool:
    if not rent_allowed(site):
        return False
    if price.sites:
        return site.id in price.sites
    return not site.providers or price.provider in site.providers


def rent_quote(
    catalog: Catalog,
    gpu: Accelerator,
    site: Site,
    kind: RentalKind,
    providers: Sequence[str] | None = None,
    *,
    instance_gpus: int | None = None,
) -> RentQuote | None:
    """Cheapest quote for ``gpu`` at a cloud ``site`` of pricing ``kind`` (None if nobody rents it there),
    from ``providers`` only when given (the scenario's ``rent_providers``: the contracts one has), for
    instances of ``instance_gpus`` GPUs when given (else any instance size).

    Ties are broken by provider id so the choice is deterministic.
    """
    if site.gpus_available is not None and gpu.id not in site.gpus_available:
        return None
    quotes = [
        p
        for p in catalog.rental_prices(gpu.id)
        if p.kind == kind
        and _applies(p, site)
        and (providers is None or p.provider in providers)
        and (instance_gpus is None or p.offers_instance(instance_gpus, gpu.gpus_per_node))
    ]
    if not quotes:
        return None
    best = min(quotes, key=lambda p: (p.usd_per_gpu_hour, p.provider))
    return RentQuote(
        gpu.id, site.id, kind, best.usd_per_gpu_hour, best.provider, best.source, best.as_of, instance_gpus or 0
    )


def rent_allowed(site: Site) -> bool:
    """Whether GPUs may be rented at ``site``: cloud sites only (datacenters buy, edge devices are owned)."""
    return site.kind == "cloud"


def buy_allowed(site: Site) -> bool:
    """Whether GPUs may be bought at ``site``: datacenter sites only (cloud regions rent, edge devices are
    owned)."""
    return site.kind == "datacenter"


def instance_sizes(gpu: Accelerator) -> list[int]:
    """Instance sizes a GPU type can be rented in: the divisors of its node size, ascending (GPUs)."""
    return [d for d in range(1, gpu.gpus_per_node + 1) if gpu.gpus_per_node % d == 0]


def rent_quotes_by_size(
    catalog: Catalog,
    gpu: Accelerator,
    site: Site,
    kind: RentalKind,
    providers: Sequence[str] | None = None,
) -> dict[int, RentQuote]:
    """Cheapest quote per instance size (GPUs per instance → quote) of ``gpu`` at ``site`` and ``kind``."""
    out = {}
    for size in instance_sizes(gpu):
        quote = rent_quote(catalog, gpu, site, kind, providers, instance_gpus=size)
        if quote is not None:
            out[size] = quote
    return out


def power_draw_w(gpu: Accelerator, *, utilization_frac: float) -> float:
    """Average electrical draw of one GPU: idle + u·(TDP − idle), W (card 10 power ledger)."""
    return gpu.idle_w + utilization_frac * (gpu.tdp_w - gpu.idle_w)


def power_usd_per_month(gpu: Accelerator, site: Site, *, utilization_frac: float) -> float:
    """Electricity per GPU-month: draw × PUE × USD/kWh × 720 h / 1000."""
    return (
        power_draw_w(gpu, utilization_frac=utilization_frac)
        * site.pue
        * site.electricity_usd_per_kwh
        * HOURS_PER_MONTH
        / 1e3
    )


def colocation_usd_per_month(gpu: Accelerator, site: Site, *, utilization_frac: float) -> float:
    """Colocation per GPU-month: draw kW × USD per kW-month (reserved at TDP: colo bills provisioned power)."""
    del utilization_frac  # provisioned, not average, power is what a colocation contract bills
    return gpu.tdp_w / 1e3 * site.colocation_usd_per_kw_month


def depreciation_usd_per_month(gpu: Accelerator, *, lifetime_years: float | None = None) -> float:
    """Straight-line depreciation per GPU-month: (node price / GPUs per node) / (lifetime × 12)."""
    if gpu.purchase is None:
        raise ValueError(f"{gpu.id} has no purchase price in the catalog")
    life = lifetime_years if lifetime_years is not None else gpu.purchase.lifetime_years
    return gpu.purchase.usd_per_node / gpu.gpus_per_node / (life * MONTHS_PER_YEAR)


def owned_device_usd_per_month(
    gpu: Accelerator, site: Site, *, utilization_frac: float, lifetime_years: float | None = None
) -> float:
    """Monthly cost of an owned device before the economics model: depreciation + power + colocation."""
    return (
        depreciation_usd_per_month(gpu, lifetime_years=lifetime_years)
        + power_usd_per_month(gpu, site, utilization_frac=utilization_frac)
        + colocation_usd_per_month(gpu, site, utilization_frac=utilization_frac)
    )
