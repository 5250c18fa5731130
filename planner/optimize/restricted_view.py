"""The rows of a GPU-type restriction of a built plan (planner.optimize.restricted_model): the plan's rows on
the kept columns, and the rows of the families that depend on the whole candidate or option set written
again on a *view* of the restriction — the restriction's candidates, points and supply options over the
plan's variables (supply options renumbered as the restriction numbers them).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pulp

from constraints import FAMILIES
from planner.problem.context import BuildContext

CAND_OWNED = ("n_rep", "y", "flow", "redundancy_used")
"""Variable families whose key starts with a candidate id."""

OPTION_OWNED = ("units", "bought", "rent_discount_usd_per_month", "tier_gpus", "tier_on")
"""Variable families whose key starts with a supply-option index (or is one)."""

SET_FAMILIES = (
    "demand_coverage", "pd_flow", "gpu_floor", "site_capacity", "budget_max", "spot_share", "redundancy"
)
"""Row families whose rows depend on the whole candidate or option set (a workload's candidates and PD
groups, the GPU floor's γ, the options of a site, the budget, the spot share, the redundancy bounds): written
again on the restriction's view."""

ZERO_TOL = 1e-9
"""Row bound beyond which 0 breaks a row without columns."""


def family_rank(family: str) -> int:
    """Position of a row family in the build order (constraints.FAMILIES; others last)."""
    return next((r for r, f in enumerate(FAMILIES) if f.name == family), len(FAMILIES))


def _senses(expr: Any) -> tuple[float, float]:
    """(lower, upper) bounds of a PuLP row ``expr (sense) 0`` with its constant moved to the right."""
    rhs = -float(expr.constant)
    low = rhs if expr.sense in (pulp.LpConstraintGE, pulp.LpConstraintEQ) else -math.inf
    up = rhs if expr.sense in (pulp.LpConstraintLE, pulp.LpConstraintEQ) else math.inf
    return low, up


@dataclass
class RowSet:
    """Rows as arrays: family rank, bounds, and nonzeros (row, column, value, position within the row) in
    build order."""

    rank: Any
    lower: Any
    upper: Any
    nz_row: Any
    nz_col: Any
    nz_val: Any
    nz_pos: Any

    @staticmethod
    def of(exprs: list[Any], index: dict[str, int], ranks: list[int]) -> RowSet | None:
        """The rows ``exprs`` (PuLP constraints, columns by ``index``; None when one holds a variable
        ``index`` lacks) with their family ``ranks``."""
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        pos: list[int] = []
        lower, upper = [], []
        for r, expr in enumerate(exprs):
            low, up = _senses(expr)
            lower.append(low)
            upper.append(up)
            for p, (v, c) in enumerate(expr.items()):
                i = index.get(v.name)
                if i is None:
                    return None
                rows.append(r)
                cols.append(i)
                vals.append(float(c))
                pos.append(p)
        return RowSet(
            np.asarray(ranks, dtype=np.int64), np.asarray(lower, dtype=float), np.asarray(upper, dtype=float),
            np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(vals, dtype=float),
            np.asarray(pos, dtype=np.int64),
        )

    def empty_rows(self) -> Any:
        """Mask of the rows without nonzeros."""
        hit = np.zeros(len(self.lower), dtype=bool)
        hit[self.nz_row] = True
        return ~hit

    def broken_at_zero(self, rows: Any) -> bool:
        """True when 0 breaks one of the rows ``rows`` (mask)."""
        return bool(((self.lower > ZERO_TOL) | (self.upper < -ZERO_TOL))[rows].any())

    def column_order(self, keep: Any, objective_order: Any) -> Any:
        """The columns of the rows, in the order they first appear in them, then the columns ``keep`` only
        in the objective (``objective_order``: position in the objective, its length where absent), as
        planner.optimize.components.columns orders a built problem's."""
        width = int(self.nz_pos.max()) + 1 if len(self.nz_pos) else 1
        first = np.full(len(keep), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, self.nz_col, self.nz_row * width + self.nz_pos)
        in_rows = first < np.iinfo(np.int64).max
        by_rows = np.flatnonzero(in_rows)[np.argsort(first[in_rows], kind="stable")]
        only_objective = np.flatnonzero(keep & ~in_rows & (objective_order < len(keep)))
        return np.concatenate([by_rows, only_objective[np.argsort(objective_order[only_objective], kind="stable")]])

    def parts(self, cols: Any, integer: Any) -> int:
        """Connected parts of the row–column graph that hold an integer column, as
        planner.optimize.components.parts counts them."""
        if not len(self.nz_col):
            return 0
        label = np.arange(len(integer), dtype=np.int64)
        big = np.iinfo(np.int64).max
        row_label = np.full(len(self.lower), big, dtype=np.int64)
        while True:
            row_label[:] = big
            np.minimum.at(row_label, self.nz_row, label[self.nz_col])
            new = label.copy()
            np.minimum.at(new, self.nz_col, row_label[self.nz_row])
            if np.array_equal(new, label):
                break
            label = new
        in_rows = np.zeros(len(integer), dtype=bool)
        in_rows[self.nz_col] = True
        hard = cols[integer[cols] & in_rows[cols]]
        return len(set(label[hard].tolist()))

    def colwise(self, col_id: Any, n_cols: int) -> tuple[Any, Any, Any]:
        """(nonzeros per column, row ids, values) column by column (columns renumbered by ``col_id``)."""
        cols = col_id[self.nz_col]
        order = np.lexsort((self.nz_row, cols))
        return np.bincount(cols, minlength=n_cols), self.nz_row[order], self.nz_val[order]


class _View(BuildContext):
    """A context whose rows are only recorded (the variables belong to another problem: PuLP 4 binds an
    expression to its problem, and the plan's problem must not change)."""

    def add_row(self, family: str, key: Any, constraint: Any) -> None:
        name = self._name(family)
        self.rows[name] = (family, key)
        self.row_constraints[name] = constraint


def view_of(ctx: BuildContext, column: str, value: str) -> BuildContext:
    """The unbuilt restriction of ``ctx`` to the candidates whose ``column`` ('gpu' or 'site') is ``value``,
    their points (ids as in ``ctx``) and the supply options of that GPU type or site (renumbered in order),
    holding ``ctx``'s variables under the restriction's keys
    (copies of the registries: rows written on it use ``ctx``'s columns, and add nothing to ``ctx``)."""
    cands = ctx.cands[ctx.cands[column] == value]
    options = [i for i, o in enumerate(ctx.supply) if getattr(o, column) == value]
    renumber = {i: n for n, i in enumerate(options)}
    view = _View(
        prob=pulp.LpProblem("restriction_view", pulp.LpMinimize),
        scenario=ctx.scenario,
        catalog=ctx.catalog,
        sites=ctx.sites,
        cands=cands,
        points=ctx.points[ctx.points["cand"].isin(cands.index)],
        periods=ctx.periods,
        months=ctx.months,
        representative_of=ctx.representative_of,
        slices_of=ctx.slices_of,
        start_month=ctx.start_month,
        hours_frac=ctx.hours_frac,
        demand=ctx.demand,
        supply=[ctx.supply[i] for i in options],
    )
    registry: dict[str, dict[Any, Any]] = defaultdict(dict)
    for family, table in ctx.variables.items():
        if family not in OPTION_OWNED:
            registry[family] = dict(table)
            continue
        for key, v in table.items():
            head = key[0] if isinstance(key, tuple) else key
            if head in renumber:
                registry[family][(renumber[head], *key[1:]) if isinstance(key, tuple) else renumber[head]] = v
    view.variables = registry
    return view


def rewritten_rows(plan: RowSet, view: BuildContext, index: dict[str, int], keep: Any) -> RowSet | None:
    """The restriction's rows in build order: ``plan``'s rows outside :data:`SET_FAMILIES` with a nonzero
    on the columns ``keep`` (only those nonzeros), and the :data:`SET_FAMILIES` rows written on ``view``;
    None when a written row holds a column outside ``keep`` or a variable the plan lacks."""
    set_ranks = [family_rank(f) for f in SET_FAMILIES]
    set_row = np.isin(plan.rank, set_ranks)
    kept_nz = keep[plan.nz_col] & ~set_row[plan.nz_row]
    has = np.zeros(len(plan.lower), dtype=bool)
    has[plan.nz_row[kept_nz]] = True
    old_rows = np.flatnonzero(has)
    old_id = np.full(len(plan.lower), -1, dtype=np.int64)
    old_id[old_rows] = np.arange(len(old_rows))
    for family in FAMILIES:
        if family.name in SET_FAMILIES:
            family.add(view)
    ranks = [family_rank(f) for f, _k in view.rows.values()]
    new = RowSet.of(list(view.row_constraints.values()), index, ranks)
    if new is None or not keep[new.nz_col].all():
        return None
    rank = np.concatenate([plan.rank[old_rows], new.rank])
    order = np.argsort(rank, kind="stable")  # build order: the plan's rows are in it, each family's in turn
    position = np.empty(len(rank), dtype=np.int64)
    position[order] = np.arange(len(rank))
    rows = np.concatenate([old_id[plan.nz_row[kept_nz]], new.nz_row + len(old_rows)])
    nz_order = np.lexsort((np.concatenate([plan.nz_pos[kept_nz], new.nz_pos]), position[rows]))
    return RowSet(
        rank[order],
        np.concatenate([plan.lower[old_rows], new.lower])[order],
        np.concatenate([plan.upper[old_rows], new.upper])[order],
        position[rows][nz_order],
        np.concatenate([plan.nz_col[kept_nz], new.nz_col])[nz_order],
        np.concatenate([plan.nz_val[kept_nz], new.nz_val])[nz_order],
        np.concatenate([plan.nz_pos[kept_nz], new.nz_pos])[nz_order],
    )


__all__ = ["CAND_OWNED", "OPTION_OWNED", "SET_FAMILIES", "RowSet", "family_rank", "rewritten_rows", "view_of"]
