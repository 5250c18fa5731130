"""Candidate tables shared by plans of the same (catalog, workload shape): what-if probes and sweeps.

Evaluating the candidates (every model × format × GPU × TP × PP × site, each with its load curve) is the
same work for two scenarios that differ only in prices or demand: the table does not read the demand
(requests/s, growth, profile, weight), the economics block (price multipliers, resale, cost of capital…),
the budget, the horizon or the scenario's name — those enter the MILP's coefficients and right-hand sides
only. ``planner compare`` (flip-point probes at other prices and demand levels) and ``planner sweep``
(price × demand grids) therefore reuse one table instead of re-evaluating it per variant.

The key is the catalog object itself (held, so its id cannot be reused) and the scenario's JSON without
those fields; the last :data:`MAX_TABLES` tables are kept. A test checks, on every example, that a price
or demand variant's table equals its base table (tests/plan/test_candidate_cache.py) — a new field that
the candidate evaluation reads must not be listed in :data:`NOT_READ`/:data:`WORKLOAD_NOT_READ`.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from planner.candidates import CandidateTable, build_candidates
from planner.catalog.loader import Catalog
from planner.scenario import Scenario

MAX_TABLES = 8
"""Tables kept (least recently used dropped first)."""

NOT_READ = ("name", "economics", "budget", "horizon_months", "period_months", "objective")
"""Scenario fields the candidate evaluation does not read."""
WORKLOAD_NOT_READ = ("requests_per_s", "growth_frac_per_month", "hourly_profile_frac")
"""Workload fields the candidate evaluation does not read (the demand)."""

_TABLES: OrderedDict[str, tuple[Catalog, CandidateTable]] = OrderedDict()
_LOCK = threading.Lock()


def shape_key(scenario: Scenario) -> str:
    """The scenario's JSON without the fields the candidate evaluation does not read (sorted keys)."""
    data: dict[str, Any] = scenario.model_dump(mode="json")
    for name in NOT_READ:
        data.pop(name, None)
    for workload in data.get("workloads", []):
        for name in WORKLOAD_NOT_READ:
            workload.pop(name, None)
    return json.dumps(data, sort_keys=True)


def candidates_for(catalog: Catalog, scenario: Scenario) -> CandidateTable:
    """:func:`planner.candidates.build_candidates` of ``scenario``, evaluated once per (catalog, shape).

    The returned table is shared: callers read it and never change it in place."""
    key = f"{id(catalog)}:{shape_key(scenario)}"
    with _LOCK:
        hit = _TABLES.get(key)
        if hit is not None and hit[0] is catalog:
            _TABLES.move_to_end(key)
            return hit[1]
    table = build_candidates(catalog, scenario)
    with _LOCK:
        _TABLES[key] = (catalog, table)
        _TABLES.move_to_end(key)
        while len(_TABLES) > MAX_TABLES:
            _TABLES.popitem(last=False)
    return table


def clear() -> None:
    """Forget every kept table."""
    with _LOCK:
        _TABLES.clear()
