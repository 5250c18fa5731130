"""Independent parts of a built MILP, solved one by one (HiGHS).

Two variables are linked when some row holds both; the parts are the connected components of that
relation. A problem whose rows split into parts P_1 … P_m (no row and no variable shared) is

    min Σ_i c_i·x_i  s.t.  A_i x_i ⋈ b_i, x_i ∈ X_i  (i = 1..m)   =   Σ_i min { c_i·x_i : A_i x_i ⋈ b_i, x_i ∈ X_i }

so each part is solved on its own and the optima add up (exact). A rent-only plan over several time
slices is the common case: without purchases, reserved terms, budgets over the horizon or other rows across
slices, every slice is its own part. Branch-and-bound on the whole problem multiplies the parts' search
trees (a 12-slice rent-only buy_vs_rent: 3.9 s as one MILP, well under 0.1 s by parts); by parts they
add up.

A part of at least planner.optimize.flow_projection.MIN_INTEGER_COLUMNS integer columns is handed to HiGHS
without its flows (:func:`solver_model`: the projection onto the replica counts, PD flows and supply, exact;
the flows are lifted from the answer). A part stopped by a limit (time, nodes) keeps its best plan; the sum
of the parts' dual bounds is the proven bound of the whole. Each part is solved with the options of
:func:`planner.optimize.solver.make_solver` (fixed seed, relative gap, one thread; the exact solve of a large
part searches on two, planner.highs_threads), so the answer does not depend on machine load. Only HiGHS
(through highspy): other solvers solve the whole problem.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pulp

from planner.highs_threads import highspy_module, new_highs, run_highs, search_concurrently
from planner.optimize.flow_projection import MIN_INTEGER_COLUMNS, FlowProjection, flow_projection
from planner.problem.context import BuildContext
from planner.search_progress import watching

MIN_PARTS = 2
"""Parts with an integer variable needed before splitting pays (else the whole problem is solved)."""

HEURISTICS_OFF_WITH_A_START = (
    "mip_heuristic_run_rins",
    "mip_heuristic_run_rens",
    "mip_heuristic_run_feasibility_jump",
    "mip_heuristic_run_root_reduced_cost",
)
"""HiGHS primal heuristics switched off in a part handed a first plan. That plan comes from a restriction
already solved near the optimum (planner.optimize.incumbent, pooled_start, restricted_optimum.carry), so
these searches for a plan (feasibility jump, root reduced-cost fixing, RINS and RENS sub-MIPs: 89 sub-MIPs and
0.82 of the 1.17 s of the 5-workload bench solve) find nothing better, and the branch-and-bound only has to
prove the bound. HiGHS CPU, same optimum (HiGHS 1.16): 5-workload bench plan 0.82 → 0.37 s, its eu_west
alternative 0.81 → 0.38 s, 1-month scenario with buy options 1.51 → 1.21 s; `make bench` solve of 10
workloads 10.6 → 6.4 s. The 11 examples' plans are the same; a first plan 3 % above the optimum still ends
at the optimum (tests/plan/test_components.py). HiGHS's own heuristics still run in parts without one, and
in parts with replica columns held at zero by the first plan's cost (planner.optimize.floor_pruning: large
many-workload problems, where the first plan is a bin packing the restriction did not get right): there they
find the optimum the first plan missed on the pruned model, and the search proves it sooner (measured
2026-12-05, `make bench` solve, flows projected: 20 workloads, first plan $48,960, optimum $48,528,
13.6-14.1 → 9.7-10.1 s; 10 workloads, whose first plan is its optimum, 1.4 → 2.1-2.2 s)."""


@dataclass
class PartsOutcome:
    """The parts' solves added up: ``status`` 'optimal' (every part optimal), 'feasible' (some part stopped
    by a limit with a plan), 'infeasible' (some part proven so) or 'no_plan' (a part stopped without one)."""

    status: str
    bound: float
    """Σ of the parts' proven bounds on the objective (minimization), -inf when some part has none."""
    seconds: float


def columns(ctx: BuildContext) -> tuple[list[Any], dict[str, int]]:
    """Every variable of the rows and the objective, once, and its position by name."""
    cols: list[Any] = []
    index: dict[str, int] = {}
    exprs = [*ctx.row_constraints.values(), ctx.prob.objective]
    for expr in exprs:
        if expr is None:
            continue
        for v in expr:
            if v.name not in index:
                index[v.name] = len(cols)
                cols.append(v)
    return cols, index


