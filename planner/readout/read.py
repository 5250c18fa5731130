"""Read a solved plan back (by variable key, never by name) into typed records and its cost ledger.

The ledger's cash lines are the only place where the plan's money is computed; supply lines and
deployments read their USD figures from it.
"""

from __future__ import annotations

from planner.demand import mean_to_peak_per_period
from planner.ledgers.economics import bought_unit_cash_flow_usd, delivery_month, discount_factor
from planner.optimize.solver import Solution
from planner.problem.context import BuildContext
from planner.problem.cost_terms import RENT_DISCOUNT, term_tail
from planner.problem.instances import instance_gpus
from planner.problem.roles import serving_cands
from planner.problem.supply import Procurement, SupplyKind, SupplyOption
from planner.readout.ledger import CashKind, CashLine, CostLedger
from planner.readout.types import HourBlock, ScheduleEntry, SupplyLine
from planner.units import S_PER_MONTH

BUCKET = {Procurement.BUY: "bought_gpus", Procurement.RENT: "rented_gpus", Procurement.OWNED: "owned_gpus"}


def _slices_of_period(ctx: BuildContext, period: int) -> list[int]:
    """Time slices standing for horizon period ``period`` (its representative's hour blocks)."""
    return ctx.slices_of[ctx.representative_of[period]]


def _units(sol: Solution, option: int, s: int) -> int:
    return round(sol.values["units"].get((option, s), 0.0))


def billed_units(ctx: BuildContext, sol: Solution, option: int, period: int) -> float:
    """Units of supply ``option`` billed in horizon ``period``: Σ over its hour-block slices of share of the
    day × units (the integer unit count without hourly profiles)."""
    slices = _slices_of_period(ctx, period)
    if len(slices) == 1:
        return _units(sol, option, slices[0])
    return sum(ctx.hours_frac[s] * _units(sol, option, s) for s in slices)


def _gpus_in_use(ctx: BuildContext, sol: Solution, slices: list[int]) -> dict[str, dict[str, int]]:
    """GPUs by bucket (bought / rented / owned) and gpu@site at the busiest of ``slices``."""
    out: dict[str, dict[str, int]] = {"bought_gpus": {}, "rented_gpus": {}, "owned_gpus": {}}
    for i, opt in enumerate(ctx.supply):
        units = max(_units(sol, i, s) for s in slices)
        if units:
            bucket, key = BUCKET[opt.procurement], f"{opt.gpu}@{opt.site}"
            out[bucket][key] = out[bucket].get(key, 0) + units * opt.unit_gpus
    return out


def _served(ctx: BuildContext, sol: Solution, slices: list[int], serving: dict[str, list[int]]) -> dict[str, float]:
    """Requests/s served per workload (its serving candidates: :func:`_serving`), averaged over the day
    (hours-weighted over ``slices``)."""
    weight = sum(ctx.hours_frac[s] for s in slices)
    return {
        w.name: sum(
            ctx.hours_frac[s] * sol.values["flow"][(int(k), s)]
            for k in serving[w.name]
            for s in slices
        )
        / weight
        for w in ctx.scenario.workloads
    }


def _serving(ctx: BuildContext) -> dict[str, list[int]]:
    """Workload → candidates whose flows count its served requests (planner.problem.roles.serving_cands)."""
    return {w.name: serving_cands(ctx.cands, w.name) for w in ctx.scenario.workloads}


def schedule(ctx: BuildContext, sol: Solution) -> list[ScheduleEntry]:
    """Per period of the horizon: GPUs ordered (capex paid), bought (delivered), rented and owned in use at
    the day's peak, and requests/s served (the daily mean); with hourly profiles also each hour block."""
    rows = []
    pm = ctx.scenario.period_months
    serving = _serving(ctx)  # read from the candidate table once, not per period
    for t in range(ctx.scenario.periods):
        slices = _slices_of_period(ctx, t)
        months = list(range(t * pm, (t + 1) * pm))
        ordered: dict[str, int] = {}
        for i, opt in enumerate(ctx.supply):
            bought = round(sol.values["bought"].get(i, 0.0)) if opt.kind is SupplyKind.BUY else 0
            if bought and opt.purchase_month in months:
                key = f"{opt.gpu}@{opt.site}"
                ordered[key] = ordered.get(key, 0) + bought * opt.unit_gpus
        blocks = (
            [
                HourBlock(ctx.hours_frac[s] * 24, _gpus_in_use(ctx, sol, [s])["rented_gpus"], _served(ctx, sol, [s], serving))
                for s in slices
            ]
            if len(slices) > 1
            else []
        )
        rows.append(
            ScheduleEntry(
                period=t,
                start_month=t * pm,
                months=months,
                representative_period=ctx.representative_of[t],
                ordered_gpus=ordered,
                **_gpus_in_use(ctx, sol, slices),
                served_requests_per_s=_served(ctx, sol, slices, serving),
                hour_blocks=blocks,
            )
        )
    return rows


def served_output_tokens(ctx: BuildContext, entries: list[ScheduleEntry]) -> float:
    """Output tokens served over the horizon: Σ_periods Σ_w served req/s (daily mean, at the period's peak
    month) × the period's mean-to-peak month ratio (planner.demand.mean_to_peak_per_period: a growing
    demand's earlier months ask less) × G_w × seconds."""
    scenario = ctx.scenario
    seconds = S_PER_MONTH * scenario.period_months
    mean_frac = {
        w.name: mean_to_peak_per_period(w, periods=scenario.periods, period_months=scenario.period_months)
        for w in scenario.workloads
    }
    return sum(
        entry.served_requests_per_s[w.name] * mean_frac[w.name][entry.period] * w.output_tokens * seconds
        for entry in entries
        for w in scenario.workloads
    )


