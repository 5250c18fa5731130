"""Excel workbook of ``planner compare``: buy-only vs rent-only vs hybrid, then the recommended plan.

Sheets: **Summary** (the recommendation in words, the recommended option's total, capex, opex/month and
cost per million output tokens, the crossover month, the break-even utilization and the flip-point
sentences), **Options** (per option: total cost, capex, resale credit, opex/month, output tokens served
and cost per million output tokens), **CashFlow** (each option's cost ledger cash flow month by month,
with the discount factor and the cumulative cash, and a native line chart of the crossover), then the
recommended option's plan sheets as :func:`planner.report.workbook.build_workbook` writes them (its
Summary renamed **Plan**).

Every figure is read from the options' cost ledgers (planner.readout.ledger.CostLedger); the workbook only
adds them up, live: an option's total is Σ cash × discount factor (the resale credit discounted from the
horizon's end), its opex per month (Σ cash − capex + resale credit) / horizon, its cost per million tokens
total / output tokens; the cumulative columns and the crossover month are formulas over the cash cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.report.charts import write_compare_plots
from planner.report.files import write_workbook
from planner.report.formatting import (
    INT_FORMAT,
    MAX_COLUMN_WIDTH,
    NUMBER_FORMAT,
    PERCENT_FORMAT,
    USD_AXIS_FORMAT,
    USD_FORMAT,
    months_text,
    sanitize_sheet_title,
)
from planner.report.workbook import build_workbook
from planner.report.workbook_costs import RATE_NAME as PLAN_RATE_NAME
from planner.report.workbook_costs import TOTAL_NAME
from planner.report.workbook_summary import TOKENS_PER_MTOK
from planner.report.xlsx import (
    Formula,
    Tables,
    align,
    append_row,
    define_name,
    finish_sheet,
    first_free_column,
    header_table,
    inset_anchor,
    letter,
    set_cell,
    style_header,
    wrap_columns,
    wrap_text_row,
    write_note,
)
from planner.units import three_digits_text

if TYPE_CHECKING:
    from planner.readout import PlanResult
    from planner.readout.comparison import Comparison

COMPARE_SHEETS = ("Summary", "Options", "CashFlow")
PLAN_SUMMARY_TITLE = "Plan"
HORIZON_NAME = "Compare_horizon_months"
RATE_NAME = "Compare_cost_of_capital_frac_per_year"
END_FACTOR = f"(1+{RATE_NAME})^(-{HORIZON_NAME}/12)"
OPTION_HEADERS = [
    "Option",
    "Status",
    "Total cost (USD, present value)",
    "Capex (USD)",
    "Resale credit (USD)",
    "Opex (USD/month)",
    "Output tokens served (Mtok over the horizon)",
    "Cost per million output tokens (USD/Mtok)",
    "Recommended",
    "Note",
]
BUYING_AHEAD = "Buying ahead from here on (cumulative)"


def served_output_mtok(result: PlanResult) -> float:
    """Output tokens served over the horizon (the plan's cost ledger), millions."""
    return result.ledger.output_tokens / TOKENS_PER_MTOK if result.ledger is not None else 0.0


def comparison_text(comparison: Comparison) -> str:
    """The recommendation in words: the cheapest option and what each other costs more or less; max_throughput:
    the option serving the most and what each other serves ("costs $-8,545 more" read "costs the same")."""
    rec = comparison.recommended_option
    if rec is None:
        return "No option is feasible: see the Options sheet and the Plan sheet for the reasons."
    if rec != comparison.recommendation:  # owned_only: no option's name, the owned GPUs serve the demand
        reason = comparison.recommendation_reason
        return f"{comparison.recommendation}: {reason}. The sheets from {PLAN_SUMMARY_TITLE} on are the {rec} plan."
    best = comparison.options[rec]
    served = best.served_scale is not None  # scales as three_digits_text writes them: 10,000×, not 1e+04×
    what = f"serves the most within the budget: {three_digits_text(best.served_scale or 0)}× the stated demand for" if served else "is the cheapest option:"
    parts = [f"{rec} {what} ${best.total_cost_usd:,.0f} over {months_text(best.scenario.horizon_months)}"]
    for name, r in comparison.options.items():
        delta = r.total_cost_usd - best.total_cost_usd if r.feasible else 0.0
        if name != rec:
            parts.append(
                f"{name} is infeasible" if not r.feasible
                else f"{name} serves {three_digits_text(r.served_scale or 0)}× for ${r.total_cost_usd:,.0f}" if served
                else f"{name} costs ${abs(delta):,.0f} {'more' if delta > 0 else 'less'}"
                if abs(delta) > 1e-6 * max(1.0, best.total_cost_usd) else f"{name} costs the same"
            )  # fmt: skip
    return "; ".join(parts) + f". The sheets from {PLAN_SUMMARY_TITLE} on are the {rec} plan."


def _options_sheet(ws: Any, tables: Tables, comparison: Comparison, cash: dict[str, Any]) -> dict[str, int]:
    """One row per option: its ledger's capex, resale credit and output tokens (values), and its total, opex
    per month and cost per million tokens as formulas over its CashFlow column."""
    rows: list[list[Any]] = []
    row_of: dict[str, int] = {}
    first, last_month = 2, cash["last"]
    factors = f"CashFlow!$B${first}:$B${last_month}"
    for k, (name, result) in enumerate(comparison.options.items()):
        r = k + 2
        row_of[name] = r
        recommended = "yes" if name == comparison.recommendation else ""  # as the terminal's ◀: none for owned_only
        if name not in cash["flow_col"] or result.ledger is None:
            # each cause with its smallest relaxation, as the terminal prints it (the fix was left out)
            causes = [e.message + (f" — {e.relaxation}" if e.relaxation else "") for e in result.infeasibility]
            note = "; ".join(causes) or "infeasible"
            rows.append([name, result.status, None, None, None, None, None, None, recommended, note])
            continue
        col = cash["flow_col"][name]
        flows = f"CashFlow!${col}${first}:${col}${last_month}"
        rows.append(
            [
                name,
                result.status,
                # Σ cash × d(m); the resale credit (in month H − 1's cash) is discounted from the end, d(H).
                Formula(f"=SUMPRODUCT({flows},{factors})+E{r}*(CashFlow!$B${cash['end_row']}-{END_FACTOR})"),
                result.ledger.capex_usd,
                result.ledger.residual_value_usd,
                Formula(f"=(CashFlow!{col}{cash['total_row']}-D{r}+E{r})/{HORIZON_NAME}"),
                served_output_mtok(result),
                Formula(f"=IF(G{r}=0,NA(),C{r}/G{r})"),
                recommended,
                "",
            ]
        )
    formats: list[str | None] = [None, None] + [USD_FORMAT] * 4 + [NUMBER_FORMAT, USD_FORMAT, None, None]
    last = header_table(ws, tables, 1, OPTION_HEADERS, rows, formats, "Options")
    # Long infeasibility notes wrap inside the column instead of widening the printed page.
    wrap_columns(ws, [letter(len(OPTION_HEADERS))], 2, last)
    align(ws, [letter(len(OPTION_HEADERS) - 1)], 2, last, horizontal="center")
    finish_sheet(
        ws,
        freeze="B2",
        widths={letter(len(OPTION_HEADERS) - 1): 15, letter(len(OPTION_HEADERS)): MAX_COLUMN_WIDTH},
    )
    write_note(
        ws,
        last + 2,
        "Each option's CashFlow column is its plan's cost ledger (capex in the order month, recurring costs, the "
        "resale credit in the last month). Total = Σ cash x discount factor (resale discounted from the horizon's "
        "end); opex/month = (Σ cash - capex + resale credit) / horizon.",
        past_repeated=True,  # column A prints on every page: a note there printed again, clipped
    )
    return row_of


def _cash_flow_sheet(ws: Any, tables: Tables, comparison: Comparison, horizon: int) -> dict[str, Any]:
    """Month rows: discount factor, each feasible option's ledger cash out, and its cumulative cash."""
    flows = comparison.cash_flow_usd
    names = list(flows)
    n = len(names)
    pair = comparison.crossover_pair()
    flow_col = {name: letter(3 + k) for k, name in enumerate(names)}
    cum_col = {name: letter(3 + n + k) for k, name in enumerate(names)}
    headers = (
        ["Month", "Discount factor"]
        + [f"{name} cash out (USD)" for name in names]
        + [f"{name} cumulative (USD)" for name in names]
        + ([BUYING_AHEAD] if pair else [])
    )
    ahead_col = letter(3 + 2 * n) if pair else None
    rows: list[list[Any]] = []
    months = max([horizon, *(len(f) for f in flows.values())])
    # the horizon's months, then those a reservation is still paid after it (Comparison.cash_flow_usd)
    for m in range(months):
        r = m + 2
        cums = [
            Formula(f"={flow_col[name]}{r}" if m == 0 else f"={cum_col[name]}{r - 1}+{flow_col[name]}{r}")
            for name in names
        ]
        ahead: list[Any] = []
        if pair:
            buy, rent = cum_col[pair[0]], cum_col[pair[1]]
            # ahead for good (planner.readout.ledger.crossover_month): at most renting here and in every later
            # month, below it in the last
            later = f'{ahead_col}{r + 1}="yes"' if m < months - 1 else f"{buy}{r}<{rent}{r}"
            ahead = [Formula(f'=IF(AND(A{r}>0,{buy}{r}<={rent}{r},{later}),"yes","no")')]
        factor = Formula(f"=(1+{RATE_NAME})^(-A{r}/12)")
        rows.append([m, factor, *(flows[name][m] for name in names), *cums, *ahead])
    formats: list[str | None] = [INT_FORMAT, "0.0000"] + [USD_FORMAT] * (2 * n) + ([None] if pair else [])
    last = header_table(ws, tables, 1, headers, rows, formats, "CashFlow")
    if ahead_col:
        align(ws, [ahead_col], 2, last, horizontal="center")
    total_row = last + 1
    set_cell(ws, total_row, 1, "Total (USD)")
    for name in names:
        col = flow_col[name]
        set_cell(ws, total_row, ws[f"{col}1"].column, Formula(f"=SUM({col}2:{col}{last})"), USD_FORMAT)
    finish_sheet(ws, freeze="C2")
    if n:
        _cumulative_chart(ws, comparison, n, last)
    return {
        "flow_col": flow_col,
        "cum_col": cum_col,
        "total_row": total_row,
        "last": last,
        "end_row": horizon + 1,
        "ahead_col": ahead_col,
    }


def _cumulative_chart(ws: Any, comparison: Comparison, n: int, last: int) -> None:
    from openpyxl.chart import LineChart, Reference

    chart = LineChart()
    crossover = comparison.crossover_month
    chart.title = (
        f"Cumulative cash by option (crossover: month {crossover})"
        if crossover is not None
        else "Cumulative cash by option (no crossover within the horizon)"
    )
    chart.y_axis.title, chart.x_axis.title = "USD", "Month"
    chart.add_data(
        Reference(ws, min_col=3 + n, max_col=2 + 2 * n, min_row=1, max_row=last), titles_from_data=True
    )
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=last))
    for series in chart.series:
        series.smooth = False  # LibreOffice draws unsmoothed lines only when told so
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.y_axis.number_format = USD_AXIS_FORMAT
    chart.width, chart.height = 18, 9
    ws.add_chart(chart, f"{letter(3 + 2 * n + 2)}2")


