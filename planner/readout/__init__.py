"""Typed results of a plan and its one cost ledger; every output (JSON, terminal, workbooks, compare)
reads these and never recomputes a price."""

from __future__ import annotations

from planner.readout.ledger import CashLine, CostLedger, crossover_month
from planner.readout.result import PlanResult
from planner.readout.types import Deployment, ScheduleEntry, SupplyLine

__all__ = [
    "CashLine",
    "CostLedger",
    "Deployment",
    "PlanResult",
    "ScheduleEntry",
    "SupplyLine",
    "crossover_month",
]
