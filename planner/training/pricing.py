"""The run's cash lines for rent, buy and owned GPUs (the training cost ledger).

- rent: the run's G GPUs as instances a provider sells (:func:`instance_options`: one instance of s ≥ G
  GPUs, or ⌈G/G_node⌉ whole nodes; the idle GPUs of a partial instance are paid for): GPUs paid × hours ×
  the quote (planner.costs.rent_quotes_by_size) × rent_price_scale, via
  planner.ledgers.utilization.gpu_cost_usd; ``economics.rent_volume_tiers`` discount the rented GPUs beyond
  each threshold (planner.ledgers.economics.tiered_rent_usd_per_month, the formula the plan's price_tiers
  rows use), a negative ``discount`` line; the cheapest option after the discount is paid;
- buy: whole nodes at a datacenter site (planner.costs.buy_allowed, as `planner plan`), ⌈G/G_node⌉ nodes: capex
  (node price × purchase_price_scale), running (power + colocation of every GPU of the nodes) × (1 + ops
  overhead) each month of the run, and −resale·book value at the run's end
  (planner.ledgers.economics.bought_unit_cash_flow_usd per node, horizon = the run's whole months, lead
  time 0 here: the lead time delays the start instead, see :func:`lead_time_days`);
- owned: the running lines of the G GPUs used only (sunk capex).
Rent and owned running costs are discounted month by month at the cost of capital like the bought lines
(:func:`present_value_frac`; the plan's convention).
Every total is the sum of the lines; outputs read the lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.costs import (
    RentQuote,
    buy_allowed,
    colocation_usd_per_month,
    power_usd_per_month,
    rent_quotes_by_size,
)
from planner.ledgers.economics import (
    book_value_usd,
    bought_unit_cash_flow_usd,
    discount_factor,
    running_usd_per_month,
    tiered_rent_usd_per_month,
)
from planner.ledgers.utilization import gpu_cost_usd
from planner.scenario import Economics
from planner.training.scenario import TrainingProcurement
from planner.units import HOURS_PER_MONTH, S_PER_HOUR

DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0


@dataclass(frozen=True)
class CostLine:
    """One cash line of the run: kind (rent, discount, capex, running, resale), the GPUs it pays for
    (rented or bought, idle ones of a partial instance or node included), USD (PV), and where it comes from."""

    kind: str
    gpu: str
    gpus: int
    usd: float
    note: str
    hours: float | None = None
    """Hours each GPU is paid, where the line is GPUs × hours × ``usd_per_gpu_hour`` × ``pv_factor`` (rent and
    owned running); None for the lines that are not (capex, bought running, resale, discount)."""
    usd_per_gpu_hour: float | None = None
    pv_factor: float | None = None


@dataclass(frozen=True)
class RentedInstances:
    """How a run's GPUs are rented: ``instances`` × ``instance_gpus`` at ``quote``."""

    quote: RentQuote
    instance_gpus: int
    instances: int

    @property
    def billed_gpus(self) -> int:
        """GPUs paid for: instances × GPUs per instance."""
        return self.instances * self.instance_gpus


def lead_time_days(gpu: Accelerator, procurement: TrainingProcurement) -> float:
    """Days before bought GPUs arrive (purchase lead time × 30 days); 0 for rent and owned."""
    if procurement != "buy" or gpu.purchase is None:
        return 0.0
    return gpu.purchase.lead_time_months * DAYS_PER_MONTH


def run_months(days: float) -> int:
    """Whole months the run occupies (at least 1): ceil(days/30)."""
    return max(1, math.ceil(days / DAYS_PER_MONTH - 1e-9))


def nodes_for(gpus: int, gpu: Accelerator) -> int:
    """Whole nodes that hold ``gpus`` GPUs: ⌈gpus / GPUs per node⌉."""
    return math.ceil(gpus / gpu.gpus_per_node)


def instance_options(catalog: Catalog, gpu: Accelerator, site: Site, *, gpus: int) -> list[RentedInstances]:
    """The on-demand ways to rent ``gpus`` GPUs as instances some provider sells at ``site`` (none when
    nobody rents the GPU there).

    Per instance size s with a quote (planner.costs.rent_quotes_by_size): one instance when s ≥ gpus, or
    ⌈gpus/G_node⌉ instances when s is a whole node G_node (a partial instance's idle GPUs are paid for). A
    run never spans several instances smaller than a node: the layout model joins GPUs across nodes over the
    scale-out fabric and counts a node's GPUs as one NVLink domain.
    """
    options = []
    for size, quote in rent_quotes_by_size(catalog, gpu, site, "on_demand").items():
        if size >= gpus:
            options.append(RentedInstances(quote, size, 1))
        elif size == gpu.gpus_per_node:
            options.append(RentedInstances(quote, size, nodes_for(gpus, gpu)))
    return options