def _options_chart(ws: Any, n_options: int) -> None:
    from openpyxl.chart import BarChart, Reference

    chart = BarChart()
    chart.title, chart.y_axis.title = "Total cost over the horizon by option (present value)", "USD"
    chart.y_axis.scaling.min = 0
    chart.add_data(Reference(ws, min_col=3, min_row=1, max_row=1 + n_options), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=1 + n_options))
    chart.x_axis.delete = chart.y_axis.delete = False
    chart.y_axis.number_format = USD_AXIS_FORMAT
    chart.legend = None
    chart.width, chart.height = 14, 7
    # below the note (it may wrap), past the repeated columns and inset: on their edge it printed again, a line
    ws.add_chart(chart, inset_anchor(first_free_column(ws), ws.max_row + 2, chart))


SUMMARY_OPTION_ROWS = (
    ("Recommended option total cost (USD, present value)", "C", USD_FORMAT),
    ("Recommended option capex (USD)", "D", USD_FORMAT),
    ("Recommended option opex (USD/month)", "F", USD_FORMAT),
    ("Recommended option cost per million output tokens (USD/Mtok)", "H", USD_FORMAT),
)
CROSSOVER_LABEL = "Crossover month (buying's cumulative cash <= renting's)"
REASON_LABEL = "Why this option"


