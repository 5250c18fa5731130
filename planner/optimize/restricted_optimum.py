"""An alternative the plan already answers: when the optimal plan deploys only one GPU type (or site), it is
also the best plan restricted to that GPU type (site), so that alternative needs no solve of its own.

Let P be the min-cost MILP of the scenario and R_v the MILP rebuilt with only the candidates whose GPU type
(site) is v (planner.optimize.alternatives). Dominance pruning keeps an optimal plan of every candidate set
it is applied to, so opt(R_v) ≥ opt(P) whenever both have the same time slices (a plan of R_v is a plan of
the unpruned P). If the optimal plan x* of P, carried into R_v by key, breaks no row of R_v and costs there
what it costs in P, then opt(R_v) ≤ cost(x*) = opt(P): x* is an optimal plan of R_v. The carried plan is
checked row by row (planner.optimize.solver.violated_rows), so the shortcut never relies on R_v and P
sharing anything beyond what the check sees. HiGHS then only has to prove what is already proven.

A site restriction R_s also takes a plan that deploys at other sites, carried to its *twins* at s: each
deployed candidate is replaced by the candidate of R_s with the same configuration (:data:`TWIN_KEY`: all
but the site), its points by batch, and each supply option by the option of the same GPU type, kind and
unit at s (its prices may differ). Replicas, flows and units of candidates or options that meet on one
twin add up, selectors take the larger value. The carried plan then passes the same row check and the
same cost test (at R_s's prices) as above, so it is an optimum of R_s exactly when it is taken (site
alternatives that tie with the plan, e.g. us_east and us_west at equal prices, need no solve). A carried
plan that passes the rows at a higher cost is still a feasible plan of R_s: it is handed to the solver of
R_s as its starting incumbent (:class:`Carried`), which changes the work to prove the optimum, not the
optimum.

The check runs first on R_s[D], the restriction built on the candidates D the carried plan deploys alone (a
handful instead of ~1,000: the 5-workload bench's us_east and us_west alternatives, 0.13 s of build each):
a plan of a problem built on fewer candidates is a plan of the one built on more — the premise of
opt(R_v) ≥ opt(P) above; the rows a larger candidate set changes only loosen (the GPU floor's γ and granularity,
the workload cost floors' L, fewer instance options dropped as useless) —, so the carried plan, feasible in
R_s[D] at the plan's cost, is an optimum of R_s. Not where a workload has a ``redundancy`` rule (its spare
capacity, and with it its rows and replica bounds, depend on the whole candidate set). When R_s[D] does not
prove it (a higher cost, an option R_s[D] lacks), R_s is built and checked as above.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from planner.optimize.build import build_problem
from planner.optimize.solver import Solution, read_solution, violated_rows
from planner.problem.context import BuildContext
from planner.problem.supply import SupplyOption

SUPPLY_KEYED = ("units", "bought", "rent_discount_usd_per_month")
"""Variable families whose key starts with a supply-option index (renumbered per problem; matched by id)."""

POINT_KEYED = ("n_rep", "y")
CAND_KEYED = ("flow", "redundancy_used")
"""Variable families whose key starts with a candidate id (mapped to its twin at the restriction's site)."""
"""Variable families whose key holds (candidate, point id): point ids are renumbered per problem (matched by
the candidate and the batch of the point)."""

TWIN_KEY = (
    "workload", "role", "engine", "model", "quantization", "kv_dtype", "gpu", "tp", "pp", "ep", "placement",
    "gpus", "share_frac", "prefix_cache", "speculative", "chunk_tokens",
)
"""Candidate columns that make two candidates at different sites twins (every configuration column but the
site; the site-dependent figures — network latency, capacities — are checked by the rows)."""

SELECTORS = ("y", "redundancy_used")
"""Binary families: where two carried variables meet on one twin, the twin takes the larger value."""

COST_REL = 1e-9
"""Relative difference up to which the carried plan costs the same in both problems."""

SMALL_CHECK_RATIO = 4
"""The carried plan is checked first on the candidates it deploys when the restriction has at least this many
times as many (:func:`carry`)."""


def _option_key(o: SupplyOption, site: str | None) -> str:
    """A supply option's identity: its id, or with ``site`` the id it has moved to ``site`` (the option of
    the same GPU type, kind and unit there is its twin; prices may differ: the cost test decides)."""
    return o.id if site is None else dataclasses.replace(o, site=site).id


def _twin_cands(main: BuildContext, sub: BuildContext, used: set[int], site: str | None) -> dict[int, int] | None:
    """Candidate map from ``main``'s to ``sub``'s: every candidate ``sub`` has to itself, and (``site``
    given) each deployed one (``used``) it lacks to its unique twin at ``site`` (:data:`TWIN_KEY`); None
    when a deployed one has neither."""
    keep = {int(k) for k in sub.cands.index}
    out = {int(k): int(k) for k in main.cands.index if int(k) in keep}
    if used <= set(out):
        return out
    if site is None or not set(TWIN_KEY) <= set(sub.cands.columns):
        return None
    by_key: dict[Any, list[int]] = {}
    for k, *key in sub.cands[["cand", *TWIN_KEY]].itertuples(index=False, name=None):
        by_key.setdefault(tuple(key), []).append(int(k))
    for k in used - set(out):
        twins = by_key.get(tuple(main.cands.loc[k, list(TWIN_KEY)]), [])
        if len(twins) != 1:
            return None
        out[k] = twins[0]
    return out


def _translate(main: BuildContext, sub: BuildContext, cands: dict[int, int], site: str | None) -> dict[str, Any]:
    """Key maps from ``main``'s keys to ``sub``'s: candidate → candidate (``cands``), supply index → index
    (by option id, or by twin option at ``site``), point id → point id (by mapped candidate and batch)."""
    sub_supply = {_option_key(o, site): i for i, o in enumerate(sub.supply)}
    supply = {}
    for i, o in enumerate(main.supply):
        j = sub_supply.get(_option_key(o, site))
        if j is not None and (site is not None or o == sub.supply[j]):
            supply[i] = j
    sub_points = {(int(c), int(b)): int(j) for c, b, j in sub.points[["cand", "batch", "point"]].itertuples(index=False)}
    points = {
        int(j): sub_points[(cands[int(c)], int(b))]
        for c, b, j in main.points[["cand", "batch", "point"]].itertuples(index=False)
        if int(c) in cands and (cands[int(c)], int(b)) in sub_points
    }
    return {"supply": supply, "points": points, "cands": cands}


def _carried_key(family: str, key: Any, maps: dict[str, Any]) -> Any:
    """``main``'s variable key in ``sub``'s numbering (None when ``sub`` has no such variable)."""
    if family in SUPPLY_KEYED:
        head, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, None)
        i = maps["supply"].get(head)
        return None if i is None else (i if rest is None else (i, *rest))
    if family in POINT_KEYED:
        j = maps["points"].get(key[1])
        return None if j is None else (maps["cands"][int(key[0])], j, *key[2:])
    if family in CAND_KEYED:
        k = maps["cands"].get(int(key[0]))
        return None if k is None else (k, *key[1:])
    return key


