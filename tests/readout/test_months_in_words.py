"""One helper words a number of months everywhere: the budget line's "for the N months whose capacity the
plan uses up" (planner.readout.budget had its own copy, `_months`) and the reports' horizons."""

from __future__ import annotations

from planner.readout import budget
from planner.report import formatting
from planner.units import months_text


def test_budget_and_reports_share_the_months_helper() -> None:
    assert (months_text(1), months_text(2), months_text(36)) == ("1 month", "2 months", "36 months")
    assert formatting.months_text is months_text
    assert budget.months_text is months_text and not hasattr(budget, "_months")
