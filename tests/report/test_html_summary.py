"""The HTML Summary has the workbook Summary's money rows (it lacked the busiest month's opex, the average
cost — the terminal title's "$/month" — and the output tokens), each the ledger's figure, with the workbook's
labels; budget lines read "Opex budget (USD/month): spent of limit" in dollars, as the workbook names them."""

from __future__ import annotations

import pytest

from planner.report.html import build_html
from planner.report.workbook_summary import AVERAGE_LABEL, BUSIEST_OPEX_LABEL, TOKENS_LABEL
from planner.scenario import Budget
from tests.report import synthetic_plan as syn


def _row(page: str, label: str) -> str:
    start = page.index(f"<td>{label}</td>") + len(f"<td>{label}</td>")
    return page[start : page.index("</td>", start) + len("</td>")]


def test_html_summary_rows_are_the_ledgers() -> None:
    result = syn.plan_result()
    page = build_html(result)
    ledger = result.ledger
    assert ledger is not None
    busiest = max(ledger.opex_usd_by_month.values())
    # months 2-3: two mi300x instances, three h100s and two nodes running, less the volume discount
    assert busiest == pytest.approx(2 * syn.PRICE_A + 3 * syn.PRICE_B + 2 * syn.RUNNING_C - syn.DISCOUNT_A_USD, rel=1e-9)
    assert _row(page, BUSIEST_OPEX_LABEL) == f'<td class="n">{busiest:,.2f}</td>'
    assert _row(page, AVERAGE_LABEL) == f'<td class="n">{ledger.total_usd / syn.HORIZON:,.2f}</td>'
    assert _row(page, TOKENS_LABEL) == f'<td class="n">{syn.OUTPUT_TOKENS / 1e6:,.2f}</td>' == (
        '<td class="n">2,500.00</td>'
    )
    assert "<td>Cost per million output tokens (USD/Mtok)</td>" in page


def test_html_budget_line_in_dollars_with_the_workbook_label() -> None:
    scenario = syn.scenario().model_copy(update={"budget": Budget(opex_usd_per_month=50_000.0)})
    page = build_html(syn.plan_result(scenario=scenario))
    busiest = max(syn.LEDGER.opex_usd_by_month.values())
    assert _row(page, "Opex budget (USD/month): spent of limit") == (
        f"<td>${busiest:,.0f} of $50,000 ({busiest / 50_000:.1%})</td>"
    )
