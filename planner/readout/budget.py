"""How much of each budget line a plan spends, which line binds, and why when none is spent in full.

Spent: capex (nominal), total (present value) and the opex of the plan's busiest month — the opex line
limits every month (constraints/budget_max.py row 2), so with growing demand the mean month would understate
it. A budget line binds when the plan spends ≥ ``BINDING_FRACTION`` of it. A line with money left can still
be what stops the served scale: supply comes in whole units (a purchased node, a rented instance), so the
line binds *in whole units* when what is left is less than the units one more replica needs of the cheapest
supply the plan already uses for that kind of money (opex: in some month with demand, of the supply that can
run that month; the served scale grows every month at once). Every output (``planner budget``, its JSON, the workbook and HTML Summary)
reads :func:`budget_use`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from planner.ledgers.economics import discount_factor
from planner.optimize.served_scale import SCALE_LIMIT, reached_limit
from planner.units import months_text

if TYPE_CHECKING:
    from planner.readout.ledger import CostLedger
    from planner.readout.result import PlanResult
    from planner.readout.types import SupplyLine

BINDING_FRACTION = 0.999
"""Share of a budget line spent from which it counts as binding."""

BUDGET_KEYS = ("capex_usd", "opex_usd_per_month", "total_usd")
"""Budget fields (scenario ``budget:`` and ``planner budget`` options), in the order they are shown."""


@dataclass(frozen=True)
class UnitStep:
    """The cheapest whole unit of supply the plan uses, priced in one budget line's money."""

    usd: float
    what: str
    """e.g. "one 8-GPU h200_sxm node at dc1"."""
    left_usd: float = 0.0
    """Money left on the line (opex: in :attr:`month`), less than :attr:`usd`."""
    month: int | None = None
    """Opex only: the month whose money left is less than the step (the line limits every month)."""


@dataclass(frozen=True)
class BudgetUse:
    """Spent against each stated budget line (USD; opex per month), the share used and the binding limit."""

    spent: dict[str, float]
    limits: dict[str, float | None]
    used_frac: dict[str, float | None]
    binding: list[str]
    """Lines spent to ≥ BINDING_FRACTION."""
    whole_units: dict[str, UnitStep]
    """Lines with money left that is less than one more replica's units of the cheapest supply the plan uses
    (opex: in some month, of the supply usable that month); empty when the search stopped at its limit."""
    binding_limit: str
    """The binding limit in words (terminal, JSON and workbook)."""

    def to_json(self) -> dict[str, Any]:
        """``budget_used`` of ``planner budget --json``."""
        return {
            **self.spent,
            "limits": self.limits,
            "used_frac": self.used_frac,
            "binding": self.binding,
            "whole_units": {k: asdict(v) for k, v in self.whole_units.items()},
            "binding_limit": self.binding_limit,
        }


def _unit_name(s: SupplyLine, count: int = 1) -> str:
    unit = "node" if s.procurement in ("buy", "inventory") else "instance"
    if count == 1:
        return f"one {s.unit_gpus}-GPU {s.gpu} {unit} at {s.site}"
    return f"{count} {s.unit_gpus}-GPU {s.gpu} {unit}s at {s.site}"


def _units_per_replica(result: PlanResult, s: SupplyLine) -> tuple[int, str]:
    """(units of supply line ``s`` one more replica needs, what for): the fewest over the plan's deployments
    on its GPU type and site, ⌈replica GPUs ÷ unit GPUs⌉ (1 when a unit holds a replica, or none runs there)."""
    needs = sorted(
        (max(1, math.ceil(d.gpus / d.replicas / s.unit_gpus - 1e-9)), d.gpus / d.replicas, d.workload)
        for d in result.deployments
        if d.gpu == s.gpu and d.site == s.site and d.replicas > 0
    )
    if not needs or needs[0][0] == 1:
        return 1, ""
    count, replica_gpus, workload = needs[0]
    return count, f" for one {replica_gpus:g}-GPU replica of {workload}"


