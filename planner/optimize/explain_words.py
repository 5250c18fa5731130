"""The limits that stop a workload's demand in an infeasible scenario, in the user's words: which supply or
site limit is used up in the elastic re-solve and which scenario field relaxes it ("the 2 rtx_4090 edge
devices at shop", "add rtx_4090 devices at shop (sites.shop.devices.rtx_4090: 2 now)").

A limit counts when it is used up, not when its row reads tight: a supply row is tight in every optimal plan
(the units match the replicas), and a power row keeps slack below one more node. So, for workload w in
slice t (GPU types and sites: those of w's candidates):

    supply (g, s):  every bounded option o at (g, s) has units[o, t] = max_o, and no unbounded one is there
                    (edge devices, inventory; rent and buy are unbounded)
    GPUs of s:      G_max(s) − Σ_o unit_o · units[o, t] < min_o unit_o            (no further unit fits)
    power of s:     kW_max(s) − Σ_o unit_o · units[o, t] · TDP_o · PUE_s / 1000 < min_o of one unit's kW
    spot share:     its row (constraints/spot_share.py) has no slack, and spot is offered at w's (g, s)

Budgets are named by planner.optimize.explain when the same scenario without them has a plan; that plan's
spending on each budget line (:func:`budget_raises`) is the raise that admits it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pulp

from constraints.budget_max import capex_usd, opex_usd_per_month
from constraints.gpu_supply import replica_footprints
from constraints.site_capacity import unit_power_kw
from planner.problem.context import BuildContext
from planner.problem.roles import cands_with_role
from planner.problem.supply import SupplyKind, SupplyOption
from planner.scenario_economics import Budget

USED_UP_TOL = 1e-6
"""Units within this of their bound count as all used."""


@dataclass(frozen=True)
class Limit:
    """One used-up limit: what it is (``what``) and how to relax it (``relax``)."""

    what: str
    relax: str


def used_up_limits(ctx: BuildContext, values: dict[str, dict[Any, float]], workload: str, t: int) -> list[Limit]:
    """The limits (module docstring) that ``workload`` meets in slice ``t`` of the solved elastic ``ctx``
    (``values``: the solution's variable values)."""
    units = values.get("units", {})
    ids = ctx.cands_of_workload(workload)
    gpu_of, site_of = ctx.column("gpu"), ctx.column("site")
    pairs = sorted({(str(gpu_of[k]), str(site_of[k])) for k in ids})
    used = {i: units.get((i, t), 0.0) for i, _ in enumerate(ctx.supply)}
    out = [
        Limit(f"{limit.what} (all in use)", limit.relax)
        for limit in (_supply(ctx, g, s) for g, s in pairs if _supply_used_up(ctx, used, g, s))
    ]
    for site_id in sorted({s for _, s in pairs}):
        out.extend(_site_limits(ctx, used, site_id))
    spot_here = any(o.kind is SupplyKind.RENT_SPOT and (o.gpu, o.site) in pairs for o in ctx.supply)
    if spot_here and _row_used_up(ctx, "spot_share", (t,)):
        frac = ctx.scenario.economics.max_spot_frac
        out.append(
            Limit(
                f"the spot share cap (economics.max_spot_frac {frac:g}: spot carries at most {frac:.0%} of the load)",
                "raise economics.max_spot_frac, or add on_demand (or reserved_1y, reserved_3y) to rental_kinds",
            )
        )
    return out


def _row_used_up(ctx: BuildContext, family: str, key: tuple[Any, ...]) -> bool:
    """The row ``family``/``key`` of the solved ``ctx`` exists and has no slack (also where all its terms are 0)."""
    for name, row in ctx.rows.items():
        if row == (family, key):
            lhs = ctx.row_constraints[name].value()
            return lhs is not None and abs(float(lhs)) <= USED_UP_TOL
    return False


def _options_at(ctx: BuildContext, gpu: str, site: str) -> list[tuple[int, SupplyOption]]:
    """The supply options (index, option) of ``gpu`` at ``site``."""
    return [(i, o) for i, o in enumerate(ctx.supply) if (o.gpu, o.site) == (gpu, site)]


def _all_bounded(ctx: BuildContext, gpu: str, site: str) -> bool:
    """Every supply option at (``gpu``, ``site``) has a bound (edge devices, inventory; not rent or buy)."""
    return all(o.max_units is not None for _, o in _options_at(ctx, gpu, site))


def _supply_used_up(ctx: BuildContext, used: dict[int, float], gpu: str, site: str) -> bool:
    """Every option at (``gpu``, ``site``) is bounded and at its bound."""
    here = _options_at(ctx, gpu, site)
    return bool(here) and _all_bounded(ctx, gpu, site) and all(used[i] >= (o.max_units or 0) - USED_UP_TOL for i, o in here)


def _supply(ctx: BuildContext, gpu: str, site: str) -> Limit:
    """The fixed supply of ``gpu`` at ``site`` (its edge devices and inventory) and how to add to it."""
    here = [o for _, o in _options_at(ctx, gpu, site)]
    devices = sum(o.max_units or 0 for o in here if o.kind is SupplyKind.EDGE_DEVICE)
    owned = sum(o.max_units or 0 for o in here if o.kind is SupplyKind.OWNED)
    parts, fixes = [], []
    if devices:
        parts.append(f"the {devices} {gpu} edge device{'s' if devices != 1 else ''} at {site}")
        fixes.append(f"add {gpu} devices at {site} (sites.{site}.devices.{gpu}: {devices} now)")
    if owned:
        parts.append(f"the {owned} owned {gpu} at {site}")
        fixes.append(f"add {gpu} at {site} to the inventory ({owned} now)")
    if not {"rent", "buy"} & set(ctx.scenario.procurement):
        fixes.append("allow rent or buy in procurement")
    what = " and ".join(parts) or f"the {gpu} supply at {site}"
    return Limit(what, ", ".join(fixes) + (" or " if fixes else "") + "allow other GPU types or sites")


def _site_limits(ctx: BuildContext, used: dict[int, float], site_id: str) -> list[Limit]:
    """The GPU-count and power limits of ``site_id`` with no room for one more unit."""
    site = ctx.sites[site_id]
    here = [(i, o) for i, o in enumerate(ctx.supply) if o.site == site_id]
    if not here:
        return []
    out = []
    if site.max_gpus is not None:
        gpus = sum(o.unit_gpus * used[i] for i, o in here)
        if site.max_gpus - gpus < min(o.unit_gpus for _, o in here) - USED_UP_TOL:
            out.append(
                Limit(
                    f"the GPU limit of site {site_id} ({gpus:,.0f} of {site.max_gpus:,} GPUs in use)",
                    f"raise sites.{site_id}.max_gpus ({site.max_gpus:,} now) or allow other sites",
                )
            )
    if site.max_power_kw is not None:
        kw = sum(unit_power_kw(ctx, o, site.pue) * used[i] for i, o in here)
        if site.max_power_kw - kw < min(unit_power_kw(ctx, o, site.pue) for _, o in here) - USED_UP_TOL:
            out.append(
                Limit(
                    f"the power limit of site {site_id} ({kw:,.1f} of {site.max_power_kw:,g} kW in use)",
                    f"raise sites.{site_id}.max_power_kw ({site.max_power_kw:,g} now) or allow other sites",
                )
            )
    return out


def budget_raises(ctx: BuildContext, budget: Budget, cost_usd: float) -> tuple[str, list[str]]:
    """What the solved plan of ``ctx`` (built without ``budget``; horizon cost ``cost_usd``) spends against each
    line ``budget`` states, and the raises that admit it: (", $Y/month in its busiest
    month, $Z capex", ["budget.opex_usd_per_month to 12,345", ...]), the figures being the left sides of the
    budget rows (constraints/budget_max.py) at that plan, so the raised budget holds it."""
    spent = {"total_usd": cost_usd}
    if budget.opex_usd_per_month is not None:
        spent["opex_usd_per_month"] = max(float(pulp.value(opex_usd_per_month(ctx, t)) or 0.0) for t in ctx.slices_of)
    if budget.capex_usd is not None:
        spent["capex_usd"] = float(pulp.value(capex_usd(ctx)) or 0.0)
    text = "".join(
        f", ${spent[k]:,.0f}{label}" for k, label in (("opex_usd_per_month", "/month in its busiest month"),
                                                       ("capex_usd", " capex")) if k in spent
    )
    raises = [
        f"{budget.line(k)} to {math.ceil(v - 1e-6):,}"
        for k, v in spent.items()
        if getattr(budget, k) is not None and getattr(budget, k) < v - 1e-6
    ]
    return text, raises


def cheapest_replica(ctx: BuildContext, workload: str) -> tuple[float, str] | None:
    """(USD per month, what) of the cheapest deployment of ``workload`` that serves on its own: one co-located
    replica, or one prefill-pool replica plus one decode-pool replica of a PD group (a pool serves nothing
    alone); None without any. Less than this per month serves none of its demand."""
    footprint = replica_footprints(ctx)
    best = _cheapest_of(ctx, cands_with_role(ctx.cands, workload, "colocated"), footprint)
    for pools in ctx.pd_groups(workload).values():
        prefill = _cheapest_of(ctx, pools["prefill"], footprint)
        decode = _cheapest_of(ctx, pools["decode"], footprint)
        if prefill is not None and decode is not None:
            pair = (prefill[0] + decode[0], f"{prefill[1]} for prefill + {decode[1]} for decode")
            best = _cheaper(best, pair)
    return best


def _cheapest_of(ctx: BuildContext, cands: Iterable[int], footprint: Mapping[int, float]) -> tuple[float, str] | None:
    """The cheapest (USD per month, what) of one replica among ``cands`` (:func:`_replica_usd_per_month`)."""
    best: tuple[float, str] | None = None
    for k in cands:
        best = _cheaper(best, _replica_usd_per_month(ctx, k, footprint[k]))
    return best


def _cheaper(best: tuple[float, str] | None, other: tuple[float, str] | None) -> tuple[float, str] | None:
    """The cheaper of two (USD per month, what); ties by the words, so the answer does not depend on order."""
    if other is None:
        return best
    return other if best is None or other < best else best


def _replica_usd_per_month(ctx: BuildContext, cand: int, held: float) -> tuple[float, str] | None:
    """(USD per month, what) of one replica of ``cand``, which holds ``held`` GPUs (f_k, as in
    constraints/gpu_supply.py), on the cheapest supply option at its GPU type and site: ⌈f_k / unit_o⌉ units ×
    o's monthly price (a shared fraction of a GPU still takes one whole unit); None where none supplies it."""
    gpu, site = str(ctx.column("gpu")[cand]), str(ctx.column("site")[cand])
    best: tuple[float, str] | None = None
    for o in ctx.supply:
        if (o.gpu, o.site) != (gpu, site):
            continue
        units = max(1, math.ceil(held / o.unit_gpus - 1e-9))
        noun = {"rent": "instance", "buy": "node"}.get(o.procurement.value, "GPU")
        count = "one" if units == 1 else f"{units:g}"
        what = f"{held:g} × {gpu} at {site} in {count} {o.unit_gpus}-GPU {noun}{'s' if units != 1 else ''}, {o.kind.value}"
        best = _cheaper(best, (units * o.usd_per_unit_month, what))
    return best


def slice_words(ctx: BuildContext, workload: str, s: int) -> tuple[int, float, str]:
    """(period, f, where) of slice ``s``: its period, the share f of the period's peak demand its hour block
    carries for ``workload`` (1 without hourly profiles), and "in period 3" or "in period 3, the 6 hours a day
    at 50 % of the peak" — a shortfall there is f of what the peak must shed."""
    period = next(t for t, slices in ctx.slices_of.items() if s in slices)
    if len(ctx.slices_of[period]) == 1:
        return period, 1.0, f"in period {period}"
    peak = max(ctx.demand[(workload, u)] for u in ctx.slices_of[period])
    frac = ctx.demand[(workload, s)] / peak if peak > 0 else 1.0
    if frac >= 1.0 - 1e-12:
        return period, 1.0, f"in period {period} at its peak hours"
    hours = ctx.hours_frac[s] * 24
    return period, frac, f"in period {period}, the {hours:g} hours a day at {frac:.0%} of the peak"


def fixed_supply_text(ctx: BuildContext | None, column: str, value: str) -> str:
    """Why the restriction to ``value`` of ``column`` (a GPU type or site alternative; ``ctx``: the plan's or the
    restriction's built problem) with candidates for every workload has no plan, when its supply options alone
    say nothing: the fixed supply it is left with ("the 1 rtx_4090 edge device at shop cannot carry the demand —
    add …"), else its site and budget limits."""
    pairs = sorted({(o.gpu, o.site) for o in ctx.supply if getattr(o, column) == value}) if ctx is not None else []
    fixed = [_supply(ctx, g, s) for g, s in pairs if ctx is not None and _all_bounded(ctx, g, s)]
    if fixed and len(fixed) == len(pairs):
        what = " and ".join(limit.what for limit in fixed)
        return f"with only {value}: {what} cannot carry the demand — {'; '.join(limit.relax for limit in fixed)}"
    return f"with only {value}, its supply (devices, inventory, site GPU or power limits, budget) cannot carry the demand"
