"""Site capacity: GPUs and power per site stay within the site's limits.

    Σ_{g} Σ_{o ∈ O(g, s)} unit_o · units[o, t] ≤ G_max(s)                       ∀ s with a GPU limit, t   (1)
    Σ_{g} Σ_{o ∈ O(g, s)} unit_o · units[o, t] · TDP_g · PUE_s / 1000 ≤ kW_max(s) ∀ s with a power limit, t (2)

Notation: G_max the site's ``max_gpus``; kW_max its ``max_power_kw``; TDP in W. Edge device counts are the
upper bounds of their supply units (gpu_supply).
"""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.problem.context import BuildContext
from planner.problem.supply import SupplyOption


def add_site_capacity(ctx: BuildContext) -> None:
    """Add GPU-count and power rows for sites that declare limits."""
    by_site: dict[str, list[int]] = defaultdict(list)
    for i, opt in enumerate(ctx.supply):
        by_site[opt.site].append(i)
    for site_id, opts in by_site.items():
        site = ctx.sites[site_id]
        for t in ctx.periods:
            gpus = [(ctx.supply[i], ctx.variables["units"][(i, t)]) for i in opts]
            if site.max_gpus is not None:
                ctx.add_row(
                    "site_capacity",
                    ("gpus", site_id, t),
                    pulp.lpSum(o.unit_gpus * u for o, u in gpus) <= site.max_gpus,
                )  # (1)
            if site.max_power_kw is not None:
                kw = pulp.lpSum(unit_power_kw(ctx, o, site.pue) * u for o, u in gpus)
                ctx.add_row("site_capacity", ("power", site_id, t), kw <= site.max_power_kw)  # (2)


def unit_power_kw(ctx: BuildContext, option: SupplyOption, pue: float) -> float:
    """kW one unit of ``option`` draws at a site of ``pue``: unit_o · TDP_g · PUE_s / 1000 (row (2))."""
    return option.unit_gpus * ctx.gpu(option.gpu).tdp_w * pue / 1e3
