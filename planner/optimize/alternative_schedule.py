"""The order and the processes the alternatives are solved in (planner.optimize.alternatives): the most
expensive first, in forked workers (planner.forked.fork_map), the site alternatives ahead of the GPU types'
answers while the early child (planner.optimize.early_alternatives) still solves those.

The order only decides which worker takes which task and when: every answer is the one the serial loop
computes, so no order changes a result, only the wall time. Of the site alternatives, the ones the plan is
unlikely to answer itself come first: a site restriction whose rent for the plan's configurations is no
higher than the plan's usually takes the plan carried to its twins there as its optimum
(planner.optimize.restricted_optimum, a build and a row check), the others take a branch-and-bound search
(bench: eu_west 1.3 s, ap_northeast 0.7 s, us_east and us_west 0.3 s each; handed out by candidate count
alone, both long ones went last and one worker ran them after a short one, 1.66 s instead of 1.38 s)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

from planner.candidates import CandidateTable
from planner.forked import fork_map
from planner.optimize.early_alternatives import EarlyAlternatives
from planner.optimize.restricted_model import PlanModel
from planner.optimize.restricted_optimum import TWIN_KEY
from planner.optimize.solver import Solution
from planner.problem.context import BuildContext

T = TypeVar("T")


MATCH_KEY = tuple(c for c in TWIN_KEY if c != "chunk_tokens")
"""Configuration columns matched to find a deployed candidate's twins at other sites (TWIN_KEY without its
float column, which may be nan: this is an estimate for the order, the row check decides the answer)."""


def carried_sites(table: CandidateTable, main: tuple[Solution, BuildContext] | None) -> set[str]:
    """Sites where the solved plan ``main`` carried to its twins likely answers the site alternative: each
    candidate it deploys has a feasible twin there (same :data:`MATCH_KEY`) renting for no more USD per hour.
    An estimate of which site alternatives are short (module docstring); empty without a plan."""
    if main is None:
        return set()
    sol, ctx = main
    feasible = table.feasible
    used = sorted({int(key[0]) for key, reps in sol.values.get("n_rep", {}).items() if round(reps)})
    key = [c for c in MATCH_KEY if c in feasible.columns and c in ctx.cands.columns]
    if not used or "usd_per_hour" not in ctx.cands.columns:
        return set()
    deployed = ctx.cands.loc[used, [*key, "usd_per_hour"]]
    want: dict[tuple[object, ...], float] = {}
    for *config, usd in deployed.itertuples(index=False, name=None):
        want[tuple(config)] = min(float(usd), want.get(tuple(config), math.inf))
    mine = feasible[feasible["gpu"].isin(set(deployed["gpu"])) & feasible["workload"].isin(set(deployed["workload"]))]
    cheapest: dict[tuple[object, ...], dict[str, float]] = {}
    for *config, site, usd in zip(*(mine[c].tolist() for c in (*key, "site", "usd_per_hour")), strict=True):
        at = cheapest.setdefault(tuple(config), {})
        at[str(site)] = min(float(usd), at.get(str(site), math.inf))
    sites = {str(s) for s in feasible["site"].unique()}
    return {s for s in sites if all(cheapest.get(c, {}).get(s, math.inf) <= usd for c, usd in want.items())}


def expensive_first(
    table: CandidateTable, tasks: list[tuple[str, str]], main: tuple[Solution, BuildContext] | None = None
) -> list[int]:
    """Task indices in the order to hand them out: site alternatives first (each is a rebuild of most of the
    plan), those the plan ``main`` likely answers (:func:`carried_sites`) after the others, then GPU types;
    each by its feasible candidates, most first (ties in task order)."""
    counts = {c: table.feasible[c].value_counts() for c in ("gpu", "site")}
    short = carried_sites(table, main)

    def size(i: int) -> tuple[int, bool, int, int]:
        column, value = tasks[i]
        return (column != "site", column == "site" and value in short, -int(counts[column].get(value, 0)), i)

    return sorted(range(len(tasks)), key=size)


def forked_probes(
    probe: Callable[[int], T],
    tasks: list[tuple[str, str]],
    table: CandidateTable,
    model: PlanModel | None,
    main: tuple[Solution, BuildContext] | None,
    early: EarlyAlternatives | None,
    meanwhile: Callable[[], None] | None = None,
) -> list[T]:
    """``[probe(i) for i in range(len(tasks))]`` in forked workers (planner.forked.fork_map), most expensive
    first. While the early child still solves the GPU types' restrictions (a plan solved faster than they
    are), the site alternatives start at once, three processes sharing the cores until the child is done;
    then the GPU types it answered are probed here, without a solve, and the others in workers. Each probe is
    the one the serial loop computes either way. ``meanwhile``: this process's own work, done once while the
    workers finish their last tasks (planner.forked.fork_map)."""
    order = expensive_first(table, tasks, main)
    if early is None or main is None or not early.solving(model, main[1]):
        if early is not None and main is not None:
            early.take(model, main[1])
        return fork_map(probe, len(tasks), order=order, meanwhile=meanwhile)
    sites = [i for i in order if tasks[i][0] == "site"]
    made = fork_map(lambda k: probe(sites[k]), len(sites), meanwhile=meanwhile)
    probes: dict[int, T] = dict(zip(sites, made, strict=True))
    early.take(model, main[1])
    assert model is not None  # early.solving() said so
    rest = [i for i in order if tasks[i][0] != "site"]
    answered = {i for i in rest if model.answered(*tasks[i])}
    probes.update((i, probe(i)) for i in rest if i in answered)
    unanswered = [i for i in rest if i not in answered]
    probes.update(zip(unanswered, fork_map(lambda k: probe(unanswered[k]), len(unanswered)), strict=True))
    return [probes[i] for i in range(len(tasks))]
