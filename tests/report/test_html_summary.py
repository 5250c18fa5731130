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


def test_html_summary_labels_are_the_workbooks() -> None:
    """Every money row of the workbook's Summary appears in the HTML under the same label with the same figure
    (the HTML wrote "Resale credit (USD, received in the last month)" for the workbook's "Resale credit (USD,
    last month)"); a max_throughput plan also shows the req/s it serves, as the workbook does."""
    from planner.report.workbook import build_workbook
    from planner.report.workbook_summary import (
        CAPEX_LABEL,
        OPEX_LABEL,
        PER_MTOK_LABEL,
        RESALE_LABEL,
        TOTAL_LABEL,
    )

    result = syn.plan_result(served_scale=1.5)
    served = result.served_requests_per_s()["total"]
    page = build_html(result)
    ledger = result.ledger
    assert ledger is not None
    labels = [r[0].value for r in build_workbook(result)["Summary"].iter_rows()]
    for label, usd in [
        (TOTAL_LABEL, ledger.total_usd),
        (CAPEX_LABEL, ledger.capex_usd),
        (RESALE_LABEL, ledger.residual_value_usd),
        (OPEX_LABEL, ledger.opex_usd_per_month),
    ]:
        assert label in labels
        assert _row(page, label) == f'<td class="n">{usd + 0.0:,.2f}</td>'
    assert RESALE_LABEL == "Resale credit (USD, last month)" and "received in the last month" not in page
    assert PER_MTOK_LABEL in labels and f"<td>{PER_MTOK_LABEL}</td>" in page
    for label, value in [("Served scale (x stated demand)", "1.50"), ("Served (req/s, total)", f"{served:,.2f}")]:
        assert label in labels
        assert _row(page, label) == f'<td class="n">{value}</td>'


def test_a_zero_budget_line_shows_without_a_share() -> None:
    """``budget: {capex_usd: 0}`` (nothing may be bought) is a budget line in the terminal ("capex_usd: 0 of 0")
    and the JSON (limit 0, used_frac null); the workbook left it out and the HTML read "$0 of $0 (0.0%)"."""
    from planner.report.workbook import build_workbook

    scenario = syn.scenario().model_copy(update={"budget": Budget(capex_usd=0.0, opex_usd_per_month=50_000.0)})
    result = syn.plan_result(scenario=scenario)
    used = result.to_json()["budget_used"]
    assert used["limits"]["capex_usd"] == 0.0 and used["used_frac"]["capex_usd"] is None
    page = build_html(result)
    assert _row(page, "Capex budget (USD): spent of limit") == f"<td>${used['capex_usd']:,.0f} of $0</td>"
    rows = {r[0].value: r[1].value for r in build_workbook(result)["Summary"].iter_rows() if r[0].value}
    assert rows["Capex budget (USD)"] == 0.0 and rows["Capex budget used (%)"] == "—"
    assert rows["Opex budget (USD/month)"] == 50_000.0
    assert str(rows["Opex budget used (%)"]).startswith("=(") and "/B" in str(rows["Opex budget used (%)"])


def test_html_summary_has_the_workbooks_smallest_slo_margins() -> None:
    """The workbook Summary's "Min TTFT margin (%)" / "Min TPOT margin (%)" (a live MIN over its SLOs sheet)
    are in the HTML Summary too, by the same formula (planner.readout.headroom): the synthetic plan's smallest
    TTFT headroom is summarize on H100, 1 − 300/3000 = 90.0 %; its smallest TPOT headroom summarize on H200,
    1 − 59/60 = 1.7 %. A decode pool has no TTFT and a prefill pool no TPOT: they do not count."""
    import dataclasses

    from planner.readout.headroom import min_headroom_frac
    from planner.report.workbook import build_workbook
    from planner.report.workbook_summary import MIN_TPOT_LABEL, MIN_TTFT_LABEL

    result = syn.plan_result()
    page = build_html(result)
    assert _row(page, MIN_TTFT_LABEL) == "<td>90.0%</td>"
    assert _row(page, MIN_TPOT_LABEL) == "<td>1.7%</td>"
    labels = [r[0].value for r in build_workbook(result)["Summary"].iter_rows()]
    assert MIN_TTFT_LABEL in labels and MIN_TPOT_LABEL in labels
    slow_pool = dataclasses.replace(syn.DEPLOYMENTS[0], role="decode", ttft_ms=5000.0)
    fast_prefill = dataclasses.replace(syn.DEPLOYMENTS[1], role="prefill", tpot_ms=1000.0)
    assert min_headroom_frac([slow_pool, *syn.DEPLOYMENTS[1:]], "ttft") == pytest.approx(0.9)
    assert min_headroom_frac([fast_prefill, syn.DEPLOYMENTS[0]], "tpot") == pytest.approx(1 - 49 / 50)
    assert min_headroom_frac([], "ttft") is None
