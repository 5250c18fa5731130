"""A plan the optimizer did not prove optimal (a --time-limit stopped it) shows how far it may be from the
proven bound in the workbook and the HTML, as in the terminal title: both read a bare "feasible" for a
buy_vs_rent plan cut at 0.3 s that costs $2.42M against the optimal $821k."""

from __future__ import annotations

import dataclasses

import pytest

from planner.report.formatting import status_text
from planner.report.html import build_html
from planner.report.workbook import build_workbook
from tests.report import synthetic_plan as syn


@pytest.mark.parametrize(
    ("gap", "bound_usd", "text"),
    [
        (0.025, 46_897.0, "feasible (gap 2.5%, bound $46,897)"),
        (None, None, "feasible (gap unknown: the solver reports no bound)"),
    ],
)
def test_a_feasible_plan_states_its_gap(gap: float | None, bound_usd: float | None, text: str) -> None:
    result = syn.plan_result(status="feasible", gap=gap, bound_usd=bound_usd)
    assert status_text(result.status, result.gap, result.bound_usd) == text
    summary = build_workbook(result)["Summary"]
    assert next(r[1].value for r in summary.iter_rows() if r[0].value == "Status") == text
    assert f"<p>Status: <b>{text}</b></p>" in build_html(result)


def test_an_optimal_plan_reads_optimal() -> None:
    result = syn.plan_result()
    summary = build_workbook(result)["Summary"]
    assert next(r[1].value for r in summary.iter_rows() if r[0].value == "Status") == "optimal"
    assert "<p>Status: <b>optimal</b></p>" in build_html(result)


def test_the_recommendation_writes_no_capex_as_the_terminal_does() -> None:
    """A rent-only plan's recommendation read "capex $0.00, opex $6,826/month" where the terminal title reads
    "capex $0"; cents stay for amounts below $100 ("$1.10 per million output tokens")."""
    from planner.report.workbook_summary import recommendation_text

    ledger = syn.LEDGER
    no_capex = dataclasses.replace(ledger, lines=tuple(c for c in ledger.lines if c.kind != "capex"))
    assert no_capex.capex_usd == 0.0 and ledger.capex_usd > 0
    result = syn.plan_result(ledger=no_capex)
    text = recommendation_text(result)
    assert "capex $0, opex" in text and "$0.00" not in text
