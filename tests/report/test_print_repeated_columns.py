"""Sheets printed over several pages wide repeat their first columns on every page (print titles). A note or a
chart anchored in those columns printed again on each later page, cut at their edge: buy_vs_rent's Deployments
pages 3-4 read "Cost: each deployment's share," / "GPU type and site: present valu", its Supply page 2 "Capex is
paid in the order r"; and the Deployments total's label, in column
A, printed alone on page 1 while its figure was on page 3. Compare's Options note also dropped the smallest
relaxation the terminal prints after an infeasible option's cause. A sweep's dotted key broke mid-word in its
header ("economics.rent_pric / e_scale")."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from planner.catalog import Catalog
from planner.compare import compare
from planner.plan import plan
from planner.readout import PlanResult
from planner.readout.sweep import SweepResult, SweepRow
from planner.report import compare_workbook as cmod
from planner.report.sweep_workbook import build_sweep_workbook
from planner.report.workbook import build_workbook, write_plan_workbook
from planner.report.workbook_idle import IDLE_HEADERS, IDLE_TITLE
from planner.report.workbook_tables import DEPLOY_COST_HEADER, DEPLOY_HEADERS, DEPLOY_TOTAL_LABEL
from planner.scenario import load_scenario
from tests.report.conftest import ROOT
from tests.report.workbook_io import needs_soffice, soffice

SCENARIO = ROOT / "examples/buy_vs_rent/scenario.yaml"


@pytest.fixture(scope="module")
def buy_vs_rent(catalog: Catalog) -> PlanResult:
    return plan(catalog, load_scenario(SCENARIO, catalog), with_alternatives=False)


def _row_of(ws: object, text: str) -> tuple[int, int]:
    """(row, column) of the first cell whose text starts with ``text``."""
    for row in ws.iter_rows():  # type: ignore[attr-defined]
        for cell in row:
            if isinstance(cell.value, str) and cell.value.startswith(text):
                return cell.row, cell.column
    raise AssertionError(f"{text!r} not found")


def test_deployments_total_label_sits_beside_its_figure_and_the_note_right_of_the_repeated_columns(
    buy_vs_rent: PlanResult,
) -> None:
    ws = build_workbook(buy_vs_rent)["Deployments"]
    assert ws.print_title_cols == "$A:$B"  # the sheet prints over several pages, Workload and Model on each
    cost = DEPLOY_HEADERS.index(DEPLOY_COST_HEADER) + 1
    row, col = _row_of(ws, DEPLOY_TOTAL_LABEL)
    assert col == cost - 1  # beside the figure, not in column A
    assert ws.cell(row=row, column=cost).value.startswith("=SUM(")
    assert ws.cell(row=row, column=1).value is None
    note_row, note_col = _row_of(ws, "Cost: each deployment's share")
    assert (note_row, note_col) == (row + 1, 3)
    for r in range(note_row, ws.max_row + 1):  # nothing of the note in the repeated columns
        assert ws.cell(row=r, column=1).value is None and ws.cell(row=r, column=2).value is None


def test_supply_note_starts_right_of_the_repeated_columns(buy_vs_rent: PlanResult) -> None:
    ws = build_workbook(buy_vs_rent)["Supply"]
    assert ws.print_title_cols == "$A:$B"
    row, col = _row_of(ws, "Capex is paid in the order month")
    assert col == 3 and ws.cell(row=row, column=1).value is None


def test_compare_options_note_carries_the_relaxation(catalog: Catalog) -> None:
    comparison = compare(catalog, load_scenario(SCENARIO, catalog), flip_points=False)
    ws = cmod.build_compare_workbook(comparison)["Options"]
    buy_only = next(r for r in ws.iter_rows(min_row=2) if r[0].value == "buy_only")
    assert buy_only[-1].value == (
        "chat: nothing bought arrives before month 2 (purchase lead time 2 months), so its demand before month 2 "
        "cannot be served — add inventory, or rent at us_east until month 2 (the hybrid option)"
    )


def test_sweep_key_columns_fit_their_dotted_path() -> None:
    paths = ["economics.rent_price_scale", "workloads.chat.requests_per_s"]
    rows = [
        SweepRow.from_json(
            {"index": k, "key": "", "values": {paths[0]: s, paths[1]: r}, "status": "optimal", "total_cost_usd": 1e5}
        )
        for k, (s, r) in enumerate([(0.7, 4), (0.7, 8), (1.3, 4), (1.3, 8)])
    ]
    ws = build_sweep_workbook(SweepResult("chat", paths, "grid", "local processes (1)", rows, 1.0))["Sweep"]
    assert [c.value for c in ws[3]][1:3] == paths
    assert ws.column_dimensions["B"].width == len(paths[0]) + 2 == 28
    assert ws.column_dimensions["C"].width == len(paths[1]) + 2 == 31


@needs_soffice
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) not installed")
def test_printed_deployments_pages_show_the_total_with_its_label_and_no_cut_note(
    buy_vs_rent: PlanResult, tmp_path: Path
) -> None:
    book = tmp_path / "plan.xlsx"
    write_plan_workbook(buy_vs_rent, book)
    soffice(["--convert-to", "pdf", "--outdir", str(tmp_path), str(book)], tmp_path)
    pages = []
    for page in range(1, 40):
        done = subprocess.run(
            ["pdftotext", "-layout", "-f", str(page), "-l", str(page), str(tmp_path / "plan.pdf"), "-"],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not done.stdout.strip():
            break
        pages.append(" ".join(done.stdout.split()))
    with_label = [p for p in pages if DEPLOY_TOTAL_LABEL in p]
    assert len(with_label) == 1 and f"{DEPLOY_TOTAL_LABEL} $22,576.62" in with_label[0]
    notes = [p for p in pages if "Cost: each deployment's share" in p]
    assert notes and all("divided by the horizon's" in p for p in notes)  # whole, never a clipped piece
    assert not any("Capex is paid in the order" in p and "resold" not in p for p in pages)


def test_idle_table_title_starts_right_of_the_repeated_columns(buy_vs_rent: PlanResult) -> None:
    ws = build_workbook(buy_vs_rent)["Supply"]
    row, col = _row_of(ws, IDLE_TITLE)
    assert col == 3 and ws.cell(row=row, column=1).value is None
    # its table below it: h100_sxm at dc1 idle in month 2 (delivered then, serving from period 1)
    assert [c.value for c in ws[row + 1]][:7] == IDLE_HEADERS
    assert [c.value for c in ws[row + 2]][:7] == ["h100_sxm", "dc1", 0, "2", 8, 0, 8]
