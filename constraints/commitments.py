"""Commitments: reserved rentals are held constant over their term.

    units[o, t] = units[o, t']     ∀ reserved options o, ∀ t, t' in the same term window
                                   ⌊start(t)/term_o⌋ = ⌊start(t')/term_o⌋

Notation: term_o = 12 months for reserved_1y, 36 for reserved_3y; start(t) the first month of period t.
On-demand and spot units follow each period freely; bought units are one decision (gpu_supply).
"""

from __future__ import annotations

from planner.model import BuildContext

TERM_MONTHS = {"rent_reserved_1y": 12, "rent_reserved_3y": 36}


def add_commitments(ctx: BuildContext) -> None:
    """Tie each reserved option's units together within each term window."""
    for i, opt in enumerate(ctx.supply):
        term = TERM_MONTHS.get(opt.kind)
        if term is None:
            continue
        first_in_window: dict[int, int] = {}
        for t in ctx.periods:
            window = (t * ctx.scenario.period_months) // term
            anchor = first_in_window.setdefault(window, t)
            if anchor != t:
                units = ctx.variables["units"]
                ctx.add_row(
                    "commitments", (opt.gpu, opt.site, opt.kind, t), units[(i, t)] == units[(i, anchor)]
                )
