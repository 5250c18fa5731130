"""The fixed point T = f(T) of the engine scheduler (planner.performance.load), element-wise on arrays.

:func:`fixed_point_s` finds the smallest root T ≥ T₀ of f(T) − T for the step function f of a table of
deployments at their loads (secant, doubling, regula falsi / Illinois; its docstring), evaluating f on the
rows that still move once most have settled, and — for a caller that needs only the load's stability (a
capacity bisection) — giving up the elements whose bracket already shows the load cannot be sustained.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from planner.performance.terms import Num

FIXED_POINT_ITERATIONS = 80
"""Rounds of :func:`fixed_point_s` at most (a handful are used: secant and regula falsi converge fast)."""
SETTLED_REL = 1e-12
"""An element is settled once |f(T) − T| or its last step is at most this share of T (float precision)."""
CONVERGED_REL = 1e-6
COMPACT_MIN_ROWS = 512
"""Tables with at least this many rows evaluate the fixed point's f on the still-moving rows only."""
STEP_CAP_S = 1e3
"""A step time this long means the load has no fixed point (the replica cannot keep up)."""

GiveUp = Callable[[Callable[[Any], Any], Any], Any]
"""give_up(take, lo) of :func:`fixed_point_s`: True where the load is not sustainable at any step T ≥ ``lo``
(``take(x)`` = the rows of a table column that ``lo`` holds)."""


def rows_of(x: Any, rows: Any, n: int) -> Any:
    """Rows ``rows`` of an array stacked over ``n`` deployments; scalars and broadcast rows as they are."""
    return x[rows] if isinstance(x, np.ndarray) and x.ndim >= 1 and x.shape[0] == n else x


def _rows_taker(rows: Any, n: int) -> Callable[[Any], Any]:
    """x ↦ the rows ``rows`` of a column of a table of ``n`` rows (:func:`rows_of`); every row (the table as it
    is) when ``rows`` are all ``n`` of them (the state before any compaction holds them in order)."""
    if len(rows) == n:
        return lambda x: x
    return lambda x: rows_of(x, rows, n)


def fixed_point_s(
    f: Callable[[Num], Num], t0: Num, *, on_rows: Callable[[Any], Callable[[Num], Num]] | None = None,
    give_up: GiveUp | None = None,
) -> tuple[Any, Any]:
    """Smallest root T ≥ T₀ of g(T) = f(T) − T for a non-decreasing step function f with f(T₀) ≥ T₀,
    element-wise; (T, converged).

    Below the root g > 0. Each round moves every unsettled element once, from its latest two iterates:
    - a secant step on g where g falls (a convex g: lands at or below the root; a concave one may pass it);
    - where g still rises, T ← max(f(T), 2T) (the plain iteration f(T) while no slope is known yet): a
      convex g has no root ahead, a concave one is bracketed by the first point past its root;
    - once a point with g < 0 is known, regula falsi inside [last T with g > 0, last T with g < 0], halving
      the retained end's g when one end is kept twice (Illinois), bisection if a step leaves the bracket.
    Settled at |g| ≤ :data:`SETTLED_REL`·T or a step below that; no fixed point ("hopeless") where T reaches
    :data:`STEP_CAP_S` with g > 0.
    Converged = not hopeless and |g| ≤ :data:`CONVERGED_REL`·T at the returned T.

    ``on_rows(rows)`` (optional) gives f of the rows ``rows`` (axis 0) only: on a table of at least
    :data:`COMPACT_MIN_ROWS` rows, once at most half of its rows still move, the rounds go on with those
    rows alone — their state and f (every step is element-wise: the same numbers as on the whole table).

    ``give_up`` (optional; :func:`largest_ok_load`'s decisions only) stops, as hopeless (not converged),
    the elements where ``give_up(take, lo)`` says no step T ≥ lo sustains the load, lo the bracket's low
    end. Where g(T₀) ≥ 0 the iterates never fall below lo (they rise until a point past the root brackets
    it, then stay inside the bracket), so the T that would be returned is ≥ lo and the load is not
    sustainable there either: a caller that needs the load's stability only gets the same answer.
    """
    t = np.minimum(np.array(t0, dtype=float), STEP_CAP_S)
    g = f(t) - t
    state = {  # kept_lo / kept_hi: rounds in a row the low / high end of the bracket was kept; row: its table row
        "t": t, "g": g, "lo": t.copy(), "g_lo": g.copy(), "hi": np.full_like(t, np.inf), "g_hi": np.zeros_like(t),
        "t_prev": t.copy(), "g_prev": g.copy(), "kept_lo": np.zeros_like(t), "kept_hi": np.zeros_like(t),
        "done": np.abs(g) <= SETTLED_REL * np.maximum(t, 1e-12), "hopeless": np.zeros(np.shape(t), dtype=bool),
        "row": np.arange(t.shape[0] if t.ndim else 1), "rising": g >= 0.0,
    }
    table_rows = t.shape[0] if t.ndim else 1
    quit_early = None if give_up is None else (
        lambda st: give_up(_rows_taker(st["row"], table_rows), st["lo"]) & st["rising"]
    )
    _fixed_point_rounds(state, f, on_rows, FIXED_POINT_ITERATIONS, quit_early)
    t, g = state["t"], state["g"]
    converged = ~state["hopeless"] & (np.abs(g) <= CONVERGED_REL * np.maximum(t, 1e-9) + 1e-9)
    return t, converged


