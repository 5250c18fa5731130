"""Commitments: reserved rentals are held constant over their term, persistent capacity over the day.

    units[o, t] = units[o, t']     ∀ reserved options o, ∀ t, t' in the same term window
                                   ⌊start(t)/term_o⌋ = ⌊start(t')/term_o⌋                        (1)
    units[o, s] = units[o, s']     ∀ owned / edge-device options o, ∀ hour-block slices s, s' of
                                   one period                                                    (2)

Notation: term_o = 12 months for reserved_1y, 36 for reserved_3y (SupplyKind.term_months); start(t) the first month of the period
of slice t (so the hour blocks of a period share a window and reserved units are held all day). On-demand
and spot units follow each slice freely (billed by the hour); bought units are one decision per order
(gpu_supply). Windows start at months 0, term_o, 2·term_o, …; one the horizon ends inside is paid to its end
(planner.problem.cost_terms (4)). Periods of different windows are never merged into one representative
(planner.problem.supply.term_window_starts), so (1) holds every month of a window.
"""

from __future__ import annotations

from planner.problem.context import BuildContext
from planner.problem.supply import SupplyKind

PERSISTENT_KINDS = (SupplyKind.OWNED, SupplyKind.EDGE_DEVICE)
"""Capacity that runs all day (bought units are tied by gpu_supply, reserved ones by their term)."""


def add_commitments(ctx: BuildContext) -> None:
    """Tie each reserved option's units together within each term window."""
    units = ctx.variables["units"]
    # rows are written as differences: on PuLP 4 `variable == variable` is a Python bool, not a row
    for i, opt in enumerate(ctx.supply):
        term = opt.kind.term_months
        if term is not None:
            first_in_window: dict[int, int] = {}
            for t in ctx.periods:
                anchor = first_in_window.setdefault(ctx.start_month[t] // term, t)
                if anchor != t:  # (1)
                    ctx.add_row(
                        "commitments", (opt.gpu, opt.site, opt.kind, t), units[(i, t)] - units[(i, anchor)] == 0
                    )
        elif opt.kind in PERSISTENT_KINDS:
            for slices in ctx.slices_of.values():
                for s in slices[1:]:  # (2)
                    ctx.add_row(
                        "commitments", (opt.gpu, opt.site, opt.kind, s), units[(i, s)] - units[(i, slices[0])] == 0
                    )
