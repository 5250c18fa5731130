"""Held commitments: the decisions that tie the periods of a large problem together — nodes bought per buy
option and reserved units per slice — read from a solved problem, held in a period problem, checked
against a solved period bound problem, and proposed from the period bounds' solutions
(planner.optimize.decompose)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.optimize.build import fix_variable
from planner.optimize.solver import value
from planner.problem.context import BuildContext
from planner.problem.supply import SupplyKind


def held_commitments(solved: BuildContext) -> dict[tuple[Any, ...], int]:
    """The decisions of a solved problem that tie periods together: nodes bought per buy option (key: its
    id) and reserved units per slice (key: its id and the slice)."""
    held: dict[tuple[Any, ...], int] = {}
    for i, opt in enumerate(solved.supply):
        if opt.kind is SupplyKind.BUY:
            held[(opt.id,)] = round(value(solved, "bought", i))
        elif opt.kind.term_months is not None:
            for t in solved.periods:
                held[(opt.id, t)] = round(value(solved, "units", (i, t)))
    return held


def hold(ctx: BuildContext, held: dict[tuple[Any, ...], int]) -> None:
    """Fix the bought and reserved units of the built problem ``ctx`` to ``held`` (none where absent)."""
    for i, opt in enumerate(ctx.supply):
        if opt.kind is SupplyKind.BUY:
            fix_variable(ctx, "bought", i, held.get((opt.id,), 0))
        elif opt.kind.term_months is not None:
            for t in ctx.periods:
                fix_variable(ctx, "units", (i, t), held.get((opt.id, t), 0))


INTEGRAL_TOL = 1e-6
"""A relaxed operating-point selector within this of 0 or 1 counts as whole (:func:`keeps_held`)."""


def keeps_held(part: BuildContext, held: dict[tuple[Any, ...], int]) -> bool:
    """True when the solved period bound problem ``part`` (:func:`bound_problem`) already is a plan of its
    period with the purchases and reserved terms ``held``: it uses exactly the held units in every slice
    and every operating-point selector is whole.

    Then, when the bound problem was solved to optimality, it is also the best such plan: with purchases
    paid per use, its optimum minimises the other costs plus a term that is constant at the held units,
    over more plans than the period's plan problem has — one of which it is. (One stopped at its node
    limit is still a plan of the period, as good as that search found.)"""
    for i, opt in enumerate(part.supply):
        for t in part.periods:
            if opt.kind is SupplyKind.BUY:
                want = held.get((opt.id,), 0) if part.start_month[t] >= opt.available_from_month else 0
            elif opt.kind.term_months is not None:
                want = held.get((opt.id, t), 0)
            else:
                continue
            if round(value(part, "units", (i, t))) != want:
                return False
    return all(abs(v - round(v)) <= INTEGRAL_TOL for v in (float(y.varValue or 0.0) for y in part.variables["y"].values()))


def set_purchases(whole: BuildContext, held: dict[tuple[Any, ...], int]) -> None:
    """Set the purchase decisions of the assembled ``whole`` to ``held`` (a period bound solution it took buys
    per period; the plan's purchases are one decision for the horizon)."""
    for i, opt in enumerate(whole.supply):
        if opt.kind is SupplyKind.BUY:
            whole.variables["bought"][i].varValue = float(held.get((opt.id,), 0))


PURCHASE_PLANS = 2
"""At most this many purchase plans (:func:`purchase_plans`) are turned into a plan: the first, and the next
ones only while at least half of the periods agree with them (the others re-solve most periods; on the
bench economics scenario the second plan agrees with 7 of 24 periods, costs 107 s of solving and a plan
26 % dearer)."""


@dataclass(frozen=True)
class PurchasePlan:
    """Purchases and reserved terms to hold, and how many periods' bound solutions agree with them."""

    held: dict[tuple[Any, ...], int]
    agreeing_periods: int

    def worth_trying(self, rank: int, periods: int) -> bool:
        """The first plan always; a later one (``rank`` from 0) while at least half of ``periods`` agree and
        fewer than :data:`PURCHASE_PLANS` were tried."""
        return rank == 0 or (rank < PURCHASE_PLANS and 2 * self.agreeing_periods >= periods)


def _bought_in(part: BuildContext) -> dict[tuple[Any, ...], int]:
    """The nodes of each buy option the solved period problem ``part`` uses (options delivered in it)."""
    t = part.periods[0]
    return {
        (opt.id,): units
        for i, opt in enumerate(part.supply)
        if opt.kind is SupplyKind.BUY and (units := round(value(part, "units", (i, t)))) > 0
    }


def _reserved_held(ctx: BuildContext, solved: dict[int, BuildContext]) -> dict[tuple[Any, ...], int]:
    """Reserved units to hold: per option and term window, the fewest units any period of the window's
    bound solutions rents (what every month of the term uses)."""
    held: dict[tuple[Any, ...], int] = {}
    term_of = {o.id: o.kind.term_months for o in ctx.supply if o.kind.term_months is not None}
    windows: dict[tuple[str, int], list[int]] = {}
    for t in ctx.periods:
        for oid, term in term_of.items():
            windows.setdefault((oid, ctx.start_month[t] // term), []).append(t)
    units: dict[tuple[str, int], int] = {}
    for part in solved.values():
        for i, opt in enumerate(part.supply):
            if opt.id in term_of:
                for t in part.periods:
                    units[(opt.id, t)] = round(value(part, "units", (i, t)))
    for (oid, _window), slices in windows.items():
        fewest = min(units.get((oid, t), 0) for t in slices)
        for t in slices:
            held[(oid, t)] = fewest
    return held


def purchase_plans(ctx: BuildContext, solved: dict[int, BuildContext]) -> list[PurchasePlan]:
    """Purchase decisions to hold, read off the period bound solutions ``solved``, most promising first.

    Each period's bound solution names the nodes it would own (buy options delivered by then). Taken as
    the horizon's purchases, it agrees with every period whose solution owns exactly the nodes delivered
    by that period's month; plans are ranked by how many periods agree (those may keep their bound solution
    in :func:`solve_by_period`), ties to the earlier period. Reserved terms: :func:`_reserved_held`."""
    reserved = _reserved_held(ctx, solved)
    owned = {t: _bought_in(part) for t, part in solved.items()}
    options = {o.id: o for o in ctx.supply if o.kind is SupplyKind.BUY}
    ranked: list[tuple[int, int, dict[tuple[Any, ...], int]]] = []
    seen: list[dict[tuple[Any, ...], int]] = []
    for t, bought in sorted(owned.items()):
        if bought in seen:
            continue
        seen.append(bought)
        agree = sum(
            1
            for u, other in owned.items()
            if other
            == {k: n for k, n in bought.items() if ctx.start_month[ctx.slices_of[u][0]] >= options[k[0]].available_from_month}
        )
        ranked.append((-agree, t, bought))
    return [PurchasePlan({**reserved, **bought}, -agree) for agree, _t, bought in sorted(ranked, key=lambda r: r[:2])]
