"""AI infrastructure capacity planner: ledgers, candidates, MILP, reports.

Public facade; see ``planner.cli`` for the command line.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
