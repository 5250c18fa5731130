"""Supply options: every way to obtain GPUs of a type at a site — rent (per rental kind), owned inventory,
edge devices, and buy (one option per purchase window).

Unit prices come from :mod:`planner.costs` (rent quotes, power, colocation) and the horizon economics of a
bought node from :mod:`planner.ledgers.economics`; nothing here solves anything.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, RentalKind, Site
from planner.costs import (
    RentQuote,
    buy_allowed,
    colocation_usd_per_month,
    owned_device_usd_per_month,
    power_usd_per_month,
    rent_allowed,
    rent_quotes_by_size,
)
from planner.ledgers.economics import (
    bought_unit_horizon_usd,
    residual_value_usd,
    running_usd_per_month,
)
from planner.problem.time_slices import demand_vectors
from planner.scenario import Scenario
from planner.units import HOURS_PER_MONTH


class Procurement(StrEnum):
    """How GPUs are obtained: rented by the hour, bought (capex), or already owned (inventory, edge)."""

    RENT = "rent"
    BUY = "buy"
    OWNED = "owned"


class SupplyKind(StrEnum):
    """The kind of a supply option; its procurement and rental kind are looked up, never parsed."""

    RENT_ON_DEMAND = "rent_on_demand"
    RENT_RESERVED_1Y = "rent_reserved_1y"
    RENT_RESERVED_3Y = "rent_reserved_3y"
    RENT_SPOT = "rent_spot"
    EDGE_DEVICE = "edge_device"
    OWNED = "owned"
    BUY = "buy"

    @property
    def procurement(self) -> Procurement:
        """Rent, buy or owned (inventory and edge devices)."""
        return _PROCUREMENT[self]

    @property
    def rental_kind(self) -> RentalKind | None:
        """on_demand / reserved_1y / reserved_3y / spot for rent options, else None."""
        return _RENTAL_KIND.get(self)

    @property
    def term_months(self) -> int | None:
        """Months a reserved rental is held (None for every other kind)."""
        return _TERM_MONTHS.get(self)

    @classmethod
    def rent(cls, rental_kind: RentalKind) -> SupplyKind:
        """The supply kind renting at ``rental_kind``."""
        return next(kind for kind, rk in _RENTAL_KIND.items() if rk == rental_kind)


_PROCUREMENT = {
    SupplyKind.RENT_ON_DEMAND: Procurement.RENT,
    SupplyKind.RENT_RESERVED_1Y: Procurement.RENT,
    SupplyKind.RENT_RESERVED_3Y: Procurement.RENT,
    SupplyKind.RENT_SPOT: Procurement.RENT,
    SupplyKind.EDGE_DEVICE: Procurement.OWNED,
    SupplyKind.OWNED: Procurement.OWNED,
    SupplyKind.BUY: Procurement.BUY,
}
_RENTAL_KIND: dict[SupplyKind, RentalKind] = {
    SupplyKind.RENT_ON_DEMAND: "on_demand",
    SupplyKind.RENT_RESERVED_1Y: "reserved_1y",
    SupplyKind.RENT_RESERVED_3Y: "reserved_3y",
    SupplyKind.RENT_SPOT: "spot",
}
_TERM_MONTHS = {SupplyKind.RENT_RESERVED_1Y: 12, SupplyKind.RENT_RESERVED_3Y: 36}


@dataclass(frozen=True)
class SupplyOption:
    """One way to obtain GPUs of a type at a site: rent (per kind), an owned edge device, inventory, buy."""

    gpu: str
    site: str
    kind: SupplyKind
    unit_gpus: int
    usd_per_unit_month: float
    """Recurring cost of one unit per month (rent, power, colocation, ops, depreciation)."""
    max_units: int | None
    source: str
    capex_usd_per_unit: float = 0.0
    effective_gpus_frac: float = 1.0
    """Usable fraction of a unit's GPUs (spot availability × (1 − preemption overhead))."""
    available_from_month: float = 0.0
    """Bought units are usable from their delivery month (the purchase lead time) on."""
    horizon_usd_per_unit: float = 0.0
    """Buy only: capex − residual value + running costs over the horizon (planner.ledgers.economics)."""
    purchase_month: int = 0
    """Buy only: the month the order is placed (capex is paid then; delivery ``available_from_month``)."""
    residual_usd_per_unit: float = 0.0
    """Buy only: resale value at the horizon, book value at age (horizon − order month) × resale_frac."""
    lead_time_months: float = 0.0
    """Buy only: months from order to delivery."""
    lifetime_years: float = 0.0
    """Buy only: depreciation lifetime of the node."""
    node_gpus: int = 0
    """GPUs per node of the type (rent options): a unit smaller than a node is an instance of that size."""
    max_instance_gpus: int = 0
    """Rent: the largest instance sold at this option's price (≥ unit_gpus; a quote sold per card in
    instances of 1/2/4/8 GPUs is one option billed per ``unit_gpus`` whose groups fit instances up to this)."""

    @property
    def procurement(self) -> Procurement:
        """Rent, buy or owned (inventory and edge devices)."""
        return self.kind.procurement

    @property
    def rental_kind(self) -> RentalKind | None:
        """on_demand / reserved_1y / reserved_3y / spot for rent options."""
        return self.kind.rental_kind

    @property
    def id(self) -> str:
        """A supply option's identity across problems built from different candidates, e.g.
        ``h200_sxm@dc1:buy:m6`` or ``h100_sxm@us_east:rent_on_demand``."""
        base = f"{self.gpu}@{self.site}:{self.kind.value}"
        if self.node_gpus and self.unit_gpus != self.node_gpus:
            # instances smaller than a node, e.g. h100_sxm@us_east:rent_on_demand:x1 (:x1-8 sold up to 8)
            top = self.max_instance_gpus
            base += f":x{self.unit_gpus}" + (f"-{top}" if top > self.unit_gpus else "")
        return f"{base}:m{self.purchase_month}" if self.kind is SupplyKind.BUY else base


