"""The workbook's Deployments sheet shows what each deployment costs: the readout's
Deployment.cost_usd_per_month (its share of its GPUs' supply, the terminal's $/month), split over its rows by
their periods; the column's labeled total under it is the plan's average cost per month (the sheet had no cost
column: a finance reader could not see what a deployment costs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.catalog import Catalog
from planner.plan import plan
from planner.readout import PlanResult
from planner.report.workbook import build_workbook, write_plan_workbook
from planner.report.workbook_summary import AVERAGE_LABEL
from planner.report.workbook_tables import DEPLOY_COST_HEADER, DEPLOY_HEADERS, DEPLOY_TOTAL_LABEL
from planner.scenario import load_scenario
from tests.report.conftest import ROOT
from tests.report.workbook_io import find_row, load_workbook, needs_soffice, recompute, table_last_row

LABEL_COLUMN = DEPLOY_HEADERS.index(DEPLOY_COST_HEADER)
"""The total's label sits beside it, in the column left of the costs (1-based)."""


@pytest.fixture(scope="module")
def buy_vs_rent(catalog: Catalog) -> PlanResult:
    path = ROOT / "examples/buy_vs_rent/scenario.yaml"
    return plan(catalog, load_scenario(path, catalog), with_alternatives=False)


def _cost_rows(ws: Any) -> list[tuple[Any, ...]]:
    """(GPU, site, periods, cost) of each row of the Deployments table."""
    cols = [DEPLOY_HEADERS.index(h) + 1 for h in ("GPU", "Site", "Periods", DEPLOY_COST_HEADER)]
    last = table_last_row(ws, "tbl_Deployments")
    return [tuple(ws.cell(row=r, column=c).value for c in cols) for r in range(2, last + 1)]


def test_deployment_rows_carry_their_cost_and_add_up_to_the_plan(buy_vs_rent: PlanResult) -> None:
    result = buy_vs_rent
    assert result.ledger is not None
    ws = build_workbook(result)["Deployments"]
    rows = _cost_rows(ws)
    assert len(rows) > len(result.deployments)  # rows are runs of periods: a deployment has several
    # the rows of each GPU and site add up to its deployments' $/month (the terminal's and the HTML's figure)
    by_key: dict[tuple[str, str], float] = {}
    for gpu, site, _periods, usd in rows:
        by_key[(gpu, site)] = by_key.get((gpu, site), 0.0) + usd
    want: dict[tuple[str, str], float] = {}
    for d in result.deployments:
        want[(d.gpu, d.site)] = want.get((d.gpu, d.site), 0.0) + d.cost_usd_per_month
    assert by_key == pytest.approx(want, rel=1e-12)
    # … and all of them to the plan's average cost per month: every GPU paid for is held by a deployment
    total = sum(r[3] for r in rows)
    assert total == pytest.approx(result.ledger.cost_usd_per_month, rel=1e-12)
    assert total == pytest.approx(22_576.62, abs=0.01)  # buy_vs_rent: $812,758 over 36 months
    # labeled, under the column, two rows below the table
    cell = find_row(ws, DEPLOY_TOTAL_LABEL, LABEL_COLUMN)[DEPLOY_HEADERS.index(DEPLOY_COST_HEADER)]
    letter, last = cell.column_letter, table_last_row(ws, "tbl_Deployments")
    assert (cell.row, cell.value) == (last + 2, f"=SUM({letter}2:{letter}{last})")
    assert cell.number_format == '"$"#,##0.00'


def test_a_deployment_that_runs_in_several_periods_splits_its_cost_by_replica_periods(
    buy_vs_rent: PlanResult,
) -> None:
    d = next(d for d in buy_vs_rent.deployments if len(set(d.replicas_per_period) - {0}) > 1)
    parts = [d.periods_cost_usd_per_month(t, t) for t in range(len(d.replicas_per_period))]
    assert sum(parts) == pytest.approx(d.cost_usd_per_month, rel=1e-12)
    held = sum(d.replicas_per_period)
    for t, reps in enumerate(d.replicas_per_period):
        assert parts[t] == pytest.approx(d.cost_usd_per_month * reps / held, rel=1e-12)


@needs_soffice
def test_recomputed_total_equals_the_summary_average(buy_vs_rent: PlanResult, tmp_path: Path) -> None:
    book = tmp_path / "plan.xlsx"
    write_plan_workbook(buy_vs_rent, book)
    wb = load_workbook(recompute([book], tmp_path) / "plan.xlsx", data_only=True)
    row = find_row(wb["Deployments"], DEPLOY_TOTAL_LABEL, LABEL_COLUMN)
    total = row[DEPLOY_HEADERS.index(DEPLOY_COST_HEADER)].value
    average = find_row(wb["Summary"], AVERAGE_LABEL)[1].value
    assert total == pytest.approx(average, rel=1e-9)
    assert buy_vs_rent.ledger is not None
    assert total == pytest.approx(buy_vs_rent.ledger.cost_usd_per_month, rel=1e-9)