def _option_lines(ctx: BuildContext, sol: Solution, i: int, opt: SupplyOption) -> list[CashLine]:
    """Cash lines of supply option ``i``: a bought node's capex / running / resale
    (planner.ledgers.economics.bought_unit_cash_flow_usd) × nodes bought; else per month the billed units
    × the monthly price (rent or running) and the rent volume discount (negative); a reserved option also
    in the months after the horizon up to the end of its term, at the units of the horizon's last period
    (planner.problem.cost_terms.term_tail, as the objective bills them)."""
    econ = ctx.scenario.economics
    proc = opt.procurement.value
    if opt.kind is SupplyKind.BUY:
        bought = round(sol.values["bought"].get(i, 0.0))
        if not bought:
            return []
        flow = bought_unit_cash_flow_usd(
            opt.capex_usd_per_unit,
            horizon_months=ctx.scenario.horizon_months,
            lead_time_months=opt.lead_time_months,
            lifetime_years=opt.lifetime_years,
            resale_frac=econ.resale_frac,
            running_usd_per_month=opt.usd_per_unit_month,
            cost_of_capital_frac_per_year=econ.cost_of_capital_frac_per_year,
            purchase_month=opt.purchase_month,
        )
        return [CashLine(m, kind, opt.id, proc, bought * usd, bought * pv) for m, kind, usd, pv in flow]
    kind: CashKind = "rent" if opt.procurement is Procurement.RENT else "running"
    discounts = sol.values.get(RENT_DISCOUNT, {})
    lines = []
    horizon = ctx.scenario.horizon_months
    tail_months, tail_slices = term_tail(ctx, i)
    for m in [*range(horizon), *tail_months]:
        slices = _slices_of_period(ctx, m // ctx.scenario.period_months) if m < horizon else tail_slices
        usd = sum(ctx.hours_frac[s] * opt.usd_per_unit_month * _units(sol, i, s) for s in slices)
        off = sum(ctx.hours_frac[s] * discounts.get((i, s), 0.0) for s in slices)
        d = discount_factor(m, cost_of_capital_frac_per_year=econ.cost_of_capital_frac_per_year)
        if usd:
            lines.append(CashLine(m, kind, opt.id, proc, usd, usd * d))
        if off > 1e-9:
            lines.append(CashLine(m, "discount", opt.id, proc, -off, -off * d))
    return lines


def cost_ledger(ctx: BuildContext, sol: Solution, entries: list[ScheduleEntry]) -> CostLedger:
    """The plan's cost ledger: every supply option's cash lines, and the output tokens served."""
    lines = [line for i, opt in enumerate(ctx.supply) for line in _option_lines(ctx, sol, i, opt)]
    return CostLedger(ctx.scenario.horizon_months, tuple(lines), served_output_tokens(ctx, entries))


def _tail_units(ctx: BuildContext, sol: Solution, option: int) -> list[float]:
    """Billed units of supply ``option`` in each month of its term tail after the horizon (none but for a
    reservation whose last term runs past it; planner.problem.cost_terms.term_tail)."""
    months, slices = term_tail(ctx, option)
    units = sum(ctx.hours_frac[s] * _units(sol, option, s) for s in slices)
    return [units for _ in months] if units else []


def _paid_units_per_month(ctx: BuildContext, sol: Solution, option: int, opt: SupplyOption) -> list[float]:
    """Units of supply ``option`` paid for in each month, as the ledger books them: rented, owned and edge
    units billed in the month (hour blocks weighted; a reservation's term past the horizon too); bought nodes
    from their delivery month on, where their running cost starts (planner.ledgers.economics), though they
    serve from the first period that starts after it (:attr:`SupplyLine.units_per_period`)."""
    horizon = ctx.scenario.horizon_months
    if opt.kind is SupplyKind.BUY:
        bought = round(sol.values["bought"].get(option, 0.0))
        start = delivery_month(opt.available_from_month)
        return [bought if m >= start else 0 for m in range(horizon)]
    pm = ctx.scenario.period_months
    return [billed_units(ctx, sol, option, m // pm) for m in range(horizon)] + _tail_units(ctx, sol, option)


def supply_lines(ctx: BuildContext, sol: Solution, ledger: CostLedger) -> list[SupplyLine]:
    """The supply options in use, their units per period and month, and their money from ``ledger``."""
    rows = []
    horizon = ctx.scenario.horizon_months
    for i, opt in enumerate(ctx.supply):
        units = max(_units(sol, i, t) for t in ctx.periods)
        if units == 0:
            continue
        rows.append(
            SupplyLine(
                id=opt.id,
                gpu=opt.gpu,
                site=opt.site,
                kind=opt.kind.value,
                procurement=opt.procurement.value,
                rental_kind=opt.rental_kind,
                unit_gpus=opt.unit_gpus,
                units=units,
                gpus=units * opt.unit_gpus,
                usd_per_unit_month=opt.usd_per_unit_month,
                cost_usd_per_month=ledger.supply_cost_usd(opt.id) / horizon,
                capex_usd=ledger.supply_usd(opt.id, "capex"),
                residual_usd=-ledger.supply_usd(opt.id, "resale"),
                available_from_month=opt.available_from_month,
                purchase_month=opt.purchase_month if opt.kind is SupplyKind.BUY else None,
                units_per_period=[billed_units(ctx, sol, i, t) for t in range(ctx.scenario.periods)],
                units_per_month=_paid_units_per_month(ctx, sol, i, opt),
                volume_discount_usd=-sum(
                    line.discounted_usd for line in ledger.lines if line.supply_id == opt.id and line.kind == "discount"
                ),
                source=opt.source,
                max_instance_gpus=instance_gpus(opt, ctx.gpu(opt.gpu).gpus_per_node),
            )
        )
    return rows
