"""Large problems: a proven lower bound from a fluid relaxation, a plan from a shortlist MILP.

HiGHS on the full multi-period MILP (tens of thousands of integer replica counts) spends its time in root
cut separation and finds poor incumbents, because the LP relaxation buys fractions of 8-GPU nodes. Above
:data:`LARGE_INTEGER_VARIABLES` integer variables :func:`solve_large` does instead:

1. **Fluid relaxation (lower bound).** Replica counts become continuous while rented, bought and owned
   units stay integer. With continuous replicas only the candidate with the most capacity per GPU matters
   within each (workload, GPU, site) (supply cost depends only on the GPUs used there), so the relaxation
   keeps that one candidate among those the forbidding families (memory fit, node packing, placement,
   quantization policy) allow. Its objective leaves out the tie-break (≥ 0), so HiGHS's dual bound on it
   is a proven lower bound on the cost of every plan of the full MILP.
   Its LP relaxation equals the full MILP's and takes a fraction of a second; the fluid MILP's dual
   bound, from the time left at the end, is at least as strong.
2. **Seed (which GPUs and sites).** The fluid problem on a few triples only — the LP's (workload, GPU,
   site) and per workload the cheapest others (:func:`seed_candidates`) — with whole nodes finds which
   GPU types and sites workloads should share; its candidates with flow are the seed.
3. **Shortlist MILP (the plan).** The seed, plus on each of its (workload, GPU, site) the candidate with
   the most capacity per GPU of every replica size, as the exact MILP (integer replicas and units):
   first with only the seed, then warm-started from that plan.

The result is "optimal" only when the plan's cost meets the bound (within the solver's gap tolerance),
else "feasible" with gap = (cost − bound) / cost.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pulp

from constraints.memory_fit import add_memory_fit
from constraints.node_packing import add_node_packing
from constraints.placement_rtt import add_placement_rtt
from constraints.quantization_policy import add_quantization_policy
from planner.candidates import CandidateTable
from planner.model import BuildContext, build_context, create_variables
from planner.solve import (
    Solution,
    SolverName,
    build_problem,
    make_solver,
    quiet_stdout,
    read_solution,
    solve_status,
)

LARGE_INTEGER_VARIABLES = 5000
"""Integer variables (replica counts + supply units) above which :func:`solve_large` is used."""

LARGE_TIME_BUDGET_S = 6.0
"""Solver seconds of the large path when the caller gives no time limit (fluid relaxation + shortlist)."""

SEED_TIME_SHARE = 0.3
"""Share of the time budget given to the seed fluid problem (which GPUs and sites the plan uses)."""

SHORTLIST_TIME_SHARE = 0.4
"""Share of the time budget given to the shortlist MILP (the rest improves the bound)."""

SEED_EXTRA_TRIPLES = 3
"""Per workload, the (gpu, site) pairs the seed adds beyond the LP's: the cheapest per request/s."""

GAP_REL = 1e-6
"""The plan is reported optimal when its cost is within this relative gap of the proven bound."""

FORBIDDING = (add_memory_fit, add_node_packing, add_placement_rtt, add_quantization_policy)
"""Families whose rows only force a candidate's replicas or flow to zero (their keys start with the cand)."""


def integer_variables(ctx: BuildContext) -> int:
    """Integer variables the MILP of ``ctx`` will have (replicas per point and period, supply units)."""
    return (len(ctx.points) + len(ctx.supply)) * len(ctx.periods)


def is_large(ctx: BuildContext) -> bool:
    """True when ``ctx`` is solved by :func:`solve_large` instead of the exact MILP."""
    return ctx.scenario.objective == "min_cost" and integer_variables(ctx) > LARGE_INTEGER_VARIABLES


def forbidden_candidates(ctx: BuildContext) -> set[int]:
    """Candidates the forbidding families zero out, found by running them on one period of ``ctx``."""
    probe = build_context(ctx.catalog, ctx.scenario, _table_of(ctx), prune=False)
    probe.periods = probe.periods[:1]
    create_variables(probe)
    for add in FORBIDDING:
        add(probe)
    return {int(key[0]) for _family, key in probe.rows.values()}


def _table_of(ctx: BuildContext) -> CandidateTable:
    """The (already pruned) candidates of ``ctx`` as a table, to build sub-problems from."""
    return CandidateTable(ctx.cands.assign(feasible=True), ctx.points.drop(columns="point"), ctx.sites)


def _capacity(ctx: BuildContext) -> dict[int, float]:
    """Best capacity (requests/s per replica) of every candidate of ``ctx``."""
    out: dict[int, float] = {}
    for p in ctx.points.itertuples():
        out[int(p.cand)] = max(out.get(int(p.cand), 0.0), float(p.capacity_requests_per_s))
    return out