@dataclass
class Carried:
    """The plan carried into a restriction: its optimum (when the carried plan is one, module docstring)
    or else a feasible start for its solve (values by (family, key); None when the carried plan breaks a
    row of the restriction)."""

    optimum: tuple[Solution, BuildContext] | None = None
    start: dict[tuple[str, Any], float] | None = None
    built: BuildContext | None = None
    """The built copy of the restriction the plan was carried into (when one was built): the same problem,
    ready to solve."""


def carried_optimum(
    main: BuildContext, main_sol: Solution, sub: BuildContext, *, site: str | None = None
) -> tuple[Solution, BuildContext] | None:
    """``main_sol`` (optimal for ``main``) as the optimal solution of the unbuilt restriction ``sub``
    (module docstring), and the built copy of ``sub`` it was read from; None when it is not one (``sub``
    stays unbuilt: solve it as usual). ``site``: ``sub`` is the restriction to that site (the plan is
    carried to its twins there)."""
    return carry(main, main_sol, sub, site=site).optimum


def carry(main: BuildContext, main_sol: Solution, sub: BuildContext, *, site: str | None = None) -> Carried:
    """``main_sol`` carried into the unbuilt restriction ``sub`` (to the twins at ``site`` when given):
    :class:`Carried` — the optimum of ``sub`` when the carried plan is feasible there at the plan's cost,
    else a feasible start when it is feasible at a higher cost (``sub`` stays unbuilt in both cases)."""
    same_slices = main.periods == sub.periods and main.months == sub.months and main.demand == sub.demand
    if main_sol.status != "optimal" or main.scenario.objective != "min_cost" or not same_slices:
        return Carried()
    if main.scale_floor is not None or main.elastic or sub.elastic:
        return Carried()
    used = {int(key[0]) for f in (*POINT_KEYED, *CAND_KEYED) for key, v in main_sol.values.get(f, {}).items() if v}
    cands = _twin_cands(main, sub, used, site)
    if cands is None:
        return Carried()  # the plan deploys a candidate the restriction lacks (and has no twin of)
    deployed = {cands[k] for k in used}
    if _small_check_applies(sub, deployed):
        small = sub.restricted(deployed)  # the check on the deployed candidates alone (module docstring)
        build_problem(small)
        checked = _carried_into(main, main_sol, small, cands, site)
        if checked.optimum is not None:
            return Carried(optimum=checked.optimum)
    trial = sub.restricted({int(k) for k in sub.cands.index})  # built here; ``sub`` stays unbuilt
    build_problem(trial)
    return _carried_into(main, main_sol, trial, cands, site)


