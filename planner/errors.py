"""Error types the CLI maps to exit codes, and the "did you mean" helper.

CatalogError / ScenarioError -> exit 2 (invalid input), InfeasiblePlan -> exit 3,
SolverError / AuditError -> exit 4.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class PlannerError(Exception):
    """Base class of every error the planner raises on purpose."""

    exit_code = 4


class InputError(PlannerError):
    """Invalid user input (catalog, scenario or command-line value)."""

    exit_code = 2


class CatalogError(InputError):
    """A catalog file is malformed or refers to an unknown record."""


class ScenarioError(InputError):
    """A scenario file is malformed or refers to an unknown record."""


class InfeasiblePlan(PlannerError):
    """No plan satisfies the requirements; the message says which requirement binds."""

    exit_code = 3


class SolverError(PlannerError):
    """The MILP solver failed (not infeasibility: a crash, an unknown status, ...)."""

    exit_code = 4


class AuditError(PlannerError):
    """A solved plan violates an SLO or memory limit when re-evaluated with the exact ledgers."""

    exit_code = 4


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """Return ``" — did you mean x?"`` for the closest choice, or a list of valid values.

    >>> did_you_mean("h100sxm", ["h100_sxm", "h200_sxm"])
    ' — did you mean h100_sxm?'
    """
    options = sorted(set(choices))
    close = difflib.get_close_matches(value, options, n=1, cutoff=0.5)
    if close:
        return f" — did you mean {close[0]}?"
    shown = ", ".join(options[:8]) + (", ..." if len(options) > 8 else "")
    return f" — valid values: {shown}"