def first_supply_month(supply: list[SupplyOption]) -> float:
    """The first month any option can serve: 0 when something is rented or owned, else the earliest
    delivery of a purchase (order month + lead time); 0 without options."""
    return min((o.available_from_month if o.kind is SupplyKind.BUY else 0.0 for o in supply), default=0.0)


def term_window_starts(supply: list[SupplyOption], horizon_months: int) -> tuple[int, ...]:
    """Months where a term window of some reserved option starts after month 0: term, 2·term, … < H.

    Periods from such a month on are kept apart from earlier ones with the same demand
    (planner.problem.context), so every period of a window is its own representative or one of that window:
    the commitments then hold a window's reserved units for all of its months, and the last window — paid to
    its end when the horizon ends inside it (planner.problem.cost_terms.term_tail) — is a decision of its own.
    """
    terms = {o.kind.term_months for o in supply if o.kind.term_months is not None}
    return tuple(sorted({m for term in terms for m in range(term, horizon_months, term)}))


def supply_options(
    catalog: Catalog, scenario: Scenario, sites: dict[str, Site], pairs: set[tuple[str, str]]
) -> list[SupplyOption]:
    """Supply options for every (gpu, site) pair the candidates use."""
    econ = scenario.economics
    out: list[SupplyOption] = []
    owned: dict[tuple[str, str], int] = defaultdict(int)
    for item in scenario.inventory:
        owned[(item.gpu, item.site)] += item.count
    for gpu_id, site_id in sorted(pairs):
        gpu, site = catalog.accelerators[gpu_id], sites[site_id]
        util = econ.utilization_frac
        if owned.get((gpu_id, site_id)):
            running = power_usd_per_month(gpu, site, utilization_frac=util) + colocation_usd_per_month(
                gpu, site, utilization_frac=util
            )
            out.append(
                SupplyOption(
                    gpu_id,
                    site_id,
                    SupplyKind.OWNED,
                    1,
                    running * (1 + econ.ops_overhead_frac),
                    owned[(gpu_id, site_id)],
                    "inventory (sunk cost: power, colocation, ops)",
                )
            )
        if site.kind == "edge" and site.devices.get(gpu_id, 0):
            monthly = owned_device_usd_per_month(
                gpu, site, utilization_frac=util, lifetime_years=econ.lifetime_years
            )
            out.append(
                SupplyOption(
                    gpu_id,
                    site_id,
                    SupplyKind.EDGE_DEVICE,
                    1,
                    monthly,
                    site.devices[gpu_id],
                    "edge device: purchase price over its lifetime + power",
                )
            )
        if buy_allowed(site) and "buy" in scenario.procurement and gpu.purchase is not None:
            out.extend(buy_options(gpu, site, scenario))
        if rent_allowed(site) and "rent" in scenario.procurement:
            out.extend(rent_options(catalog, gpu, site, scenario))
    return out


def instance_sizes_text(unit: int, top: int) -> str:
    """The instance sizes one quote sells, in GPUs: '1/2/4' (powers of two from ``unit`` to ``top``), '8'."""
    sizes = [unit]
    while sizes[-1] * 2 <= top:
        sizes.append(sizes[-1] * 2)
    return "/".join(str(n) for n in sizes)


def usd_per_gpu_hour_text(usd: float) -> str:
    """A quote's price as written for people: '$1.90' (cents), '$0.165' where the quote has finer digits."""
    return f"${usd:,.2f}" if round(usd, 2) == usd else f"${usd:,.4g}"