def _fixed_point_rounds(
    st: dict[str, Any], f: Callable[[Num], Num], on_rows: Callable[[Any], Callable[[Num], Num]] | None, rounds: int,
    quit_early: Callable[[dict[str, Any]], Any] | None = None,
) -> None:
    """Up to ``rounds`` rounds of :func:`fixed_point_s` on the state ``st`` (updated in place); hands the
    still-moving rows of a large table to a call on those rows alone (its docstring). ``quit_early(st)``:
    the elements to give up (fixed_point_s's ``give_up``)."""
    for done_rounds in range(rounds):
        t, g, done, hopeless = st["t"], st["g"], st["done"], st["hopeless"]
        active = ~(done | hopeless)
        if quit_early is not None and active.any():
            st["hopeless"] = hopeless = hopeless | (active & quit_early(st))
            active = ~(done | hopeless)
        if not active.any():
            return
        n = t.shape[0] if t.ndim >= 1 else 0
        if on_rows is not None and n >= COMPACT_MIN_ROWS:
            rows = np.flatnonzero(np.reshape(active, (n, -1)).any(axis=1))
            if rows.size <= n // 2:
                sub = {key: value[rows] for key, value in st.items()}
                _fixed_point_rounds(sub, on_rows(sub["row"]), on_rows, rounds - done_rounds, quit_early)
                for key, value in sub.items():
                    st[key][rows] = value
                return
        dt = t - st["t_prev"]
        lo, hi, g_lo, g_hi = st["lo"], st["hi"], st["g_lo"], st["g_hi"]
        kept_lo, kept_hi = st["kept_lo"], st["kept_hi"]
        bracketed = np.isfinite(hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(dt != 0.0, (g - st["g_prev"]) / dt, np.nan)
            secant = t - g / slope
        rising = ~(slope < 0.0)  # rising, flat or unknown (nan) slope
        # where g rises, at least double T: no root lies ahead for a convex g, and for a concave g the first
        # point past the root starts the bracket
        step = np.where(rising, t + np.where(np.isnan(slope), g, np.maximum(g, t)), secant)
        if bracketed.any():  # regula falsi (Illinois) inside the brackets
            with np.errstate(divide="ignore", invalid="ignore"):
                g_lo_eff = g_lo * 0.5 ** np.maximum(kept_lo - 1.0, 0.0)
                g_hi_eff = g_hi * 0.5 ** np.maximum(kept_hi - 1.0, 0.0)
                falsi = lo + g_lo_eff * (hi - lo) / (g_lo_eff - g_hi_eff)
            step = np.where(bracketed, np.where((falsi > lo) & (falsi < hi), falsi, (lo + hi) / 2.0), step)
        moved = active  # neither done nor hopeless
        t_next = np.where(moved, np.minimum(step, STEP_CAP_S), t)
        g_next = np.where(moved, f(t_next) - t_next, g)
        still = np.abs(t_next - t) <= SETTLED_REL * np.maximum(t, 1e-12)
        st["t_prev"], st["g_prev"] = np.where(moved, t, st["t_prev"]), np.where(moved, g, st["g_prev"])
        t, g = t_next, g_next
        above, below = moved & (g < 0.0), moved & (g > 0.0)
        st["kept_lo"] = np.where(above & bracketed, kept_lo + 1.0, np.where(below, 0.0, kept_lo))
        st["kept_hi"] = np.where(below & bracketed, kept_hi + 1.0, np.where(above, 0.0, kept_hi))
        st["hi"], st["g_hi"] = np.where(above, t, hi), np.where(above, g, g_hi)
        st["lo"], st["g_lo"] = np.where(below, t, lo), np.where(below, g, g_lo)
        st["t"], st["g"] = t, g
        st["done"] = done | (moved & ((np.abs(g) <= SETTLED_REL * np.maximum(t, 1e-12)) | still))
        st["hopeless"] = hopeless | (moved & (t >= STEP_CAP_S) & (g > 0.0))
