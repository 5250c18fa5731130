"""The flows projected out of the model HiGHS solves, and recovered from its answer.

In a min-cost plan a flow (requests/s that candidate k serves in slice t, ``flow[k, t]``) costs nothing and
appears only in these rows:

    flow[k, t] ≤ C[k, t] := Σ_j cap[k, j] · n_rep[k, j, t]                   (slo_operating_point, capacity)
    Σ_{k ∈ K_w} flow[k, t] + Σ_g pd_flow[w, g, t] = D[w, t]                    (demand_coverage)
    Σ_{k ∈ X_wg} flow[k, t] = pd_flow[w, g, t],  X = the prefill or decode pool  (pd_flow (1), (2))
    flow[k, t] ≤ 0                                   (placement_rtt, quantization_policy: k may not serve)

and ``pd_flow`` (no cost either) only in the demand rows, those pool rows and the KV link rows
V · pd_flow ≤ Σ B · n_rep (pd_flow (3), (4)). HiGHS is handed the projection onto the other variables:

    Σ_{k ∈ K_w, k may serve} C[k, t] + Σ_g pd_flow[w, g, t] ≥ D[w, t]
    Σ_{k ∈ X_wg, k may serve} C[k, t] ≥ pd_flow[w, g, t]

without the flows and their capacity and forbidding rows. Exact, both ways: every plan's flows meet it
(flow ≤ C); and from any solution of it (:func:`FlowProjection.lift`) each workload's PD flows are
lowered in turn to what is left of D (lowering pd_flow keeps the KV link rows), the co-located flows fill
the rest of D, and each pool's flows its group's PD flow, candidate by candidate up to C[k, t]. So the two
problems have the same plans' costs, the same optimum and the same linear relaxation (the projection of
the relaxation's polyhedron); the solver just works on a smaller one. The flows it lifts are one feasible
split; the plan's split is chosen afterwards as a router would (planner.optimize.balanced_flows).

Why: the flows double the columns and the capacity rows are most of the rows (20 workloads, one month: 4,922
rows and 8,838 columns → 578 and 4,494), and HiGHS's node LPs shrink with them. Measured with HiGHS 1.16
on the full-catalog scaling instances of `make bench` (model alone, no first plan, one thread): 5 workloads
1.1 → 0.5 s, 10 workloads 7.6 → 4.2 s, 20 workloads 82.6 s (2,427 nodes) → 16.5 s (201 nodes), each to the
same optimum. Only for models of at least :data:`MIN_INTEGER_COLUMNS` integer columns: smaller ones solve in
milliseconds either way, and the GPU-type restrictions solved on the plan's own model
(planner.optimize.restricted_model, which hands HiGHS the model a rebuild would) stay below it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pulp

from planner.problem.context import BuildContext

MIN_INTEGER_COLUMNS = 400
"""Integer columns of a model (a part of one: planner.optimize.components) from which it is handed to HiGHS
projected. Not below planner.optimize.incumbent.MIN_INTEGER_COLUMNS, from which the plan's own model
rebuilds a restriction instead of answering it (tests/plan/test_flow_projection.py)."""

FORBIDDING = ("placement_rtt", "quantization_policy")
"""Families whose rows hold a flow at zero."""

Entries = list[tuple[int, float]]
"""(column position, coefficient) pairs of a row."""


@dataclass
class FlowProjection:
    """What the projection drops and rewrites, by column position (planner.optimize.components.columns) and
    row name, and what :meth:`lift` needs."""

    flows: set[int] = field(default_factory=set)
    """Flow columns: not handed to HiGHS."""
    capacity: dict[int, Entries] = field(default_factory=dict)
    """A flow column → the entries of C[k, t] (none for a flow held at zero)."""
    held: set[int] = field(default_factory=set)
    """Flow columns held at zero by a forbidding row."""
    dropped: set[str] = field(default_factory=set)
    """Capacity and forbidding rows: not handed to HiGHS."""
    relaxed: dict[str, tuple[float, Entries]] = field(default_factory=dict)
    """Demand and pool rows as handed: right side and entries of  Σ C + Σ pd_flow ≥ D  or  Σ C − pd_flow ≥ 0."""
    demand: list[tuple[float, list[int], list[int]]] = field(default_factory=list)
    """Demand rows: (D, co-located flow columns, PD flow columns)."""
    pools: list[tuple[int, list[int]]] = field(default_factory=list)
    """Pool rows: (PD flow column, the pool's flow columns)."""

    def kept(self, part: list[int]) -> list[int]:
        """The columns of ``part`` HiGHS is handed."""
        return [i for i in part if i not in self.flows]

    def lift(self, values: np.ndarray, part: set[int]) -> None:
        """Set the flows (and lower the PD flows) of the rows on ``part`` in ``values`` (by column position)
        from the solved replica counts and PD flows there, as the module docstring says."""

        def fill(target: float, flows: list[int]) -> None:
            for i in flows:
                capacity = sum(a * float(values[c]) for c, a in self.capacity[i])
                values[i] = min(max(0.0, capacity), max(0.0, target))
                target -= values[i]

        for demand, flows, pds in self.demand:
            if not (set(flows) | set(pds)) & part:
                continue
            left = demand
            for p in pds:
                values[p] = min(max(0.0, float(values[p])), max(0.0, left))
                left -= values[p]
            fill(left, flows)
        for pd, flows in self.pools:
            if pd in part:
                fill(float(values[pd]), flows)


def flow_projection(ctx: BuildContext, cols: list[Any], index: dict[str, int]) -> FlowProjection | None:
    """The projection of the built problem of ``ctx`` (columns ``cols`` by position ``index``), or None when
    its flows are used otherwise than the module docstring lists (a redundancy rule, a served fraction, the
    explain mode, a maximization, a cost on a flow)."""
    if ctx.prob.sense != pulp.LpMinimize or ctx.elastic or ctx.scenario.objective != "min_cost":
        return None
    flows = {index[v.name] for v in ctx.variables.get("flow", {}).values() if v.name in index}
    pds = {index[v.name] for v in ctx.variables.get("pd_flow", {}).values() if v.name in index}
    free = flows | pds
    if any(index.get(v.name) in free and float(c) != 0.0 for v, c in ctx.prob.objective.items()):
        return None
    if any(cols[i].lowBound != 0 or not _unbounded_above(cols[i].upBound) for i in free):
        return None
    out = FlowProjection(flows=flows)
    rows_of: dict[int, int] = {}  # flow or PD flow column → demand and pool rows it appears in
    for name, expr in ctx.row_constraints.items():
        entries = [(index[v.name], float(a)) for v, a in expr.items()]
        if not any(i in free for i, _a in entries):
            continue
        kind = _row_kind(ctx.rows[name], expr, entries, flows, pds)
        if kind is None:
            return None
        if kind in ("capacity", "forbid"):
            out.dropped.add(name)
            (flow,) = [i for i, _a in entries if i in flows]
            if kind == "forbid":
                out.held.add(flow)
            elif flow in out.capacity:
                return None  # two capacity rows
            else:
                out.capacity[flow] = [(i, -a) for i, a in entries if i != flow]
        elif kind in ("demand", "pool"):
            for i, _a in entries:
                rows_of[i] = rows_of.get(i, 0) + 1
            rhs = -float(expr.constant)
            if kind == "demand":
                out.demand.append((rhs, [i for i, _a in entries if i in flows], [i for i, _a in entries if i in pds]))
            else:
                (pd,) = [i for i, _a in entries if i in pds]
                out.pools.append((pd, [i for i, _a in entries if i in flows]))
            out.relaxed[name] = (rhs, entries)
    in_demand = [i for _d, _f, on in out.demand for i in on]
    if set(out.capacity) | out.held != flows or any(rows_of.get(i) != 1 for i in flows):
        return None  # a flow without its capacity row, or in no (or two) demand and pool rows
    if len(in_demand) != len(set(in_demand)):
        return None  # a PD flow in two demand rows
    for i in out.held:
        out.capacity[i] = []  # serves nothing
    out.relaxed = {name: (rhs, _substituted(entries, out)) for name, (rhs, entries) in out.relaxed.items()}
    return out


def _unbounded_above(bound: float | None) -> bool:
    """No upper bound: None on PuLP 3, +inf on PuLP 4."""
    return bound is None or bound == math.inf


def _row_kind(
    family_key: tuple[str, Any], expr: Any, entries: Entries, flows: set[int], pds: set[int]
) -> str | None:
    """'capacity', 'forbid', 'demand', 'pool' or 'link' (a KV link row, kept) for a row holding a flow or PD
    flow in the form the module docstring lists; None otherwise."""
    family, key = family_key
    constant = float(expr.constant)
    on_flows = [a for i, a in entries if i in flows]
    on_pds = [a for i, a in entries if i in pds]
    if family == "slo_operating_point" and key[0] == "capacity":
        ok = expr.sense == pulp.LpConstraintLE and on_flows == [1.0] and not on_pds and constant == 0.0
        return "capacity" if ok else None
    if family in FORBIDDING:
        ok = expr.sense == pulp.LpConstraintLE and len(entries) == len(on_flows) == 1 and on_flows[0] > 0
        ok = ok and constant == 0.0
        return "forbid" if ok else None
    if family == "demand_coverage":
        ok = expr.sense == pulp.LpConstraintEQ and len(on_flows) + len(on_pds) == len(entries)
        ok = ok and all(a == 1.0 for _i, a in entries) and -constant >= 0.0 and math.isfinite(constant)
        return "demand" if ok else None
    if family == "pd_flow" and key[0] in ("prefill", "decode"):
        ok = expr.sense == pulp.LpConstraintEQ and on_pds == [-1.0] and len(on_flows) + 1 == len(entries)
        return "pool" if ok and all(a == 1.0 for a in on_flows) and constant == 0.0 else None
    if family == "pd_flow" and not on_flows:
        return "link" if expr.sense == pulp.LpConstraintLE and all(a > 0 for a in on_pds) else None
    return None


def _substituted(entries: Entries, projection: FlowProjection) -> Entries:
    """``entries`` with each flow replaced by its capacity entries (coefficients added up by column)."""
    merged: dict[int, float] = {}
    for i, a in entries:
        for j, b in projection.capacity[i] if i in projection.flows else [(i, 1.0)]:
            merged[j] = merged.get(j, 0.0) + a * b
    return list(merged.items())
