"""Excel workbook of ``planner compare``: buy-only vs rent-only vs hybrid, then the recommended plan.

Sheets: **Summary** (the recommendation in words, the crossover month, the break-even utilization and the
flip-point sentences), **Options** (per option: total cost, capex, resale credit, opex/month, served
output tokens and cost per million output tokens), **CashFlow** (monthly cash out and cumulative cost per
option, with a native line chart of the crossover), then the recommended option's plan sheets as
:func:`planner.report.workbook.build_workbook` writes them (its Summary renamed **Plan**).

Live formulas: each option's total is the sum of its CashFlow column (plus ``Other``, the part of the
planner's total the cash flow does not carry, normally 0); opex/month, cost per million tokens, the
cumulative columns and the crossover month are formulas over those cells. The plan sheets keep their own
formulas over the unit prices on Assumptions (``Total_cost_usd``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from planner.compare import crossover_pair, served_output_tokens
from planner.report.charts import write_compare_plots
from planner.report.files import atomic_write
from planner.report.formatting import (
    INT_FORMAT,
    MAX_COLUMN_WIDTH,
    NUMBER_FORMAT,
    PERCENT_FORMAT,
    USD_FORMAT,
    sanitize_sheet_title,
)
from planner.report.workbook import (
    POINTS_PER_LINE,
    RECOMMENDATION_CHARS_PER_LINE,
    TOKENS_PER_MTOK,
    TOTAL_NAME,
    Formula,
    _append,
    _finish,
    _header_table,
    _set,
    _style_header,
    _Tables,
    build_workbook,
)

COMPARE_SHEETS = ("Summary", "Options", "CashFlow")
PLAN_SUMMARY_TITLE = "Plan"
HORIZON_NAME = "Compare_horizon_months"
OPTION_HEADERS = [
    "Option",
    "Status",
    "Total cost (USD)",
    "Capex (USD)",
    "Resale credit (USD)",
    "Opex (USD/month)",
    "Served output tokens (Mtok over horizon)",
    "Cost per million output tokens (USD/Mtok)",
    "Other (USD)",
    "Recommended",
    "Note",
]
BUYING_AHEAD = "Buying ahead (cumulative)"
HEADER_ROW_POINTS = 30


def served_output_mtok(result: Any) -> float:
    """Output tokens served over the horizon, millions (planner.compare.served_output_tokens)."""
    return served_output_tokens(result) / TOKENS_PER_MTOK


def _tidy(usd: float, scale_usd: float) -> float:
    """``usd``, or 0 when it is rounding noise relative to ``scale_usd``."""
    return usd if abs(usd) > 1e-9 * max(1.0, abs(scale_usd)) else 0.0


def _feasible(comparison: Any) -> dict[str, Any]:
    return {
        n: r
        for n, r in comparison.options.items()
        if r.status != "infeasible" and n in comparison.cash_flow_usd
    }


def comparison_text(comparison: Any) -> str:
    """The recommendation in words: the cheapest option and what each other option costs more."""
    rec = comparison.recommendation
    if rec is None:
        return "No option is feasible: see the Options sheet and the Plan sheet for the reasons."
    best = comparison.options[rec]
    horizon = best.scenario.horizon_months
    parts = [f"{rec} is the cheapest option: ${best.total_cost_usd:,.0f} over {horizon} months"]
    for name, result in comparison.options.items():
        if name == rec:
            continue
        if result.status == "infeasible":
            parts.append(f"{name} is infeasible")
            continue
        delta = result.total_cost_usd - best.total_cost_usd
        parts.append(
            f"{name} costs ${delta:,.0f} more"
            if delta > 1e-6 * max(1.0, best.total_cost_usd)
            else f"{name} costs the same"
        )
    return "; ".join(parts) + f". The sheets from {PLAN_SUMMARY_TITLE} on are the {rec} plan."


def _options_sheet(ws: Any, tables: _Tables, comparison: Any, cash: dict[str, Any]) -> dict[str, int]:
    from openpyxl.styles import Alignment

    rows: list[list[Any]] = []
    row_of: dict[str, int] = {}
    for k, (name, result) in enumerate(comparison.options.items()):
        r = k + 2
        row_of[name] = r
        recommended = "yes" if name == comparison.recommendation else ""
        if name not in cash["flow_col"] or result.status == "infeasible":
            note = "; ".join(str(i.get("message", "")) for i in result.infeasibility) or "infeasible"
            rows.append([name, result.status, None, None, None, None, None, None, None, recommended, note])
            continue
        flow_sum = sum(comparison.cash_flow_usd[name])
        rows.append(
            [
                name,
                result.status,
                Formula(f"=CashFlow!{cash['flow_col'][name]}{cash['total_row']}+I{r}"),
                float(result.capex_usd),
                float(result.residual_value_usd),
                Formula(f"=(C{r}-D{r}+E{r})/{HORIZON_NAME}"),
                served_output_mtok(result),
                Formula(f"=IF(G{r}=0,NA(),C{r}/G{r})"),
                _tidy(float(result.total_cost_usd) - flow_sum, float(result.total_cost_usd)),
                recommended,
                "",
            ]
        )
    formats: list[str | None] = (
        [None, None] + [USD_FORMAT] * 4 + [NUMBER_FORMAT, USD_FORMAT, USD_FORMAT, None, None]
    )
    last = _header_table(ws, tables, 1, OPTION_HEADERS, rows, formats, "Options")
    for r in range(2, last + 1):
        # Long infeasibility notes wrap inside the column instead of widening the printed page.
        ws.cell(row=r, column=len(OPTION_HEADERS)).alignment = Alignment(wrap_text=True, vertical="top")
    _finish(ws, freeze="B2")
    ws.row_dimensions[1].height = HEADER_ROW_POINTS
    _set(
        ws,
        last + 2,
        1,
        "Total = the option's CashFlow column (capex in its order month, recurring costs, resale credited in the last "
        "month) + Other (costs the cash flow does not carry). Opex/month = (total - capex + resale) / horizon.",
    )
    return row_of


def _cash_flow_sheet(ws: Any, tables: _Tables, comparison: Any, horizon: int) -> dict[str, Any]:
    from openpyxl.utils import get_column_letter

    names = list(_feasible(comparison))
    n = len(names)
    pair = crossover_pair(comparison.options, comparison.cash_flow_usd)
    flow_col = {name: get_column_letter(2 + k) for k, name in enumerate(names)}
    cum_col = {name: get_column_letter(2 + n + k) for k, name in enumerate(names)}
    headers = (
        ["Month"]
        + [f"{name} cash out (USD)" for name in names]
        + [f"{name} cumulative (USD)" for name in names]
        + ([BUYING_AHEAD] if pair else [])
    )
    ahead_col = get_column_letter(2 + 2 * n) if pair else None
    rows: list[list[Any]] = []
    for m in range(horizon):
        r = m + 2
        flows = [float(comparison.cash_flow_usd[name][m]) for name in names]
        cums = [
            Formula(f"={flow_col[name]}{r}" if m == 0 else f"={cum_col[name]}{r - 1}+{flow_col[name]}{r}")
            for name in names
        ]
        ahead: list[Any] = []
        if pair:
            buy, rent = cum_col[pair[0]], cum_col[pair[1]]
            ahead = [Formula(f'=IF(AND(A{r}>0,{buy}{r}<={rent}{r}),"yes","no")')]
        rows.append([m, *flows, *cums, *ahead])
    formats: list[str | None] = [INT_FORMAT] + [USD_FORMAT] * (2 * n) + ([None] if pair else [])
    last = _header_table(ws, tables, 1, headers, rows, formats, "CashFlow")
    total_row = last + 1
    _set(ws, total_row, 1, "Total")
    for name in names:
        col = flow_col[name]
        _set(ws, total_row, ws[f"{col}1"].column, Formula(f"=SUM({col}2:{col}{last})"), USD_FORMAT)
    _finish(ws, freeze="B2")
    ws.row_dimensions[1].height = HEADER_ROW_POINTS
    if n:
        _cumulative_chart(ws, comparison, n, last)
    return {
        "flow_col": flow_col,
        "cum_col": cum_col,
        "total_row": total_row,
        "last": last,
        "ahead_col": ahead_col,
    }


def _cumulative_chart(ws: Any, comparison: Any, n: int, last: int) -> None:
    from openpyxl.chart import LineChart, Reference

    chart = LineChart()
    crossover = comparison.crossover_month
    chart.title = (
        f"Cumulative cost by option (crossover: month {crossover})"
        if crossover is not None
        else "Cumulative cost by option (no crossover within the horizon)"
    )
    chart.y_axis.title, chart.x_axis.title = "USD", "Month"
    chart.add_data(
        Reference(ws, min_col=2 + n, max_col=1 + 2 * n, min_row=1, max_row=last), titles_from_data=True
    )
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=last))
    for series in chart.series:
        series.smooth = False  # LibreOffice draws unsmoothed lines only when told so
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.width, chart.height = 18, 9
    ws.add_chart(chart, f"{ws.cell(row=1, column=3 + 2 * n + 1).column_letter}2")


def _options_chart(ws: Any, n_options: int) -> None:
    from openpyxl.chart import BarChart, Reference

    chart = BarChart()
    chart.title, chart.y_axis.title = "Total cost over the horizon by option", "USD"
    chart.y_axis.scaling.min = 0
    chart.add_data(Reference(ws, min_col=3, min_row=1, max_row=1 + n_options), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=1 + n_options))
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.width, chart.height = 14, 7
    ws.add_chart(chart, f"A{n_options + 5}")


def _summary_sheet(
    ws: Any, comparison: Any, horizon: int, row_of: dict[str, int], cash: dict[str, Any], plan_feasible: bool
) -> None:
    from openpyxl.styles import Alignment, Font
    from openpyxl.workbook.defined_name import DefinedName

    scenario = next(iter(comparison.options.values())).scenario
    _set(ws, 1, 1, "Buy vs rent comparison")
    ws["A1"].font = Font(bold=True, size=14)
    _append(ws, 3, ["Item", "Value"])
    _style_header(ws, 3, 2)
    rec = comparison.recommendation
    rows: list[tuple[str, Any, str | None]] = [
        ("Scenario", scenario.name, None),
        ("Recommendation", comparison_text(comparison), None),
        ("Recommended option", rec or "none", None),
        ("Horizon (months)", horizon, INT_FORMAT),
    ]
    if rec is not None:
        rows.append(("Recommended option total cost (USD)", Formula(f"=Options!C{row_of[rec]}"), USD_FORMAT))
        rows.append(
            (
                "Recommended option cost per million output tokens (USD/Mtok)",
                Formula(f"=Options!H{row_of[rec]}"),
                USD_FORMAT,
            )
        )
    if plan_feasible:
        rows.append(
            (
                "Recommended plan total, live over the Assumptions prices (USD)",
                Formula(f"={TOTAL_NAME}"),
                USD_FORMAT,
            )
        )
    last = cash["last"]
    if cash["ahead_col"]:
        col = cash["ahead_col"]
        crossover: Any = Formula(
            f'=IFERROR(INDEX(CashFlow!$A$2:$A${last},MATCH("yes",CashFlow!${col}$2:${col}${last},0)),"none within the horizon")'
        )
    else:
        crossover = "n/a (no buying option with capex beside a feasible rent-only option)"
    rows.append(("Crossover month (buying's cumulative cost <= renting's)", crossover, INT_FORMAT))
    breakeven = comparison.breakeven_utilization_frac
    rows.append(
        (
            "Break-even utilization of the rented GPU (reserved / on-demand price)",
            breakeven if breakeven is not None else "n/a",
            PERCENT_FORMAT if breakeven is not None else None,
        )
    )
    r = 4
    for label, value, fmt in rows:
        _append(ws, r, [label, value], [None, fmt])
        if label == "Horizon (months)":
            ws.parent.defined_names[HORIZON_NAME] = DefinedName(HORIZON_NAME, attr_text=f"Summary!$B${r}")
        r += 1
    rec_cell = ws.cell(row=5, column=2)
    rec_cell.alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[5].height = POINTS_PER_LINE * (
        1 + len(str(rec_cell.value)) // RECOMMENDATION_CHARS_PER_LINE
    )
    r += 1
    _append(ws, r, ["Flip points", "When the recommendation changes"])
    _style_header(ws, r, 2)
    flips: Sequence[dict[str, Any]] = comparison.flip_points
    if not flips:
        r += 1
        _append(ws, r, ["", "not computed (--no-flip-points)"])
    for k, flip in enumerate(flips, start=1):
        r += 1
        _append(ws, r, [f"Flip point {k}", flip.get("sentence", "")])
    _finish(ws, freeze="A4")
    ws.column_dimensions["B"].width = MAX_COLUMN_WIDTH * 2


def build_compare_workbook(comparison: Any) -> Any:
    """The openpyxl Workbook of a :class:`planner.compare.Comparison`."""
    from openpyxl.styles import Font

    rec = comparison.recommendation
    plan_result = (
        comparison.options[rec]
        if rec is not None
        else comparison.options.get("hybrid", next(iter(comparison.options.values())))
    )
    wb = build_workbook(plan_result)
    plan_summary = wb["Summary"]
    plan_summary.title = PLAN_SUMMARY_TITLE
    plan_summary["A1"] = f"Capacity plan of the {rec or 'hybrid'} option"
    plan_summary["A1"].font = Font(bold=True, size=14)
    alternatives = wb["Alternatives"]
    if alternatives.max_row <= 1:
        _set(alternatives, 3, 1, "compare does not re-solve alternatives: run planner plan for them.")
    tables = _Tables()
    tables.names = {name.lower() for ws in wb for name in ws.tables}
    sheets = {}
    for i, title in enumerate(COMPARE_SHEETS):
        sheets[title] = wb.create_sheet(sanitize_sheet_title(title), index=i)
    wb.active = 0
    horizon = int(plan_result.scenario.horizon_months)
    cash = _cash_flow_sheet(sheets["CashFlow"], tables, comparison, horizon)
    row_of = _options_sheet(sheets["Options"], tables, comparison, cash)
    _options_chart(sheets["Options"], len(comparison.options))
    _summary_sheet(sheets["Summary"], comparison, horizon, row_of, cash, plan_result.status != "infeasible")
    return wb


def write_compare_outputs(comparison: Any, *, workbook: Path | None, plots_dir: Path | None) -> None:
    """Write the comparison workbook (atomically) and/or its PNG charts."""
    if workbook is not None:
        wb = build_compare_workbook(comparison)
        atomic_write(workbook, wb.save)
    if plots_dir is not None:
        feasible = _feasible(comparison)
        write_compare_plots(
            plots_dir,
            monthly_usd={n: comparison.cash_flow_usd[n] for n in feasible},
            totals_usd={
                n: (r.total_cost_usd if r.status != "infeasible" else None)
                for n, r in comparison.options.items()
            },
            crossover_month=comparison.crossover_month,
        )