def present_value_frac(days: float, econ: Economics) -> float:
    """Present value of paying for ``days`` days at a steady rate, as a fraction of the undiscounted sum:
    Σ_m share_m · (1 + r)^(−m/12) / (days/30), share_m = min(1, days/30 − m) of month m — each month paid at
    its start, as the plan discounts rent and running costs (planner.ledgers.economics.discount_factor). 1 at
    r = 0."""
    months = days / DAYS_PER_MONTH
    if months <= 0 or econ.cost_of_capital_frac_per_year == 0:
        return 1.0
    rate = econ.cost_of_capital_frac_per_year
    paid = sum(
        min(1.0, months - m) * discount_factor(m, cost_of_capital_frac_per_year=rate)
        for m in range(math.ceil(months - 1e-12))
    )
    return paid / months


def _pv_note(pv: float) -> str:
    """' × present-value factor 0.9871' when the cost of capital discounts the line ('' at 1)."""
    return "" if pv == 1.0 else f" × present-value factor {pv:.4f}"


def _noun(count: int, noun: str) -> str:
    """The noun for ``count`` of it: 'month' for 1, 'months' otherwise."""
    return noun if count == 1 else f"{noun}s"


def _instances_note(gpu: Accelerator, instance_gpus: int, count: int, used_gpus: int, idle_verb: str) -> str:
    """'1 × 4-GPU instance' or '2 × 8-GPU nodes (4 idle GPUs paid)'."""
    unit = "node" if instance_gpus == gpu.gpus_per_node else "instance"
    idle = count * instance_gpus - used_gpus
    tail = f" ({idle} idle {_noun(idle, 'GPU')} {idle_verb})" if idle else ""
    return f"{count} × {instance_gpus}-GPU {_noun(count, unit)}{tail}"


def _rented_lines(
    gpu: Accelerator, rented: RentedInstances, *, gpus: int, days: float, econ: Economics
) -> list[CostLine]:
    """Rent of ``rented`` for ``days`` days: billed GPUs × hours × quote × rent_price_scale, and the volume
    tiers' discount on the billed GPUs (planner.ledgers.economics.tiered_rent_usd_per_month) as its own line."""
    billed = rented.billed_gpus
    price = rented.quote.usd_per_gpu_hour * econ.rent_price_scale
    hours = days * 24.0
    pv = present_value_frac(days, econ)
    usd = gpu_cost_usd(billed * hours * S_PER_HOUR, usd_per_gpu_hour=price) * pv
    shape = _instances_note(gpu, rented.instance_gpus, rented.instances, gpus, "paid")
    lines = [
        CostLine(
            "rent",
            gpu.id,
            billed,
            usd,
            f"{rented.quote.provider} on-demand ${price:.2f}/GPU-h, {shape}{_pv_note(pv)}",
            hours,
            price,
            pv,
        )
    ]
    tiers = [(t.min_gpus, t.discount_frac) for t in econ.rent_volume_tiers]
    discounted = (
        tiered_rent_usd_per_month(billed, price * HOURS_PER_MONTH, tiers) * hours / HOURS_PER_MONTH * pv
    )
    if discounted < usd - 1e-9:
        steps = ", ".join(f"{d:.0%} beyond {n:,} GPUs" for n, d in tiers if n < billed)
        lines.append(CostLine("discount", gpu.id, billed, discounted - usd, f"rent volume tiers: {steps}"))
    return lines


def _rent_lines(
    catalog: Catalog, gpu: Accelerator, site: Site, *, gpus: int, days: float, econ: Economics
) -> list[CostLine] | None:
    """The cheapest of :func:`instance_options` after tiers (then fewer GPUs paid, then smaller instances)."""
    priced = [
        (sum(line.usd for line in lines), rented.billed_gpus, rented.instance_gpus, lines)
        for rented in instance_options(catalog, gpu, site, gpus=gpus)
        for lines in [_rented_lines(gpu, rented, gpus=gpus, days=days, econ=econ)]
    ]
    if not priced:
        return None
    return min(priced, key=lambda p: p[:3])[3]


