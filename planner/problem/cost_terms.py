"""Cost terms of the MILP: the one monthly and the one horizon price of every supply option, used by the
objective and by the budget rows alike, and the deterministic tie-break.

    usd_month[o, t] = c_o · units[o, t] − discount[o, t]                                 (1)
    cost[o] = H_o · bought[o]                      (buy options)                         (2)
    cost[o] = Σ_t months_t · usd_month[o, t]       (rent, owned, edge devices)           (3)
            + Σ_{m ∈ tail_o} d(m) · Σ_{s ∈ S(P−1)} h_s · usd_month[o, s]   (reserved only)   (4)

Notation: c_o the recurring USD per unit-month of option o (planner.problem.supply); discount[o, t] the
rent volume discount in USD per month (variable ``rent_discount_usd_per_month``, defined by
constraints.price_tiers; absent without tiers); H_o the horizon cost of one bought node
(planner.ledgers.economics.bought_unit_horizon_usd); months_t the billed months of slice t. (4) is the
term tail of a reservation: a reserved unit is paid for its whole term, so the units held in the horizon's
last period P − 1 (its hour-block slices S(P−1), share of the day h_s) are billed for the months tail_o
after the horizon up to the end of the last term window (planner.ledgers.economics.term_tail_months), each
at its present value d(m). The plan's cost ledger reads the same months and slices (:func:`term_tail`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pulp

from planner.ledgers.economics import discount_factor, term_tail_months
from planner.problem.context import BuildContext
from planner.problem.supply import SupplyKind

TIE_BREAK_USD = 1e-3
"""Tiny cost per replica-month, USD, times 1 + rank so identical inputs give identical plans (fewer replicas,
then fewer GPUs, quality tier, latency at capacity and table order: :func:`tie_break_weights_usd`)."""

RENT_DISCOUNT = "rent_discount_usd_per_month"
"""Variable family of the rent volume discount per (supply option, slice), USD per month."""


def supply_usd_per_month(ctx: BuildContext, option: int, t: int) -> Any:
    """Recurring cost of supply ``option`` in slice t, USD per month: quote × units, net of the rent volume
    discount (1)."""
    opt = ctx.supply[option]
    units = ctx.variables["units"][(option, t)]
    return opt.usd_per_unit_month * units - ctx.variables[RENT_DISCOUNT].get((option, t), 0)


def term_tail(ctx: BuildContext, option: int) -> tuple[list[int], list[int]]:
    """(months after the horizon, slices billed in them) of supply ``option``'s term tail (4): the months
    up to the end of the last term window of a reserved option and the slices of the horizon's last period
    (those of this context; both empty for every other kind)."""
    term = ctx.supply[option].kind.term_months
    if term is None:
        return [], []
    months = term_tail_months(ctx.scenario.horizon_months, term)
    slices = ctx.slices_of.get(ctx.representative_of[ctx.scenario.periods - 1], []) if months else []
    return months, slices


def billed_usd(ctx: BuildContext, option: int, usd_per_month: Callable[[int], Any]) -> Any:
    """(3) + (4) of a recurring supply ``option`` whose USD per month in slice t is ``usd_per_month(t)``
    (a PuLP expression in the MILP, a number for a fixed plan): Σ_t months_t · usd(t) + the term tail."""
    months, slices = term_tail(ctx, option)
    rate = ctx.scenario.economics.cost_of_capital_frac_per_year
    tail_months = sum(discount_factor(m, cost_of_capital_frac_per_year=rate) for m in months)
    return pulp.lpSum(ctx.months[t] * usd_per_month(t) for t in ctx.periods) + pulp.lpSum(
        tail_months * ctx.hours_frac[s] * usd_per_month(s) for s in slices
    )


def supply_cost_usd(ctx: BuildContext, option: int) -> Any:
    """Cost of supply ``option`` at present value, USD: (2) for bought nodes, else (3) + the term tail (4)."""
    opt = ctx.supply[option]
    if opt.kind is SupplyKind.BUY:
        return opt.horizon_usd_per_unit * ctx.variables["bought"][option]
    return billed_usd(ctx, option, lambda t: supply_usd_per_month(ctx, option, t))


def fixed_plan_usd(ctx: BuildContext, values: dict[str, dict[Any, float]]) -> float:
    """Cost of a fixed plan (its ``bought`` and ``units`` values, without the volume discount) at the prices
    of ``ctx``: (2) for bought nodes, (3) + (4) with usd_month = c_o · units for the others, USD."""
    bought, units = values.get("bought", {}), values.get("units", {})
    total = 0.0
    for o, opt in enumerate(ctx.supply):
        if opt.kind is SupplyKind.BUY:
            total += opt.horizon_usd_per_unit * bought.get(o, 0.0)
        else:
            total += float(pulp.value(billed_usd(ctx, o, _fixed_usd_per_month(opt.usd_per_unit_month, units, o))) or 0.0)
    return total


def _fixed_usd_per_month(price: float, units: dict[Any, float], option: int) -> Callable[[int], float]:
    """Slice → USD per month of ``option`` holding its fixed ``units`` at ``price`` per unit-month."""
    return lambda t: price * units.get((option, t), 0.0)


TIE_BREAK_LATENCY_STEP_MS = 0.01
"""Latencies of the tie-break rank are compared in steps of this (ms): closer ones count as equal."""


def capacity_point_latency_ms(cands: Any, points: Any) -> Any:
    """Per candidate (index: ``cands``'s), the predicted TPOT and TTFT at its capacity point, ms: columns
    ``tpot_ms``, ``ttft_ms`` of its operating point with the most requests/s (``points``), the load it is sized
    for at the SLOs (max_utilization_frac · λ*), each rounded to :data:`TIE_BREAK_LATENCY_STEP_MS`. NaN for
    prefill and decode pools (a request's latency is its PD pair's, not one pool's) and candidates without
    points."""
    at_capacity = (
        points.sort_values(["cand", "capacity_requests_per_s"], kind="stable")
        .groupby("cand")
        .tail(1)
        .set_index("cand")[["tpot_ms", "ttft_ms"]]
    )
    step = TIE_BREAK_LATENCY_STEP_MS
    latency = ((at_capacity / step).round() * step).reindex(cands.index)
    if "role" in cands.columns:  # a table without roles is co-located (planner.problem.roles)
        latency.loc[(cands["role"] != "colocated").to_numpy()] = np.nan
    return latency


SWAP_CLASS = ("workload", "role", "gpu", "site", "gpus", "quality_tier")
"""Candidates alike in these are interchangeable on the supply an equal-cost plan holds: they trade rank slots."""


def tie_break_rank(cands: Any, points: Any) -> dict[int, int]:
    """Candidate id → rank in [0, #candidates), first preferred: by (GPUs, quality tier, id), then within each
    class of :data:`SWAP_CLASS` (one workload's co-located candidates on one GPU type and site with equal GPUs
    and tier) the class's slots go to its members by (TPOT ms, TTFT ms, id) at the capacity point
    (:func:`capacity_point_latency_ms`): between equal-cost plans on the same GPUs, the more latency headroom.
    Every other candidate keeps its slot, so no preference between GPU types, sites or roles moves."""
    latency = capacity_point_latency_ms(cands, points)
    classes = [c for c in SWAP_CLASS if c in cands.columns]
    by_id = cands.sort_values(["gpus", "quality_tier", "cand"], kind="stable").index
    keyed = cands[[*classes, "cand"]].assign(
        slot=by_id.get_indexer(cands.index), tpot_ms=latency["tpot_ms"], ttft_ms=latency["ttft_ms"]
    )
    # both orders list the classes alike, each as many rows: the k-th by latency takes the k-th slot of its class
    by_slot = keyed.sort_values([*classes, "slot"], kind="stable")
    by_latency = keyed.sort_values([*classes, "tpot_ms", "ttft_ms", "cand"], kind="stable")
    slots = by_slot["slot"].to_numpy().tolist()
    return {int(c): int(r) for c, r in zip(by_latency.index.tolist(), slots, strict=True)}


def rank_within(rank: dict[int, int], ids: Any) -> dict[int, int]:
    """:func:`tie_break_rank` of the sub-table of candidates ``ids``, from ``rank`` of the whole table, for a
    sub-table made of whole :data:`SWAP_CLASS` classes with their points (one GPU type's or site's candidates:
    both columns are in every class). Why the same ranks: the sub-table's (GPUs, tier, id) order is the whole
    table's restricted to it (a per-candidate sort key), so each class keeps its members and the order of its
    slots, and hands them out by the same latencies; ranks become positions among the sub-table's."""
    return {k: r for r, k in enumerate(sorted((int(k) for k in ids), key=rank.__getitem__))}


def tie_break_weights_usd(
    cands: Any, points: Any, periods: list[int], months: dict[int, float], rank: dict[int, int] | None = None
) -> dict[tuple[int, int, int], float]:
    """(cand, point, slice) → USD per replica of the tie-break: TIE_BREAK_USD × months_t × (1 + rank / #candidates),
    rank ∈ [0, #candidates) of :func:`tie_break_rank`: a replica costs 1e-3 to 2e-3 USD per month of the slice
    whatever its rank. ``cands``: a candidate table; ``points``: their operating points (with a ``point`` id
    column); ``rank``: :func:`tie_break_rank` of ``cands`` when already known (:func:`rank_within`)."""
    rank = tie_break_rank(cands, points) if rank is None else rank
    n = max(1, len(rank))
    return {
        (int(c), int(j), t): TIE_BREAK_USD * months[t] * (1 + rank[int(c)] / n)
        for c, j in zip(points["cand"].to_numpy().tolist(), points["point"].to_numpy().tolist(), strict=True)
        for t in periods
    }


def tie_break_usd(ctx: BuildContext) -> Any:
    """TIE_BREAK_USD × months × (1 + rank / #candidates) per replica (:func:`tie_break_weights_usd`): among
    equal-cost plans the solver prefers fewer replicas and candidates ranked first (fewer GPUs per replica,
    then quality tier, then the lower TPOT and TTFT at the capacity point, then table order). It does not count
    GPUs: a plan with more, better-ranked replicas can win (examples/buy_vs_rent's canonical quarter 6 deploys 16
    of its paid GPUs instead of 14)."""
    weights = tie_break_weights_usd(ctx.cands, ctx.points, ctx.periods, ctx.months)
    return pulp.lpSum(w * ctx.variables["n_rep"][key] for key, w in weights.items())
