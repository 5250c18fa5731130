"""Budget: capex, monthly opex and total spend stay within the scenario's budget.

    Σ_{o buy} capex_o · bought[o] ≤ B_capex                                               (1)
    Σ_{s ∈ S(t)} h_s Σ_{o} c_o · units[o, s] + Σ_{o ∈ D(t)} c_o · bought[o] ≤ B_opex      ∀ t       (2)
    total horizon cost (the objective's cost terms) ≤ B_total                             (3)

Notation: capex_o the node price of buy option o; c_o its recurring USD per unit-month (rent price ×
720 h × GPUs per node for rent, power + colocation + ops for owned/bought units); S(t) the hour-block
slices of period t and h_s their share of the day (one slice with h = 1 without hourly profiles); D(t) the
buy options delivered inside a period t stands for, after its first month: their nodes serve from the next
period (constraints/gpu_supply.py) but run — and cost — from delivery (planner.ledgers.economics
.bought_unit_cash_flow_usd), so the period's last month pays them too. Rent enters net of its volume
discount (constraints.price_tiers).
"""

from __future__ import annotations

from typing import Any

import pulp

from planner.ledgers.economics import delivery_month
from planner.problem.context import BuildContext
from planner.problem.cost_terms import supply_cost_usd, supply_usd_per_month
from planner.problem.supply import SupplyKind


def add_budget_max(ctx: BuildContext) -> None:
    """Add the budget rows the scenario declares (none without a budget)."""
    budget = ctx.scenario.budget
    if budget is None:
        return
    if budget.capex_usd is not None:
        ctx.add_row("budget_max", ("capex",), capex_usd(ctx) <= budget.capex_usd)  # (1)
    if budget.opex_usd_per_month is not None:
        for t in ctx.slices_of:
            ctx.add_row("budget_max", ("opex", t), opex_usd_per_month(ctx, t) <= budget.opex_usd_per_month)  # (2)
    if budget.total_usd is not None:
        ctx.add_row("budget_max", ("total",), total_usd(ctx) <= budget.total_usd)  # (3)


def capex_usd(ctx: BuildContext) -> Any:
    """Left side of (1): the purchases' capex, USD (a PuLP expression; its value once solved)."""
    return pulp.lpSum(
        o.capex_usd_per_unit * ctx.variables["bought"][i] for i, o in enumerate(ctx.supply) if o.kind is SupplyKind.BUY
    )


def opex_usd_per_month(ctx: BuildContext, t: int) -> Any:
    """Left side of (2) for period ``t``: its costliest month's opex, USD per month (a PuLP expression)."""
    return pulp.lpSum(
        ctx.hours_frac[s] * supply_usd_per_month(ctx, i, s) for i in range(len(ctx.supply)) for s in ctx.slices_of[t]
    ) + pulp.lpSum(ctx.supply[i].usd_per_unit_month * ctx.variables["bought"][i] for i in delivered_inside(ctx, t))


def total_usd(ctx: BuildContext) -> Any:
    """Left side of (3): the horizon cost of all supply, USD (a PuLP expression)."""
    return pulp.lpSum(supply_cost_usd(ctx, i) for i in range(len(ctx.supply)))

def delivered_inside(ctx: BuildContext, t: int) -> list[int]:
    """D(t) of (2): buy options whose delivery month ⌈available_from_month⌉ falls after the first month of a
    period that representative period ``t`` stands for, and within it."""
    months = ctx.scenario.period_months
    starts = [p * months for p, rep in ctx.representative_of.items() if rep == t]
    return [
        i
        for i, o in enumerate(ctx.supply)
        if o.kind is SupplyKind.BUY
        and any(start < delivery_month(o.available_from_month) < start + months for start in starts)
    ]