def parts(ctx: BuildContext) -> list[list[int]] | None:
    """Column positions (:func:`columns`) of each part of the built problem of ``ctx`` that holds an
    integer variable (continuous-only parts are merged into the first part); None when there are fewer
    than :data:`MIN_PARTS` such parts, a row without variables or a maximization (left to the solver)."""
    if ctx.prob.sense != pulp.LpMinimize:
        return None
    cols, index = columns(ctx)
    in_rows: set[int] = set()
    parent = list(range(len(cols)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for expr in ctx.row_constraints.values():
        ids = [index[v.name] for v in expr]
        if not ids:
            return None
        in_rows.update(ids)
        root = find(ids[0])
        for j in ids[1:]:
            other = find(j)
            if other != root:
                parent[other] = root
    groups: dict[int, list[int]] = {}
    for i in range(len(cols)):
        groups.setdefault(find(i), []).append(i)
    def hard(g: list[int]) -> bool:
        return any(cols[i].cat == pulp.LpInteger and i in in_rows for i in g)

    integer = [g for g in groups.values() if hard(g)]
    if len(integer) < MIN_PARTS:
        return None
    integer[0] = sorted(integer[0] + [i for g in groups.values() if not hard(g) for i in g])
    return integer


def whole(ctx: BuildContext) -> list[list[int]] | None:
    """The built problem of ``ctx`` as one part, its columns in the order they first appear in its rows
    (:func:`columns`: the build order of the families); None for a maximization or a row without variables
    (left to the solver through PuLP).

    The order matters to HiGHS's search, not to the optimum: PuLP hands HiGHS the columns sorted by name
    (``n_rep_10`` before ``n_rep_9``), which scatters each family; in build order the 5-workload bench solves
    in 1.1 s instead of 2.5 s CPU, examples/chat_p99_redundant in 0.27 s instead of 0.9 s."""
    if ctx.prob.sense != pulp.LpMinimize or any(not len(expr) for expr in ctx.row_constraints.values()):
        return None
    return [list(range(len(columns(ctx)[0])))]


def column_bound(v: Any, low: bool) -> float:
    """A PuLP variable's lower (``low``) or upper bound as HiGHS takes it (None: ∓inf)."""
    b = v.lowBound if low else v.upBound
    if b is None:
        return -math.inf if low else math.inf
    return float(b)


@dataclass
class RowBlock:
    """Rows for HiGHS's ``addRows`` in compressed row form, collected from PuLP rows."""

    lower: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    idx: list[int] = field(default_factory=list)
    vals: list[float] = field(default_factory=list)

    def add(self, expr: Any, rhs: float, entries: list[tuple[int, float]]) -> None:
        """One row of PuLP row ``expr``'s sense with right side ``rhs`` on the (column, coefficient) ``entries``."""
        lower = rhs if expr.sense in (pulp.LpConstraintGE, pulp.LpConstraintEQ) else -math.inf
        self.add_range(lower, rhs if expr.sense in (pulp.LpConstraintLE, pulp.LpConstraintEQ) else math.inf, entries)

    def add_range(self, lower: float, upper: float, entries: list[tuple[int, float]]) -> None:
        """One row ``lower ≤ Σ coefficient · column ≤ upper`` on the (column, coefficient) ``entries``."""
        self.lower.append(lower)
        self.upper.append(upper)
        self.starts.append(len(self.idx))
        for column, coefficient in entries:
            self.idx.append(column)
            self.vals.append(coefficient)

    def add_to(self, h: Any) -> None:
        """Hand the rows to the highspy model ``h``."""
        if self.lower:
            h.addRows(
                len(self.lower),
                np.array(self.lower),
                np.array(self.upper),
                len(self.idx),
                np.array(self.starts, dtype=np.int32),
                np.array(self.idx, dtype=np.int32),
                np.array(self.vals),
            )


def highs_model(
    ctx: BuildContext, cols: list[Any], index: dict[str, int], part: list[int], projection: FlowProjection | None = None
) -> Any:
    """A highspy model of one part (``part``: positions in ``cols``, :func:`columns`): its columns, the rows
    on them and its objective terms (minimized; the objective's constant is left out). With ``projection``
    (planner.optimize.flow_projection), the part's flows projected out: the model's columns are then
    ``projection.kept(part)``."""
    highspy = highspy_module()
    member = set(part)
    kept = part if projection is None else projection.kept(part)
    local = {i: n for n, i in enumerate(kept)}
    h = new_highs()
    n = len(kept)
    h.addVars(n, np.array([column_bound(cols[i], True) for i in kept]), np.array([column_bound(cols[i], False) for i in kept]))
    costs = np.zeros(n)
    for v, c in ctx.prob.objective.items():
        j = local.get(index[v.name])
        if j is not None:
            costs[j] += float(c)
    h.changeColsCost(n, np.arange(n, dtype=np.int32), costs)
    integrality = [
        highspy.HighsVarType.kInteger if cols[i].cat == pulp.LpInteger else highspy.HighsVarType.kContinuous
        for i in kept
    ]
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array(integrality))
    rows = RowBlock()
    for name, expr in ctx.row_constraints.items():
        items = list(expr.items())
        if index[items[0][0].name] not in member:
            continue
        if projection is not None and name in projection.dropped:
            continue
        if projection is not None and name in projection.relaxed:
            rhs, entries = projection.relaxed[name]
            rows.add_range(rhs, math.inf, [(local[i], a) for i, a in entries])
            continue
        rows.add(expr, -float(expr.constant), [(local[index[v.name]], float(c)) for v, c in items])
    rows.add_to(h)
    return h


def solve_parts(
    ctx: BuildContext,
    split: list[list[int]],
    *,
    time_limit_s: float | None,
    gap_rel: float = 1e-6,
    max_nodes: int | None = None,
    restarts: bool = True,
    start: dict[str, float] | None = None,
    held: set[str] | None = None,
    heuristic_effort: float | None = None,
    reliable_branchings: int | None = None,
    concurrent: bool = False,
) -> PartsOutcome:
    """Solve each part of the built ``ctx`` (``split`` from :func:`parts`, or :func:`whole`) with HiGHS and set
    every variable of ``ctx`` to its part's solution (variables in no row and not in the objective: 0).
    ``restarts``: HiGHS's ``mip_allow_restart``; ``start``: a feasible plan (PuLP variable name → value,
    unlisted: 0) handed to each part as its first incumbent (its plan searches then off:
    :data:`HEURISTICS_OFF_WITH_A_START`, unless ``held`` holds some or ``heuristic_effort`` is given); ``held``:
    names of replica columns held at 0 in the parts' models (planner.optimize.floor_pruning: no plan as cheap
    as ``start`` uses them); ``heuristic_effort``: HiGHS's ``mip_heuristic_effort`` (default 0.05);
    ``reliable_branchings``: HiGHS's ``mip_pscost_minreliable`` (default 8); ``concurrent``: HiGHS's concurrent
    tree searches on a large part (planner.highs_threads.search_concurrently; else one). The bound adds back
    the objective's constant."""
    highspy = highspy_module()
    cols, index = columns(ctx)
    began = time.perf_counter()
    for table in ctx.variables.values():
        for v in table.values():
            v.varValue = 0.0
    bound, optimal, has_all = 0.0, True, True
    status = {"infeasible": False}
    dollars = ctx.scenario.objective == "min_cost"
    projection = projection_for(ctx, cols, index, split)
    for number, part in enumerate(split, start=1):
        model = solver_model(ctx, cols, index, part, projection)
        h = model.h
        if held:
            model.hold_at_zero(i for i in model.kept if cols[i].name in held)

        h.setOptionValue("random_seed", 1)
        h.setOptionValue("mip_rel_gap", gap_rel)
        h.setOptionValue("mip_allow_restart", restarts)
        if time_limit_s is not None:
            h.setOptionValue("time_limit", max(1e-3, time_limit_s - (time.perf_counter() - began)))
        if max_nodes is not None:
            h.setOptionValue("mip_max_nodes", max_nodes)
        if heuristic_effort is not None:
            h.setOptionValue("mip_heuristic_effort", heuristic_effort)
        if reliable_branchings is not None:
            h.setOptionValue("mip_pscost_minreliable", reliable_branchings)
        if concurrent:
            search_concurrently(h, model.integer_columns)
        if start:
            first = highspy.HighsSolution()
            first.col_value = [start.get(cols[i].name, 0.0) for i in model.kept]
            h.setSolution(first)
            for name in () if held or heuristic_effort is not None else HEURISTICS_OFF_WITH_A_START:
                h.setOptionValue(name, False)
        with watching(h, f"part {number} of {len(split)}: " if len(split) > 1 else "") if dollars else nullcontext():
            run_highs(h)
        model_status = h.getModelStatus()
        info = h.getInfo()
        if model_status in (
            highspy.HighsModelStatus.kInfeasible,
            highspy.HighsModelStatus.kUnboundedOrInfeasible,
            highspy.HighsModelStatus.kUnbounded,
        ):
            status["infeasible"] = True
            break
        if info.primal_solution_status != 2:  # kSolutionStatusFeasible
            has_all = False
            break
        values = model.values(len(cols))
        for i in part:
            cols[i].varValue = float(values[i])
        done = model_status == highspy.HighsModelStatus.kOptimal
        optimal = optimal and done
        part_bound = float(info.objective_function_value) if done else float(info.mip_dual_bound)
        bound += part_bound if math.isfinite(part_bound) else -math.inf
    seconds = time.perf_counter() - began
    if status["infeasible"]:
        return PartsOutcome("infeasible", math.inf, seconds)
    if not has_all:
        return PartsOutcome("no_plan", -math.inf, seconds)
    constant = float(ctx.prob.objective.constant or 0.0)  # left out of the parts' models (highs_model)
    return PartsOutcome("optimal" if optimal else "feasible", bound + constant, seconds)


def integer_columns(cols: list[Any], part: list[int]) -> int:
    """Integer columns among the positions ``part`` of ``cols`` (:func:`columns`)."""
    return sum(cols[i].cat == pulp.LpInteger for i in part)


def projection_for(
    ctx: BuildContext, cols: list[Any], index: dict[str, int], split: list[list[int]]
) -> FlowProjection | None:
    """The flow projection of ``ctx`` when some part of ``split`` is large enough to be handed projected
    (planner.optimize.flow_projection.MIN_INTEGER_COLUMNS) and its flows allow it."""
    if all(integer_columns(cols, part) < MIN_INTEGER_COLUMNS for part in split):
        return None
    return flow_projection(ctx, cols, index)


@dataclass
class SolverModel:
    """A highspy model of one part (:func:`solver_model`) and how its solution maps back to every column."""

    h: Any
    kept: list[int]
    """The part's columns in the model, in model order (positions in :func:`columns`)."""
    part: list[int]
    projection: FlowProjection | None
    integer_columns: int
    """The part's integer columns (:func:`integer_columns`), which decide its projection and its search."""

    def hold_at_zero(self, columns: Iterable[int]) -> None:
        """Bound the model's columns among ``columns`` (positions in :func:`columns`; others ignored) to 0."""
        local = {i: n for n, i in enumerate(self.kept)}
        at = np.array([local[i] for i in columns if i in local], dtype=np.int32)
        if len(at):
            self.h.changeColsBounds(len(at), at, np.zeros(len(at)), np.zeros(len(at)))

    def values(self, n_columns: int) -> np.ndarray:
        """The model's solution by column position (``n_columns`` of them; 0 off the part), the projected
        flows lifted (planner.optimize.flow_projection)."""
        values = np.zeros(n_columns)
        values[self.kept] = self.h.getSolution().col_value
        if self.projection is not None:
            self.projection.lift(values, set(self.part))
        return values


def solver_model(
    ctx: BuildContext, cols: list[Any], index: dict[str, int], part: list[int], projection: FlowProjection | None
) -> SolverModel:
    """The model HiGHS is handed for ``part``: projected (``projection``, planner.optimize.flow_projection)
    when the part has at least MIN_INTEGER_COLUMNS integer columns, else as built."""
    n_integer = integer_columns(cols, part)
    projected = projection if projection is not None and n_integer >= MIN_INTEGER_COLUMNS else None
    kept = part if projected is None else projected.kept(part)
    return SolverModel(highs_model(ctx, cols, index, part, projected), kept, part, projected, n_integer)