def _sub_context(ctx: BuildContext, keep: set[int]) -> BuildContext:
    """The problem of ``ctx`` restricted to candidates ``keep``."""
    return build_context(
        ctx.catalog, ctx.scenario, _table_of(ctx), exclude={"cand": set(ctx.cands.index) - keep}, prune=False
    )


def _solve(
    ctx: BuildContext, solver: SolverName, time_limit_s: float, start: dict[str, float] | None = None
) -> tuple[bool, bool, float]:
    """Solve the built problem of ``ctx``: (has_solution, proven_optimal, dual bound)."""
    limit = max(0.5, time_limit_s)
    _status, has, optimal = solve_status(ctx.prob, make_solver(solver, time_limit_s=limit, start=start))
    bound = -math.inf
    model = getattr(ctx.prob, "solverModel", None)
    if optimal:
        bound = float(pulp.value(ctx.prob.objective) or 0.0)
    elif model is not None and hasattr(model, "getInfo"):
        bound = float(model.getInfo().mip_dual_bound)
    return has, optimal, bound


def _triples(ctx: BuildContext, cands: set[int]) -> set[tuple[str, str, str]]:
    """The (workload, gpu, site) of each candidate in ``cands``."""
    cols = ctx.cands[["workload", "gpu", "site"]]
    return {(str(w), str(g), str(s)) for k, w, g, s in cols.itertuples(name=None) if int(k) in cands}


def _flowing(ctx: BuildContext) -> set[int]:
    """Candidates of the solved problem ``ctx`` that carry traffic in some slice."""
    return {int(k) for (k, _t), v in ctx.variables["flow"].items() if (v.varValue or 0.0) > 1e-7}


def _most_capacity_per_gpu(
    ctx: BuildContext,
    allowed: set[int],
    triples: set[tuple[str, str, str]] | None = None,
    *,
    by_replica_size: bool = False,
) -> set[int]:
    """Per (workload, gpu, site) — and per replica size (GPUs) with ``by_replica_size`` — the allowed
    candidate with the most capacity per GPU (the first one on ties), only on ``triples`` when given."""
    capacity = _capacity(ctx)
    best: dict[tuple[Any, ...], tuple[float, int]] = {}
    for k, w, g, s, gpus in ctx.cands[["workload", "gpu", "site", "gpus"]].itertuples(name=None):
        triple = (str(w), str(g), str(s))
        if int(k) not in allowed or (triples is not None and triple not in triples):
            continue
        key, ratio = ((*triple, int(gpus)) if by_replica_size else triple), capacity[int(k)] / int(gpus)
        if key not in best or ratio > best[key][0]:
            best[key] = (ratio, int(k))
    return {k for _ratio, k in best.values()}


def fluid_problem(ctx: BuildContext, allowed: set[int]) -> BuildContext:
    """The built fluid relaxation: per (workload, gpu, site) the allowed candidate with the most capacity per
    GPU, continuous replicas, integer units, objective without the tie-break."""
    fluid = _sub_context(ctx, _most_capacity_per_gpu(ctx, allowed))
    build_problem(fluid)
    for v in fluid.variables["n_rep"].values():
        v.cat = pulp.LpContinuous
    fluid.prob.setObjective(
        pulp.lpSum(pulp.lpSum(terms) for cat, terms in fluid.cost_terms.items() if cat != "tie_break")
    )
    return fluid


def lp_bound(fluid: BuildContext) -> tuple[float, set[int]]:
    """LP relaxation of the fluid problem (= that of the full MILP): (bound, candidates with flow).

    The bound is +inf when the LP is infeasible (then so is the MILP)."""
    with quiet_stdout():
        fluid.prob.solve(pulp.HiGHS(msg=False, mip=False, threads=1))
    if fluid.prob.status != pulp.LpStatusOptimal:
        return math.inf, set()
    return float(pulp.value(fluid.prob.objective) or 0.0), _flowing(fluid)


def shortlist(ctx: BuildContext, allowed: set[int], used: set[int]) -> set[int]:
    """The plan's candidates: on each (workload, gpu, site) of ``used``, the allowed candidate with the most
    capacity per GPU of every replica size (small replicas fill the last node)."""
    return used | _most_capacity_per_gpu(ctx, allowed, _triples(ctx, used), by_replica_size=True)


def _cheapest_usd_per_gpu_month(ctx: BuildContext) -> dict[tuple[str, str], float]:
    """Per (gpu, site): the lowest cost of one usable GPU-month over its supply options (a bought node's
    horizon cost spread over the months it is delivered; rent and owned per usable GPU)."""
    horizon = ctx.scenario.horizon_months
    out: dict[tuple[str, str], float] = {}
    for o in ctx.supply:
        if o.kind == "buy":
            usd = o.horizon_usd_per_unit / (o.unit_gpus * max(1.0, horizon - o.available_from_month))
        else:
            usd = o.usd_per_unit_month / (o.unit_gpus * o.effective_gpus_frac)
        out[(o.gpu, o.site)] = min(out.get((o.gpu, o.site), math.inf), usd)
    return out