def _summary_sheet(
    ws: Any,
    comparison: Comparison,
    horizon: int,
    row_of: dict[str, int],
    cash: dict[str, Any],
    plan_feasible: bool,
) -> None:
    from openpyxl.styles import Font

    scenario = next(iter(comparison.options.values())).scenario
    set_cell(ws, 1, 1, "Buy vs rent comparison")
    ws["A1"].font = Font(bold=True, size=14)
    append_row(ws, 3, ["Item", "Value"])
    style_header(ws, 3, 2)
    rec = comparison.recommended_option  # the option whose plan it is (owned_only: the one its cost rule chose)
    rows: list[tuple[str, Any, str | None]] = [
        ("Scenario", scenario.name, None),
        ("Recommendation", comparison_text(comparison), None),
        # the reason the terminal and the JSON give (why buying is impossible, or that owned GPUs serve it all)
        (REASON_LABEL, comparison.recommendation_reason or "—", None),
        ("Recommended option", comparison.recommendation or "none", None),
        ("Horizon (months)", horizon, INT_FORMAT),
        (
            "Cost of capital (per year)",
            float(scenario.economics.cost_of_capital_frac_per_year),
            PERCENT_FORMAT,
        ),
    ]
    if rec is not None:
        rows += [
            (label, Formula(f"=Options!{col}{row_of[rec]}"), fmt) for label, col, fmt in SUMMARY_OPTION_ROWS
        ]
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
    rows.append((CROSSOVER_LABEL, crossover, INT_FORMAT))
    breakeven = comparison.breakeven_utilization_frac
    priced = any(f.get("parameter") == "utilization_frac" for f in comparison.flip_points)
    never = "none: reserving never pays at these quotes (the flip points below name them)"
    rows.append(
        (
            "Break-even utilization of the rented GPUs (reserved / on-demand price)",
            breakeven if breakeven is not None else never if priced else "— (no reserved quote for the rented GPUs)",
            PERCENT_FORMAT if breakeven is not None else None,
        )
    )
    names = {"Horizon (months)": HORIZON_NAME, "Cost of capital (per year)": RATE_NAME}
    r = 4
    for label, value, fmt in rows:
        append_row(ws, r, [label, value], [None, fmt])
        if label in names:
            define_name(ws.parent, names[label], ws.title, f"B{r}")
        r += 1
    wrap_text_row(ws, 5, 2)
    wrap_text_row(ws, 6, 2)
    align(ws, ["B"], 4, r, horizontal="left")
    r += 1
    append_row(ws, r, ["Flip points", "When the recommendation changes"])
    style_header(ws, r, 2)
    flips: Sequence[dict[str, Any]] = comparison.flip_points
    if not flips:
        r += 1
        append_row(ws, r, ["", "not computed (--no-flip-points)"])
    for k, flip in enumerate(flips, start=1):
        r += 1
        append_row(ws, r, [f"Flip point {k}", flip.get("sentence", "")])
        wrap_text_row(ws, r, 2)  # a sentence naming every quote: wrapped, or the printed page shrinks to fit it
    finish_sheet(ws, freeze="A4")
    ws.column_dimensions["B"].width = MAX_COLUMN_WIDTH * 2


