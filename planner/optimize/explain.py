"""Why a scenario has no plan: per workload, the requirement that binds, the best attainable value and the
smallest relaxation that makes it feasible.

Two causes: no candidate meets a workload's SLOs at all (planner.optimize.explain_slo, read from the
candidate table), or the candidates exist but shared resources cannot carry the demand
(:func:`explain_supply` from the supply options alone, :func:`explain_capacity`: an elastic re-solve that
names the binding resource rows).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from planner.candidates import CandidateTable, workload_sites
from planner.catalog.loader import Catalog
from planner.optimize.explain_words import budget_raises, cheapest_replica, slice_words, used_up_limits
from planner.optimize.relaxations import Relaxation, bridge_relaxation, capex_relaxation, supply_relaxation
from planner.optimize.solver import SolverName, solve_context
from planner.problem.context import BuildContext, build_context
from planner.problem.supply import SupplyKind
from planner.scenario import Scenario, Workload
from planner.units import three_digits_text

EXPLAIN_MAX_NODES = 2000
"""Branch-and-bound nodes of the elastic re-solve (a work limit, so the explanation is repeatable)."""


@dataclass(frozen=True)
class Explanation:
    """One reason a plan is infeasible, in the user's words, with the relaxation that removes it."""

    workload: str | None
    requirement: str
    """memory, context_window, redundancy, tpot_ms, ttft_ms, slo (both met apart, never together), sync_ratio,
    requests_per_s, budget or unknown."""
    message: str
    relaxation: str = ""
    best_value_ms: float | None = None
    slo_ms: float | None = None
    period: int | None = None
    best_value_requests_per_s: float | None = None
    demand_requests_per_s: float | None = None
    periods: list[int] | None = None
    """Every period a merged shortfall stands for (planner.optimize.explain.merged_periods), the first being
    ``period``, whose figures it gives; None for a single period."""
    buy_only_option_relaxation: str | None = dataclasses.field(default=None, metadata={"json": False})
    """``relaxation`` as `planner compare`'s buy_only option words it, where renting is another option, not a
    change (planner.optimize.relaxations.Relaxation); None: the same words. Not in the JSON."""

    @classmethod
    def relaxed(cls, workload: str, requirement: str, message: str, relaxation: Relaxation) -> Explanation:
        """An explanation whose relaxation has a buy_only-option wording of its own."""
        return cls(workload, requirement, message, relaxation.text, buy_only_option_relaxation=relaxation.buy_only_option_text)

    def to_json(self) -> dict[str, Any]:
        """The fields that apply (None-valued optional fields and the buy_only option's wording left out)."""
        data = dataclasses.asdict(self)
        hidden = {f.name for f in dataclasses.fields(self) if f.metadata.get("json") is False}
        return {k: v for k, v in data.items() if (v is not None or k == "workload") and k not in hidden}


def explain_supply(ctx: BuildContext) -> list[Explanation]:
    """Causes read from the supply options alone, per workload (in the user's words):

    * no supply at all for its GPUs and sites — with buy-only procurement, no site allows buying (only
      datacenter sites do);
    * nothing arrives before month N: every option is a purchase, delivered N months in at the earliest
      (the lead time), so the demand of the months before cannot be served;
    * a capex budget below the price of one node of every buy option it has (and nothing else to use)."""
    out: list[Explanation] = []
    scenario = ctx.scenario
    budget = scenario.budget
    for w in scenario.workloads:
        pairs = {
            (str(g), str(site))
            for g, site in ctx.cands.loc[list(ctx.cands_of_workload(w.name)), ["gpu", "site"]].itertuples(
                index=False
            )
        }
        options = [o for o in ctx.supply if (o.gpu, o.site) in pairs]
        # the workload's sites as stated (none listed: every cloud site), not those its kept candidates are
        # at: dominance pruning keeps one of several sites with the same prices
        sites = ", ".join(site.id for site in workload_sites(w, ctx.sites)) or "none"
        if not options:
            buy_only = scenario.procurement == ["buy"] or "rent" not in scenario.procurement
            message = (
                f"{w.name}: no site allows buying (buying needs a datacenter site; its sites: {sites})"
                if buy_only
                else f"{w.name}: no way to obtain its GPUs at its sites ({sites}): no rent quote, purchase or inventory"
            )
            out.append(Explanation.relaxed(w.name, "supply", message, supply_relaxation(ctx, w.name, buy_only)))
            continue
        if all(o.kind is SupplyKind.BUY for o in options):
            first = min(o.available_from_month for o in options)
            lead = min(o.lead_time_months for o in options)
            early = any(ctx.demand[(w.name, t)] > 0 for t in ctx.periods if ctx.start_month[t] < first)
            if first > 0 and early and scenario.objective == "min_cost":  # demand before the first delivery
                out.append(
                    Explanation.relaxed(
                        w.name,
                        "lead_time",
                        f"{w.name}: nothing bought arrives before month {first:g} (purchase lead time {lead:g} "
                        f"months), so its demand before month {first:g} cannot be served",
                        bridge_relaxation(ctx, w.name, first),
                    )
                )
            cheapest = min(o.capex_usd_per_unit for o in options)
            if budget is not None and budget.capex_usd is not None and budget.capex_usd < cheapest:
                node = min(options, key=lambda o: o.capex_usd_per_unit)
                out.append(
                    Explanation.relaxed(
                        w.name,
                        "budget",
                        f"{w.name}: the capex budget ${budget.capex_usd:,.0f} is below one node "
                        f"(${cheapest:,.0f}: {node.gpu} at {node.site})",
                        capex_relaxation(ctx, w.name, f"raise {budget.line('capex_usd')} to {math.ceil(cheapest - 1e-6):,}"),
                    )
                )
        replica = cheapest_replica(ctx, w.name)
        if budget is not None and budget.opex_usd_per_month is not None and replica is not None:
            monthly, what = replica
            if budget.opex_usd_per_month < monthly * (1 - 1e-9):  # the advice below, met, is not "below"
                out.append(
                    Explanation(
                        w.name,
                        "budget",
                        f"{w.name}: the opex budget ${budget.opex_usd_per_month:,.0f}/month is below its cheapest "
                        f"replica (${monthly:,.0f}/month: {what})",
                        f"raise {budget.line('opex_usd_per_month')} to {math.ceil(monthly - 1e-6):,} at least",
                    )
                )
    return out


