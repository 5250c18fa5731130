"""An alternative the plan already answers: when the optimal plan deploys only one GPU type (or site), it is
also the best plan restricted to that GPU type (site), so that alternative needs no solve of its own.

Let P be the min-cost MILP of the scenario and R_v the MILP rebuilt with only the candidates whose GPU type
(site) is v (planner.optimize.alternatives). Dominance pruning keeps an optimal plan of every candidate set
it is applied to, so opt(R_v) ≥ opt(P) whenever both have the same time slices (a plan of R_v is a plan of
the unpruned P). If the optimal plan x* of P, carried into R_v by key, breaks no row of R_v and costs there
what it costs in P, then opt(R_v) ≤ cost(x*) = opt(P): x* is an optimal plan of R_v. The carried plan is
checked row by row (planner.optimize.solver.violated_rows), so the shortcut never relies on R_v and P
sharing anything beyond what the check sees. HiGHS then only has to prove what is already proven.
"""

from __future__ import annotations

from typing import Any

from planner.optimize.build import build_problem
from planner.optimize.solver import Solution, read_solution, violated_rows
from planner.problem.context import BuildContext

SUPPLY_KEYED = ("units", "bought", "rent_discount_usd_per_month")
"""Variable families whose key starts with a supply-option index (renumbered per problem; matched by id)."""

POINT_KEYED = ("n_rep", "y")
"""Variable families whose key holds (candidate, point id): point ids are renumbered per problem (matched by
the candidate and the batch of the point)."""

COST_REL = 1e-9
"""Relative difference up to which the carried plan costs the same in both problems."""


def _translate(main: BuildContext, sub: BuildContext) -> dict[str, Any]:
    """Key maps from ``main``'s keys to ``sub``'s: supply index → index (by option id), point id → point id
    (by candidate and batch)."""
    sub_supply = {o.id: i for i, o in enumerate(sub.supply)}
    supply = {i: sub_supply[o.id] for i, o in enumerate(main.supply) if o.id in sub_supply and o == sub.supply[sub_supply[o.id]]}
    sub_points = {(int(c), int(b)): int(j) for c, b, j in sub.points[["cand", "batch", "point"]].itertuples(index=False)}
    points = {
        int(j): sub_points[(int(c), int(b))]
        for c, b, j in main.points[["cand", "batch", "point"]].itertuples(index=False)
        if (int(c), int(b)) in sub_points
    }
    return {"supply": supply, "points": points}


def _carried_key(family: str, key: Any, maps: dict[str, Any]) -> Any:
    """``main``'s variable key in ``sub``'s numbering (None when ``sub`` has no such variable)."""
    if family in SUPPLY_KEYED:
        head, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, None)
        i = maps["supply"].get(head)
        return None if i is None else (i if rest is None else (i, *rest))
    if family in POINT_KEYED:
        j = maps["points"].get(key[1])
        return None if j is None else (key[0], j, *key[2:])
    return key


def carried_optimum(
    main: BuildContext, main_sol: Solution, sub: BuildContext
) -> tuple[Solution, BuildContext] | None:
    """``main_sol`` (optimal for ``main``) as the optimal solution of the unbuilt restriction ``sub``
    (module docstring), and the built copy of ``sub`` it was read from; None when it is not one (``sub``
    stays unbuilt: solve it as usual)."""
    same_slices = main.periods == sub.periods and main.months == sub.months and main.demand == sub.demand
    if main_sol.status != "optimal" or main.scenario.objective != "min_cost" or not same_slices:
        return None
    if main.scale_floor is not None or main.elastic or sub.elastic:
        return None
    used = {int(key[0]) for key, v in main_sol.values.get("n_rep", {}).items() if v > 0}
    if not used <= {int(k) for k in sub.cands.index}:
        return None  # the plan deploys a candidate the restriction lacks
    trial = sub.restricted({int(k) for k in sub.cands.index})  # built here; ``sub`` stays unbuilt
    build_problem(trial)
    maps = _translate(main, trial)
    carried: dict[str, dict[Any, float]] = {}
    for family, table in main_sol.values.items():
        for key, v in table.items():
            if v == 0.0:
                continue
            to = _carried_key(family, key, maps)
            if to is None or to not in trial.variables.get(family, {}):
                return None  # the plan uses something the restriction lacks
            carried.setdefault(family, {})[to] = v
    for family, registry in trial.variables.items():
        for key, var in registry.items():
            var.varValue = carried.get(family, {}).get(key, 0.0)
    if not _within_bounds(trial) or violated_rows(trial):
        return None
    sol = read_solution(trial, optimal=True, elapsed=0.0)
    if abs(sol.cost_usd - main_sol.cost_usd) > COST_REL * max(1.0, abs(main_sol.cost_usd)):
        return None
    return sol, trial


def _within_bounds(ctx: BuildContext, tol: float = 1e-9) -> bool:
    """True when every variable of ``ctx`` lies within its bounds (integers are carried as solved)."""
    for table in ctx.variables.values():
        for var in table.values():
            x = float(var.varValue)
            low, up = var.lowBound, var.upBound
            if (low is not None and x < low - tol * max(1.0, abs(low))) or (
                up is not None and x > up + tol * max(1.0, abs(up))
            ):
                return False
    return True