def _step(result: PlanResult, s: SupplyLine, usd_per_unit: float) -> UnitStep:
    count, why = _units_per_replica(result, s)
    return UnitStep(count * usd_per_unit, _unit_name(s, count) + why)


def _unit_steps(result: PlanResult) -> dict[str, UnitStep]:
    """Capex and total: the cheapest step of supply the plan uses that adds one replica, in that line's money:
    the units of one supply line one more replica needs (:func:`_units_per_replica`) × capex = the line's
    capex ÷ its units; total = what one more unit adds over the months it is paid for (:func:`_total_per_unit`).
    A 2-GPU replica on 1-GPU instances takes two."""
    options: dict[str, list[UnitStep]] = {"capex_usd": [], "total_usd": []}
    for s in result.supply:
        if s.units <= 0:
            continue
        if s.procurement == "buy" and s.capex_usd > 0:
            options["capex_usd"].append(_step(result, s, s.capex_usd / s.units))
        if s.cost_usd_per_month > 0:
            usd, held = _total_per_unit(result, s)
            step = _step(result, s, usd)
            options["total_usd"].append(replace(step, what=step.what + held))
    return {k: min(v, key=lambda u: (u.usd, u.what)) for k, v in options.items() if v}


TERM_MONTHS = {"reserved_1y": 12, "reserved_3y": 36}
"""Months a reserved unit is paid for (its whole term, past the horizon too: planner.problem.cost_terms (4))."""


