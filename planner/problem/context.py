"""The BuildContext every constraint family writes into, and :func:`build_context` that fills its index
sets and coefficients from the candidate table (dominance pruning, supply options, time slices).

No solving here: :mod:`planner.optimize` builds and solves. No PuLP object leaves the optimizer: results
are read through the variable registry by key (never by parsing names).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pulp

from planner.candidates import CandidateTable
from planner.catalog.loader import Catalog
from planner.catalog.schema import Accelerator, Site
from planner.problem.dominance import (
    prune_dominated,
    prune_dominated_points,
    prune_dominated_sites,
    prune_split_replicas,
)
from planner.problem.instances import bound_small_instances, group_sizes, useful_instances
from planner.problem.roles import Role, pd_groups
from planner.problem.supply import (
    SupplyKind,
    SupplyOption,
    first_supply_month,
    supply_options,
    term_window_starts,
)
from planner.problem.time_slices import time_slices
from planner.scenario import Scenario


@dataclass
class BuildContext:
    """Everything a constraint family needs: problem, data, index sets, variables, named rows."""

    prob: pulp.LpProblem
    scenario: Scenario
    catalog: Catalog
    sites: dict[str, Site]
    cands: pd.DataFrame
    """Feasible, non-dominated candidates (index = cand id)."""
    points: pd.DataFrame
    """Operating points of ``cands`` (columns as in planner.candidates) with a ``point`` id column."""
    periods: list[int]
    """Time slices: one per representative demand period (periods with identical demand and deliveries are
    merged), or one per hour block of it when a workload has an hourly profile (see
    :func:`planner.problem.time_slices.time_slices`)."""
    months: dict[int, float]
    """Billed months each slice stands for: months of its merged periods (at present value when the scenario
    has a cost of capital) × its share of the day's hours (without discounting they sum to the horizon)."""
    representative_of: dict[int, int]
    """Every period of the horizon → the representative period that stands for it."""
    slices_of: dict[int, list[int]]
    """Representative period → its time slices (a single slice, with the period's id, without profiles)."""
    start_month: dict[int, int]
    """Time slice → the first month of its representative period."""
    hours_frac: dict[int, float]
    """Time slice → its share of the day's hours (1 without hourly profiles)."""
    demand: dict[tuple[str, int], float]
    supply: list[SupplyOption]
    variables: dict[str, dict[Any, Any]] = field(default_factory=lambda: defaultdict(dict))
    scale_floor: float | None = None
    """max_throughput second stage: the served fraction is held at this value while cost is minimized."""
    max_scale: float = 10.0
    """max_throughput: the largest served fraction of the stated demand the problem admits (it bounds the
    replica counts); planner.optimize.served_scale raises it while the budget serves more."""
    elastic: bool = False
    """Explain-infeasibility mode: demand rows get a shortfall variable and the objective minimizes it."""
    rows: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """PuLP row name → (family, key)."""
    row_constraints: dict[str, Any] = field(default_factory=dict)
    """PuLP row name → the constraint as built (to read its activity without PuLP's name lookups)."""
    cost_terms: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    """Objective terms by cost category (USD over the horizon)."""
    _counter: int = 0
    _pd_groups: dict[str, dict[str, dict[Role, list[int]]]] = field(default_factory=dict)

    # -- naming and registries ------------------------------------------------------------------
    def _name(self, family: str) -> str:
        self._counter += 1
        return f"{family}_{self._counter}"

    def var(
        self,
        family: str,
        key: Any,
        *,
        low: float | None = 0.0,
        up: float | None = None,
        cat: str = "Continuous",
    ) -> Any:
        """Create (once) and register a variable ``family[key]``."""
        if key in self.variables[family]:
            return self.variables[family][key]
        v = self.prob.add_variable(self._name(family), lowBound=low, upBound=up, cat=cat)
        self.variables[family][key] = v
        return v

    def add_row(self, family: str, key: Any, constraint: Any) -> None:
        """Add a named row of constraint ``family`` for ``key``."""
        name = self._name(family)
        self.prob += constraint, name
        self.rows[name] = (family, key)
        self.row_constraints[name] = constraint

    def add_cost(self, category: str, expr: Any) -> None:
        """Add a horizon cost term (USD) of ``category`` to the objective."""
        self.cost_terms[category].append(expr)

    # -- index helpers --------------------------------------------------------------------------
    _points_by_cand: dict[int, list[Any]] = field(default_factory=dict)
    _columns: dict[str, dict[int, Any]] = field(default_factory=dict)

    def column(self, name: str) -> dict[int, Any]:
        """Candidate id → its value in column ``name`` of ``cands`` (read once per context: a dict lookup
        instead of a ``cands.at`` per candidate and row)."""
        if name not in self._columns:
            ids = [int(k) for k in self.cands.index.to_numpy()]
            self._columns[name] = dict(zip(ids, self.cands[name].to_numpy().tolist(), strict=True))
        return self._columns[name]

    def points_of(self, cand: int) -> list[Any]:
        """Operating points of candidate ``cand`` (itertuples rows of ``points``)."""
        if not self._points_by_cand:
            for row in self.points.itertuples():
                self._points_by_cand.setdefault(int(row.cand), []).append(row)
        return self._points_by_cand.get(cand, [])

    def cands_of_workload(self, workload: str) -> Iterable[int]:
        """Candidate ids serving ``workload``."""
        mine = self.cands["workload"].to_numpy() == workload  # numpy: a string column's own == is ~10x slower
        return [int(k) for k in self.cands.index.to_numpy()[mine]]

    def pd_groups(self, workload: str) -> dict[str, dict[Role, list[int]]]:
        """planner.problem.roles.pd_groups of ``cands`` for ``workload``, computed once per context (``cands``
        is never changed after construction; callers read the lists and never change them)."""
        groups = self._pd_groups.get(workload)
        if groups is None:
            groups = self._pd_groups[workload] = pd_groups(self.cands, workload)
        return groups

    def replicas(self, cand: int, period: int) -> Any:
        """Σ_j n_rep[k, j, t]: replicas of candidate ``cand`` in ``period``."""
        return pulp.lpSum(self.variables["n_rep"][(cand, int(p.point), period)] for p in self.points_of(cand))

    def served_from_month(self) -> float:
        """The first month whose period the plan serves in full: the start of the first period that begins at
        or after the first month any supply can serve (planner.problem.supply.first_supply_month; a purchase
        delivered mid-period serves from the next period, constraints/demand_coverage.py)."""
        from_month = first_supply_month(self.supply)
        starts = [float(self.start_month[t]) for t in self.periods if self.start_month[t] >= from_month]
        return min(starts, default=from_month)

    def gpu(self, gpu_id: str) -> Accelerator:
        """Catalog accelerator."""
        return self.catalog.accelerators[gpu_id]

    def restricted(self, keep: set[int], periods: list[int] | None = None) -> BuildContext:
        """The (unbuilt) problem restricted to candidates ``keep`` and, when given, to the slices ``periods``.

        Candidate, point, supply-option and slice ids stay those of this context, so the variables of every
        restriction are keyed as in the whole problem (solutions of parts assemble by key)."""
        cands = self.cands.loc[[k for k in self.cands.index if int(k) in keep]]
        slices = list(self.periods if periods is None else periods)
        inside = set(slices)
        slices_of = {rep: [t for t in ts if t in inside] for rep, ts in self.slices_of.items()}
        return BuildContext(
            prob=pulp.LpProblem(self.prob.name, pulp.LpMinimize),
            scenario=self.scenario,
            catalog=self.catalog,
            sites=self.sites,
            cands=cands,
            points=self.points[self.points["cand"].isin(cands.index)],
            periods=slices,
            months=self.months,
            representative_of=self.representative_of,
            slices_of={rep: ts for rep, ts in slices_of.items() if ts},
            start_month=self.start_month,
            hours_frac=self.hours_frac,
            demand=self.demand,
            supply=self.supply,
            max_scale=self.max_scale,
        )