def explain_capacity(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, solver: SolverName
) -> list[Explanation]:
    """Re-solve with a penalized shortfall per workload to name the resource rows that bind (devices, site
    GPUs, power, budget: the families of role ``resource``)."""
    ctx = build_context(catalog, scenario, table)
    causes = explain_supply(ctx)
    over_budget = _budget_cause(catalog, scenario, table, solver) if not causes else None
    if over_budget is not None:
        causes = [over_budget]
    ctx.elastic = True
    sol = solve_context(ctx, solver=solver, max_nodes=EXPLAIN_MAX_NODES)
    if sol.status == "infeasible":
        return causes or [
            Explanation(
                workload=None,
                requirement="unknown",
                message="the model stays infeasible even with unlimited shortfall",
            )
        ]
    out: list[Explanation] = list(causes)
    explained = {c.workload for c in causes if c.workload is not None}  # their shortfall restates the cause
    workloads = {w.name: w for w in scenario.workloads}
    shortfalls: list[Shortfall] = []
    for (w_name, t), short in sorted(sol.values.get("short", {}).items()):
        if short <= 1e-6 or w_name in explained:
            continue
        limits = used_up_limits(ctx, sol.values, w_name, t)
        limit_text = "; ".join(limit.what for limit in limits) or "no single limit (supply, site or budget) is used up"
        relax_text = "; or ".join(limit.relax for limit in limits) or None
        if over_budget is not None:  # the budget stopped the next unit of supply, whatever else is used up
            limit_text = _budget_text(scenario)
            relax_text = over_budget.relaxation or f"relax {limit_text}"
        demand = ctx.demand[(w_name, t)]
        period, frac, where = slice_words(ctx, w_name, t)
        shortfalls.append(
            Shortfall(
                workload=w_name,
                period=period,
                served_requests_per_s=demand - short,
                demand_requests_per_s=demand,
                where=where,
                binding=limit_text,
                relaxation=_shortfall_relaxation(workloads[w_name], period, (demand - short) / frac, relax_text),
            )
        )
    if over_budget is not None and over_budget.relaxation:
        shortfalls = _budget_only(shortfalls, over_budget.relaxation)
    return out + merged_periods(shortfalls)


def _budget_only(shortfalls: list[Shortfall], relaxation: str) -> list[Shortfall]:
    """Under a budget cause, a workload short in several periods gets the budget's relaxation alone: lowering one
    period's demand ("so that period 9 asks 38.3 req/s", buy_vs_rent under a $100,000 total) does not make the
    plan fit a budget the periods share; short in one period, lowering it there does (it is offered)."""
    count: dict[str, int] = {}
    for s in shortfalls:
        count[s.workload] = count.get(s.workload, 0) + 1
    return [dataclasses.replace(s, relaxation=relaxation) if count[s.workload] > 1 else s for s in shortfalls]


