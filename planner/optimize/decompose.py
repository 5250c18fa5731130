"""Large problems: a proven lower bound from per-period relaxations, a plan solved period by period.

HiGHS on the full multi-period MILP (tens of thousands of integer replica counts) spends its time in root
cut separation and finds poor incumbents, because the LP relaxation buys fractions of 8-GPU nodes. Above
:data:`LARGE_INTEGER_VARIABLES` integer variables :func:`solve_large` does instead:

1. **Fluid candidates.** With continuous replica counts only the candidate with the most capacity per
   GPU matters within each (workload, GPU, site) (supply cost depends only on the GPUs used there), so
   the relaxations keep that one candidate among those the forbidding families (memory fit, node
   packing, placement, quantization policy) allow (:func:`fluid_problem`); rented, bought and owned
   units stay integer (whole nodes).
2. **Lower bound, period by period** (:func:`period_bounds`). Each representative period is solved as
   an exact MILP (integer replicas, the best candidate per replica size) with every purchase paid per
   month of use (:func:`bound_problem`): that relaxes only what ties periods together (purchases
   persisting, reserved terms, a total budget), so the sum of the periods' dual bounds is a proven lower
   bound on every plan of the full MILP — far above the LP's, which pays fractions of nodes and replicas.
3. **Purchases, from the bounds' solutions** (:func:`~planner.optimize.held.purchase_plans`). Each
   period's bound solution names the nodes it would own; taken as the horizon's purchases, it agrees with
   the periods that own exactly those nodes delivered by their month. The plans with the most agreeing
   periods are tried (:data:`~planner.optimize.held.PURCHASE_PLANS`); reserved terms hold the fewest units
   each term window's periods rent.
4. **Plan, period by period** (:func:`solve_by_period`), on the bound problems' candidates. With the
   purchases and reserved terms held nothing else ties periods together (owned and edge units are held
   over the hour blocks of one period, which are solved together), so each representative period is an
   exact small MILP with integer replicas — and a period whose bound solution already owns exactly the held
   nodes with whole operating points keeps that solution, the best plan of its period
   (:func:`~planner.optimize.held.keeps_held`). The assembled plan is checked against every row of the
   whole-horizon problem (a total budget couples periods); the cheapest plan wins. When none assembles,
   the seed (:func:`solve_seed`: the whole-horizon fluid problem, bought nodes persisting, reserved terms
   held) decides the purchases instead, and failing that the whole-horizon shortlist MILP is solved
   (:func:`_incumbent`), purchases free.

Every solve is limited by branch-and-bound nodes (``*_MAX_NODES``), with one thread (planner.highs_threads)
and a fixed seed: the same input gives the same plan under any machine load. HiGHS gets each problem as the
exact solve hands it (:func:`_solve`: flows projected out; 24-month bench economics 58.0 → 31.9 s at the
same cost).
``--time-limit`` is an outer wall-clock cap on top. Period problems run on :data:`PERIOD_WORKERS` threads.
"optimal" only when the cost meets the bound, else "feasible" with gap = (cost − bound) / cost."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from constraints import families_with
from planner.errors import SolverError
from planner.optimize.build import (
    TIE_BREAK,
    build_problem,
    relax_point_selection,
    relax_replicas,
    set_cost_objective,
    set_upper_bound,
)
from planner.optimize.components import solve_parts, whole
from planner.optimize.held import held_commitments, hold, keeps_held, purchase_plans, set_purchases
from planner.optimize.selection import flowing, most_capacity_per_gpu, shortlist
from planner.optimize.solver import (
    Solution,
    SolverName,
    assemble,
    no_plan_message,
    objective_usd,
    quiet_stdout,
    read_solution,
    restore,
    snapshot,
    solve_built,
    violated_rows,
)
from planner.problem.context import BuildContext
from planner.problem.supply import Procurement, SupplyKind
from planner.problem.variables import create_variables
from planner.search_progress import reporting

LARGE_INTEGER_VARIABLES = 5000
"""Integer variables (replica counts + supply units) above which :func:`solve_large` is used."""

BOUND_MAX_NODES = 200
"""Nodes of each period bound problem (:func:`period_bounds`); one stopped there counts its dual bound."""

SEED_MAX_NODES = 30
"""Nodes of the seed fluid problem (GPUs, sites, what to buy when). On the bench economics scenario 30
nodes gave the plan 150 nodes give, 1 node a plan 1 % dearer."""

PLAN_MAX_NODES = 100
"""Nodes of each period plan problem and of the whole-horizon shortlist MILP (the fallback)."""

MIN_SOLVE_TIME_S = 0.05
"""Least solver time a solve gets under an outer ``--time-limit`` whose time is (nearly) spent."""

HEURISTIC_EFFORT = 0.3
"""HiGHS ``mip_heuristic_effort`` of the large path's solves (default 0.05): its problems are solved under
small node limits, where finding good plans early matters more than closing the gap (measured on the
``make bench`` economics scenario: the seed reaches in 1 s the plan it needs 1.5 s for by default)."""

PERIOD_WORKERS = 2
"""Period problems solved at the same time (the performance target is set on 2 cores)."""

GAP_REL = 1e-6
"""The plan is reported optimal when its cost is within this relative gap of the proven bound."""

def integer_variables(ctx: BuildContext) -> int:
    """Integer variables the MILP of ``ctx`` will have (replicas per point and period, supply units)."""
    return (len(ctx.points) + len(ctx.supply)) * len(ctx.periods)


def is_large(ctx: BuildContext) -> bool:
    """True when ``ctx`` is solved by :func:`solve_large` instead of the exact MILP."""
    return ctx.scenario.objective == "min_cost" and integer_variables(ctx) > LARGE_INTEGER_VARIABLES


def forbidden_candidates(ctx: BuildContext) -> set[int]:
    """Candidates the forbidding families zero out, found by running them on one slice of ``ctx``."""
    probe = ctx.restricted(set(int(k) for k in ctx.cands.index), ctx.periods[:1])
    create_variables(probe)
    for family in families_with("forbid"):  # their row keys start with the candidate they forbid
        family.add(probe)
    return {int(key[0]) for _family, key in probe.rows.values()}


def time_left_s(deadline: float | None) -> float | None:
    """Seconds to the outer ``--time-limit`` (``deadline`` on :func:`time.perf_counter`'s clock; None: no
    limit), at least :data:`MIN_SOLVE_TIME_S`."""
    return None if deadline is None else max(MIN_SOLVE_TIME_S, deadline - time.perf_counter())


def _solve(
    ctx: BuildContext,
    solver: SolverName,
    max_nodes: int,
    deadline: float | None,
    start: dict[str, float] | None = None,
) -> tuple[bool, bool, float]:
    """Solve the built problem of ``ctx`` with the large path's settings: (has_solution, proven_optimal,
    dual bound) as planner.optimize.solver.solve_built.

    ``max_nodes`` limits the work (the same answer under any load); ``deadline`` is the outer cap. HiGHS gets
    the problem as the exact solve hands it (components.solve_parts: build order, flows projected out)."""
    split = whole(ctx) if solver == "highs" else None
    if split is not None:
        with reporting(None):  # a sub-problem's best and bound are not the plan's
            outcome = solve_parts(
                ctx, split, time_limit_s=time_left_s(deadline), max_nodes=max_nodes, start=start,
                heuristic_effort=HEURISTIC_EFFORT,
            )
        if outcome.status == "infeasible":
            return False, False, math.inf
        return outcome.status in ("optimal", "feasible"), outcome.status == "optimal", outcome.bound
    return solve_built(
        ctx,
        solver,
        time_limit_s=time_left_s(deadline),
        start=start,
        heuristic_effort=HEURISTIC_EFFORT,
        max_nodes=max_nodes,
    )


def fluid_problem(
    ctx: BuildContext, allowed: set[int], triples: set[tuple[str, str, str]] | None = None
) -> BuildContext:
    """The built fluid relaxation: per (workload, gpu, site) — only ``triples`` when given — the allowed
    candidate with the most capacity per GPU, continuous replicas, integer units, objective without the
    tie-break."""
    fluid = ctx.restricted(most_capacity_per_gpu(ctx, allowed, triples))
    build_problem(fluid)
    relax_replicas(fluid)
    set_cost_objective(fluid)
    return fluid


def usable_months(ctx: BuildContext) -> dict[str, float]:
    """Per buy option (by its id): Σ months_t over the slices it is delivered in."""
    return {
        o.id: sum(ctx.months[t] for t in ctx.periods if ctx.start_month[t] >= o.available_from_month)
        for o in ctx.supply
        if o.kind is SupplyKind.BUY
    }


def bound_problem(
    ctx: BuildContext, keep: set[int], period: int, usable: dict[str, float]
) -> BuildContext:
    """One representative period of the MILP (integer replicas) with every purchase paid per month of use.

    A plan buying b_o nodes of buy option o pays H_o · b_o = Σ_t (months_t / M_o) · H_o · b_o, with
    M_o = Σ months_t over the slices o is delivered in (:func:`usable_months`). Letting the nodes in use
    differ per period at that monthly share relaxes only the persistence of purchases (and, as every period
    stands alone, the reserved terms, the coupling of budget rows and of operating-point selectors), so
    each period is a problem of its own and the sum of their bounds is a lower bound on every plan of the
    full MILP. Replicas stay integer: whole replicas in each period are what the fluid bounds miss (on the
    bench economics scenario 203.5 k$ against 187 k$ with continuous replicas)."""
    part = period_problem(ctx, keep, period)
    relax_point_selection(part)
    here_months = sum(part.months[t] for t in part.periods)
    per_use = []
    for i, opt in enumerate(part.supply):
        months = usable.get(opt.id, 0.0) if opt.kind is SupplyKind.BUY else 0.0
        if months > 0:
            per_use.append(here_months / months * opt.horizon_usd_per_unit * part.variables["bought"][i])
    set_cost_objective(part, skip=(TIE_BREAK, Procurement.BUY.value), extra=per_use)
    return part


@dataclass
class PeriodBounds:
    """What :func:`period_bounds` found: the lower bound, the candidates its problems ran on, and per
    representative period the solved problem (only those that found a solution)."""

    bound_usd: float
    keep: set[int]
    solved: dict[int, BuildContext]

    @property
    def used(self) -> set[int]:
        """Candidates with flow in any period's solution."""
        return set().union(*(flowing(part) for part in self.solved.values()))