def seed_candidates(
    ctx: BuildContext, solver: SolverName, allowed: set[int], used: set[int], time_limit_s: float
) -> set[int]:
    """Candidates with flow in a small fluid problem over the LP's (workload, gpu, site) triples plus, per
    workload, the :data:`SEED_EXTRA_TRIPLES` cheapest others (GPUs × cheapest GPU-month ÷ capacity).

    Unlike the LP, the fluid problem buys and rents whole nodes, so it finds which GPU types and sites
    several workloads should share; the LP's candidates are returned when it finds no plan in time.
    """
    price = _cheapest_usd_per_gpu_month(ctx)
    capacity = _capacity(ctx)
    cols = ctx.cands[["workload", "gpu", "site", "gpus"]]
    triples = _triples(ctx, used)
    ranked: dict[str, list[tuple[float, tuple[str, str, str]]]] = {}
    for k, w, g, s, gpus in cols.itertuples(name=None):
        if int(k) in allowed:
            usd = int(gpus) * price.get((str(g), str(s)), math.inf) / capacity[int(k)]
            ranked.setdefault(str(w), []).append((usd, (str(w), str(g), str(s))))
    for rows in ranked.values():
        extra = dict.fromkeys(t for _usd, t in sorted(rows) if t not in triples)  # cheapest first, unique
        triples.update(list(extra)[:SEED_EXTRA_TRIPLES])
    keep = {int(k) for k, w, g, s, _n in cols.itertuples(name=None) if (str(w), str(g), str(s)) in triples}
    seed = fluid_problem(ctx, allowed & keep)
    has, _optimal, _bound = _solve(seed, solver, time_limit_s)
    if not has:
        return used
    return _flowing(seed) or used


def _incumbent(
    sub: BuildContext, solver: SolverName, used: set[int], time_limit_s: float
) -> dict[str, float] | None:
    """Best plan of the shortlist problem ``sub`` (left in its variables; their values returned): first with
    only the LP's candidates (a small MILP HiGHS solves fast), then all of ``sub`` warm-started from it."""
    zeroed = [(v, v.upBound) for (k, _j, _t), v in sub.variables["n_rep"].items() if k not in used]
    for v, _up in zeroed:
        v.upBound = 0
    has, _optimal, _bound = _solve(sub, solver, time_limit_s / 2)
    for v, up in zeroed:
        v.upBound = up
    first = {v.name: float(v.varValue or 0.0) for v in sub.prob.variables()} if has else None
    first_obj = float(pulp.value(sub.prob.objective) or 0.0) if has else math.inf
    has, _optimal, _bound = _solve(sub, solver, time_limit_s / 2, start=first)
    if has and float(pulp.value(sub.prob.objective) or 0.0) <= first_obj:
        return {v.name: float(v.varValue or 0.0) for v in sub.prob.variables()}
    if first is not None:
        for v in sub.prob.variables():
            v.varValue = first[v.name]
    return first


def solve_large(
    ctx: BuildContext, *, solver: SolverName = "highs", time_limit_s: float | None = None
) -> tuple[Solution, BuildContext]:
    """LP bound, shortlist MILP, then the fluid MILP's bound with the time left (module docstring)."""
    budget = LARGE_TIME_BUDGET_S if time_limit_s is None else time_limit_s
    start = time.perf_counter()
    allowed = set(int(k) for k in ctx.cands.index) - forbidden_candidates(ctx)
    fluid = fluid_problem(ctx, allowed)
    bound, used = lp_bound(fluid)
    if bound == math.inf:
        return Solution("infeasible", math.nan, None, time.perf_counter() - start), ctx
    seeded = seed_candidates(ctx, solver, allowed, used, SEED_TIME_SHARE * budget)
    sub = _sub_context(ctx, shortlist(ctx, allowed, seeded))
    build_problem(sub)
    values = _incumbent(sub, solver, seeded, SHORTLIST_TIME_SHARE * budget)
    if values is None:
        return Solution("infeasible", math.nan, None, time.perf_counter() - start), sub
    sol = read_solution(sub, optimal=False, elapsed=0.0)
    cost = sum(v for cat, v in sol.costs_usd.items() if cat != "tie_break")
    left = budget - (time.perf_counter() - start)
    if left > 0.5:
        _has, _optimal, fluid_bound = _solve(fluid, solver, left)
        bound = max(bound, fluid_bound)
    sol.solve_seconds = time.perf_counter() - start
    sol.gap = max(0.0, (cost - bound) / cost) if cost > 0 else 0.0
    sol.status = "optimal" if sol.gap <= GAP_REL else "feasible"
    return sol, sub