def _running_per_gpu_month(gpu: Accelerator, site: Site, econ: Economics) -> float:
    util = econ.utilization_frac
    return running_usd_per_month(
        power_usd_per_month=power_usd_per_month(gpu, site, utilization_frac=util),
        colocation_usd_per_month=colocation_usd_per_month(gpu, site, utilization_frac=util),
        ops_overhead_frac=econ.ops_overhead_frac,
    )


def _running_note(gpu: Accelerator, site: Site, econ: Economics) -> str:
    """'(power $41.69 + colocation $128.84) × (1 + 10% operations) = $187.59/GPU-month': the terms of
    :func:`_running_per_gpu_month`, so the line can be recomputed from the note."""
    util = econ.utilization_frac
    power = power_usd_per_month(gpu, site, utilization_frac=util)
    colocation = colocation_usd_per_month(gpu, site, utilization_frac=util)
    running = _running_per_gpu_month(gpu, site, econ)
    return (
        f"(power ${power:,.2f} + colocation ${colocation:,.2f}) × (1 + {econ.ops_overhead_frac:.0%} operations) "
        f"= ${running:,.2f}/GPU-month"
    )


def _buy_lines(
    gpu: Accelerator, site: Site, *, gpus: int, days: float, econ: Economics
) -> list[CostLine] | None:
    if gpu.purchase is None or not buy_allowed(site):
        return None
    nodes = nodes_for(gpus, gpu)
    bought = nodes * gpu.gpus_per_node
    running_per_gpu = _running_per_gpu_month(gpu, site, econ)
    node_usd = gpu.purchase.usd_per_node * econ.purchase_price_scale
    months = run_months(days)
    life = econ.lifetime_years or gpu.purchase.lifetime_years
    flows = bought_unit_cash_flow_usd(
        node_usd,
        horizon_months=months,
        lead_time_months=0.0,
        lifetime_years=life,
        resale_frac=econ.resale_frac,
        running_usd_per_month=running_per_gpu * gpu.gpus_per_node,
        cost_of_capital_frac_per_year=econ.cost_of_capital_frac_per_year,
    )
    by_kind: dict[str, float] = {}
    for _month, kind, _usd, pv in flows:
        by_kind[kind] = by_kind.get(kind, 0.0) + pv * nodes
    shape = _instances_note(gpu, gpu.gpus_per_node, nodes, gpus, "bought")
    notes = {
        "capex": f"{shape} at ${node_usd:,.0f}/node ({gpu.purchase.source}, {gpu.purchase.as_of})",
        "running": f"{_running_note(gpu, site, econ)} × {bought} GPUs × {months} {_noun(months, 'month')}"
        f"{_pv_note(by_kind.get('running', 0.0) / (running_per_gpu * bought * months) if running_per_gpu else 1.0)}",
        "resale": (
            f"{econ.resale_frac:.0%} of the book value ${book_value_usd(node_usd, age_months=months, lifetime_years=life):,.0f}"
            f"/node ({life:g}-year straight line) after {months} {_noun(months, 'month')} × {nodes} {_noun(nodes, 'node')}"
            f"{_pv_note(discount_factor(months, cost_of_capital_frac_per_year=econ.cost_of_capital_frac_per_year))}"
        ),
    }
    return [CostLine(kind, gpu.id, bought, usd, notes[kind]) for kind, usd in by_kind.items()]


def cost_lines(
    catalog: Catalog,
    gpu: Accelerator,
    site: Site,
    procurement: TrainingProcurement,
    *,
    gpus: int,
    days: float,
    econ: Economics,
) -> list[CostLine] | None:
    """Cash lines of a ``gpus``-GPU run held for ``days`` days (None when the option does not exist there)."""
    if procurement == "rent":
        return _rent_lines(catalog, gpu, site, gpus=gpus, days=days, econ=econ)
    if procurement == "buy":
        return _buy_lines(gpu, site, gpus=gpus, days=days, econ=econ)
    running = _running_per_gpu_month(gpu, site, econ)
    pv = present_value_frac(days, econ)
    usd = running * gpus * days / DAYS_PER_MONTH * pv
    note = (
        f"owned: {_running_note(gpu, site, econ)} × {gpus} GPUs × {days:,.2f} days / {DAYS_PER_MONTH:g}"
        f"{_pv_note(pv)}"
    )
    return [CostLine("running", gpu.id, gpus, usd, note, days * 24.0, running / HOURS_PER_MONTH, pv)]
