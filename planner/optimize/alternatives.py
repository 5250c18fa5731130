"""Alternatives: the best plan restricted to each GPU type and to each site, with its cost delta against
the chosen plan, why it lost, and its worst deployed TPOT and TTFT (the latency side of the cost-vs-TPOT
frontier).

Each alternative is solved under a deterministic work limit (:data:`ALTERNATIVE_MAX_NODES`), so the table
is the same under any machine load. An alternative cheaper than the plan (possible when the plan is only
``feasible``) is handed back so that it becomes the plan (:attr:`AlternativeSet.cheaper`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from planner.candidates import CandidateTable
from planner.catalog.loader import Catalog
from planner.errors import SolverError
from planner.forked import workers_for
from planner.optimize import solve
from planner.optimize.alternative_record import TIE_REL, Alternative
from planner.optimize.alternative_schedule import forked_probes
from planner.optimize.decompose import is_large
from planner.optimize.early_alternatives import MAX_NODES, EarlyAlternatives
from planner.optimize.explain import explain_supply
from planner.optimize.explain_slo import closest_miss
from planner.optimize.explain_words import fixed_supply_text
from planner.optimize.restricted_model import PlanModel
from planner.optimize.restricted_optimum import Carried, carry
from planner.optimize.reuse import shared_solves
from planner.optimize.served_scale import hold, most_served, serves_better
from planner.optimize.site_kept import collect, kept_at
from planner.optimize.solver import MIN_LEFT_S, Solution, SolverName
from planner.problem.context import BuildContext, build_context, kept_candidates
from planner.scenario import Scenario

ALTERNATIVE_MAX_NODES = MAX_NODES
"""Branch-and-bound nodes of each alternative's exact MILP (large ones use the decomposition's limits)."""

FORK_MIN_SOLVE_S = 0.1
"""Plan solve seconds from which the alternatives are solved in forked workers (planner.forked): below, they
take well under 0.2 s in all and forking (~0.03-0.06 s) would cost more than it saves. Same answers either way."""


@dataclass
class AlternativeSet:
    """The alternatives, and the solved problem of the best one when it beats the plan (cheaper; for
    max_throughput: serving more, or as much for less — ``served_scale`` is then the fraction it serves)."""

    items: list[Alternative]
    cheaper: tuple[Solution, BuildContext] | None = None
    served_scale: float | None = None


def _worst_latency_ms(ctx: BuildContext, sol: Solution) -> tuple[float | None, float | None]:
    """(max TPOT ms, max TTFT ms) over the operating points a solution deploys in any period."""
    used = {(int(k), int(j)) for (k, j, _t), reps in sol.values["n_rep"].items() if round(reps)}
    tpot_ms: float | None = None
    ttft_ms: float | None = None
    for p in ctx.points.itertuples():
        if (int(p.cand), int(p.point)) not in used:
            continue
        tpot_ms = float(p.tpot_ms) if tpot_ms is None else max(tpot_ms, float(p.tpot_ms))
        ttft_ms = float(p.ttft_ms) if ttft_ms is None else max(ttft_ms, float(p.ttft_ms))
    return tpot_ms, ttft_ms


def _no_candidate_reason(
    scenario: Scenario, rows: Any, column: str = "", value: str = "", among: list[str] | None = None
) -> str:
    """Why a GPU type or site (``column`` = ``value``, whose candidate rows are ``rows``) has no SLO-feasible
    candidate: the first workload (of ``among`` when given) with none there — one that may not run there at
    all (a site it does not list, a GPU it has no candidate on), else its closest miss."""
    for w in scenario.workloads:
        if among is not None and w.name not in among:
            continue
        mine = rows[rows["workload"] == w.name]
        if not len(mine) and column == "site" and w.sites is not None and value not in w.sites:
            return f"{w.name} may not run at {value} (its sites: {', '.join(w.sites)})"
        if not len(mine) and column:
            return f"{w.name} has no candidate on {column} {value}"
        if len(mine) and not mine["feasible"].any():
            return f"no SLO-feasible candidate for {w.name}: {closest_miss(mine, w.slo)}"
    return "no SLO-feasible candidate"


def alternative(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    solver: SolverName,
    *,
    column: str,
    value: str,
    time_limit_s: float | None = None,
    main: tuple[Solution, BuildContext] | None = None,
    decompose: bool = False,
    kept: pd.DataFrame | None = None,
) -> tuple[Alternative, tuple[Solution, BuildContext] | None]:
    """The best plan using only candidates whose ``column`` is ``value`` (its cost delta and why it lost are
    filled by :func:`rank`), and its solved problem (None when it has no plan). With the solved plan
    ``main``: when that plan (carried to the twins at the site of a site alternative) is an optimum of the
    restriction too (planner.optimize.restricted_optimum), it is the answer and nothing is solved; when it
    is only feasible there, it is the solver's first incumbent. ``decompose``: solved by the large-problem
    method (planner.optimize.decompose), as the plan was. ``kept``: the restriction's kept candidates
    (planner.problem.context.kept_candidates), when already known."""
    rows = table.rows_with(column, value)
    if not rows["feasible"].any():
        return Alternative(column, value, "infeasible", _no_candidate_reason(scenario, rows, column, value)), None
    others = {str(v) for v in table.feasible[column].unique()} - {value}  # unique(): no per-row boxing

    def restricted() -> BuildContext:
        return build_context(catalog, scenario, table, exclude={column: others}, kept=kept)

    served: float | None = None
    if scenario.objective == "max_throughput":  # the most it serves, then the least cost serving that
        began = time.perf_counter()
        try:
            first, first_ctx, served = most_served(restricted, solver, time_limit_s, ALTERNATIVE_MAX_NODES)
        except SolverError:
            return Alternative(column, value, "unknown", "no plan found within the solver's limits"), None
        if served is None:
            return _serves_nothing(scenario, table, column, value, first_ctx, first), None
        spent_s = time.perf_counter() - began
        time_limit_s = None if time_limit_s is None else max(MIN_LEFT_S, time_limit_s - spent_s)
        ctx = hold(restricted(), served)
    else:
        ctx = restricted()
    carried = Carried() if main is None else carry(main[1], main[0], ctx, site=value if column == "site" else None)
    try:
        sol, ctx = carried.optimum or solve(
            ctx, solver, time_limit_s, max_nodes=ALTERNATIVE_MAX_NODES, start=carried.start, built=carried.built,
            decompose=decompose,
        )
    except SolverError:
        return Alternative(column, value, "unknown", "no plan found within the solver's limits"), None
    if sol.status == "infeasible":
        return _infeasible(scenario, table, column, value, set(ctx.cands["workload"]), ctx), None
    record = _solved(scenario, column, value, sol.status, sol.cost_usd, _worst_latency_ms(ctx, sol), served)
    return record, (sol, ctx)


def _serves_nothing(
    scenario: Scenario, table: CandidateTable, column: str, value: str, ctx: BuildContext, first: Solution
) -> Alternative:
    """A max_throughput restriction that serves none of the demand: infeasible, with the cause."""
    if first.status == "infeasible":
        return _infeasible(scenario, table, column, value, set(ctx.cands["workload"]), fixed=ctx)
    return Alternative(column, value, "infeasible", "serves none of the demand within the budget and supply limits")


def _infeasible(
    scenario: Scenario, table: CandidateTable, column: str, value: str, covered: set[str],
    ctx: BuildContext | None = None, fixed: BuildContext | None = None,
) -> Alternative:
    """An infeasible restriction's record: the closest miss of a workload it has no candidate for
    (``covered``: the workloads it has candidates for), else what its supply options alone rule out
    (planner.optimize.explain.explain_supply of the restriction ``ctx``: a purchase lead time, a budget
    below one node), else the fixed supply it leaves (``ctx`` or ``fixed``, a problem holding its options)."""
    uncovered = [w.name for w in scenario.workloads if w.name not in covered]
    causes = [] if uncovered or ctx is None else explain_supply(ctx)
    if uncovered:
        missing = table.candidates[table.candidates["workload"].isin(uncovered)]
        why = _no_candidate_reason(scenario, missing[missing[column] == value], column, value, uncovered)
    elif causes:
        why = f"{causes[0].message} — {causes[0].relaxation}" if causes[0].relaxation else causes[0].message
    else:
        why = fixed_supply_text(ctx or fixed, column, value)
    return Alternative(column, value, "infeasible", why)


def _solved(
    scenario: Scenario, column: str, value: str, status: str, cost: float,
    latency_ms: tuple[float | None, float | None], served_scale: float | None = None,
) -> Alternative:
    """A solved restriction's record (its cost delta and why it lost are filled by
    planner.optimize.alternative_record.rank)."""
    return Alternative(
        column,
        value,
        status,
        "",
        total_cost_usd=cost,
        cost_usd_per_month=cost / scenario.horizon_months,
        max_tpot_ms=latency_ms[0],
        max_ttft_ms=latency_ms[1],
        served_scale=served_scale,
    )


def _on_plan_model(
    model: PlanModel, scenario: Scenario, table: CandidateTable, column: str, value: str, time_limit_s: float | None
) -> tuple[Alternative, float] | None:
    """The alternative of ``value`` of ``column`` solved on the plan's model (planner.optimize.restricted_model)
    and its solver seconds; None where it must be rebuilt (:func:`alternative`). A site alternative is
    only asked when its kept candidates are the plan's at the site (:func:`alternatives`)."""
    if value not in model.feasible[column]:
        rows = table.rows_with(column, value)
        return Alternative(column, value, "infeasible", _no_candidate_reason(scenario, rows, column, value)), 0.0
    out = model.solve(column, value, time_limit_s=time_limit_s, max_nodes=ALTERNATIVE_MAX_NODES)
    if out is None:
        return None
    if out.status == "unknown":
        return Alternative(column, value, "unknown", "no plan found within the solver's limits"), out.seconds
    if out.status == "infeasible" or out.cost_usd is None:
        cands = model.ctx.cands
        covered = {str(w) for w in cands.loc[cands[column] == value, "workload"]}
        return _infeasible(scenario, table, column, value, covered, fixed=model.ctx), out.seconds
    record = _solved(scenario, column, value, out.status, out.cost_usd, model.worst_latency_ms(out.used))
    return record, out.seconds


