"""Capacity bisections: the largest load in (0, top] a monotone check accepts, element-wise on arrays
(:func:`largest_ok_load`), and the flag that tells the scheduler's fixed point it is asked only for a load's
stability (:func:`deciding`). planner.performance.load and planner.performance.pools bisect with it."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import numpy as np

from planner.performance.terms import Num

CAPACITY_REL_TOL = 1e-5
"""Precision of a capacity bisection (:func:`largest_ok_load`): the returned load is the low end of a bracket
at most this share of the bracket's top (the decode-bound ceiling) wide, so it lies at most
CAPACITY_REL_TOL·top below the exact largest ok load and never above it (conservative). Far below the
model's ~10 % accuracy; replicas ceil(demand / capacity) move only where demand / capacity is that close to an
integer. 1e-5 (17 halvings), not 1e-7 (24): the 5-workload bench table in 0.70 instead of 0.84 s CPU."""
BISECTION_ITERATIONS = math.ceil(-math.log2(CAPACITY_REL_TOL))
"""Halvings of the bracket: the fewest with 2^−N ≤ :data:`CAPACITY_REL_TOL` (17)."""
MULTISECTION_BITS: tuple[tuple[float, int], ...] = ((256, 4), (4096, 2), (float("inf"), 1))
"""Bits of the bracket resolved per round of :func:`largest_ok_load`, by array size."""
_DECIDING: ContextVar[bool] = ContextVar("deciding", default=False)
"""True while :func:`largest_ok_load` asks its ``ok``: a load that cannot be stable needs no exact step."""


def deciding() -> bool:
    """True while :func:`largest_ok_load` asks its ``ok`` (only a load's stability matters then)."""
    return _DECIDING.get()


def largest_ok_load(ok: Callable[[Num], Num], hi: Num, *, schedule_size: int | None = None) -> Any:
    """Bisection for the largest λ in (0, ``hi``] with ``ok(λ)`` (monotone: true below, false above); 0 where
    no positive load is ok. Element-wise on arrays.

    :data:`BISECTION_ITERATIONS` halvings (the answer at most :data:`CAPACITY_REL_TOL`·``hi`` below the exact
    largest ok load, never above it): one plain halving, then b at a time: each round asks ``ok`` at the
    2^b − 1 inner points of the bracket at once (a new leading axis) and keeps the sub-interval after the
    last leading true — the same dyadic grid as plain bisection in about b× fewer rounds. b = 4 for small
    arrays (a call costs about the same for 1 and 15 points), 1 for tables where each point is real work.
    ``schedule_size`` (default ``hi.size``) picks b instead: a caller that solves each distinct row of a
    table once (planner/candidate_rows.py) passes the table's size, so every row gets the rounds, and
    therefore the floating-point numbers, it gets in the whole table.

    While ``ok`` runs, the scheduler's fixed point may give up a load that cannot be stable (:func:`deciding`;
    planner/performance/fixed_point.py): ``ok`` must be false wherever the load point it asks for is not
    ``stable`` (every ``ok`` here ANDs it in)."""
    top = np.asarray(hi, dtype=float)
    deciding = _DECIDING.set(True)  # ok needs each load's stability only (fixed_point_s: give_up)
    try:
        return _bisect(ok, top, top.size if schedule_size is None else schedule_size)
    finally:
        _DECIDING.reset(deciding)


def multisection_bits(size: int) -> int:
    """Bits of the bracket :func:`largest_ok_load` resolves per round for a table of ``size`` rows
    (:data:`MULTISECTION_BITS`)."""
    return next(b for limit, b in MULTISECTION_BITS if size <= limit)


def _bisect(ok: Callable[[Num], Num], hi: Any, size: int) -> Any:
    """:func:`largest_ok_load` with the multisection schedule of a table of ``size`` rows."""
    lo = np.zeros_like(hi)
    bits = multisection_bits(size)
    left = BISECTION_ITERATIONS
    while left > 0:
        # the first round is a plain halving: ok may broadcast λ against wider terms, which fixes the shape
        b = 1 if left == BISECTION_ITERATIONS else min(bits, left)
        parts = 2**b
        inner = (np.arange(1, parts, dtype=float) / parts).reshape((parts - 1,) + (1,) * hi.ndim)
        width = hi - lo
        good = np.asarray(ok(lo + width * inner[0] if b == 1 else lo + width * inner))
        good = good[None] if b == 1 else good
        shape = np.broadcast_shapes(hi.shape, good.shape[1:])
        good = np.broadcast_to(good, (parts - 1,) + shape)
        lo, width = np.broadcast_to(lo, shape), np.broadcast_to(width, shape)
        leading = np.cumprod(good, axis=0).sum(axis=0)  # inner points ok before the first that is not
        lo, hi = lo + width * leading / parts, lo + width * (leading + 1) / parts
        left -= b
    if bits == 1:
        # plain halvings: a positive lo is a load ok was asked about, in this shape, and answered true
        # (lo + width·1/2 = lo + width·0.5 exactly), so asking again gives true
        return np.where(lo > 0, lo, 0.0)
    return np.where(ok(lo) & (lo > 0), lo, 0.0)
