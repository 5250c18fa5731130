"""What the MILP is made of, before any solving: the build context, time slices, supply options, cost
terms, dominance pruning and variables. ``constraints`` may import this package (and the ledgers) only."""

from __future__ import annotations

from planner.problem.context import BuildContext, build_context
from planner.problem.supply import Procurement, SupplyKind, SupplyOption

__all__ = ["BuildContext", "Procurement", "SupplyKind", "SupplyOption", "build_context"]
