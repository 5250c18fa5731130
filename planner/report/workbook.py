"""Excel workbook of a plan, read from its typed result (planner.readout.PlanResult) and cost ledger.

Sheets: Summary, Deployments (replicas per period), SLOs, Costs (the cost ledger month by month), Supply,
Alternatives, Constraints, Assumptions, Inputs. Every unit price is a named cell on Assumptions
(``Price_<n>_...``, ``Capex_<n>_...``, ``Resale_<n>_...``, the cost of capital); the Costs sheet's rent and
running months are units × price, capex and resale the nodes bought × the node's price or resale value,
the volume discount the ledger's values, so editing a price updates every total. Nothing is priced here:
after a recompute the workbook shows the ledger's numbers (planner.report.cost_streams checks that the
formulas reproduce every ledger line). Months are counted from 0, as in the JSON and the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.report.chart_labels import cluster_ranks, label_positions
from planner.report.charts import write_plan_plots
from planner.report.cost_streams import cost_streams
from planner.report.files import write_workbook
from planner.report.formatting import USD_AXIS_FORMAT, sanitize_sheet_title
from planner.report.workbook_costs import CostsLayout, write_assumptions, write_costs, write_supply
from planner.report.workbook_idle import write_idle
from planner.report.workbook_summary import write_summary
from planner.report.workbook_tables import (
    ALT_COST_HEADER,
    ALT_HEADERS,
    ALT_TPOT_HEADER,
    write_alternatives,
    write_constraints,
    write_deployments,
    write_inputs,
    write_slos,
)
from planner.report.xlsx import Tables, set_cell

if TYPE_CHECKING:
    from planner.readout import PlanResult

SHEETS = (
    "Summary",
    "Deployments",
    "SLOs",
    "Costs",
    "Supply",
    "Alternatives",
    "Constraints",
    "Assumptions",
    "Inputs",
)
FRONTIER_COLORS = (
    *("1F4E78", "C55A11", "548235", "7030A0", "BF9000"),
    *("2E75B6", "C00000", "00B0F0", "FF66CC", "7F7F7F"),
)
"""One colour per alternative (its legend entry names it); circles are GPU types, squares sites."""
CHART_ROWS = 17
"""Sheet rows an 8 cm chart covers, and a blank row."""
TPOT_AXIS_FORMAT = "0.0"
"""The frontier chart's TPOT axis: milliseconds to 0.1 ms."""


def build_workbook(result: PlanResult) -> Any:
    """The openpyxl Workbook of ``result``."""
    from openpyxl import Workbook

    wb = Workbook()
    # Files from openpyxl carry no cached values: ask the spreadsheet to compute everything on open.
    wb.calculation.fullCalcOnLoad = True
    sheets = {}
    for i, title in enumerate(SHEETS):
        sheets[title] = wb.active if i == 0 else wb.create_sheet()
        sheets[title].title = sanitize_sheet_title(title)
    tables = Tables()
    write_inputs(sheets["Inputs"], tables, result.scenario)
    if not result.feasible:
        write_summary(sheets["Summary"], result, slo_last=2)
        for title in SHEETS[1:-1]:
            set_cell(sheets[title], 1, 1, "No feasible plan.")
        return wb
    model = cost_streams(result)
    write_assumptions(wb, sheets["Assumptions"], tables, result, model)
    costs = write_costs(wb, sheets["Costs"], tables, model)
    supply_last = write_supply(sheets["Supply"], tables, model, costs)
    write_idle(sheets["Supply"], tables, result, supply_last + 7)  # below the Supply note
    write_deployments(sheets["Deployments"], tables, result)
    slo_last = write_slos(sheets["SLOs"], tables, result)
    alt_last = write_alternatives(sheets["Alternatives"], tables, result)
    write_constraints(sheets["Constraints"], tables, result.binding_constraints, result.schedule)
    write_summary(
        sheets["Summary"],
        result,
        slo_last=slo_last,
        units_col=costs.units_col,
        last_month_row=costs.last_month_row,
    )
    _native_charts(wb, costs, alt_last)
    return wb


def _native_charts(wb: Any, costs: CostsLayout, alt_last: int) -> None:
    from openpyxl.chart import BarChart, LineChart, Reference
    from openpyxl.worksheet.pagebreak import Break

    ws = wb["Costs"]
    bar = BarChart()
    bar.title, bar.y_axis.title = "Cost over the horizon by procurement (present value)", "USD"
    bar.add_data(
        Reference(ws, min_col=2, min_row=costs.procurement_row, max_row=costs.procurement_last),
        titles_from_data=True,
    )
    bar.set_categories(
        Reference(ws, min_col=1, min_row=costs.procurement_row + 1, max_row=costs.procurement_last)
    )
    bar.legend = None
    bar.y_axis.number_format = USD_AXIS_FORMAT
    bar.x_axis.delete = False
    bar.y_axis.delete = False
    bar.width, bar.height = 16, 8
    # below the kind and procurement tables, from column A: beside them (column E) a page break of a sheet
    # with many supply columns cut the charts in two
    ws.add_chart(bar, f"A{costs.procurement_last + 3}")
    ws.row_breaks.append(Break(id=costs.procurement_last + 1))  # both charts on a page of their own
    line = LineChart()
    line.title, line.y_axis.title, line.x_axis.title = "Cumulative cash", "USD", "Month"
    cum = ws[f"{costs.cum_col}1"].column
    line.add_data(Reference(ws, min_col=cum, min_row=1, max_row=costs.last_month_row), titles_from_data=True)
    line.set_categories(Reference(ws, min_col=1, min_row=2, max_row=costs.last_month_row))
    for series in line.series:
        series.smooth = False
    line.legend = None
    line.y_axis.number_format = USD_AXIS_FORMAT
    line.x_axis.delete = False
    line.y_axis.delete = False
    line.width, line.height = 16, 8
    ws.add_chart(line, f"A{costs.procurement_last + 3 + CHART_ROWS}")  # below the bar chart
    if alt_last >= 2:
        _frontier_chart(wb["Alternatives"], alt_last)