def _site_kept(
    catalog: Catalog, scenario: Scenario, table: CandidateTable, model: PlanModel, site: str
) -> tuple[bool, pd.DataFrame | None]:
    """(whether the site alternative's kept candidates are the plan's at ``site`` — then the plan's model
    restricted to the site is its problem —, those kept candidates for its rebuild); (False, None) for a
    site without feasible candidates. Unlike a GPU type's, a site's restriction can keep candidates the plan
    pruned as dominated by the same deployment at another site (planner.problem.dominance)."""
    if site not in model.feasible["site"]:
        return False, None
    others = {str(v) for v in table.feasible["site"].unique()} - {site}
    kept = kept_at(table, site, others)  # computed while the plan was built (planner.optimize.site_kept)
    kept = kept_candidates(catalog, scenario, table, exclude={"site": others}) if kept is None else kept
    mine = model.ctx.cands.index[model.ctx.cands["site"] == site]
    return list(kept.index) == list(mine), kept


def _fast(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    model: PlanModel | None,
    column: str,
    value: str,
    time_limit_s: float | None,
) -> tuple[tuple[Alternative, float] | None, pd.DataFrame | None]:
    """(the alternative solved on the plan's model and its solver seconds — None where it must be rebuilt —,
    the kept candidates of a site alternative for its rebuild)."""
    same, kept = (True, None) if column == "gpu" or model is None else _site_kept(
        catalog, scenario, table, model, value
    )
    fast = None if model is None or not same else _on_plan_model(model, scenario, table, column, value, time_limit_s)
    return fast, kept