def period_bounds(
    ctx: BuildContext, solver: SolverName, allowed: set[int], deadline: float | None
) -> PeriodBounds:
    """Σ over representative periods of the bounds of :func:`bound_problem`, the candidates they ran on and
    their solved problems.

    Per (workload, gpu, site, replica size) only the allowed candidate with the most capacity per replica
    is kept (:func:`~planner.optimize.selection.most_capacity_per_gpu`): it serves whatever another of the same size serves, on the
    same GPUs, so the bound stays valid. The bound is +inf when a period is infeasible (then so is the
    MILP). A period stopped by its time limit before HiGHS reports a bound counts 0 (costs are
    non-negative); a period stopped by :data:`BOUND_MAX_NODES` counts its dual bound."""
    keep = most_capacity_per_gpu(ctx, allowed, by_replica_size=True)
    usable = usable_months(ctx)
    periods = sorted(ctx.slices_of)
    solved = _solve_each_period(
        periods, lambda t: bound_problem(ctx, keep, t, usable), solver, BOUND_MAX_NODES, deadline
    )
    if any(part_bound == math.inf for _part, _has, _optimal, part_bound in solved):
        return PeriodBounds(math.inf, keep, {})
    bound = sum(max(0.0, part_bound) for _part, _has, _optimal, part_bound in solved)
    return PeriodBounds(bound, keep, {t: part for t, (part, has, _o, _b) in zip(periods, solved, strict=True) if has})