def _small_check_applies(sub: BuildContext, deployed: set[int]) -> bool:
    """True when the carried plan is checked first on ``sub`` restricted to the candidates it deploys: no
    workload has a ``redundancy`` rule (its spare capacity and replica bounds depend on the whole candidate
    set) and those candidates are a small part of ``sub``."""
    if any(w.redundancy is not None for w in sub.scenario.workloads):
        return False
    return len(deployed) * SMALL_CHECK_RATIO <= len(sub.cands)


def _carried_into(
    main: BuildContext, main_sol: Solution, trial: BuildContext, cands: dict[int, int], site: str | None
) -> Carried:
    """:func:`carry` into the built ``trial`` (``cands``: main's candidates → ``trial``'s restriction's)."""
    maps = _translate(main, trial, cands, site)
    carried: dict[str, dict[Any, float]] = {}
    for family, table in main_sol.values.items():
        for key, v in table.items():
            if v == 0.0:
                continue
            to = _carried_key(family, key, maps)
            if to is None or to not in trial.variables.get(family, {}):
                return Carried(built=trial)  # the plan uses something the restriction lacks
            into = carried.setdefault(family, {})
            into[to] = max(into.get(to, 0.0), v) if family in SELECTORS else into.get(to, 0.0) + v
    for family, registry in trial.variables.items():
        for key, var in registry.items():
            var.varValue = carried.get(family, {}).get(key, 0.0)
    if not _within_bounds(trial) or violated_rows(trial):
        return Carried(built=trial)
    sol = read_solution(trial, optimal=True, elapsed=0.0)
    if abs(sol.cost_usd - main_sol.cost_usd) > COST_REL * max(1.0, abs(main_sol.cost_usd)):
        start = {(f, k): v for f, values in carried.items() for k, v in values.items()}
        return Carried(start=start, built=trial)
    return Carried(optimum=(sol, trial))


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
