"""The By key charts of the sweep workbook mark every point.

A key whose values but one have no plan (`--vary workloads.chat.slo.tpot_ms=1,50`: 1 ms is infeasible) has a
single point per series, and a line chart without markers draws nothing there: LibreOffice printed an
empty chart under a table that had a cost (planner/report/sweep_workbook.py _key_chart)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from planner.report.sweep_workbook import KEY_SHEET, build_sweep_workbook, write_sweep_workbook
from planner.sweep import SweepResult, SweepRow

PATH = "workloads.chat.slo.tpot_ms"
RESULT = SweepResult(
    scenario="support-chat-70b",
    paths=[PATH],
    mode="grid",
    engine="local processes (2)",
    rows=[
        SweepRow(0, f"{PATH}=1", {PATH: 1}, "infeasible", error="lowest TPOT is 5.6 ms; the SLO is 1 ms"),
        SweepRow(1, f"{PATH}=50", {PATH: 50}, "optimal", total_cost_usd=258422.0, capex_usd=0.0),
    ],
    wall_seconds=1.0,
)


def test_both_series_have_markers() -> None:
    (chart,) = build_sweep_workbook(RESULT)[KEY_SHEET]._charts
    assert [(s.marker.symbol, s.marker.size) for s in chart.series] == [("circle", 8), ("square", 5)]


def test_the_saved_chart_carries_the_markers(tmp_path: Path) -> None:
    book = tmp_path / "sweep.xlsx"
    write_sweep_workbook(RESULT, book)
    with zipfile.ZipFile(book) as z:
        xml = z.read("xl/charts/chart1.xml").decode()
    assert xml.count('<symbol val="circle" />') == 1 and xml.count('<symbol val="square" />') == 1