def rent_options(catalog: Catalog, gpu: Accelerator, site: Site, scenario: Scenario) -> list[SupplyOption]:
    """One rent option per rental kind the scenario allows and instance size some provider quotes (whole
    nodes unless a price row lists smaller instances: catalogs/prices.yaml ``gpus_per_instance``)."""
    econ = scenario.economics
    out = []
    for kind in scenario.rental_kinds:
        quotes = rent_quotes_by_size(catalog, gpu, site, kind, scenario.rent_providers)
        for unit, top, quote in instance_families(quotes):
            eff = econ.spot_availability_frac * (1 - econ.spot_preemption_overhead_frac) if kind == "spot" else 1.0
            size = "" if unit == gpu.gpus_per_node else f"{instance_sizes_text(unit, top)}-GPU instances, "
            out.append(
                SupplyOption(
                    gpu.id,
                    site.id,
                    SupplyKind.rent(kind),
                    unit,
                    quote.usd_per_gpu_hour * econ.rent_price_scale * HOURS_PER_MONTH * unit,
                    None,
                    f"{quote.provider} {kind} {size}{usd_per_gpu_hour_text(quote.usd_per_gpu_hour)}/GPU-h "
                    f"({quote.source}, {quote.as_of})",
                    effective_gpus_frac=eff,
                    node_gpus=gpu.gpus_per_node,
                    max_instance_gpus=top,
                )
            )
    return out


def instance_families(quotes: dict[int, RentQuote]) -> list[tuple[int, int, RentQuote]]:
    """Instance sizes sold by the same quote (provider, price) as one family: (smallest, largest, quote).

    Sizes are divisors of the node, so billing a family per smallest instance is exact: every group there
    has a size that is one of the family's sizes or a multiple of the smallest (per-card billing)."""
    out: list[tuple[int, int, RentQuote]] = []
    for size, quote in sorted(quotes.items()):
        last = out[-1] if out else None
        same = last and (last[2].provider, last[2].usd_per_gpu_hour) == (quote.provider, quote.usd_per_gpu_hour)
        if last and same and size == 2 * last[1]:  # the next size up (sizes are 1, 2, 4, 8 of a node)
            out[-1] = (last[0], size, last[2])
        else:
            out.append((size, size, quote))
    return out


def purchase_months(scenario: Scenario, lead_time_months: float) -> list[int]:
    """Months at which nodes may be ordered: 0, then every ``purchase_every_months`` at a period start
    whose delivery (order month + lead time) falls inside the horizon and after a change in some
    workload's demand since the previous window's delivery.

    Windows whose delivery lands inside a stretch of constant demand are left out: with straight-line
    depreciation and running costs linear in the months held, a node's cost is linear in its order month,
    so within a stretch ordering for its start or not at all (ordering for the next change) is always at
    least as good.
    """
    period = scenario.period_months
    vectors = demand_vectors(scenario)

    def delivery_period(month: int) -> int:
        return min(scenario.periods - 1, math.ceil((month + lead_time_months) / period - 1e-9))

    months = [0]
    last = delivery_period(0)
    for t in range(1, scenario.periods):
        month = t * period
        if month % scenario.economics.purchase_every_months or month + lead_time_months >= scenario.horizon_months:
            continue
        d = delivery_period(month)
        if any(vectors[u] != vectors[last] for u in range(last + 1, d + 1)):
            months.append(month)
            last = d
    return months


def buy_options(gpu: Accelerator, site: Site, scenario: Scenario) -> list[SupplyOption]:
    """One buy option per purchase window (:func:`purchase_months`): a whole node, capex at its order month,
    usable from delivery (order month + lead time) to the horizon, horizon TCO from planner.ledgers.economics."""
    assert gpu.purchase is not None
    econ = scenario.economics
    util = econ.utilization_frac
    running = running_usd_per_month(
        power_usd_per_month=power_usd_per_month(gpu, site, utilization_frac=util) * gpu.gpus_per_node,
        colocation_usd_per_month=colocation_usd_per_month(gpu, site, utilization_frac=util)
        * gpu.gpus_per_node,
        ops_overhead_frac=econ.ops_overhead_frac,
    )
    life = econ.lifetime_years or gpu.purchase.lifetime_years
    node_usd = gpu.purchase.usd_per_node * econ.purchase_price_scale
    lead = gpu.purchase.lead_time_months
    out = []
    for month in purchase_months(scenario, lead):
        horizon = bought_unit_horizon_usd(
            node_usd,
            horizon_months=scenario.horizon_months,
            lead_time_months=lead,
            lifetime_years=life,
            resale_frac=econ.resale_frac,
            running_usd_per_month=running,
            cost_of_capital_frac_per_year=econ.cost_of_capital_frac_per_year,
            purchase_month=month,
        )
        out.append(
            SupplyOption(
                gpu.id,
                site.id,
                SupplyKind.BUY,
                gpu.gpus_per_node,
                running,
                None,
                f"buy node ${gpu.purchase.usd_per_node:,.0f} ordered month {month} "
                f"({gpu.purchase.source}, {gpu.purchase.as_of})",
                capex_usd_per_unit=node_usd,
                available_from_month=month + lead,
                horizon_usd_per_unit=horizon,
                purchase_month=month,
                residual_usd_per_unit=residual_value_usd(
                    node_usd,
                    horizon_months=scenario.horizon_months - month,
                    lifetime_years=life,
                    resale_frac=econ.resale_frac,
                ),
                lead_time_months=lead,
                lifetime_years=life,
            )
        )
    return out