@dataclass(frozen=True)
class Shortfall:
    """A workload's demand not served in one slice of the elastic re-solve, before it is put in words."""

    workload: str
    period: int
    served_requests_per_s: float
    demand_requests_per_s: float
    where: str
    """Where in the horizon, as the message says it: "in period 3", "in period 6 at its peak hours" (an hour
    block of an hourly profile: planner.optimize.explain_words.slice_words)."""
    binding: str
    """The limits used up, in words ("the 2 rtx_4090 edge devices at shop (all in use)")."""
    relaxation: str

    @property
    def whole_period(self) -> bool:
        """The shortfall is a whole period's (not one hour block of it): only those merge."""
        return self.where == f"in period {self.period}"

    def continues(self, last: Shortfall) -> bool:
        """This shortfall repeats ``last`` in the next period: same workload, served rate, limits, relaxation."""
        return (
            self.whole_period
            and last.whole_period
            and last.period + 1 == self.period
            and (last.workload, last.served_requests_per_s, last.binding, last.relaxation)
            == (self.workload, self.served_requests_per_s, self.binding, self.relaxation)
        )


def merged_periods(shortfalls: list[Shortfall]) -> list[Explanation]:
    """Shortfalls of consecutive whole periods of one workload with the same served rate, binding limits and
    relaxation, as one cause ("… in period 0, and likewise in periods 1–11"): a budget below
    every plan stopped each of 12 periods and was printed 12 times. The records are grouped first and each
    group's message written once; the first period's figures stay the cause's, ``periods`` lists every period
    it stands for."""
    groups: list[list[Shortfall]] = []
    for s in shortfalls:
        if groups and s.continues(groups[-1][-1]):
            groups[-1].append(s)
        else:
            groups.append([s])
    return [_shortfall_explanation(group) for group in groups]


def _shortfall_explanation(group: list[Shortfall]) -> Explanation:
    """One cause for a run of alike shortfalls, in words: the first's figures, naming the other periods."""
    first, periods = group[0], [s.period for s in group]
    likewise = ""
    if len(periods) > 1:
        others = f"{periods[1]}" if len(periods) == 2 else f"{periods[1]}–{periods[-1]}"
        likewise = f", and likewise in period{'s' if len(periods) > 2 else ''} {others}"
    served, demand = first.served_requests_per_s, first.demand_requests_per_s
    return Explanation(
        workload=first.workload,
        period=first.period,
        requirement="requests_per_s",
        best_value_requests_per_s=served,
        demand_requests_per_s=demand,
        message=f"{first.workload}: at most {three_digits_text(served)} of {three_digits_text(demand)} req/s "
        f"can be served {first.where}{likewise}; binding: {first.binding}",
        relaxation=first.relaxation,
        periods=periods if len(periods) > 1 else None,
    )


def _shortfall_relaxation(workload: Workload, period: int, served: float, relax_text: str | None) -> str:
    """Lower the (peak) demand of ``period`` to what can be served there, ``served`` (not to 0; the list entry of
    a per-period demand), or relax the binding limits (``relax_text``; None when no resource row binds)."""
    name, rate = workload.name, workload.requests_per_s
    if isinstance(rate, list):
        lower = f"lower {name}.requests_per_s[{period}] to {three_digits_text(served)}"
    elif workload.growth_frac_per_month:
        lower = f"lower {name}.requests_per_s or growth_frac_per_month so that period {period} asks {three_digits_text(served)} req/s"
    else:
        lower = f"lower {name}.requests_per_s to {three_digits_text(served)}"
    options = ([lower] if served > 1e-9 else []) + ([relax_text] if relax_text else [])
    return ", or ".join(options) or f"allow {name} more sites, GPU types or looser SLOs (no single limit is used up)"


def _budget_text(scenario: Scenario) -> str:
    """The scenario's budget lines: 'budget.total_usd $200,000' (`planner budget`: '--total-usd $200,000')."""
    if scenario.budget is None:
        return ""
    lines = scenario.budget.model_dump().items()
    return ", ".join(f"{scenario.budget.line(key)} ${value:,.0f}" for key, value in lines if value is not None)


def _budget_cause(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, solver: SolverName
) -> Explanation | None:
    """The budget as the cause of a min-cost scenario's infeasibility: the same scenario without it has a
    plan (its cost, and for a total budget the total that admits it). None when there is no budget or
    dropping it does not help. Which row reads tight in the elastic re-solve says little here: a budget
    short of one more unit of supply leaves slack in its own row and the rented units' rows at zero slack."""
    if scenario.budget is None or scenario.objective != "min_cost":
        return None
    free = build_context(catalog, scenario.model_copy(update={"budget": None}), table)
    sol = solve_context(free, solver=solver, max_nodes=EXPLAIN_MAX_NODES)
    if sol.status not in ("optimal", "feasible"):
        return None
    cheapest = "the cheapest plan" if sol.status == "optimal" else "a plan"
    spent, raises = budget_raises(free, scenario.budget, sol.cost_usd)
    return Explanation(
        workload=None,
        requirement="budget",
        message=(
            f"no plan serves the stated demand within the budget ({_budget_text(scenario)}); without it "
            f"{cheapest} costs ${sol.cost_usd:,.0f} over the horizon{spent}"
        ),
        relaxation="raise " + " and ".join(raises) if raises else "raise the budget or lower the demand",
    )
