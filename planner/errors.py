"""Error types the CLI maps to exit codes, and the "did you mean" helper.

CatalogError / ScenarioError -> exit 2 (invalid input), InfeasiblePlan -> exit 3,
SolverError / AuditError -> exit 4.
"""

from __future__ import annotations

import difflib
import re
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


NEAR_MATCH = 0.8
"""difflib ratio at or above which one of the choices a value begins is named alone."""


def _spelled(name: str) -> str:
    """``name`` as an id would spell it, for matching: lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def meant_ids(value: str, choices: Iterable[str]) -> list[str]:
    """The choices ``value`` plainly means: the one it spells in another case or with other separators
    (A100_SXM_80GB, Llama-3.1-70B, trt-llm), else the up to three it begins (a100 → a100_pcie_80gb,
    a100_sxm_80gb; of those the one it is a letter short of: gpu → gpus, not gpu_share_fracs); else none."""
    options = sorted(set(choices))
    key = _spelled(value)
    spelled = {_spelled(o): o for o in options}
    if key in spelled:
        return [spelled[key]]
    starting = [o for o in options if len(key) >= 2 and _spelled(o).startswith(key)]
    near = [o for o in starting if difflib.SequenceMatcher(None, key, _spelled(o)).ratio() >= NEAR_MATCH]
    if len(near) == 1:
        return near
    return starting if len(starting) <= 3 else []


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """Return ``" — did you mean x?"`` for the choice meant (:func:`meant_ids`, else the closest), or a list
    of valid values.

    >>> did_you_mean("h100sxm", ["h100_sxm", "h200_sxm"])
    ' — did you mean h100_sxm?'
    >>> did_you_mean("A100", ["a100_pcie_80gb", "a100_sxm_80gb", "a10g"])
    ' — did you mean a100_pcie_80gb or a100_sxm_80gb?'
    """
    options = sorted(set(choices))
    meant = meant_ids(value, options)
    if meant:
        return f" — did you mean {' or '.join(meant)}?"
    key = _spelled(value)
    spelled = {_spelled(o): o for o in options}
    close = difflib.get_close_matches(key, list(spelled), n=1, cutoff=0.5) or difflib.get_close_matches(
        value, options, n=1, cutoff=0.5
    )
    if close:
        return f" — did you mean {spelled.get(close[0], close[0])}?"
    shown = ", ".join(options[:8]) + (", ..." if len(options) > 8 else "")
    return f" — valid values: {shown}"