def solve_seed(
    ctx: BuildContext, solver: SolverName, allowed: set[int], deadline: float | None
) -> tuple[BuildContext | None, float]:
    """The solved whole-horizon fluid problem on every allowed (workload, gpu, site) (None when it finds no
    plan within :data:`SEED_MAX_NODES`) and its dual bound.

    Unlike the period bounds, it holds bought nodes from delivery on and reserved units over their terms,
    so it decides what to buy and reserve when. A relaxation of the full MILP (continuous replicas), its
    dual bound is a lower bound too."""
    seed = fluid_problem(ctx, allowed)
    has, _optimal, bound = _solve(seed, solver, SEED_MAX_NODES, deadline)
    return (seed if has and flowing(seed) else None), bound


def period_problem(ctx: BuildContext, keep: set[int], period: int) -> BuildContext:
    """The built problem of ``ctx`` on candidates ``keep`` for one representative period (its slices)."""
    part = ctx.restricted(keep, ctx.slices_of[period])
    build_problem(part)
    return part


def _solve_each_period(
    periods: list[int],
    build: Callable[[int], BuildContext],
    solver: SolverName,
    max_nodes: int,
    deadline: float | None,
) -> list[tuple[BuildContext, bool, bool, float]]:
    """Build (``build(period)``) and solve one problem per representative period in ``periods``:
    [(problem, has_solution, proven_optimal, dual bound)] in that order.

    The problems are independent, so :data:`PERIOD_WORKERS` threads solve them (HiGHS releases the GIL
    while it solves); each one is limited by ``max_nodes`` alone, so the answers do not depend on which
    thread solves what when, and the results come back in period order."""
    workers = max(1, min(PERIOD_WORKERS, os.cpu_count() or 1))

    def solve(period: int) -> tuple[BuildContext, bool, bool, float]:
        part = build(period)
        return (part, *_solve(part, solver, max_nodes, deadline))

    with quiet_stdout(), ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(solve, periods))


