"""The site alternatives' kept candidates computed on the idle core while the plan's problem is built.

Each site alternative needs the candidates its restriction keeps (planner.problem.context.kept_candidates
with every other site excluded: the dominance pruning of that site's candidates alone), which depend on the
candidate table only, not on the plan. Between the end of candidate evaluation and the start of the plan's
solve this process builds the plan's context and MILP on one core (bench: 0.5 s) while the other has
nothing to do yet; :func:`prefetch` computes every site's kept candidates there in a forked child
(planner.forked.Background; bench: 0.34 s CPU of the site alternatives' work), and :func:`collect` hands
them to the site alternatives (planner.optimize.alternatives), which would compute the same frames
themselves. The child sends the frames pickled: the same values, dtypes and order (pandas pickles exactly).

Only for tables of :data:`PREFETCH_MIN_FEASIBLE` feasible candidates and more, two sites or more, two workers
(planner.forked.workers_for) and wanted alternatives; elsewhere nothing is forked and the alternatives
compute their kept candidates as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pandas as pd

from planner.candidates import CandidateTable
from planner.catalog.loader import Catalog
from planner.forked import Background, workers_for
from planner.problem.context import kept_candidates
from planner.scenario import Scenario

PREFETCH_MIN_FEASIBLE = 5000
"""Feasible candidates from which the sites' kept candidates are prefetched (the 5-workload bench: 30,262;
the examples: at most 1,160, whose site alternatives take well under 0.1 s: a fork would cost more)."""

_STATE = threading.local()
"""``pending``: id(table) → the child computing its sites' frames; ``kept``: id(table) → the collected
frames by site (both only while :func:`prefetch` of that table is active)."""


def _of(name: str) -> dict[int, object]:
    table: dict[int, object] | None = getattr(_STATE, name, None)
    if table is None:
        table = {}
        setattr(_STATE, name, table)
    return table


def sites_of(table: CandidateTable) -> list[str]:
    """The sites with a feasible candidate, sorted (the site alternatives', planner.optimize.alternatives)."""
    return sorted(str(s) for s in table.feasible["site"].unique())


def site_frames(catalog: Catalog, scenario: Scenario, table: CandidateTable) -> dict[str, pd.DataFrame]:
    """Every site's kept candidates: :func:`kept_candidates` with every other feasible site excluded."""
    sites = sites_of(table)
    return {s: kept_candidates(catalog, scenario, table, exclude={"site": set(sites) - {s}}) for s in sites}


@contextmanager
def prefetch(catalog: Catalog, scenario: Scenario, table: CandidateTable, *, wanted: bool) -> Iterator[None]:
    """Within: the sites' kept candidates of ``table`` are computed in a forked child (module docstring)."""
    if not wanted or len(table.feasible) < PREFETCH_MIN_FEASIBLE or workers_for(2) <= 1 or len(sites_of(table)) < 2:
        yield
        return
    with Background(lambda: site_frames(catalog, scenario, table)) as child:
        _of("pending")[id(table)] = child
        try:
            yield
        finally:
            _of("pending").pop(id(table), None)
            _of("kept").pop(id(table), None)


def collect(table: CandidateTable) -> None:
    """Wait for the child prefetching ``table``'s site frames (none: nothing to do) and keep its answer for
    :func:`kept_at`. Call it in the process that started the prefetch, before forking workers that use it."""
    child = _of("pending").pop(id(table), None)
    if isinstance(child, Background):
        _of("kept")[id(table)] = child.result()


def kept_at(table: CandidateTable, site: str, others: set[str]) -> pd.DataFrame | None:
    """The collected kept candidates of ``site``, when prefetched for ``table`` with exactly ``others`` as the
    excluded sites (None: not prefetched; compute them)."""
    frames = _of("kept").get(id(table))
    if not isinstance(frames, dict) or site not in frames or others != set(frames) - {site}:
        return None
    frame = frames[site]
    return frame if isinstance(frame, pd.DataFrame) else None