@dataclass(frozen=True)
class _Probe:
    """What a worker process answers for one alternative: the record solved on the plan's model (None where
    it is rebuilt), the rebuilt record (only when needed: no fast record, or a fast one cheaper than the
    plan) and the rebuilt plan's cost (None: no plan)."""

    fast: Alternative | None
    rebuilt: Alternative | None = None
    rebuilt_cost_usd: float | None = None


def _probe(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    solver: SolverName,
    task: tuple[str, str],
    model: PlanModel | None,
    main: tuple[Solution, BuildContext] | None,
    decompose: bool,
    threshold_usd: float,
) -> _Probe:
    """One alternative as the serial loop of :func:`alternatives` solves it when no earlier one beat the plan
    (``threshold_usd``: the plan's cost less the tie tolerance); enough for :func:`_replayed` to give the
    serial answer whatever the earlier ones found."""
    column, value = task
    fast, kept = _fast(catalog, scenario, table, model, column, value, None)
    cost = None if fast is None else fast[0].total_cost_usd
    if fast is not None and (cost is None or cost >= threshold_usd):
        return _Probe(fast[0])
    record, solved = alternative(
        catalog, scenario, table, solver, column=column, value=value, main=main, decompose=decompose, kept=kept
    )
    return _Probe(None if fast is None else fast[0], record, None if solved is None else solved[0].cost_usd)