def solve_by_period(
    ctx: BuildContext,
    solver: SolverName,
    keep: set[int],
    held: dict[tuple[Any, ...], int],
    deadline: float | None,
    reuse: dict[int, BuildContext] | None = None,
) -> BuildContext | None:
    """The whole-horizon problem on ``keep``, its variables set from one exact MILP per representative
    period with the purchases and reserved terms ``held``; None when a period finds no plan in time or the
    assembled plan breaks a row of the whole-horizon problem (a total budget, a point selector).

    ``reuse``: solved period bound problems on the same candidates ``keep`` (:func:`period_bounds`); a
    period whose bound solution already holds ``held`` (:func:`keeps_held`) takes it instead of a solve."""
    kept = {t: part for t, part in (reuse or {}).items() if keeps_held(part, held)}

    def build(period: int) -> BuildContext:
        part = period_problem(ctx, keep, period)
        hold(part, held)
        return part

    todo = [t for t in sorted(ctx.slices_of) if t not in kept]
    solved = _solve_each_period(todo, build, solver, PLAN_MAX_NODES, deadline)
    if not all(has for _part, has, _optimal, _bound in solved):
        return None
    whole = ctx.restricted(keep)
    build_problem(whole)
    # same ids: a part's keys are the whole's
    assemble(whole, [*kept.values(), *(part for part, _has, _optimal, _bound in solved)])
    set_purchases(whole, held)  # a kept bound solution bought per period; the plan buys once
    return None if violated_rows(whole) else whole