def _frontier_chart(ws: Any, last_row: int) -> None:
    """Scatter of total cost (y) vs worst deployed TPOT (x) of the alternatives, one series per alternative named
    by its option ("b200 (gpu)"): one series per kind left the reader unable to tell which dot was which GPU."""
    from openpyxl.chart import Reference, ScatterChart, Series
    from openpyxl.chart.label import DataLabelList
    from openpyxl.chart.shapes import GraphicalProperties
    from openpyxl.worksheet.pagebreak import Break

    tpot_col = ALT_HEADERS.index(ALT_TPOT_HEADER) + 1
    cost_col = ALT_HEADERS.index(ALT_COST_HEADER) + 1
    chart = ScatterChart()
    chart.title = "Alternatives: total cost vs TPOT"
    chart.x_axis.title, chart.y_axis.title = ALT_TPOT_HEADER, ALT_COST_HEADER
    plotted = [
        r for r in range(2, last_row + 1) if isinstance(ws.cell(row=r, column=cost_col).value, int | float)
    ]
    # each point carries its name as a data label, on a side where it meets no other name or marker
    # (buy_vs_rent's best h100_sxm plan and best us_east plan drew on one spot); a marker on the very spot of
    # an earlier one is larger and hollow
    points = [
        (float(ws.cell(row=r, column=tpot_col).value), float(ws.cell(row=r, column=cost_col).value))
        for r in plotted
    ]
    names = [f"{ws.cell(row=r, column=2).value} ({ws.cell(row=r, column=1).value})" for r in plotted]
    sides = label_positions(points, names, y_from_zero=True)
    ranks = cluster_ranks(points, y_from_zero=True)
    for k, r in enumerate(plotted):  # an infeasible alternative has no point, so no legend entry either
        kind = ws.cell(row=r, column=1).value
        series = Series(
            Reference(ws, min_col=cost_col, min_row=r, max_row=r),
            Reference(ws, min_col=tpot_col, min_row=r, max_row=r),
            title=names[k],
        )
        color = FRONTIER_COLORS[k % len(FRONTIER_COLORS)]
        series.marker.symbol = "circle" if kind == "gpu" else "square"
        series.marker.size = 8 + 5 * ranks[k]
        series.marker.graphicalProperties = (
            GraphicalProperties(noFill=True) if ranks[k] else GraphicalProperties(solidFill=color)
        )
        series.marker.graphicalProperties.line.solidFill = color
        series.marker.graphicalProperties.line.width = 19050 if ranks[k] else None  # 1.5 pt outline
        series.graphicalProperties.line.noFill = True
        series.smooth = False
        series.dLbls = DataLabelList(
            dLblPos=sides[k],
            showSerName=True,
            showVal=False,
            showCatName=False,
            showLegendKey=False,
            showPercent=False,
            showBubbleSize=False,
        )
        chart.series.append(series)
    # Whole dollars and 0.1 ms (the axes took the cells' "$#,##0.00": "$1,200,000.00" per tick).
    chart.y_axis.number_format = USD_AXIS_FORMAT
    chart.x_axis.number_format = TPOT_AXIS_FORMAT
    # openpyxl hides both axes unless told otherwise (LibreOffice and Excel then draw no scale).
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    # each point names itself (data labels): no legend, and the room it took goes to the plot, where the
    # names need it (planner.report.chart_labels sizes them for this plot)
    chart.legend = None
    chart.width, chart.height = 24, 12
    # on a page of its own: beside the table's last columns (the printed page right of Kind and Option,
    # which every page repeats) the chart's left edge printed again, clipped ("Alte")
    ws.add_chart(chart, f"A{last_row + 3}")
    ws.row_breaks.append(Break(id=last_row + 1))


def write_plan_workbook(result: PlanResult, path: Path) -> None:
    """Write the plan workbook to ``path`` atomically."""
    wb = build_workbook(result)
    write_workbook(path, wb)


def write_plan_outputs(
    result: PlanResult, catalog: Any, *, workbook: Path | None, plots_dir: Path | None
) -> None:
    """Write the requested workbook and plot files (``catalog`` is unused: everything is in the result)."""
    if workbook is not None:
        write_plan_workbook(result, workbook)
    if plots_dir is not None and result.feasible and result.ledger is not None:
        write_plan_plots(
            plots_dir,
            categories_usd=result.ledger.costs_usd,
            monthly_usd=result.ledger.cash_flow_usd_per_month,
            alternatives=[a.to_json() for a in result.alternatives],
        )
