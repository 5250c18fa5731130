"""The run's cash lines for rent, buy and owned GPUs (the training cost ledger).

- rent: GPU-seconds × the cheapest on-demand quote at the site (planner.costs.rent_quote) ×
  rent_price_scale, via planner.ledgers.utilization.gpu_cost_usd;
- buy: per GPU, capex (node price / GPUs per node × purchase_price_scale), running (power + colocation)
  × (1 + ops overhead) each month of the run, and −resale·book value at the run's end
  (planner.ledgers.economics.bought_unit_cash_flow_usd, horizon = the run's whole months, lead time 0 here:
  the lead time delays the start instead, see :func:`lead_time_days`);
- owned: the running lines only (sunk capex).
Every total is the sum of the lines; outputs read the lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.costs import colocation_usd_per_month, power_usd_per_month, rent_quote
from planner.ledgers.economics import bought_unit_cash_flow_usd, running_usd_per_month
from planner.ledgers.utilization import gpu_cost_usd
from planner.scenario import Economics
from planner.training.scenario import TrainingProcurement
from planner.units import HOURS_PER_MONTH, S_PER_HOUR

DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0


@dataclass(frozen=True)
class CostLine:
    """One cash line of the run: kind (rent, capex, running, resale), USD (PV), and where it comes from."""

    kind: str
    gpu: str
    gpus: int
    usd: float
    note: str


def lead_time_days(gpu: Accelerator, procurement: TrainingProcurement) -> float:
    """Days before bought GPUs arrive (purchase lead time × 30 days); 0 for rent and owned."""
    if procurement != "buy" or gpu.purchase is None:
        return 0.0
    return gpu.purchase.lead_time_months * DAYS_PER_MONTH


def run_months(days: float) -> int:
    """Whole months the run occupies (at least 1): ceil(days/30)."""
    return max(1, math.ceil(days / DAYS_PER_MONTH - 1e-9))


def _running_per_gpu_month(gpu: Accelerator, site: Site, econ: Economics) -> float:
    util = econ.utilization_frac
    return running_usd_per_month(
        power_usd_per_month=power_usd_per_month(gpu, site, utilization_frac=util),
        colocation_usd_per_month=colocation_usd_per_month(gpu, site, utilization_frac=util),
        ops_overhead_frac=econ.ops_overhead_frac,
    )


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
    """Cash lines of ``gpus`` GPUs held for ``days`` days (None when the option does not exist there)."""
    if procurement == "rent":
        quote = rent_quote(catalog, gpu, site, "on_demand")
        if quote is None:
            return None
        price = quote.usd_per_gpu_hour * econ.rent_price_scale
        usd = gpu_cost_usd(gpus * days * 24.0 * S_PER_HOUR, usd_per_gpu_hour=price)
        return [CostLine("rent", gpu.id, gpus, usd, f"{quote.provider} on-demand ${price:.2f}/GPU-h")]
    running = _running_per_gpu_month(gpu, site, econ)
    months = run_months(days)
    if procurement == "owned":
        usd = running * gpus * days / DAYS_PER_MONTH
        return [
            CostLine("running", gpu.id, gpus, usd, f"owned: power + colocation ${running:,.0f}/GPU-month")
        ]
    if gpu.purchase is None:
        return None
    capex = gpu.purchase.usd_per_node / gpu.gpus_per_node * econ.purchase_price_scale
    flows = bought_unit_cash_flow_usd(
        capex,
        horizon_months=months,
        lead_time_months=0.0,
        lifetime_years=econ.lifetime_years or gpu.purchase.lifetime_years,
        resale_frac=econ.resale_frac,
        running_usd_per_month=running,
        cost_of_capital_frac_per_year=econ.cost_of_capital_frac_per_year,
    )
    by_kind: dict[str, float] = {}
    for _month, kind, _usd, pv in flows:
        by_kind[kind] = by_kind.get(kind, 0.0) + pv * gpus
    notes = {
        "capex": f"${capex:,.0f}/GPU ({gpu.purchase.source}, {gpu.purchase.as_of})",
        "running": f"power + colocation ${running:,.0f}/GPU-month × {months} months",
        "resale": f"{econ.resale_frac:.0%} of the book value after {months} months",
    }
    return [CostLine(kind, gpu.id, gpus, usd, notes[kind]) for kind, usd in by_kind.items()]