def _replayed(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    solver: SolverName,
    tasks: list[tuple[str, str]],
    probes: list[_Probe],
    best: tuple[float, float | None],
    main: tuple[Solution, BuildContext] | None,
    model: PlanModel | None,
    decompose: bool,
) -> AlternativeSet:
    """The serial loop of :func:`alternatives` replayed on the workers' probes: the same record per task
    (the fast one unless an earlier alternative or the plan is cheaper than it) and the same ``cheaper``,
    re-solved here (rare: only when the plan is merely feasible) for its solved problem. ``best``: the plan's
    (cost, served fraction) as :func:`alternatives` takes them."""
    items: list[Alternative] = []
    cheapest_usd, best_scale = best[0] * (1 - TIE_REL), best[1]
    won: int | None = None
    for i, p in enumerate(probes):
        cost = None if p.fast is None else p.fast.total_cost_usd
        if p.fast is not None and (cost is None or cost >= cheapest_usd):
            items.append(p.fast)
            continue
        if p.rebuilt is None:  # cannot happen: rebuilt whenever below the first threshold
            raise AssertionError(f"alternative {tasks[i]} was not rebuilt")
        items.append(p.rebuilt)
        if p.rebuilt_cost_usd is not None and serves_better(
            p.rebuilt.served_scale, p.rebuilt_cost_usd, best_scale, cheapest_usd
        ):
            won, cheapest_usd, best_scale = i, p.rebuilt_cost_usd, p.rebuilt.served_scale
    if won is None:
        return AlternativeSet(items)
    column, value = tasks[won]
    kept = None if column == "gpu" or model is None else _site_kept(catalog, scenario, table, model, value)[1]
    _, cheaper = alternative(
        catalog, scenario, table, solver, column=column, value=value, main=main, decompose=decompose, kept=kept
    )
    return AlternativeSet(items, cheaper, best_scale)


