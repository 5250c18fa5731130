"""The order and the processes the alternatives are solved in (planner.optimize.alternatives): the most
expensive first, in forked workers (planner.forked.fork_map), the site alternatives ahead of the GPU types'
answers while the early child (planner.optimize.early_alternatives) still solves those."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from planner.candidates import CandidateTable
from planner.forked import fork_map
from planner.optimize.early_alternatives import EarlyAlternatives
from planner.optimize.restricted_model import PlanModel
from planner.optimize.solver import Solution
from planner.problem.context import BuildContext

T = TypeVar("T")


def expensive_first(table: CandidateTable, tasks: list[tuple[str, str]]) -> list[int]:
    """Task indices in the order to hand them out: site alternatives first (each is a rebuild of most of the
    plan), then GPU types, each by its feasible candidates, most first (ties in task order)."""
    counts = {c: table.feasible[c].value_counts() for c in ("gpu", "site")}

    def size(i: int) -> tuple[int, int, int]:
        column, value = tasks[i]
        return (column != "site", -int(counts[column].get(value, 0)), i)

    return sorted(range(len(tasks)), key=size)


def forked_probes(
    probe: Callable[[int], T],
    tasks: list[tuple[str, str]],
    table: CandidateTable,
    model: PlanModel | None,
    main: tuple[Solution, BuildContext] | None,
    early: EarlyAlternatives | None,
) -> list[T]:
    """``[probe(i) for i in range(len(tasks))]`` in forked workers (planner.forked.fork_map), most expensive
    first. While the early child still solves the GPU types' restrictions (a plan solved faster than they
    are), the site alternatives start at once, three processes sharing the cores until the child is done;
    then the GPU types it answered are probed here, without a solve, and the others in workers. Each probe is
    the one the serial loop computes either way."""
    order = expensive_first(table, tasks)
    if early is None or main is None or not early.solving(model, main[1]):
        if early is not None and main is not None:
            early.take(model, main[1])
        return fork_map(probe, len(tasks), order=order)
    sites = [i for i in order if tasks[i][0] == "site"]
    probes: dict[int, T] = dict(zip(sites, fork_map(lambda k: probe(sites[k]), len(sites)), strict=True))
    early.take(model, main[1])
    assert model is not None  # early.solving() said so
    rest = [i for i in order if tasks[i][0] != "site"]
    answered = {i for i in rest if model.answered(*tasks[i])}
    probes.update((i, probe(i)) for i in rest if i in answered)
    unanswered = [i for i in rest if i not in answered]
    probes.update(zip(unanswered, fork_map(lambda k: probe(unanswered[k]), len(unanswered)), strict=True))
    return [probes[i] for i in range(len(tasks))]