def kept_candidates(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    *,
    prune: bool = True,
    exclude: dict[str, set[str]] | None = None,
) -> pd.DataFrame:
    """The feasible candidates the MILP keeps (index = cand id): without those ``exclude`` drops by column
    value (alternatives), and, with ``prune``, without the dominated ones (planner.problem.dominance)."""
    cands = table.feasible.set_index("cand", drop=False).rename_axis(index=None)
    for column, values in (exclude or {}).items():
        cands = cands[~cands[column].isin(values)]
    if prune and not cands.empty:
        cands = prune_dominated(prune_dominated_sites(cands, catalog, scenario, table.sites))
        cands = prune_split_replicas(cands, catalog, scenario)
    return cands


def build_context(
    catalog: Catalog,
    scenario: Scenario,
    table: CandidateTable,
    *,
    prune: bool = True,
    exclude: dict[str, set[str]] | None = None,
    kept: pd.DataFrame | None = None,
) -> BuildContext:
    """Index sets and coefficients of the MILP; ``exclude`` drops candidates by column value (alternatives).
    ``kept``: :func:`kept_candidates` of the same arguments, when already known."""
    cands = kept_candidates(catalog, scenario, table, prune=prune, exclude=exclude) if kept is None else kept
    points = table.points[table.points["cand"].isin(cands.index)]
    if prune and not points.empty:
        points = prune_dominated_points(points)
    points = points.reset_index(drop=True)
    points = points.assign(point=range(len(points)))
    pairs = {(g, s) for g, s in zip(cands["gpu"], cands["site"], strict=True)}
    supply = useful_instances(supply_options(catalog, scenario, table.sites, pairs), group_sizes(catalog, cands))
    supply = bound_small_instances(supply, scenario, table.sites)
    leads = tuple(sorted({o.available_from_month for o in supply if o.kind is SupplyKind.BUY}))
    # periods also split where a reservation's term window starts (commitments hold a window together)
    leads = tuple(sorted({*leads, *term_window_starts(supply, scenario.horizon_months)}))
    slices = time_slices(scenario, leads)
    prob = pulp.LpProblem(f"plan_{abs(hash(scenario.name)) % 10**8}", pulp.LpMinimize)
    return BuildContext(
        prob=prob,
        scenario=scenario,
        catalog=catalog,
        sites=table.sites,
        cands=cands,
        points=points,
        periods=list(slices.hours_frac),
        months=slices.months,
        representative_of=slices.representative_of,
        slices_of=slices.slices_of,
        start_month=slices.start_month,
        hours_frac=slices.hours_frac,
        demand=slices.demand,
        supply=supply,
    )
