"""Plan a scenario end to end: candidates → MILP → solution → audit → alternatives → PlanResult.

Orchestration only: the problem is built by planner.problem and planner.optimize, read back by
planner.readout (whose cost ledger holds every money figure), explained by planner.optimize.explain.
An infeasible scenario is an answer: the result names the workload and requirement that cannot be met,
the best attainable value and the smallest relaxation that makes it feasible.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from planner.audit import at_served_load, audit_plan
from planner.budget_floor import budget_floor_explanation
from planner.candidate_cache import candidates_for
from planner.candidates import CandidateTable
from planner.catalog.loader import Catalog
from planner.optimize import early_alternatives, solve
from planner.optimize.alternative_record import rank
from planner.optimize.alternatives import alternatives
from planner.optimize.balanced_flows import balanced_flows
from planner.optimize.canonical import canonical
from planner.optimize.explain import Explanation, explain_capacity, explain_supply
from planner.optimize.explain_slo import explain_workload_candidates
from planner.optimize.served_scale import hold, most_served
from planner.optimize.site_kept import prefetch
from planner.optimize.solver import MIN_LEFT_S, Solution, SolverName
from planner.problem.context import BuildContext, build_context
from planner.readout.deployments import deployments
from planner.readout.ledger import CostLedger
from planner.readout.predict_command import predict_command
from planner.readout.read import cost_ledger, schedule, supply_lines
from planner.readout.result import PlanResult
from planner.readout.types import Deployment, ScheduleEntry, SupplyLine
from planner.scenario import Scenario


def _counts(table: CandidateTable) -> tuple[int, int]:
    """(candidates evaluated, candidates with an SLO-feasible operating point)."""
    cands = table.candidates
    return len(cands), int(cands["feasible"].sum()) if len(cands) else 0


def _infeasible(
    scenario: Scenario, table: CandidateTable, solve_s: float, start: float, items: list[Explanation]
) -> PlanResult:
    """A PlanResult that answers 'infeasible' with the explanation ``items``."""
    evaluated, feasible = _counts(table)
    elapsed_s = time.perf_counter() - start
    return PlanResult(scenario, "infeasible", [], [], [], None, evaluated, feasible, solve_s, elapsed_s, infeasibility=items)


def plan(
    catalog: Catalog,
    scenario: Scenario,
    *,
    solver: SolverName = "highs",
    time_limit_s: float | None = None,
    with_alternatives: bool = True,
) -> PlanResult:
    """Plan ``scenario``; never returns a plan that fails the audit.

    ``time_limit_s`` caps the optimizer: every solve (first stage, plan, decomposition, alternatives) from
    the end of candidate evaluation on (``optimizer_seconds``). Candidate evaluation before it and the
    readout and audit after it are deterministic numeric work, outside the cap (in ``total_seconds``)."""
    start = time.perf_counter()
    table = candidates_for(catalog, scenario)  # shared by plans differing only in prices or demand
    opt_start = time.perf_counter()
    missing = explain_workload_candidates(catalog, table, scenario)
    if missing:
        return _infeasible(scenario, table, 0.0, start, missing)
    served_scale = None
    if scenario.objective == "max_throughput":
        # first stage: the largest common served fraction within the budget
        stage1, first, served_scale = most_served(
            lambda: build_context(catalog, scenario, table), solver, _left_s(opt_start, time_limit_s)
        )
        if served_scale is None:  # no plan serves anything
            why = explain_supply(first) or [budget_floor_explanation(catalog, scenario, table, solver)]
            return _infeasible(scenario, table, stage1.solve_seconds, start, why)
    # the site alternatives' candidates are pruned on the other core while the plan is built, the GPU types'
    # alternatives solved there while the plan is (planner.optimize.site_kept, planner.optimize.early_alternatives)
    with prefetch(catalog, scenario, table, wanted=with_alternatives and time_limit_s is None):
        ctx = build_context(catalog, scenario, table)
        if served_scale is not None:
            hold(ctx, served_scale)
        early = early_alternatives.start(ctx, table, solver, time_limit_s=time_limit_s, wanted=with_alternatives)
        with early:
            sol, ctx = solve(ctx, solver, _left_s(opt_start, time_limit_s), built=early.built)
            if sol.status == "infeasible":
                why = explain_capacity(catalog, scenario, table, solver)
                return _infeasible(scenario, table, sol.solve_seconds, start, why)
            sol = canonical(ctx, early.solution(sol))  # equal-cost plans: the tie-break's (planner.optimize.canonical)
            sol = balanced_flows(ctx, sol)  # the served load spread as a router spreads it
            deadline, alts_start = None if time_limit_s is None else opt_start + time_limit_s, time.perf_counter()
            box: list[_Readout] = []  # the plan read back while the alternatives' workers finish their last tasks
            alts = (
                alternatives(
                    catalog, scenario, table, sol.cost_usd, solver, deadline=deadline, main=(sol, ctx),
                    served_scale=served_scale, early=early,
                    meanwhile=lambda: box.append(_read(catalog, scenario, table, ctx, sol)),
                )
                if with_alternatives
                else None
            )
    optimizer_seconds = time.perf_counter() - opt_start - sum(r.seconds for r in box)
    read = box[0] if box else _read(catalog, scenario, table, ctx, sol)
    bound_usd = sol.bound_usd
    if alts is not None and alts.cheaper is not None:  # a restricted plan beat a not-proven-optimal one
        ctx = alts.cheaper[1]
        sol = balanced_flows(ctx, dataclasses.replace(alts.cheaper[0], solve_seconds=sol.solve_seconds))
        read, served_scale = _read(catalog, scenario, table, ctx, sol), alts.served_scale
        bound_usd = max((b for b in (bound_usd, sol.bound_usd) if b is not None), default=None)
    gap, bound_usd = _gap_and_bound(sol.status, read.ledger.total_usd, sol.gap, bound_usd)
    evaluated, feasible = _counts(table)
    return PlanResult(
        scenario=scenario,
        status=sol.status,
        deployments=read.deployments,
        supply=read.supply,
        schedule=read.entries,
        ledger=read.ledger,
        candidates_evaluated=evaluated,
        candidates_feasible=feasible,
        solve_seconds=sol.solve_seconds,
        total_seconds=time.perf_counter() - start,
        binding_constraints=sol.binding,
        alternatives=[]
        if alts is None
        else rank(alts.items, read.ledger.total_usd, _uses(read.deployments), served_scale),
        gap=gap,
        bound_usd=bound_usd,
        served_scale=served_scale,
        served_from_month=None if served_scale is None else ctx.served_from_month(),
        time_limit_s=time_limit_s,
        optimizer_seconds=optimizer_seconds,
        build_seconds=sol.build_seconds,
        alternatives_seconds=None if alts is None else optimizer_seconds - (alts_start - opt_start),
    )


@dataclass
class _Readout:
    """A solution read back: schedule, cost ledger, supply lines, deployments (audited)."""

    entries: list[ScheduleEntry]
    ledger: CostLedger
    supply: list[SupplyLine]
    deployments: list[Deployment]
    seconds: float = 0.0


def _read(catalog: Catalog, scenario: Scenario, table: CandidateTable, ctx: BuildContext, sol: Solution) -> _Readout:
    """Read ``sol`` of ``ctx`` back into typed records and audit the deployments (and the seconds it took)."""
    began, entries = time.perf_counter(), schedule(ctx, sol)
    ledger = cost_ledger(ctx, sol, entries)
    supply = supply_lines(ctx, sol, ledger)
    deps = deployments(ctx, sol, supply)
    records = audit_plan(catalog, scenario, deps, table.sites)
    deps = [
        at_served_load(catalog, scenario, d, table.sites, r.capacity_requests_per_s)
        for d, r in zip(deps, records, strict=True)
    ]
    deps = [dataclasses.replace(d, predict_command=predict_command(scenario, d, table.sites, catalog.sites)) for d in deps]
    return _Readout(entries, ledger, supply, deps, time.perf_counter() - began)


def _left_s(start: float, time_limit_s: float | None) -> float | None:
    """Seconds left of the user's ``--time-limit``, counted from ``start`` = the end of candidate evaluation
    (None: no limit; at least :data:`MIN_LEFT_S`): one cap over the solves and alternatives."""
    return None if time_limit_s is None else max(MIN_LEFT_S, start + time_limit_s - time.perf_counter())


def _uses(deps: list[Deployment]) -> dict[str, set[str]]:
    """The GPU types and sites the plan deploys on (which alternative is the plan itself)."""
    return {"gpu": {d.gpu for d in deps}, "site": {d.site for d in deps}}


def _gap_and_bound(
    status: str, total_usd: float, gap: float | None, bound_usd: float | None
) -> tuple[float | None, float | None]:
    """(gap, bound USD) as reported: an optimal plan's bound is its cost; a feasible plan's gap is
    (cost − bound) / cost from the proven bound (the solver's gap when it reports no bound)."""
    if status == "optimal":
        return gap, total_usd
    if bound_usd is None:
        return gap, None
    bound_usd = min(bound_usd, total_usd)
    return (max(0.0, (total_usd - bound_usd) / total_usd) if total_usd > 0 else 0.0), bound_usd
