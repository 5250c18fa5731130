"""GPU-type alternatives solved on the plan's own built model, restricted to a GPU type's columns, instead of
rebuilt from the candidate table.

Let P be the built min-cost MILP of the plan and R_X the MILP rebuilt from the candidates of GPU type X
(planner.optimize.alternatives.alternative). R_X is P without the columns of other GPU types:

- candidates: every dominance rule (planner.problem.dominance) compares candidates of one GPU type only
  (its groups are keyed by the GPU type, and a group's outcome depends on its own rows alone), so pruning
  the restriction keeps exactly P's candidates of X, and per candidate the same operating point;
- supply: options are made per (gpu, site) pair the candidates use, and the instance rules
  (planner.problem.instances) look at one (kind, gpu, site) at a time: R_X's options are P's options of X,
  in P's order;
- time slices: the same when R_X's purchase lead times are P's (checked, else rebuilt);
- rows: a row family written per candidate or per supply option gives R_X's rows as P's rows with the
  other columns dropped (same order: R_X's candidates and options are in P's order). The families whose
  rows depend on the whole candidate or option set (:data:`SET_FAMILIES`: sums over a workload's candidates
  or PD groups, the GPU floor's γ, per-site sums, the budget, spot share and redundancy rows) are written again
  on a view of R_X (planner.optimize.restricted_view) over P's variables and take the place of P's rows;
- columns: the columns of R_X's rows and objective, in the order they first appear in them (as
  planner.optimize.components.columns orders them); variable bounds are P's, which are R_X's (the replica
  data bound of a workload with a redundancy spare depends on the candidate set: checked, else rebuilt);
- objective: the same prices; the tie-break (planner.problem.cost_terms.tie_break_weights_usd) with R_X's
  ranks.

So the model handed to HiGHS is the one the rebuild hands it (same rows, columns, bounds, costs, in the same
order), without the Python build. A restriction whose rebuild takes another path is rebuilt: one that splits
into independent parts, one large enough for a first plan to be searched (planner.optimize.incumbent), one
with a row left without columns that 0 satisfies (the rebuild hands that to PuLP); one with a row left
without columns that 0 breaks is infeasible, as the rebuild finds. A plan that deploys only X is R_X's
optimum (opt R_X ≥ opt P: its plans are P's): answered without a solve, as by
planner.optimize.restricted_optimum. Only for a proven-optimal, single-model min-cost plan (else rebuilt).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pulp

from planner.candidates import CandidateTable
from planner.highs_threads import highspy_module, new_highs, run_highs
from planner.optimize.build import TIE_BREAK
from planner.optimize.components import MIN_PARTS, columns, whole
from planner.optimize.incumbent import MIN_INTEGER_COLUMNS
from planner.optimize.quiet import quiet_stdout
from planner.optimize.restricted_view import (
    CAND_OWNED,
    OPTION_OWNED,
    RowSet,
    family_rank,
    rewritten_rows,
    view_of,
)
from planner.optimize.solver import EXACT_RELIABLE_BRANCHINGS, EXACT_RESTARTS, FEASIBLE_SOLUTION, Solution
from planner.problem.context import BuildContext
from planner.problem.cost_terms import rank_within, tie_break_rank, tie_break_weights_usd
from planner.problem.spare import spare_requests_per_s
from planner.problem.supply import SupplyKind

COLUMNS = ("gpu", "site")
"""Candidate columns a restriction can keep one value of."""


@dataclass(frozen=True)
class Outcome:
    """A restriction's answer: status ('optimal', 'feasible', 'infeasible', 'unknown'), its cost without the
    tie-break (USD), the (candidate, point) it deploys and the solver seconds (0: answered by the plan)."""

    status: str
    cost_usd: float | None = None
    used: frozenset[tuple[int, int]] = frozenset()
    seconds: float = 0.0


def _leads(supply: list[Any]) -> tuple[float, ...]:
    """Purchase lead times of supply options (what the time slices depend on besides the scenario)."""
    return tuple(sorted({o.available_from_month for o in supply if o.kind is SupplyKind.BUY}))


def _bound(b: float | None, low: bool) -> float:
    return (-math.inf if low else math.inf) if b is None else float(b)


class PlanModel:
    """The plan's built MILP as arrays (rows' nonzeros in build order), ready to be restricted to a GPU type."""

    def __init__(self, ctx: BuildContext, sol: Solution | None, table: CandidateTable) -> None:
        """``sol``: the solved plan (None: not known yet — no restriction is then answered by it)."""
        self.ctx, self.sol = ctx, sol
        self.early: dict[tuple[str, str], Outcome | None] = {}
        """Restrictions solved before ``sol`` was known (planner.optimize.early_alternatives): (column,
        value) → :meth:`solve`'s answer there, which is the answer here unless ``sol`` answers it."""
        # GPU types and sites with an SLO-feasible candidate in the table
        self.feasible = {c: {str(v) for v in table.feasible[c].unique()} for c in COLUMNS}
        cols, index = columns(ctx)
        self.index = index
        rows = RowSet.of(list(ctx.row_constraints.values()), index, [family_rank(f) for f, _k in ctx.rows.values()])
        assert rows is not None  # every variable of a row is a column (columns() collects them from the rows)
        self.rows = rows
        self.col_lower = np.array([_bound(v.lowBound, True) for v in cols])
        self.col_upper = np.array([_bound(v.upBound, False) for v in cols])
        self.integer = np.array([v.cat == pulp.LpInteger for v in cols], dtype=bool)
        objective = np.zeros(len(cols))
        for v, c in ctx.prob.objective.items():
            objective[index[v.name]] += float(c)
        for term in ctx.cost_terms.get(TIE_BREAK, []):
            for v, c in term.items():
                objective[index[v.name]] -= float(c)
        self.cost = objective  # the prices alone: the tie-break is the restriction's own
        self.objective_order = np.full(len(cols), len(cols), dtype=np.int64)
        for n, v in enumerate(ctx.prob.objective):
            self.objective_order[index[v.name]] = n
        self.categories = [  # each cost category as read_solution sums it: (constant, [(column, coefficient)])
            (float(e.constant), [(index.get(v.name), float(c)) for v, c in e.items()])
            for cat, terms in ctx.cost_terms.items()
            if cat != TIE_BREAK
            for e in (pulp.lpSum(terms),)
        ]
        self.owner = {c: np.full(len(cols), "", dtype=object) for c in COLUMNS}  # "": no GPU type / site
        self.rep: dict[int, tuple[int, int, int]] = {}  # n_rep column → (cand, point, slice)
        of_cand = {c: ctx.column(c) for c in COLUMNS}
        for family in (*CAND_OWNED, *OPTION_OWNED):
            for key, v in ctx.variables.get(family, {}).items():
                i = index.get(v.name)
                if i is None:
                    continue
                head = int(key[0] if isinstance(key, tuple) else key)
                for c in COLUMNS:
                    self.owner[c][i] = str(of_cand[c][head]) if family in CAND_OWNED else getattr(ctx.supply[head], c)
                if family == "n_rep":
                    self.rep[i] = (int(key[0]), int(key[1]), int(key[2]))
        self.pd_group = {  # pd_flow column → (workload, PD group): kept where R_X has the group
            index[v.name]: (str(key[0]), str(key[1])) for key, v in ctx.variables.get("pd_flow", {}).items() if v.name in index
        }
        self.spare = {w.name: spare_requests_per_s(ctx, w.name) for w in ctx.scenario.workloads}
        values = np.zeros(len(cols))
        for family, solved in ({} if sol is None else sol.values).items():
            for key, x in solved.items():
                v = ctx.variables[family][key]
                if v.name in index:
                    values[index[v.name]] = x
        used = {c: {str(g) for g in self.owner[c][np.abs(values) > 0] if g} for c in COLUMNS}
        # the one GPU type (site) the plan deploys on (None: several or none)
        self.plan_only = {c: next(iter(v)) if len(v) == 1 else None for c, v in used.items()}
        self.plan_used = frozenset((k, j) for i, (k, j, _t) in self.rep.items() if round(values[i]))

    @cached_property
    def rank(self) -> dict[int, int]:
        """The plan's tie-break ranks (planner.problem.cost_terms.tie_break_rank); each restriction's are drawn
        from them (rank_within). Computed at the first restriction solved here."""
        return tie_break_rank(self.ctx.cands, self.ctx.points)

    @staticmethod
    def of(ctx: BuildContext, sol: Solution, table: CandidateTable) -> PlanModel | None:
        """The plan's model, or None where restricting it is not the rebuilt restriction (module docstring):
        a plan not proven optimal, not min-cost, a staged or explain-mode problem, or one HiGHS does not
        take as a single model (a maximization, a row without columns)."""
        if sol.status != "optimal" or ctx.scenario.objective != "min_cost" or ctx.scale_floor is not None:
            return None
        if ctx.elastic or not ctx.row_constraints or whole(ctx) is None:
            return None
        return PlanModel(ctx, sol, table)

    def solve(self, column: str, value: str, *, time_limit_s: float | None, max_nodes: int) -> Outcome | None:
        """The best plan of the restriction to the GPU type or site ``value`` (``column`` 'gpu' or 'site');
        None when it must be rebuilt (module docstring)."""
        if self.plan_only[column] != value and (column, value) in self.early:
            return self.early[(column, value)]  # the same restriction, solved while the plan was
        made = self.restriction(column, value)
        if made is None or isinstance(made, Outcome):
            return made
        return self._run(*made, time_limit_s, max_nodes)

    def answered(self, column: str, value: str) -> bool:
        """True when :meth:`solve` answers ``value`` of ``column`` without a solve or a rebuild: no feasible
        candidate there, or solved while the plan was (an early answer passed :meth:`restriction`'s checks,
        which do not read the plan, so for the plan's own GPU type the plan is then the answer)."""
        return value not in self.feasible[column] or self.early.get((column, value)) is not None

    def restriction(self, column: str, value: str) -> Outcome | tuple[Any, Any] | None:
        """The restriction to ``value`` of ``column`` as a HiGHS model (highspy.HighsLp) with its columns'
        positions here; or its answer when it needs no solve; or None when it must be rebuilt (module
        docstring)."""
        ctx = self.ctx
        if _leads([o for o in ctx.supply if getattr(o, column) == value]) != _leads(ctx.supply):
            return None
        view = view_of(ctx, column, value)
        if any(spare_requests_per_s(view, w) != usd for w, usd in self.spare.items()):
            return None  # replica bounds widened by another GPU type's (site's) spare
        if self.sol is not None and self.plan_only[column] == value:  # the plan is the restriction's optimum
            return Outcome("optimal", self.sol.cost_usd, self.plan_used, 0.0)
        keep = (self.owner[column] == value) | (self.owner[column] == "")
        groups = {(w.name, g) for w in ctx.scenario.workloads for g in view.pd_groups(w.name)}
        for i, group in self.pd_group.items():
            keep[i] = group in groups
        rows = rewritten_rows(self.rows, view, self.index, keep)
        if rows is None:
            return None
        empty = rows.empty_rows()
        if empty.any():  # a row left without columns: infeasible when 0 breaks it, else rebuilt (module docstring)
            return Outcome("infeasible") if rows.broken_at_zero(empty) else None
        cols = rows.column_order(keep, self.objective_order)
        if int(self.integer[cols].sum()) >= MIN_INTEGER_COLUMNS or rows.parts(cols, self.integer) >= MIN_PARTS:
            return None
        return self._lp(cols, rows, view), cols

    def _lp(self, cols: Any, rows: RowSet, view: BuildContext) -> Any:
        """The HiGHS model of columns ``cols`` (in order) and rows ``rows``; the tie-break ranks ``view``'s
        candidates."""
        highspy = highspy_module()
        col_id = np.full(len(self.col_lower), -1, dtype=np.int64)
        col_id[cols] = np.arange(len(cols))
        cost = self.cost[cols].copy()
        rank = rank_within(self.rank, view.cands.index)  # a GPU type's or site's candidates: whole swap classes
        weights = tie_break_weights_usd(view.cands, view.points, view.periods, view.months, rank)
        for i, key in self.rep.items():
            if col_id[i] >= 0:
                cost[col_id[i]] += weights[key]
        counts, row_ids, values = rows.colwise(col_id, len(cols))
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = len(cols), len(rows.lower)
        lp.col_cost_ = cost
        lp.col_lower_, lp.col_upper_ = self.col_lower[cols], self.col_upper[cols]
        lp.row_lower_, lp.row_upper_ = rows.lower, rows.upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        lp.a_matrix_.index_ = row_ids.astype(np.int32)
        lp.a_matrix_.value_ = values
        kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
        lp.integrality_ = [kinds[int(b)] for b in self.integer[cols]]
        return lp

    def _run(self, lp: Any, cols: Any, time_limit_s: float | None, max_nodes: int) -> Outcome:
        """Solve the restriction's model ``lp`` (columns ``cols``) with the exact solves' options."""
        highspy = highspy_module()
        h = new_highs()
        h.passModel(lp)
        for name, value in (
            ("random_seed", 1), ("mip_rel_gap", 1e-6), ("mip_allow_restart", EXACT_RESTARTS),
            ("mip_max_nodes", max_nodes), ("mip_pscost_minreliable", EXACT_RELIABLE_BRANCHINGS),
        ):
            h.setOptionValue(name, value)
        if time_limit_s is not None:
            h.setOptionValue("time_limit", max(1e-3, time_limit_s))
        began = time.perf_counter()
        with quiet_stdout():
            run_highs(h)
        seconds = time.perf_counter() - began
        status = h.getModelStatus()
        if status in (
            highspy.HighsModelStatus.kInfeasible,
            highspy.HighsModelStatus.kUnboundedOrInfeasible,
            highspy.HighsModelStatus.kUnbounded,
        ):
            return Outcome("infeasible", seconds=seconds)
        if h.getInfo().primal_solution_status != FEASIBLE_SOLUTION:
            return Outcome("unknown", seconds=seconds)
        x = np.zeros(len(self.col_lower))
        x[cols] = np.asarray(h.getSolution().col_value, dtype=float)
        used = frozenset(self.rep[int(i)][:2] for i in cols if int(i) in self.rep and round(x[i]))
        cost_usd = sum(_category_usd(x, constant, items) for constant, items in self.categories)
        optimal = status == highspy.HighsModelStatus.kOptimal
        return Outcome("optimal" if optimal else "feasible", cost_usd, used, seconds)

    def worst_latency_ms(self, used: frozenset[tuple[int, int]]) -> tuple[float | None, float | None]:
        """(max TPOT ms, max TTFT ms) over the operating points ``used`` (None, None: none)."""
        if not used:
            return None, None
        pts = self.ctx.points
        mask = pts["point"].isin([j for _k, j in used]).to_numpy()  # point ids are unique in a context
        return float(pts["tpot_ms"].to_numpy()[mask].max()), float(pts["ttft_ms"].to_numpy()[mask].max())


def _category_usd(x: Any, constant: float, items: list[tuple[int | None, float]]) -> float:
    """One cost category's value at the column values ``x``, summed in PuLP's order (the float
    planner.optimize.solver.read_solution gives)."""
    usd = constant
    for i, c in items:
        usd += (0.0 if i is None else float(x[i])) * c
    return usd


__all__ = ["Outcome", "PlanModel"]
