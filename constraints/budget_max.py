"""Budget: capex, monthly opex and total spend stay within the scenario's budget.

    Σ_{o buy} capex_o · bought[o] ≤ B_capex                                               (1)
    Σ_{s ∈ S(t)} h_s Σ_{o} c_o · units[o, s] ≤ B_opex      ∀ t   (rent + running cost per month)   (2)
    total horizon cost (the objective's cost terms) ≤ B_total                             (3)

Notation: capex_o the node price of buy option o; c_o its recurring USD per unit-month (rent price ×
720 h × GPUs per node for rent, power + colocation + ops for owned/bought units); S(t) the hour-block
slices of period t and h_s their share of the day (one slice with h = 1 without hourly profiles). Rent
enters net of its volume discount (constraints.price_tiers).
"""

from __future__ import annotations

import pulp

from planner.problem.context import BuildContext
from planner.problem.cost_terms import supply_cost_usd, supply_usd_per_month
from planner.problem.supply import SupplyKind


def add_budget_max(ctx: BuildContext) -> None:
    """Add the budget rows the scenario declares (none without a budget)."""
    budget = ctx.scenario.budget
    if budget is None:
        return
    if budget.capex_usd is not None:
        capex = pulp.lpSum(
            o.capex_usd_per_unit * ctx.variables["bought"][i]
            for i, o in enumerate(ctx.supply)
            if o.kind is SupplyKind.BUY
        )
        ctx.add_row("budget_max", ("capex",), capex <= budget.capex_usd)  # (1)
    if budget.opex_usd_per_month is not None:
        for t, slices in ctx.slices_of.items():
            opex = pulp.lpSum(
                ctx.hours_frac[s] * supply_usd_per_month(ctx, i, s)
                for i in range(len(ctx.supply))
                for s in slices
            )
            ctx.add_row("budget_max", ("opex", t), opex <= budget.opex_usd_per_month)  # (2)
    if budget.total_usd is not None:
        total = pulp.lpSum(supply_cost_usd(ctx, i) for i in range(len(ctx.supply)))
        ctx.add_row("budget_max", ("total",), total <= budget.total_usd)  # (3)