def _total_per_unit(result: PlanResult, s: SupplyLine) -> tuple[float, str]:
    """(USD, for how long) one more unit of supply line ``s`` adds to the horizon cost (present value, the total
    line's money). The served scale grows in every month at once, so one more replica is paid in every month
    whose capacity the plan uses up (:func:`_full_months`: with a flat demand every month, with a growing one
    maybe one period): on-demand and spot rent for those months, a reservation for every month of each term
    window holding one of them (past the horizon too), a purchase (and owned supply) the line's horizon cost ÷
    its units. One period's rent, the step before for every plan, is a lower bound: chat_70b_cloud $21,101 short
    of two more H100s over 36 months ($139,450) said "no budget line binds". With hourly profiles, or no month
    used up, it still is (one period's shortest hour block: with hour blocks the per-period loads are daily
    means, so no month reads as used up).
    The rent volume discount is left out (it is the whole line's)."""
    period = result.scenario.period_months
    full = [] if any(e.hour_blocks for e in result.schedule) else _full_months(result)
    if s.procurement == "rent" and s.rental_kind in HOURLY_BILLED and not full:
        block = min(
            (_shortest_block_frac(result, e.months[0]) for e in result.schedule if e.months), default=1.0
        )
        hours = f", {block * 24:g} hours a day" if block < 1.0 else ""
        return s.usd_per_unit_month * period * block, f" for one {period}-month period{hours}"
    rate = result.scenario.economics.cost_of_capital_frac_per_year
    if s.procurement == "rent" and s.rental_kind in HOURLY_BILLED:
        usd = sum(s.usd_per_unit_month * discount_factor(m, cost_of_capital_frac_per_year=rate) for m in full)
        if len(full) == period and full == list(range(full[0], full[0] + period)):
            return usd, f" for one {period}-month period"
        return usd, f" for the {months_text(len(full))} whose capacity the plan uses up"
    if s.procurement == "rent" and s.rental_kind in TERM_MONTHS:
        term = TERM_MONTHS[s.rental_kind]
        windows = sorted({m // term for m in full}) or [0]
        months = [w * term + k for w in windows for k in range(term)]
        usd = sum(s.usd_per_unit_month * discount_factor(m, cost_of_capital_frac_per_year=rate) for m in months)
        if len(windows) == 1:
            return usd, f" for its {term}-month term"
        return usd, f" for {len(windows)} {term}-month terms"
    return s.cost_usd_per_month * result.scenario.horizon_months / s.units, ""


FULL_TOLERANCE_FRAC = 1e-5
"""A deployment serving at least (1 − this) of its replicas' capacity in a period has none to spare there (the
flows are the balanced split's, planner.optimize.balanced_flows, exact to HiGHS's 1e-7 req/s: 1e-6 of a
0.1 req/s long-context replica)."""


def _full_months(result: PlanResult) -> list[int]:
    """Months of the periods where some workload has no capacity to spare: each of its co-located
    deployments with replicas there serves their capacity, and each of its prefill/decode pairs has a pool
    that does, so serving more of it takes one more replica there."""
    full: list[int] = []
    for t, entry in enumerate(result.schedule):
        spare: dict[str, bool] = {}
        pools: dict[tuple[str, str], list[bool]] = {}
        for d in result.deployments:
            reps = d.replicas_per_period[t] if t < len(d.replicas_per_period) else 0
            if reps <= 0:
                continue
            served = d.served_requests_per_s_per_period[t]
            has_room = served < (1 - FULL_TOLERANCE_FRAC) * reps * d.capacity_per_replica_requests_per_s
            if d.role == "colocated":
                spare[d.workload] = spare.get(d.workload, False) or has_room
            else:
                pools.setdefault((d.workload, d.pd_group), []).append(has_room)
        for (workload, _group), rooms in pools.items():
            spare[workload] = spare.get(workload, False) or all(rooms)
        if any(not room for room in spare.values()):
            full.extend(entry.months)
    return full


HOURLY_BILLED = ("on_demand", "spot")
"""Rental kinds that follow a plan's hour blocks and are billed for the hours they run (constraints/commitments.py)."""


def _shortest_block_frac(result: PlanResult, month: int) -> float:
    """Share of the day of the shortest hour block of ``month``'s period (1 without hourly profiles)."""
    entry = next((e for e in result.schedule if month in e.months), None)
    if entry is None or not entry.hour_blocks:
        return 1.0
    return min(b.hours_per_day for b in entry.hour_blocks) / 24.0


def _opex_step(result: PlanResult, ledger: CostLedger, limit: float) -> UnitStep | None:
    """The first month whose opex left (limit − that month's opex) is less than one more replica's units of
    the cheapest supply the plan uses that can serve that month (its monthly price; a purchase from the first
    period that starts after its delivery; on-demand and spot rent for the shortest hour block only, the least
    one more unit can cost), with both amounts; None when every month has room. Served demand grows by one factor in every month with demand,
    so one such month stops it (in whole units)."""
    by_month = ledger.opex_usd_by_month
    for month in range(ledger.horizon_months):
        start = month - month % result.scenario.period_months  # bought nodes serve from a period's start
        period = month // result.scenario.period_months
        if not any(s.units_per_period[period] > 0 for s in result.supply):
            continue  # nothing runs that month (a delivered node paid before it serves is idle): no demand
        usable = [
            s for s in result.supply
            if s.units > 0 and s.usd_per_unit_month > 0 and (s.procurement != "buy" or start >= s.available_from_month)
        ]  # fmt: skip
        if not usable:
            continue
        block = _shortest_block_frac(result, month)
        steps = []
        for s in usable:
            hourly = s.procurement == "rent" and s.rental_kind in HOURLY_BILLED and block < 1.0
            step = _step(result, s, s.usd_per_unit_month * (block if hourly else 1.0))
            steps.append(
                replace(step, what=step.what + f" for {block * 24:g} hours a day") if hourly else step
            )
        step = min(steps, key=lambda u: (u.usd, u.what))
        left = limit - by_month.get(month, 0.0)
        if left < step.usd:
            return replace(step, left_usd=left, month=month)
    return None


def busiest_opex_usd_per_month(ledger: CostLedger) -> float:
    """Opex of the plan's busiest month (rent net of discounts + running costs), USD/month: what a monthly
    opex budget limits (every month, a reservation's months past the horizon included); 0 without opex."""
    return max(ledger.opex_usd_by_month.values(), default=0.0)


def _money(usd: float) -> str:
    return f"${usd:,.0f}"


OVER_FRACTION = 1.0 + 1e-6
"""Share of a budget line spent above which the plan exceeds it (solver tolerance aside)."""


def _over_text(spent: dict[str, float], limits: dict[str, float | None], ledger: CostLedger) -> str:
    """Text " (LINE over the limit: ...)" for each line the plan's cash spends beyond its limit (none when it keeps within
    all); the opex line names its busiest month. A plan the MILP kept within its rows can still exceed the opex
    line in cash where a row misses a month's cost, so the readout says so rather than call it merely binding."""
    parts = []
    for k in BUDGET_KEYS:
        limit = limits[k]
        if limit is None or spent[k] <= limit * OVER_FRACTION:
            continue
        where = ""
        if k == "opex_usd_per_month":
            by_month = ledger.opex_usd_by_month
            month = min(m for m, usd in by_month.items() if usd == spent[k])
            where = f" in month {month}"
        parts.append(f" ({k} over the limit{where}: {_money(spent[k])} > {_money(limit)})")
    return "".join(parts)


def budget_use(result: PlanResult) -> BudgetUse | None:
    """The plan's budget lines (None when the scenario states no budget or there is no plan)."""
    budget = result.scenario.budget
    ledger = result.ledger
    if budget is None or ledger is None:
        return None
    spent = {
        "capex_usd": ledger.capex_usd,
        # the limit holds in every month (constraints/budget_max.py row 2), so what it limits is the
        # busiest month's opex, not the mean month's: with growing demand they differ
        "opex_usd_per_month": busiest_opex_usd_per_month(ledger),
        "total_usd": ledger.total_usd,
    }
    limits: dict[str, float | None] = {k: getattr(budget, k) for k in BUDGET_KEYS}
    used = {k: (spent[k] / v if v else None) for k, v in limits.items() if v is not None}
    binding = [k for k in BUDGET_KEYS if (used.get(k) or 0.0) >= BINDING_FRACTION]
    left = {k: v - spent[k] for k, v in limits.items() if v is not None and k not in binding}
    steps = _unit_steps(result)
    whole_units = {
        k: UnitStep(steps[k].usd, steps[k].what, left_usd=left[k])
        for k in left
        if k in steps and left[k] < steps[k].usd
    }
    opex_limit = limits["opex_usd_per_month"]
    opex_step = (
        _opex_step(result, ledger, opex_limit) if "opex_usd_per_month" in left and opex_limit else None
    )
    if opex_step is not None:
        whole_units["opex_usd_per_month"] = opex_step
    whole_units = {k: whole_units[k] for k in BUDGET_KEYS if k in whole_units}
    searched_to_limit = reached_limit(result.served_scale, SCALE_LIMIT)
    if searched_to_limit or result.served_scale is None:
        # nothing stopped the search before its limit, or a min-cost plan (nothing grows): no whole-unit line
        whole_units = {}
    if binding:
        text = ", ".join(binding) + _over_text(spent, limits, ledger)
    elif whole_units:
        text = "; ".join(
            f"{k} in whole units: {'' if u.month is None else f'in month {u.month} '}the {_money(u.left_usd)} left "
            f"is less than {u.what} ({_money(u.usd)})"
            for k, u in whole_units.items()
        )
    elif result.served_scale is None:
        text = f"no budget line (none is spent to {BINDING_FRACTION:.1%})"
    else:
        families = sorted({str(b.get("family")) for b in result.binding_constraints})
        text = "no budget line binds (the plan's binding rows: " + (", ".join(families) or "none") + ")"
        if searched_to_limit:
            text += (
                f"; the search stops at {SCALE_LIMIT:,.0f}× the stated demand, so the budget serves at least that "
                "(state a larger demand to look further, and check that a budget line pays for this plan's supply: "
                "rent from opex_usd_per_month and total_usd, purchases from capex_usd and total_usd)"
            )
    return BudgetUse(spent, limits, used, binding, whole_units, text)
