"""Price tiers: incremental rent volume discounts as binary-segment piecewise-linear cost (no SOS2).

    unit_o · units[o, t] = Σ_k seg[o, t, k]                                  ∀ rent options o, t      (1)
    seg[o, t, k] ≤ w_k · z[o, t, k]   (k ≥ 1),   seg[o, t, 0] ≤ w_0                                    (2)
    seg[o, t, k − 1] ≥ w_{k−1} · z[o, t, k]                                   (fill in order)          (3)
    discount[o, t] = p_o · Σ_k d_k · seg[o, t, k]                             (USD per month)          (4)

Notation: segment k spans GPUs [b_k, b_{k+1}) with width w_k = b_{k+1} − b_k (the last one up to the GPUs
the candidates could use there), discount d_k (d_0 = 0) from the scenario's ``economics.rent_volume_tiers``;
z binary (segment k in use); p_o the quote per GPU-month. The cost is concave in the GPUs rented, so the
order rows (3) — not the objective — keep a cheaper segment from filling first. Tiers apply per GPU type,
site and rental kind in each time slice. The discount (4) is the variable ``rent_discount_usd_per_month``
that planner.problem.cost_terms.supply_usd_per_month subtracts, the monthly supply cost the objective and
the budget rows share; the plan's cost ledger reads its value (planner.readout).
"""

from __future__ import annotations

import pulp

from planner.ledgers.economics import volume_segments
from planner.problem.context import BuildContext
from planner.problem.cost_terms import RENT_DISCOUNT
from planner.problem.supply import Procurement


def _gpus_usable(ctx: BuildContext, gpu: str, site: str, t: int) -> float:
    """Upper bound on GPUs of ``gpu`` used at ``site`` in slice t (Σ gpus_k · replica bound)."""
    total = 0.0
    here = ctx.cands[(ctx.cands["gpu"] == gpu) & (ctx.cands["site"] == site)]
    for k, gpus in here["gpus"].items():
        for p in ctx.points_of(int(k)):
            up = ctx.variables["n_rep"][(int(k), int(p.point), t)].upBound or 0
            total += float(gpus) * up  # a share of one GPU counts its fraction
    return total


def add_price_tiers(ctx: BuildContext) -> None:
    """Add the segment rows and the discount cost terms (nothing without rent volume tiers)."""
    tiers = [(t.min_gpus, t.discount_frac) for t in ctx.scenario.economics.rent_volume_tiers]
    if not tiers:
        return
    units = ctx.variables["units"]
    for i, opt in enumerate(ctx.supply):
        if opt.procurement is not Procurement.RENT:
            continue
        usd_per_gpu_month = opt.usd_per_unit_month / opt.unit_gpus
        for t in ctx.periods:
            cap = _gpus_usable(ctx, opt.gpu, opt.site, t) + opt.unit_gpus  # whole-node rounding
            segments = [(lo, min(hi, cap), d) for lo, hi, d in volume_segments(tiers) if lo < cap]
            if len(segments) < 2:
                continue  # the first discount is out of reach
            seg = [
                ctx.var("tier_gpus", (i, t, k), low=0, up=hi - lo) for k, (lo, hi, _d) in enumerate(segments)
            ]
            ctx.add_row(
                "price_tiers",
                (opt.gpu, opt.site, opt.kind, t),
                opt.unit_gpus * units[(i, t)] == pulp.lpSum(seg),
            )  # (1)
            for k in range(1, len(segments)):
                z = ctx.var("tier_on", (i, t, k), low=0, up=1, cat="Integer")
                width_prev = segments[k - 1][1] - segments[k - 1][0]
                ctx.add_row(
                    "price_tiers",
                    (opt.gpu, opt.site, opt.kind, t, k),
                    seg[k] <= (segments[k][1] - segments[k][0]) * z,
                )  # (2)
                ctx.add_row(
                    "price_tiers", (opt.gpu, opt.site, opt.kind, t, k, "order"), seg[k - 1] >= width_prev * z
                )  # (3)
            discount = pulp.lpSum(
                usd_per_gpu_month * d * seg[k] for k, (_lo, _hi, d) in enumerate(segments) if d
            )
            ctx.add_row(
                "price_tiers", (opt.gpu, opt.site, opt.kind, t, "discount"), ctx.var(RENT_DISCOUNT, (i, t)) == discount
            )  # (4)
