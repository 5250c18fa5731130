"""Card-12 reserved-vs-on-demand breakeven of the GPU a rent-only plan uses (``planner compare``)."""

from __future__ import annotations

from typing import Any

from planner.catalog.loader import Catalog
from planner.catalog.schema import Site
from planner.costs import rent_quote
from planner.ledgers.economics import term_tail_months
from planner.ledgers.edge_cloud import breakeven_utilization_frac

RESERVED_TERM_MONTHS = 12
"""Term of the reserved_1y quote the breakeven compares (planner.problem.supply.SupplyKind.term_months)."""


def reserved_breakeven(
    catalog: Catalog,
    gpu_id: str,
    site: Site,
    providers: list[str] | None = None,
    *,
    horizon_months: int | None = None,
) -> tuple[float | None, dict[str, Any] | None]:
    """Card-12 utilisation crossover of renting ``gpu_id`` at ``site``: reserved_1y / on-demand price of the
    quotes the planner uses there (planner.costs.rent_quote), with the sentence that states it.

    With ``horizon_months`` H not a multiple of the 12-month term, the last term is paid after the horizon
    too (planner.problem.cost_terms.term_tail): reserving then pays above u* = (reserved / on-demand) ×
    P / H, P = H + the months paid after it. The fraction is None when reserving never pays (u* ≥ 1).
    """
    gpu = catalog.accelerators[gpu_id]
    od = rent_quote(catalog, gpu, site, "on_demand", providers)
    rs = rent_quote(catalog, gpu, site, "reserved_1y", providers)
    if od is None or rs is None:
        return None, None
    ratio = breakeven_utilization_frac(rs.usd_per_gpu_hour, on_demand_usd_per_hour=od.usd_per_gpu_hour)
    horizon = horizon_months or 0
    paid = len(term_tail_months(horizon, RESERVED_TERM_MONTHS)) if horizon else 0
    if paid:
        ratio *= (horizon + paid) / horizon
    prices = (
        f"{gpu_id} at {site.id}: reserved 1 y ${rs.usd_per_gpu_hour:.2f}/GPU-h ({rs.provider}) vs on-demand "
        f"${od.usd_per_gpu_hour:.2f}/GPU-h ({od.provider})"
    )
    if paid:
        prices += f"; the {horizon}-month horizon pays {horizon + paid} months of 1-year terms"
    flip = {"parameter": "utilization_frac", "factor": ratio}
    if ratio >= 1:
        return None, {**flip, "sentence": f"reserving never pays at these quotes: {prices}"}
    sentence = f"reserving wins over on-demand if utilization stays above {ratio:.0%} ({prices})"
    return ratio, {**flip, "sentence": sentence}