def alternatives(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    best_cost_usd: float,
    solver: SolverName,
    *,
    deadline: float | None = None,
    main: tuple[Solution, BuildContext] | None = None,
    served_scale: float | None = None,
    early: EarlyAlternatives | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> AlternativeSet:
    """Best plan per GPU type and per site (:func:`alternative`), GPUs first, each in sorted order;
    ``cheaper`` is the cheapest of them when it costs less than ``best_cost_usd`` (it must become the
    plan); for a max_throughput plan serving ``served_scale`` of the demand, the best of them when it serves
    more or as much for less (planner.optimize.served_scale.serves_better). With a ``deadline`` (:func:`time.perf_counter` clock; the user's ``--time-limit``) each solve
    gets the time left less the largest build time seen so far, and one that would not get any is skipped
    ("not solved: --time-limit reached"), so the last build does not run past the limit. ``main``: the
    solved plan (answers the alternatives it is optimal for without a solve; :func:`alternative`); a plan
    solved by the large-problem method has its alternatives solved by it too.

    Without a deadline, for a plan whose solve took :data:`FORK_MIN_SOLVE_S` or more, the alternatives run
    in forked worker processes (planner.forked, ``PLANNER_WORKERS``); the answers are the serial
    loop's (:func:`_replayed`). ``meanwhile``: the caller's own work, called once — while the workers finish
    their last tasks, or after the serial loop."""
    collect(table)  # the site restrictions' kept candidates, before any worker is forked
    decompose = main is not None and is_large(main[1])
    model = None if main is None or decompose or solver != "highs" else PlanModel.of(main[1], main[0], table)
    tasks = [(c, v) for c in ("gpu", "site") for v in sorted(str(v) for v in table.candidates[c].unique())]
    big = main is not None and main[0].solve_seconds >= FORK_MIN_SOLVE_S
    if deadline is None and big and workers_for(len(tasks)) > 1:
        threshold_usd = best_cost_usd * (1 - TIE_REL)

        def probe(i: int) -> _Probe:
            with shared_solves():  # per child: a GPU type and a site with the same problem, solved once
                return _probe(catalog, scenario, table, solver, tasks[i], model, main, decompose, threshold_usd)

        probes = forked_probes(probe, tasks, table, model, main, early, meanwhile)
        best = (best_cost_usd, served_scale)
        return _replayed(catalog, scenario, table, solver, tasks, probes, best, main, model, decompose)
    if early is not None and main is not None:
        early.take(model, main[1])  # the GPU types' restrictions solved while the plan was
    items: list[Alternative] = []
    cheaper: tuple[Solution, BuildContext] | None = None
    cheapest_usd, best_scale = best_cost_usd * (1 - TIE_REL), served_scale
    overhead_s = 0.0  # largest time an alternative spent outside its solver (building): not interruptible
    with shared_solves():  # a GPU type and a site whose restrictions are the same problem: solved once
        for column, value in tasks:
            left_s = None if deadline is None else deadline - time.perf_counter()
            if left_s is not None and left_s <= overhead_s:
                items.append(Alternative(column, value, "skipped", "not solved: --time-limit reached"))
                continue
            began = time.perf_counter()
            limit_s = None if left_s is None else left_s - overhead_s
            fast, kept = _fast(catalog, scenario, table, model, column, value, limit_s)
            cost = None if fast is None else fast[0].total_cost_usd
            if fast is not None and (cost is None or cost >= cheapest_usd):
                (record, solver_s), solved = fast, None
            else:  # rebuilt (and so, when it beats the plan, with the built problem to read it from)
                record, solved = alternative(
                    catalog, scenario, table, solver, column=column, value=value, time_limit_s=limit_s,
                    main=main, decompose=decompose, kept=kept,
                )
                solver_s = 0.0 if solved is None else solved[0].solve_seconds
            overhead_s = max(overhead_s, time.perf_counter() - began - solver_s)
            items.append(record)
            if solved is not None and serves_better(record.served_scale, solved[0].cost_usd, best_scale, cheapest_usd):
                cheaper, cheapest_usd, best_scale = solved, solved[0].cost_usd, record.served_scale
    if meanwhile is not None:
        meanwhile()
    return AlternativeSet(items, cheaper, best_scale if cheaper is not None else None)
