"""Solve the planning MILP (HiGHS by default, CBC as fallback) and read the solution back by key.

The PuLP 3.x / 4.x status difference lives in :func:`solve_status` only. HiGHS prints a banner on fd 1
once per process even with ``msg=False``; :func:`quiet_stdout` swallows it so ``--json -`` stays clean.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import pulp

from constraints import names_with
from planner.errors import SolverError
from planner.highs_threads import ONE_SEARCH_THREADS, run_highs
from planner.optimize.build import TIE_BREAK, build_problem
from planner.optimize.components import columns, integer_columns, parts, solve_parts, whole
from planner.optimize.floor_pruning import held_at_zero
from planner.optimize.incumbent import MIN_INTEGER_COLUMNS, restricted_start
from planner.optimize.quiet import quiet_stdout as quiet_stdout  # re-exported (decompose, tests)
from planner.problem.context import BuildContext

PULP_V4 = int(pulp.__version__.split(".")[0]) >= 4
SolverName = Literal["highs", "cbc"]


class WarmHiGHS(pulp.HiGHS):  # type: ignore[misc]
    """pulp.HiGHS that hands HiGHS a starting solution (``start``: PuLP variable name → value) before it
    runs. PuLP 3.3 has no warm start for HiGHS; its columns are ``lp.variables()`` at ``var.index`` (set
    by buildSolverModel), PuLP 4's are ``lp.exported_variables()`` in order."""

    def __init__(self, start: dict[str, float] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start = start

    def callSolver(self, lp: pulp.LpProblem) -> None:  # noqa: N802 (pulp's name)
        if self.start:
            cols = lp.exported_variables() if PULP_V4 else lp.variables()
            index = list(range(len(cols))) if PULP_V4 else [v.index for v in cols]
            lp.solverModel.setSolution(len(cols), index, [self.start.get(v.name, 0.0) for v in cols])
        run_highs(lp.solverModel)

    def findSolutionValues(self, lp: pulp.LpProblem) -> Any:  # noqa: N802 (pulp's name)
        """PuLP's reading, plus HiGHS's work-limit stops (node / solution limit), which PuLP 3.3 has no
        entry for: a stop with a feasible incumbent reads as a time-limit stop with a solution."""
        try:
            return super().findSolutionValues(lp)
        except KeyError:  # the solution values are assigned before PuLP looks the status up
            feasible = lp.solverModel.getInfo().primal_solution_status == FEASIBLE_SOLUTION
            if feasible:
                return pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible
            return pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound


MIN_LEFT_S = 0.05
"""Least solver seconds a solve gets once the user's ``--time-limit`` is spent (it then stops at its first
chance)."""

EXACT_RESTARTS = False
"""HiGHS root restarts in the exact solves (:func:`solve_context`). Off: on the planning MILPs of the
examples HiGHS finds the optimum at the root and then restarts presolve over and over while closing the
gap (mixed_fleet: 0.82 → 0.10 s CPU, chat_p99_redundant 1.28 → 1.04 s; `make bench`)."""

EXACT_RELIABLE_BRANCHINGS = 2
"""HiGHS ``mip_pscost_minreliable`` in the exact solves: strong branching on a column stops after 2 branchings
on it (HiGHS: 8); many columns are near-copies (formats, engines, TP × PP shapes at one pool). 20-workload
bench, seeds 1-4: LP iterations 33-41k → 19-38k, solve 12.0 → 9.4 s mean, same optimum (0: 12.0 s)."""

FEASIBLE_SOLUTION = 2
"""HiGHS ``primal_solution_status`` of a feasible point (kSolutionStatusFeasible)."""


def make_solver(
    name: SolverName,
    *,
    time_limit_s: float | None,
    gap_rel: float = 1e-6,
    start: dict[str, float] | None = None,
    heuristic_effort: float | None = None,
    max_nodes: int | None = None,
    restarts: bool = True,
) -> Any:
    """PuLP solver object: HiGHS via highspy (optionally warm-started from ``start``; ``heuristic_effort``
    is HiGHS's ``mip_heuristic_effort``, default 0.05; ``max_nodes`` its deterministic branch-and-bound
    node limit), or the CBC binary (bundled on PuLP 3, cbcbox on 4; ``start`` and ``heuristic_effort``
    are ignored, ``max_nodes`` is CBC's ``maxNodes``; ``restarts`` False turns HiGHS's root restarts off, see
    :data:`EXACT_RESTARTS`). One thread and a fixed seed: without a time limit the same answer under any load."""
    if name == "highs":
        options: dict[str, Any] = {} if heuristic_effort is None else {"mip_heuristic_effort": heuristic_effort}
        if max_nodes is not None:
            options["mip_max_nodes"] = max_nodes
        if not restarts:
            options["mip_allow_restart"] = False
        solver = WarmHiGHS(
            start=start, msg=False, timeLimit=time_limit_s, gapRel=gap_rel, random_seed=1, threads=ONE_SEARCH_THREADS,
            **options
        )
        if not solver.available():
            raise SolverError("HiGHS (highspy) is not installed; install highspy or use --solver cbc")
        return solver
    cbc_options = [] if max_nodes is None else [f"maxNodes {max_nodes}"]
    if PULP_V4:
        solver = pulp.COIN_CMD(msg=False, timeLimit=time_limit_s, gapRel=gap_rel, options=cbc_options, threads=1)
    else:
        from pulp.apis.coin_api import pulp_cbc_path

        solver = pulp.COIN_CMD(
            path=pulp_cbc_path, msg=False, timeLimit=time_limit_s, gapRel=gap_rel, options=cbc_options, threads=1
        )
    if not solver.available():
        raise SolverError("CBC is not available (on PuLP 4 install pulp[cbc]); use --solver highs")
    return solver


def solve_status(prob: pulp.LpProblem, solver: Any) -> tuple[str, bool, bool]:
    """Solve and return (status_name, has_solution, proven_optimal) on PuLP 3.3.x and 4.x."""
    with quiet_stdout():
        res = prob.solve(solver)
    if PULP_V4:
        return str(res.status_str), bool(res.has_solution), bool(res.status == pulp.LpSolveStatus.Optimal)
    name = pulp.LpStatus[res]
    sol = pulp.LpSolution[prob.sol_status]
    has = prob.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    optimal = sol == "Optimal Solution Found"
    return ("TimeLimit" if name == "Optimal" and not optimal else name), has, optimal


def mip_gap(prob: pulp.LpProblem) -> float | None:
    """Relative MIP gap reported by HiGHS (None for other solvers)."""
    model = getattr(prob, "solverModel", None)
    if model is None or not hasattr(model, "getInfo"):
        return None
    try:
        return float(model.getInfo().mip_gap)
    except (AttributeError, RuntimeError):
        return None


def mip_bound(prob: pulp.LpProblem) -> float | None:
    """Dual (lower) bound reported by HiGHS for a minimization (None for other solvers or none known)."""
    model = getattr(prob, "solverModel", None)
    if model is None or not hasattr(model, "getInfo"):
        return None
    try:
        bound = float(model.getInfo().mip_dual_bound)
    except (AttributeError, RuntimeError):
        return None
    return bound if math.isfinite(bound) else None


@dataclass
class Solution:
    """Solver outcome, read back through the registry (no PuLP object inside)."""

    status: Literal["optimal", "feasible", "infeasible"]
    objective_usd: float
    gap: float | None
    solve_seconds: float
    """Wall seconds of the solve, the search for its first plan (planner.optimize.incumbent) included."""
    values: dict[str, dict[Any, float]] = field(default_factory=dict)
    costs_usd: dict[str, float] = field(default_factory=dict)
    binding: list[dict[str, Any]] = field(default_factory=list)
    bound_usd: float | None = None
    """Proven lower bound on the objective of every plan (None when the solver reports none); equals the
    objective when optimal."""
    build_seconds: float = 0.0
    """Wall seconds spent building the PuLP problem before the solve (0 where not measured)."""

    @property
    def cost_usd(self) -> float:
        """Horizon cost of the solution: the objective's cost terms without the tie-break, USD."""
        return sum(usd for category, usd in self.costs_usd.items() if category != TIE_BREAK)


def _binding_rows(ctx: BuildContext, tol: float = 1e-6) -> list[dict[str, Any]]:
    """Rows of the coupling and resource families (demand, commitments, supply, site limits, budgets) with
    no slack at the solution."""
    interesting = names_with("coupling", "resource")
    out = []
    for name, (family, key) in ctx.rows.items():
        if family not in interesting:
            continue
        c = ctx.row_constraints[name]
        lhs = c.value()
        if lhs is None or not any(abs(v.varValue or 0.0) > tol for v in c):
            continue
        slack = -float(lhs)  # PuLP rows are expr <= 0 / >= 0 with the constant folded in
        if abs(slack) <= tol * max(1.0, abs(float(c.constant or 0.0))):
            out.append(
                {
                    "family": family,
                    "key": [str(k) for k in (key if isinstance(key, tuple) else (key,))],
                    "slack": 0.0,
                }
            )
    return out


def solve_context(
    ctx: BuildContext,
    *,
    solver: SolverName = "highs",
    time_limit_s: float | None = None,
    max_nodes: int | None = None,
    extra_rows: Callable[[BuildContext], None] | None = None,
    warm_start: dict[tuple[str, Any], float] | None = None,
    prebuilt: bool = False,
) -> Solution:
    """Build (then add ``extra_rows``, e.g. a probe's restriction) and solve; map the solver status to optimal / feasible (a limit reached, with gap) /
    infeasible (proven). A stop at ``time_limit_s`` or ``max_nodes`` before any plan is found is not an
    infeasibility: it raises :class:`~planner.errors.SolverError` (exit 4) naming the limit. ``warm_start``: a
    feasible plan by (family, key) handed to HiGHS as its first incumbent (others: ignored; unlisted
    variables 0). ``prebuilt``: ``ctx`` is already built (by :func:`~planner.optimize.build.build_problem`):
    solve it as it is."""
    built = time.perf_counter()
    if not prebuilt:
        build_problem(ctx)
    if extra_rows is not None:
        extra_rows(ctx)
    start = time.perf_counter()
    split = parts(ctx) if solver == "highs" else None
    named = None if warm_start is None else {ctx.variables[f][k].name: v for (f, k), v in warm_start.items()}
    if split is None and solver == "highs":  # one problem: its columns in build order, and a first plan
        split = whole(ctx)  # from a restriction (planner.optimize.incumbent) unless one is given
    if named is None and split is not None and (len(split) == 1 or _largest_part_integers(ctx, split) >= MIN_INTEGER_COLUMNS):
        with quiet_stdout():
            named = restricted_start(ctx, time_limit_s=time_limit_s)
    left_s = None if time_limit_s is None else max(1e-3, time_limit_s - (time.perf_counter() - start))
    if split is not None:  # independent parts (e.g. the slices of a rent-only plan) one by one, or the whole
        held = None if named is None else held_at_zero(ctx, _plan_usd(ctx, named))
        return _solve_split(
            ctx, split, time_limit_s=left_s, max_nodes=max_nodes, build_s=start - built, start=named, began=start,
            held=held,
        )
    made = make_solver(solver, time_limit_s=left_s, max_nodes=max_nodes, restarts=EXACT_RESTARTS, start=named)
    status, has_solution, optimal = solve_status(ctx.prob, made)
    elapsed = time.perf_counter() - start
    if not has_solution:
        proven = status in ("Infeasible", "Undefined", "Unbounded") or status.startswith("Infeasible")
        # CBC stopped by its time limit (during preprocessing) may write "Infeasible": not a proof
        if proven and not (solver == "cbc" and time_limit_s is not None and elapsed >= time_limit_s):
            return Solution("infeasible", float("nan"), None, elapsed, build_seconds=start - built)
        raise SolverError(no_plan_message(solver, status, time_limit_s, max_nodes))
    sol = read_solution(ctx, optimal=optimal, elapsed=elapsed)
    sol.build_seconds = start - built
    return sol


def _largest_part_integers(ctx: BuildContext, split: list[list[int]]) -> int:
    """Integer columns of the largest of the independent parts ``split``: a problem split into small parts
    (the slices of a rent-only plan) is quick without a first plan; one with a large part (the slices after
    a purchase arrives) is not (buy_vs_rent: HiGHS 1.46 → 1.0 s with one)."""
    cols, _ = columns(ctx)
    return max((integer_columns(cols, part) for part in split), default=0)


def _plan_usd(ctx: BuildContext, plan: dict[str, float]) -> float:
    """The objective of the built ``ctx`` at ``plan`` (PuLP variable name → value, unlisted: 0)."""
    return float(ctx.prob.objective.constant or 0.0) + sum(
        float(c) * plan.get(v.name, 0.0) for v, c in ctx.prob.objective.items()
    )


def _solve_split(
    ctx: BuildContext, split: list[list[int]], *, time_limit_s: float | None, max_nodes: int | None, build_s: float,
    start: dict[str, float] | None, began: float, held: set[str] | None = None,
) -> Solution:
    """:func:`solve_context` for a problem of independent parts, or of one (planner.optimize.components). Its
    ``solve_seconds`` run from ``began`` (perf_counter), before the first plan's search, as for one problem."""
    with quiet_stdout():
        outcome = solve_parts(
            ctx, split, time_limit_s=time_limit_s, max_nodes=max_nodes, restarts=EXACT_RESTARTS, start=start,
            held=held, reliable_branchings=EXACT_RELIABLE_BRANCHINGS, concurrent=True,
        )
    elapsed = time.perf_counter() - began
    if outcome.status == "infeasible":
        return Solution("infeasible", float("nan"), None, elapsed, build_seconds=build_s)
    if outcome.status == "no_plan":
        raise SolverError(no_plan_message("highs", "NotSolved", time_limit_s, max_nodes))
    sol = read_solution(ctx, optimal=outcome.status == "optimal", elapsed=elapsed)
    if sol.status == "feasible":
        sol.bound_usd = outcome.bound if math.isfinite(outcome.bound) else None
        if sol.bound_usd is not None:
            sol.gap = max(0.0, sol.objective_usd - sol.bound_usd) / max(1e-9, abs(sol.objective_usd))
    sol.build_seconds = build_s
    return sol


def no_plan_message(solver: SolverName, status: str, time_limit_s: float | None, max_nodes: int | None) -> str:
    """The one line of a solve stopped by a limit before it found any plan (not an infeasibility)."""
    limit = f"the time limit of {time_limit_s:g} s" if time_limit_s is not None else f"{max_nodes} search nodes"
    if time_limit_s is None and max_nodes is None:
        limit = "its limits"
    return (
        f"{solver} found no plan within {limit} (status {status}); this does not mean there is none: "
        "raise --time-limit or leave it unset"
    )


def read_solution(ctx: BuildContext, *, optimal: bool, elapsed: float) -> Solution:
    """Read the solved problem of ``ctx`` back by key (values, cost categories, binding rows, gap)."""
    values = {
        family: {key: float(v.varValue or 0.0) for key, v in table.items()}
        for family, table in ctx.variables.items()
    }
    costs = {cat: float(pulp.value(pulp.lpSum(terms)) or 0.0) for cat, terms in ctx.cost_terms.items()}
    gap = None if optimal else mip_gap(ctx.prob)
    objective = float(pulp.value(ctx.prob.objective) or 0.0)
    return Solution(
        status="optimal" if optimal else "feasible",
        objective_usd=objective,
        gap=gap,
        bound_usd=objective if optimal else mip_bound(ctx.prob),
        solve_seconds=elapsed,
        values=values,
        costs_usd=costs,
        binding=_binding_rows(ctx),
    )


# --------------------------------------------------------------------------------------------------
# Reading and setting a built problem's values (the decomposition's only access to PuLP variables)
# --------------------------------------------------------------------------------------------------


def value(ctx: BuildContext, family: str, key: Any) -> float:
    """Solved value of variable ``family[key]`` (0 when it has none)."""
    return float(ctx.variables[family][key].varValue or 0.0)


def objective_usd(ctx: BuildContext) -> float:
    """Value of the objective of the solved ``ctx``."""
    return float(pulp.value(ctx.prob.objective) or 0.0)


def snapshot(ctx: BuildContext) -> dict[str, float]:
    """The values of every variable of the solved ``ctx`` (a warm start for :func:`make_solver`)."""
    return {v.name: float(v.varValue or 0.0) for v in ctx.prob.variables()}


def restore(ctx: BuildContext, values: dict[str, float]) -> None:
    """Set the variables of ``ctx`` to a :func:`snapshot` of it."""
    for v in ctx.prob.variables():
        v.varValue = values[v.name]


def assemble(whole: BuildContext, parts: list[BuildContext]) -> None:
    """Set the variables of the built ``whole`` from solved ``parts`` with the same keys (zero elsewhere)."""
    for v in whole.prob.variables():
        v.varValue = 0.0
    for part in parts:
        for family, table in part.variables.items():
            for key, v in table.items():
                whole.variables[family][key].varValue = v.varValue


ROW_TOLERANCE = 1e-6
"""Relative violation up to which a row counts as satisfied (:func:`violated_rows`)."""


def violated_rows(ctx: BuildContext, *, rel_tol: float = ROW_TOLERANCE) -> list[str]:
    """Rows of the problem of ``ctx`` its variables' values break (relative violation above ``rel_tol``)."""
    out = []
    for name, c in ctx.row_constraints.items():
        lhs = float(c.value() or 0.0)  # expr (sense) 0, the constant folded in
        tol = rel_tol * max(1.0, abs(float(c.constant or 0.0)))
        if (c.sense == pulp.LpConstraintEQ and abs(lhs) > tol) or c.sense * lhs < -tol:
            out.append(name)
    return out


def solve_built(
    ctx: BuildContext,
    solver: SolverName,
    *,
    time_limit_s: float | None,
    start: dict[str, float] | None = None,
    heuristic_effort: float | None = None,
    max_nodes: int | None = None,
) -> tuple[bool, bool, float]:
    """Solve the built problem of ``ctx``: (has_solution, proven_optimal, dual bound); the bound is +inf
    when the problem is proven infeasible, -inf when the solver reports none. ``time_limit_s`` None: no
    wall-clock limit (``max_nodes`` alone bounds the work)."""
    made = make_solver(
        solver, time_limit_s=time_limit_s, start=start, heuristic_effort=heuristic_effort, max_nodes=max_nodes
    )
    status, has, optimal = solve_status(ctx.prob, made)
    if not has and status.startswith("Infeasible"):
        return False, False, math.inf
    bound = -math.inf
    model = getattr(ctx.prob, "solverModel", None)
    if optimal:
        bound = objective_usd(ctx)
    elif model is not None and hasattr(model, "getInfo"):
        bound = float(model.getInfo().mip_dual_bound)
    return has, optimal, bound