def build_compare_workbook(comparison: Comparison) -> Any:
    """The openpyxl Workbook of a :class:`planner.readout.comparison.Comparison`."""
    from openpyxl.styles import Font

    rec = comparison.recommended_option
    fallback = comparison.options.get("hybrid", next(iter(comparison.options.values())))
    plan_result = comparison.options[rec] if rec is not None else fallback
    wb = build_workbook(plan_result)
    plan_summary = wb["Summary"]
    plan_summary.title = PLAN_SUMMARY_TITLE
    plan_summary["A1"] = f"Capacity plan of the {rec or 'hybrid'} option"
    plan_summary["A1"].font = Font(bold=True, size=14)
    alternatives = wb["Alternatives"]
    if alternatives.max_row <= 1:
        set_cell(alternatives, 3, 1, "compare does not re-solve alternatives: run planner plan for them.")
    tables = Tables({name for ws in wb for name in ws.tables})
    sheets = {}
    for i, title in enumerate(COMPARE_SHEETS):
        sheets[title] = wb.create_sheet(sanitize_sheet_title(title), index=i)
    wb.active = 0
    horizon = int(plan_result.scenario.horizon_months)
    cash = _cash_flow_sheet(sheets["CashFlow"], tables, comparison, horizon)
    row_of = _options_sheet(sheets["Options"], tables, comparison, cash)
    _options_chart(sheets["Options"], len(comparison.options))
    _summary_sheet(sheets["Summary"], comparison, horizon, row_of, cash, plan_result.feasible)
    # one cost-of-capital input: the recommended plan's sheets discount at the comparison's rate (Summary)
    if PLAN_RATE_NAME in wb.defined_names:  # (an infeasible plan has no money sheets)
        sheet, cell = next(iter(wb.defined_names[PLAN_RATE_NAME].destinations))
        wb[sheet][cell.replace("$", "")] = f"={RATE_NAME}"
    return wb


def write_compare_outputs(comparison: Comparison, *, workbook: Path | None, plots_dir: Path | None) -> None:
    """Write the comparison workbook (atomically) and/or its PNG charts."""
    if workbook is not None:
        wb = build_compare_workbook(comparison)
        write_workbook(workbook, wb)
    if plots_dir is not None:
        write_compare_plots(
            plots_dir,
            monthly_usd=comparison.cash_flow_usd,
            totals_usd={n: (r.total_cost_usd if r.feasible else None) for n, r in comparison.options.items()},
            crossover_month=comparison.crossover_month,
        )
