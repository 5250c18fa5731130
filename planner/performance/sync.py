"""Sync ratio of a deployment: exposed communication / step time, and the user's limit on it (issue 13).

    sync = (T_tp_comm,exposed + T_pp) / T_step        (ledgers.supernode.sync_ratio_frac)

measured on the bare decode step at the operating batch (the step every output token waits for; the
prefill chunks a loaded step also carries only add compute, so this is the larger of the two ratios).
A prefill pool replica (disaggregation) is measured on its prefill step of the prompts it runs at once, a
decode pool replica on its decode step, each against the same limit.
The book gives no threshold (reference ledgers.md, "Two things the book does not provide"); the planner's
default limit 0.30 is the user's ``max_sync_ratio``.
"""

from __future__ import annotations

import numpy as np

from planner.ledgers.supernode import sync_ratio_frac
from planner.performance.steps import StepBreakdown
from planner.performance.terms import Num


def sync_ratio(step: StepBreakdown) -> Num:
    """Exposed TP + PP communication / total of one step (arrays element-wise), fraction in [0, 1]."""
    comm = np.minimum(step.tp_comm_s + step.pp_comm_s, step.total_s)
    return sync_ratio_frac(comm, step_s=step.total_s)


def sync_limit_reason(best_ratio: float, limit: float, *, step: str = "decode") -> str:
    """Reason a candidate is not offered: its least sync ratio is above the limit ("sync ratio 0.41 > 0.30")."""
    return f"sync ratio {best_ratio:.2f} > {limit:.2f} (exposed TP/PP communication / {step} step; max_sync_ratio)"
