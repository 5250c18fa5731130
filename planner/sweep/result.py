"""The sweep's typed results live in :mod:`planner.readout.sweep` (outputs read the readout only)."""

from planner.readout.sweep import TIMING_FIELDS, Choice, SweepResult, SweepRow, format_value

__all__ = ["TIMING_FIELDS", "Choice", "SweepResult", "SweepRow", "format_value"]
