"""Solves shared inside one command: the same MILP asked twice is solved once.

``planner compare`` plans the hybrid option (``planner.plan.plan``) and then probes the same scenario
again for its flip points; inside :func:`shared_solves` the second ask gets the first answer. A problem
is the same when the catalog object, the scenario, the candidates and operating points kept, the solver
and its limits and the stage flags (``scale_floor``, ``max_scale``, ``elastic``) are: :func:`~planner.optimize.solve`
is deterministic (a fixed thread count, fixed seed, node limits), so the answer is the one a new solve gives.
Outside :func:`shared_solves` nothing is kept.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from planner.problem.context import BuildContext

_STATE = threading.local()


@contextmanager
def shared_solves() -> Iterator[None]:
    """Within: :func:`planner.optimize.solve` answers a problem it has solved before from memory."""
    outer = getattr(_STATE, "memo", None)
    _STATE.memo = {} if outer is None else outer
    try:
        yield
    finally:
        _STATE.memo = outer


def solve_key(ctx: BuildContext, *limits: Any) -> Hashable | None:
    """The identity of the problem of the (unbuilt) ``ctx`` with the solver ``limits``; None when no
    :func:`shared_solves` is active (nothing is computed then)."""
    if getattr(_STATE, "memo", None) is None or ctx.cost_terms or ctx.row_constraints:
        return None  # not sharing, or a problem already built / changed by its caller
    return (
        id(ctx.catalog),
        ctx.scenario.model_dump_json(),
        tuple(int(c) for c in ctx.cands.index),
        tuple(ctx.points["cand"].astype(int)),
        tuple(ctx.points["batch"].astype(int)) if "batch" in ctx.points else (),
        ctx.scale_floor,
        ctx.max_scale,
        ctx.elastic,
        *limits,
    )


def recall(key: Hashable | None) -> Any:
    """The answer kept for ``key`` (None: none)."""
    memo = getattr(_STATE, "memo", None)
    kept = None if key is None or memo is None else memo.get(key)
    return None if kept is None else kept[0]


def remember(key: Hashable | None, answer: Any, catalog: Any) -> None:
    """Keep ``answer`` for ``key`` (and the catalog, so its id stays unique while kept)."""
    memo = getattr(_STATE, "memo", None)
    if key is not None and memo is not None:
        memo[key] = (answer, catalog)
