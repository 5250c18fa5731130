"""Many deployments' terms as one: DeploymentTerms whose fields are (N, 1) columns, so the step, load and
memory functions evaluate every candidate at once (planner.candidates), and row selections of them."""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter
from typing import Any

import numpy as np

from planner.ledgers.efficiency import EfficiencyTerms
from planner.performance.optimizations import LoadOptimizations
from planner.performance.terms import DeploymentTerms


def stack_terms(rows: list[DeploymentTerms]) -> DeploymentTerms:
    """One DeploymentTerms whose fields are (N, 1) columns, for broadcasting against a (1, J) batch row.
    Rows that are the same object (a deployment shared by workloads or variants) are read once."""
    index: dict[int, int] = {}
    where = np.array([index.setdefault(id(r), len(index)) for r in rows], dtype=int)
    if len(index) < len(rows):
        unique = {id(r): r for r in rows}
        return take_terms(stack_terms(list(unique.values())), where)
    names = [f.name for f in fields(DeploymentTerms) if f.name != "efficiency"]
    values = _columns(names, rows)
    eff_values = _columns([f.name for f in fields(EfficiencyTerms)], [r.efficiency for r in rows])
    return DeploymentTerms(**values, efficiency=EfficiencyTerms(**eff_values))


def _columns(names: list[str], records: list[Any]) -> dict[str, Any]:
    """name → (N, 1) float column of that attribute of every record (each column contiguous: a row of one
    (len(names), N) array; the same numbers as ``np.array([getattr(r, name) for r in records], dtype=float)``)."""
    table = np.array(list(map(attrgetter(*names), records)), dtype=float).reshape(len(records), len(names))
    by_name = np.ascontiguousarray(table.T)
    return {name: by_name[i][:, None] for i, name in enumerate(names)}


def take_terms(terms: DeploymentTerms, idx: np.ndarray) -> DeploymentTerms:
    """Rows ``idx`` of a stacked DeploymentTerms (columns stay (n, 1)); a field that is a plain number (one
    deployment's terms broadcast over a table of loads) stays as it is."""
    values = {f.name: _take(getattr(terms, f.name), idx) for f in fields(DeploymentTerms) if f.name != "efficiency"}
    e = terms.efficiency
    eff_values = {f.name: _take(getattr(e, f.name), idx) for f in fields(EfficiencyTerms)}
    return DeploymentTerms(**values, efficiency=EfficiencyTerms(**eff_values))


def take_optimizations(opt: LoadOptimizations | None, idx: np.ndarray) -> LoadOptimizations | None:
    """Rows ``idx`` of stacked optimizations (None stays None; plain-number fields stay as they are)."""
    if opt is None:
        return None
    values = {f.name: _take(getattr(opt, f.name), idx) for f in fields(LoadOptimizations) if f.name != "draft"}
    return LoadOptimizations(**values, draft=None if opt.draft is None else take_terms(opt.draft, idx))


def _take(value: Any, idx: np.ndarray) -> Any:
    return value[idx] if isinstance(value, np.ndarray) and value.ndim >= 1 else value