def _incumbent(
    sub: BuildContext, solver: SolverName, used: set[int], deadline: float | None
) -> dict[str, float] | None:
    """Best plan of the shortlist problem ``sub`` (left in its variables; their values returned): first with
    only the candidates ``used`` (a small MILP HiGHS solves fast), then all of ``sub`` warm-started from it."""
    zeroed = [key for key in sub.variables["n_rep"] if key[0] not in used]
    ups = [set_upper_bound(sub, "n_rep", key, 0) for key in zeroed]
    has, _optimal, _bound = _solve(sub, solver, PLAN_MAX_NODES, deadline)
    for key, up in zip(zeroed, ups, strict=True):
        set_upper_bound(sub, "n_rep", key, up)
    first = snapshot(sub) if has else None
    first_obj = objective_usd(sub) if has else math.inf
    has, _optimal, _bound = _solve(sub, solver, PLAN_MAX_NODES, deadline, start=first)
    if has and objective_usd(sub) <= first_obj:
        return snapshot(sub)
    if first is not None:
        restore(sub, first)
    return first


def _seeded_plan(
    ctx: BuildContext, solver: SolverName, allowed: set[int], bounds: PeriodBounds, deadline: float | None
) -> BuildContext | None:
    """The fallback when no purchase plan of the period bounds assembles a plan (a total budget couples the
    periods): the seed's purchases held period by period, else the whole-horizon shortlist MILP; None when
    neither finds a plan."""
    seed, _seed_bound = solve_seed(ctx, solver, allowed, deadline)
    if seed is not None:
        sub = solve_by_period(ctx, solver, bounds.keep, held_commitments(seed), deadline, bounds.solved)
        if sub is not None:
            return sub
    seeded = bounds.used if seed is None else flowing(seed)
    sub = ctx.restricted(shortlist(ctx, allowed, seeded))
    build_problem(sub)
    return None if _incumbent(sub, solver, seeded, deadline) is None else sub


def solve_large(
    ctx: BuildContext, *, solver: SolverName = "highs", time_limit_s: float | None = None
) -> tuple[Solution, BuildContext]:
    """Period bounds, seed, the plan period by period (or the shortlist MILP) (module docstring). Every step is limited by branch-and-bound nodes, so the
    answer is the same under any machine load; ``time_limit_s`` (the user's ``--time-limit``) is an outer
    cap on top: steps that would start after it are skipped."""
    start = time.perf_counter()
    deadline = None if time_limit_s is None else start + time_limit_s
    allowed = set(int(k) for k in ctx.cands.index) - forbidden_candidates(ctx)
    bounds = period_bounds(ctx, solver, allowed, deadline)
    if bounds.bound_usd == math.inf:
        return Solution("infeasible", math.nan, None, time.perf_counter() - start), ctx
    bound = bounds.bound_usd
    sub = None
    for rank, proposal in enumerate(purchase_plans(ctx, bounds.solved)):
        if not proposal.worth_trying(rank, len(bounds.solved)):
            break
        planned = solve_by_period(ctx, solver, bounds.keep, proposal.held, deadline, bounds.solved)
        if planned is not None and (sub is None or objective_usd(planned) < objective_usd(sub)):
            sub = planned
    if sub is None:
        sub = _seeded_plan(ctx, solver, allowed, bounds, deadline)
        if sub is None:
            if deadline is not None:
                raise SolverError(no_plan_message(solver, "TimeLimit", time_limit_s, None))
            return Solution("infeasible", math.nan, None, time.perf_counter() - start), ctx
    sol = read_solution(sub, optimal=False, elapsed=0.0)
    cost = sol.cost_usd
    bound = min(bound, cost)
    sol.solve_seconds = time.perf_counter() - start
    sol.bound_usd = bound
    sol.gap = max(0.0, (cost - bound) / cost) if cost > 0 else 0.0
    sol.status = "optimal" if sol.gap <= GAP_REL else "feasible"
    return sol, sub
