"""Excel workbook of a plan, with live formulas over the unit prices on the Assumptions sheet.

Sheets: Summary, Deployments, Ledger, Costs, BuyVsRent, Alternatives, Constraints, Assumptions, Inputs.
Every unit price is a named range on Assumptions (``Price_<n>_...``); monthly costs, per-deployment costs
and totals are formulas over those names and the quantities in the sheets, so editing a price updates
every total. Cost categories the supply lines do not explain (power, capex... as the solver reports them)
are one named constant, ``Other_cost_usd``, so the workbook total equals the planner's total.
Months are counted from 0 (the first month), as in the JSON (``purchase_month``, ``start_month``), the CLI
and the compare workbook.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.report.charts import write_plan_plots
from planner.report.files import atomic_write
from planner.report.formatting import (
    HEADER_FILL,
    HEADER_FONT_COLOR,
    INT_FORMAT,
    MAX_COLUMN_WIDTH,
    MIN_COLUMN_WIDTH,
    NUMBER_FORMAT,
    PERCENT_FORMAT,
    USD_FORMAT,
    is_formula_like,
    sanitize_defined_name,
    sanitize_sheet_title,
)
from planner.units import S_PER_MONTH

SHEETS = (
    "Summary",
    "Deployments",
    "Ledger",
    "Costs",
    "BuyVsRent",
    "Alternatives",
    "Constraints",
    "Assumptions",
    "Inputs",
)
TOTAL_NAME = "Total_cost_usd"
HORIZON_NAME = "Horizon_months"
OTHER_NAME = "Other_cost_usd"
SLO_MARGIN_WARN_FRAC = 0.10
TOKENS_PER_MTOK = 1e6
HEADER_WRAP_CHARS = 18
RECOMMENDATION_CHARS_PER_LINE = 110
POINTS_PER_LINE = 15
FRONTIER_COLORS = ("1F4E78", "C55A11", "548235")


@dataclass(frozen=True)
class Formula:
    """A trusted formula written by this module (user text is never one)."""

    text: str


# --------------------------------------------------------------------------------------------------
# Plain-Python view of the plan (numbers the formulas must reproduce)
# --------------------------------------------------------------------------------------------------


@dataclass
class _Line:
    """One supply line with its per-month units."""

    index: int
    row: dict[str, Any]
    monthly_units: list[float]
    """Units billed each month (hours-weighted, so fractional, when on-demand rent follows an hourly profile)."""
    capex_month: int = 0
    adjust_usd: float = 0.0

    @property
    def label(self) -> str:
        r = self.row
        return f"{self.index}: {r['gpu']} @ {r['site']} {r['kind']}"

    @property
    def price_name(self) -> str:
        r = self.row
        return sanitize_defined_name(f"Price_{self.index}_{r['gpu']}_{r['site']}_{r['kind']}")

    @property
    def capex_name(self) -> str:
        r = self.row
        return sanitize_defined_name(f"Capex_{self.index}_{r['gpu']}_{r['site']}_{r['kind']}")

    @property
    def capex_usd(self) -> float:
        """One-off purchase cost of the line (USD), paid in ``capex_month``."""
        return float(self.row.get("capex_usd") or 0.0)

    @property
    def capex_usd_per_unit(self) -> float:
        units = int(self.row["units"])
        return self.capex_usd / units if units else 0.0

    @property
    def horizon_usd(self) -> float:
        """Running cost over the horizon (USD)."""
        return sum(self.monthly_units) * float(self.row["usd_per_unit_month"])

    @property
    def adjust_name(self) -> str:
        r = self.row
        return sanitize_defined_name(f"Adjust_{self.index}_{r['gpu']}_{r['site']}_{r['kind']}")

    @property
    def total_usd(self) -> float:
        """Running cost + capex + the planner's other line costs (resale credit...) over the horizon (USD)."""
        return self.horizon_usd + self.capex_usd + self.adjust_usd


def _month_periods(schedule: Sequence[dict[str, Any]] | None, horizon_months: int) -> list[int] | None:
    """For each month of the horizon, the position of its representative period in ``units_per_period``.

    The planner merges periods with identical demand; ``units_per_period`` then has one entry per
    representative period (in increasing period order) and each schedule entry names its
    ``representative_period`` and the ``months`` it covers. None when the schedule does not say so.
    """
    if not schedule or any("representative_period" not in e or "months" not in e for e in schedule):
        return None
    reps = sorted({int(e["representative_period"]) for e in schedule})
    position = {rep: i for i, rep in enumerate(reps)}
    out: list[int | None] = [None] * horizon_months
    for entry in schedule:
        for m in entry["months"]:
            if 0 <= int(m) < horizon_months:
                out[int(m)] = position[int(entry["representative_period"])]
    if any(p is None for p in out):
        return None
    return [int(p) for p in out if p is not None]


def _units(value: Any) -> float:
    """A unit count as the sheet shows it: an int when whole, else the hours-weighted fraction."""
    number = float(value)
    return int(number) if number.is_integer() else number


def _monthly_units(
    row: dict[str, Any],
    horizon_months: int,
    period_months: int | None,
    month_periods: Sequence[int] | None = None,
) -> list[float]:
    """Units in each month of the horizon.

    ``units_per_month`` is used when the plan gives it. Otherwise ``units_per_period`` is placed on the
    calendar with ``month_periods`` (from the schedule, see :func:`_month_periods`) when it has one entry
    per representative period, or with ``period_months`` when the entries tile the horizon. Without
    either (a plan that does not say which months a merged period covers) the entries are spread evenly:
    the monthly split is then approximate, but the total still equals the planner's (the line
    adjustment and ``Other_cost_usd`` carry any difference).
    """
    per_month = row.get("units_per_month")
    if per_month is not None and len(per_month) == horizon_months:
        return [_units(u) for u in per_month]
    periods = row.get("units_per_period") or [row["units"]]
    n = len(periods)
    if month_periods is not None and len(month_periods) == horizon_months and n == len(set(month_periods)):
        return [_units(periods[p]) for p in month_periods]
    if period_months and n * period_months == horizon_months:
        return [_units(u) for u in periods for _ in range(period_months)]
    return [_units(periods[min(n - 1, m * n // horizon_months)]) for m in range(horizon_months)]


def _lines(data: dict[str, Any]) -> list[_Line]:
    horizon = int(data["horizon_months"])
    period_months = data.get("period_months")
    month_periods = _month_periods(data.get("schedule"), horizon)
    lines = [
        _Line(
            i + 1,
            s,
            _monthly_units(s, horizon, period_months, month_periods),
            min(horizon - 1, int(s["purchase_month"] if s.get("purchase_month") is not None else 0)),
        )
        for i, s in enumerate(data["supply"])
    ]
    scale = max(1.0, abs(float(data["total_cost_usd"] or 0.0)))
    for line in lines:
        # The planner's average monthly cost of the line also carries costs the row does not itemize
        # (resale credit of bought units...): keep that difference as a per-line adjustment.
        if line.row.get("cost_usd_per_month") is not None:
            adjust = float(line.row["cost_usd_per_month"]) * horizon - line.total_usd
            line.adjust_usd = adjust if abs(adjust) > 1e-9 * scale else 0.0
    return lines


def _other_cost_usd(data: dict[str, Any], lines: Sequence[_Line]) -> float:
    """The part of the planner's total that the supply lines do not explain."""
    return float(data["total_cost_usd"]) - sum(line.total_usd for line in lines)


def _categories(lines: Sequence[_Line]) -> dict[str, list[_Line]]:
    out: dict[str, list[_Line]] = {}
    for line in lines:
        out.setdefault(str(line.row["procurement"]), []).append(line)
    return out


def monthly_cost_usd(data: dict[str, Any]) -> list[float]:
    """Cost per month of the horizon (USD), as the Costs sheet computes it."""
    lines = _lines(data)
    horizon = int(data["horizon_months"])
    other = _other_cost_usd(data, lines) / horizon
    return [
        sum(
            line.monthly_units[m] * float(line.row["usd_per_unit_month"])
            + (line.capex_usd if m == line.capex_month else 0.0)
            + line.adjust_usd / horizon
            for line in lines
        )
        + other
        for m in range(horizon)
    ]


def category_cost_usd(data: dict[str, Any]) -> dict[str, float]:
    """Cost over the horizon per procurement category, plus ``other`` (USD), as the Costs sheet computes it."""
    lines = _lines(data)
    out = {cat: sum(line.total_usd for line in ls) for cat, ls in _categories(lines).items()}
    other = _other_cost_usd(data, lines)
    if abs(other) > 1e-9 * max(1.0, abs(float(data["total_cost_usd"]))):
        out["other"] = other
    return out


def recommendation_text(data: dict[str, Any]) -> str:
    """The plan in words: what to rent or buy and which deployment serves each workload."""
    if data["status"] == "infeasible":
        return "No feasible plan: see the infeasibility rows below."
    supply = "; ".join(
        f"{s['procurement']}{' (' + s['rental_kind'] + ')' if s.get('rental_kind') else ''} "
        f"{s['gpus']}x {s['gpu']} at {s['site']}"
        for s in data["supply"]
    )
    served: dict[str, list[str]] = {}
    for d in data["deployments"]:
        served.setdefault(d["workload"], []).append(
            f"{d['model']} {d['quantization']} TP{d['tp']}xPP{d['pp']} on {d['gpu']} at {d['site']} "
            f"({d['replicas']} replica{'s' if d['replicas'] != 1 else ''})"
        )
    uses = "; ".join(f"{w}: {', '.join(sorted(set(v)))}" for w, v in served.items())
    return (
        f"Supply: {supply or 'none'}. Serve {uses}. Total ${float(data['total_cost_usd']):,.0f} over "
        f"{data['horizon_months']} months (${float(data['cost_usd_per_month']):,.0f}/month on average)."
    )


# --------------------------------------------------------------------------------------------------
# Cell helpers
# --------------------------------------------------------------------------------------------------


def _set(ws: Any, row: int, col: int, value: Any, number_format: str | None = None) -> Any:
    """Write one cell; user strings that look like formulas are stored as text, never evaluated."""
    cell = ws.cell(row=row, column=col)
    if isinstance(value, Formula):
        cell.value = value.text
    elif isinstance(value, list | tuple):
        cell.value = ", ".join(str(v) for v in value)
        cell.data_type = "s"
    elif isinstance(value, dict):
        cell.value = str(value)
        cell.data_type = "s"
    else:
        cell.value = value
        if is_formula_like(value):
            cell.data_type = "s"
    if number_format is not None:
        cell.number_format = number_format
    return cell


def _append(ws: Any, row: int, values: Sequence[Any], formats: Sequence[str | None] | None = None) -> None:
    for col, value in enumerate(values, start=1):
        _set(ws, row, col, value, formats[col - 1] if formats else None)


def _style_header(ws: Any, row: int, n_cols: int) -> None:
    from openpyxl.styles import Alignment, Font, PatternFill

    for col in range(1, n_cols + 1):
        cell = ws.cell(row=row, column=col)
        cell.font = Font(bold=True, color=HEADER_FONT_COLOR)
        cell.fill = PatternFill("solid", start_color=HEADER_FILL, end_color=HEADER_FILL)
        cell.alignment = Alignment(wrap_text=True, vertical="center")


def _finish(ws: Any, *, freeze: str | None) -> None:
    """Column widths from content, frozen panes, landscape fit-to-width printing."""
    from openpyxl.utils import get_column_letter

    widths: dict[int, int] = {}
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is None:
                continue
            text = str(cell.value)
            length = 14 if text.startswith("=") and cell.data_type == "f" else len(text)
            if cell.alignment.wrap_text:
                # Wrapped headers and notes grow the row, not the column.
                length = min(length, HEADER_WRAP_CHARS)
            widths[cell.column] = max(widths.get(cell.column, 0), length)
    for col, width in widths.items():
        ws.column_dimensions[get_column_letter(col)].width = max(
            MIN_COLUMN_WIDTH, min(MAX_COLUMN_WIDTH, width + 2)
        )
    if freeze:
        ws.freeze_panes = freeze
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True


class _Tables:
    """Adds Excel tables with unique display names."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def add(self, ws: Any, name: str, first_row: int, last_row: int, n_cols: int) -> None:
        from openpyxl.utils import get_column_letter
        from openpyxl.worksheet.table import Table, TableStyleInfo

        if last_row <= first_row or n_cols < 1:
            return
        base = sanitize_defined_name(f"tbl_{name}")
        display, k = base, 2
        while display.lower() in self.names:
            display, k = f"{base}_{k}", k + 1
        self.names.add(display.lower())
        table = Table(displayName=display, ref=f"A{first_row}:{get_column_letter(n_cols)}{last_row}")
        table.tableStyleInfo = TableStyleInfo(name="TableStyleMedium2", showRowStripes=True)
        ws.add_table(table)


def _header_table(
    ws: Any,
    tables: _Tables,
    row: int,
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    formats: Sequence[str | None],
    name: str,
) -> int:
    """Header + rows as an Excel table starting at ``row``; returns the last row written."""
    _append(ws, row, headers)
    _style_header(ws, row, len(headers))
    for i, values in enumerate(rows, start=1):
        _append(ws, row + i, values, formats)
    last = row + len(rows)
    tables.add(ws, name, row, last, len(headers))
    return last


def _col(headers: Sequence[str], name: str) -> str:
    from openpyxl.utils import get_column_letter

    return str(get_column_letter(list(headers).index(name) + 1))


# --------------------------------------------------------------------------------------------------
# Sheets
# --------------------------------------------------------------------------------------------------

ASSUMPTION_HEADERS = ["Name", "Item", "Value", "Unit", "Source"]
BUY_HEADERS = [
    "GPU",
    "Site",
    "Kind",
    "Procurement",
    "Rental kind",
    "Unit GPUs",
    "Units (peak)",
    "GPUs (peak)",
    "Price (USD/unit/month)",
    "Cost at peak (USD/month)",
    "Cost over horizon (USD)",
    "Source",
    "Capex (USD/unit)",
    "Capex (USD)",
    "Average cost (USD/month)",
]
DEPLOY_HEADERS = [
    "Workload",
    "Model",
    "GPU",
    "Site",
    "Placement",
    "Quantization",
    "KV dtype",
    "TP",
    "PP",
    "Replicas",
    "GPUs",
    "Batch",
    "Output tokens (tok/request)",
    "Capacity (req/s)",
    "Served (req/s)",
    "Procurement",
    "Rental kind",
    "Cost (USD/month)",
]
LEDGER_HEADERS = [
    "Workload",
    "Model",
    "GPU",
    "Site",
    "Memory per GPU (GB)",
    "Batch",
    "TTFT (ms)",
    "TTFT SLO (ms)",
    "TTFT margin (%)",
    "TPOT (ms)",
    "TPOT SLO (ms)",
    "TPOT margin (%)",
    "Limited by",
]
ALT_HEADERS = [
    "Kind",
    "Option",
    "Status",
    "Total cost (USD)",
    "Cost delta (USD)",
    "Cost (USD/month)",
    "Max TPOT (ms)",
    "Max TTFT (ms)",
    "Lost because",
]


def _assumptions(wb: Any, ws: Any, tables: _Tables, data: dict[str, Any], lines: Sequence[_Line]) -> None:
    from openpyxl.workbook.defined_name import DefinedName

    rows: list[list[Any]] = [
        [HORIZON_NAME, "Planning horizon", int(data["horizon_months"]), "months", "scenario"]
    ]
    formats: list[str | None] = [None, None, INT_FORMAT, None, None]
    for line in lines:
        r = line.row
        rows.append(
            [
                line.price_name,
                f"{line.label} ({r['unit_gpus']} GPU/unit)",
                float(r["usd_per_unit_month"]),
                "USD/unit/month",
                r.get("source") or "",
            ]
        )
    for line in lines:
        if line.capex_usd:
            rows.append(
                [
                    line.capex_name,
                    f"{line.label}: purchase, paid in month {line.capex_month}",
                    line.capex_usd_per_unit,
                    "USD/unit (one-off)",
                    line.row.get("source") or "",
                ]
            )
    for line in lines:
        if line.adjust_usd:
            rows.append(
                [
                    line.adjust_name,
                    f"{line.label}: other line costs in the planner's average (resale credit...)",
                    line.adjust_usd,
                    "USD over horizon",
                    "planner solution",
                ]
            )
    other = _other_cost_usd(data, lines)
    rows.append(
        [
            OTHER_NAME,
            "Costs not explained by the supply lines (solver categories: "
            + ", ".join(f"{k} ${v:,.2f}" for k, v in data["costs_usd"].items())
            + ")",
            other,
            "USD over horizon",
            "planner solution",
        ]
    )
    first = 3
    last = _header_table(ws, tables, first, ASSUMPTION_HEADERS, rows, formats, "Assumptions")
    for row_i in range(first + 1, last + 1):
        name = str(ws.cell(row=row_i, column=1).value)
        ws.cell(row=row_i, column=3).number_format = INT_FORMAT if name == HORIZON_NAME else USD_FORMAT
        wb.defined_names[name] = DefinedName(name, attr_text=f"Assumptions!$C${row_i}")
    _finish(ws, freeze=f"A{first + 1}")
    _set(ws, 1, 1, "Assumptions: every unit price used by the plan. Edit a Value and every total updates.")


def _costs(wb: Any, ws: Any, tables: _Tables, data: dict[str, Any], lines: Sequence[_Line]) -> dict[str, Any]:
    from openpyxl.utils import get_column_letter
    from openpyxl.workbook.defined_name import DefinedName

    horizon = int(data["horizon_months"])
    n = len(lines)
    capex_lines = [ln for ln in lines if ln.capex_usd]
    adjust_lines = [ln for ln in lines if ln.adjust_usd]
    headers = (
        ["Month"]
        + [f"Units {ln.label}" for ln in lines]
        + [f"Cost {ln.label} (USD)" for ln in lines]
        + [f"Capex {ln.label} (USD)" for ln in capex_lines]
        + (["Adjustments (USD)"] if adjust_lines else [])
        + ["Other (USD)", "Total (USD)", "Cumulative (USD)"]
    )
    cost_col = {ln.index: get_column_letter(2 + n + k) for k, ln in enumerate(lines)}
    capex_col = {ln.index: get_column_letter(2 + 2 * n + k) for k, ln in enumerate(capex_lines)}
    nc = len(capex_lines) + (1 if adjust_lines else 0)
    other_col, total_col, cum_col = (get_column_letter(2 + 2 * n + nc + k) for k in range(3))
    adjust = [Formula("=(" + "+".join(ln.adjust_name for ln in adjust_lines) + f")/{HORIZON_NAME}")]
    if not adjust_lines:
        adjust = []
    rows: list[list[Any]] = []
    for m in range(horizon):
        r = m + 2
        units = [ln.monthly_units[m] for ln in lines]
        costs = [Formula(f"={get_column_letter(2 + k)}{r}*{ln.price_name}") for k, ln in enumerate(lines)]
        # Capex: units bought (BuyVsRent) x unit price, in the month the order is placed.
        capex = [
            Formula(f"=BuyVsRent!$G${ln.index + 1}*{ln.capex_name}") if m == ln.capex_month else 0
            for ln in capex_lines
        ]
        total = Formula(
            f"=SUM({cost_col[lines[0].index]}{r}:{other_col}{r})" if lines else f"={other_col}{r}"
        )
        cum = Formula(f"={total_col}{r}" if m == 0 else f"={cum_col}{r - 1}+{total_col}{r}")
        rows.append(
            [m, *units, *costs, *capex, *adjust, Formula(f"={OTHER_NAME}/{HORIZON_NAME}"), total, cum]
        )
    formats: Sequence[str | None] = [INT_FORMAT] * (n + 1) + [USD_FORMAT] * (n + nc + 3)
    last = _header_table(ws, tables, 1, headers, rows, formats, "Costs")
    total_row = last + 1
    _set(ws, total_row, 1, "Total")
    adjust_col = [get_column_letter(2 + 2 * n + nc - 1)] if adjust_lines else []
    for col in [*cost_col.values(), *capex_col.values(), *adjust_col, other_col, total_col]:
        _set(ws, total_row, ws[f"{col}1"].column, Formula(f"=SUM({col}2:{col}{last})"), USD_FORMAT)
    wb.defined_names[TOTAL_NAME] = DefinedName(TOTAL_NAME, attr_text=f"Costs!${total_col}${total_row}")
    # Cost by category (live: sums of the per-line totals).
    cat_row = total_row + 2
    cat_rows: list[list[Any]] = []
    for cat, ls in _categories(lines).items():
        cells = [f"{cost_col[ln.index]}{total_row}" for ln in ls]
        cells += [f"{capex_col[ln.index]}{total_row}" for ln in ls if ln.index in capex_col]
        cells += [ln.adjust_name for ln in ls if ln.adjust_usd]
        cat_rows.append([cat, Formula("=" + "+".join(cells))])
    cat_rows.append(["other", Formula(f"={other_col}{total_row}")])
    cat_last = _header_table(
        ws,
        tables,
        cat_row,
        ["Category", "Cost over horizon (USD)"],
        cat_rows,
        [None, USD_FORMAT],
        "CostByCategory",
    )
    _set(ws, cat_last + 1, 1, "Total")
    _set(ws, cat_last + 1, 2, Formula(f"=SUM(B{cat_row + 1}:B{cat_last})"), USD_FORMAT)
    _finish(ws, freeze="B2")
    return {
        "cost_col": cost_col,
        "capex_col": capex_col,
        "total_row": total_row,
        "last_month_row": last,
        "cum_col": cum_col,
        "cat_row": cat_row,
        "cat_last": cat_last,
    }


def _buy_vs_rent(
    ws: Any, tables: _Tables, data: dict[str, Any], lines: Sequence[_Line], costs: dict[str, Any]
) -> int:
    rows: list[list[Any]] = []
    for k, ln in enumerate(lines):
        r, row = k + 2, ln.row
        rows.append(
            [
                row["gpu"],
                row["site"],
                row["kind"],
                row["procurement"],
                row.get("rental_kind") or "",
                int(row["unit_gpus"]),
                int(row["units"]),
                Formula(f"=F{r}*G{r}"),
                Formula(f"={ln.price_name}"),
                Formula(f"=G{r}*I{r}"),
                Formula(
                    f"=Costs!{costs['cost_col'][ln.index]}{costs['total_row']}+N{r}"
                    + (f"+{ln.adjust_name}" if ln.adjust_usd else "")
                ),
                row.get("source") or "",
                Formula(f"={ln.capex_name}") if ln.capex_usd else 0,
                Formula(f"=Costs!{costs['capex_col'][ln.index]}{costs['total_row']}") if ln.capex_usd else 0,
                Formula(f"=K{r}/{HORIZON_NAME}"),
            ]
        )
    formats: list[str | None] = [None] * 5 + [INT_FORMAT] * 3 + [USD_FORMAT] * 3 + [None] + [USD_FORMAT] * 3
    last = _header_table(ws, tables, 1, BUY_HEADERS, rows, formats, "BuyVsRent")
    _finish(ws, freeze="A2")
    # Written after the widths are set so the note spills over instead of widening column A.
    _set(
        ws,
        last + 2,
        1,
        "Note: only the procurement options in the scenario were priced. Capex is paid in the month the order "
        "is placed; bought nodes run (power, colocation, ops) from delivery; the resale credit is in the line "
        "adjustment. `planner compare -o` prices buy-only, rent-only and hybrid side by side.",
    )
    return max(last, 2)


def _deployments(
    ws: Any, tables: _Tables, data: dict[str, Any], output_tokens: dict[str, int], buy_last: int
) -> int:
    deps = data["deployments"]
    last = max(len(deps) + 1, 2)
    g, s, gp = _col(DEPLOY_HEADERS, "GPU"), _col(DEPLOY_HEADERS, "Site"), _col(DEPLOY_HEADERS, "GPUs")
    rows: list[list[Any]] = []
    for k, d in enumerate(deps):
        r = k + 2
        used = f"SUMIFS(${gp}$2:${gp}${last},${g}$2:${g}${last},{g}{r},${s}$2:${s}${last},{s}{r})"
        supply = (
            f"SUMIFS(BuyVsRent!$O$2:$O${buy_last},BuyVsRent!$A$2:$A${buy_last},{g}{r},"
            f"BuyVsRent!$B$2:$B${buy_last},{s}{r})"
        )
        rows.append(
            [
                d["workload"],
                d["model"],
                d["gpu"],
                d["site"],
                d["placement"],
                d["quantization"],
                d.get("kv_dtype", ""),
                int(d["tp"]),
                int(d["pp"]),
                int(d["replicas"]),
                int(d["gpus"]),
                int(d["batch"]),
                output_tokens.get(str(d["workload"]), 0),
                float(d["capacity_requests_per_s"]),
                float(d["served_requests_per_s"]),
                d.get("procurement") or "",
                d.get("rental_kind") or "",
                Formula(f"=IF({used}=0,0,{supply}*{gp}{r}/{used})"),
            ]
        )
    formats: list[str | None] = (
        [None] * 7 + [INT_FORMAT] * 6 + [NUMBER_FORMAT] * 2 + [None] * 2 + [USD_FORMAT]
    )
    _header_table(ws, tables, 1, DEPLOY_HEADERS, rows, formats, "Deployments")
    _finish(ws, freeze="B2")
    return last


def _ledger(ws: Any, tables: _Tables, data: dict[str, Any]) -> int:
    from openpyxl.formatting.rule import CellIsRule
    from openpyxl.styles import PatternFill

    rows: list[list[Any]] = []
    for k, d in enumerate(data["deployments"]):
        r = k + 2
        rows.append(
            [
                d["workload"],
                d["model"],
                d["gpu"],
                d["site"],
                float(d["memory_per_gpu_gb"]),
                int(d["batch"]),
                float(d["ttft_ms"]),
                float(d["ttft_slo_ms"]),
                Formula(f"=1-G{r}/H{r}"),
                float(d["tpot_ms"]),
                float(d["tpot_slo_ms"]),
                Formula(f"=1-J{r}/K{r}"),
                d.get("limited_by") or "",
            ]
        )
    formats: list[str | None] = (
        [None] * 4
        + [NUMBER_FORMAT, INT_FORMAT]
        + [NUMBER_FORMAT] * 2
        + [PERCENT_FORMAT]
        + [NUMBER_FORMAT] * 2
        + [PERCENT_FORMAT, None]
    )
    last = _header_table(ws, tables, 1, LEDGER_HEADERS, rows, formats, "Ledger")
    red = PatternFill("solid", start_color="F8CBAD", end_color="F8CBAD")
    green = PatternFill("solid", start_color="C6EFCE", end_color="C6EFCE")
    for col in ("I", "L"):
        rng = f"{col}2:{col}{max(last, 2)}"
        ws.conditional_formatting.add(
            rng, CellIsRule(operator="lessThan", formula=[str(SLO_MARGIN_WARN_FRAC)], fill=red)
        )
        ws.conditional_formatting.add(
            rng, CellIsRule(operator="greaterThanOrEqual", formula=[str(SLO_MARGIN_WARN_FRAC)], fill=green)
        )
    _finish(ws, freeze="B2")
    return max(last, 2)


def _alternatives(ws: Any, tables: _Tables, data: dict[str, Any]) -> int:
    rows: list[list[Any]] = []
    for k, a in enumerate(data["alternatives"]):
        r = k + 2
        cost = a.get("total_cost_usd")
        rows.append(
            [
                a["kind"],
                a.get(a["kind"], ""),
                a.get("status", ""),
                cost,
                Formula(f"=D{r}-{TOTAL_NAME}") if cost is not None else None,
                a.get("cost_usd_per_month"),
                a.get("max_tpot_ms"),
                a.get("max_ttft_ms"),
                a.get("lost_because") or "",
            ]
        )
    formats: list[str | None] = [None] * 3 + [USD_FORMAT] * 3 + [NUMBER_FORMAT] * 2 + [None]
    last = _header_table(ws, tables, 1, ALT_HEADERS, rows, formats, "Alternatives")
    _finish(ws, freeze="A2")
    return last


def _constraints(ws: Any, tables: _Tables, data: dict[str, Any]) -> None:
    binding = data["binding_constraints"]
    keys: list[str] = []
    for b in binding:
        keys.extend(k for k in b if k not in keys)
    headers = keys or ["family"]
    rows = [[b.get(k) for k in headers] for b in binding]
    _header_table(ws, tables, 1, headers, rows, [None] * len(headers), "Constraints")
    if not binding:
        _set(ws, 2, 1, "no binding constraint reported")
    _finish(ws, freeze="A2")


def _flatten(value: Any, prefix: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        out: list[tuple[str, Any]] = []
        for k, v in value.items():
            out.extend(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        out = []
        for i, v in enumerate(value):
            out.extend(_flatten(v, f"{prefix}[{i}]"))
        return out
    return [(prefix, value)]


def _inputs(ws: Any, tables: _Tables, scenario: Any) -> None:
    dump = scenario.model_dump(mode="json") if hasattr(scenario, "model_dump") else dict(vars(scenario))
    rows = [[k, v] for k, v in _flatten(dump, "")]
    _header_table(ws, tables, 1, ["Key", "Value"], rows, [None, None], "Inputs")
    _finish(ws, freeze="A2")


def _summary(ws: Any, data: dict[str, Any], deploy_last: int, ledger_last: int, buy_last: int) -> None:
    from openpyxl.styles import Alignment, Font

    _set(ws, 1, 1, "Capacity plan")
    ws["A1"].font = Font(bold=True, size=14)
    rows: list[tuple[str, Any, str | None]] = [
        ("Scenario", data["scenario"], None),
        ("Status", data["status"], None),
        ("Objective", data.get("objective", ""), None),
        ("Recommendation", recommendation_text(data), None),
    ]
    _append(ws, 3, ["Item", "Value"])
    _style_header(ws, 3, 2)
    r = 4
    for label, value, fmt in rows:
        _append(ws, r, [label, value], [None, fmt])
        r += 1
    rec = ws.cell(row=7, column=2)
    rec.alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[7].height = POINTS_PER_LINE * (1 + len(str(rec.value)) // RECOMMENDATION_CHARS_PER_LINE)
    if data["status"] == "infeasible":
        for item in data.get("infeasibility", []):
            _append(ws, r, [f"Infeasible: {item.get('workload')}", item.get("message", "")])
            _append(ws, r + 1, ["Relaxation", item.get("relaxation", "")])
            r += 2
        _finish(ws, freeze="A4")
        ws.column_dimensions["B"].width = MAX_COLUMN_WIDTH * 2
        return
    served = f"Deployments!$O$2:$O${deploy_last}"
    tokens = f"Deployments!$M$2:$M${deploy_last}"
    live: list[tuple[str, Any, str | None]] = [
        ("Horizon (months)", Formula(f"={HORIZON_NAME}"), INT_FORMAT),
        ("Total cost (USD)", Formula(f"={TOTAL_NAME}"), USD_FORMAT),
        ("Opex (USD/month)", Formula(f"={TOTAL_NAME}/{HORIZON_NAME}"), USD_FORMAT),
        (
            "Served output tokens (Mtok/month)",
            Formula(f"=SUMPRODUCT({served},{tokens})*{S_PER_MONTH:.0f}/{TOKENS_PER_MTOK:.0f}"),
            NUMBER_FORMAT,
        ),
        (
            "Cost per million output tokens (USD/Mtok)",
            Formula(f"=IF(B{r + 3}=0,NA(),B{r + 2}/B{r + 3})"),
            USD_FORMAT,
        ),
        ("Min TTFT margin (%)", Formula(f"=MIN(Ledger!$I$2:$I${ledger_last})"), PERCENT_FORMAT),
        ("Min TPOT margin (%)", Formula(f"=MIN(Ledger!$L$2:$L${ledger_last})"), PERCENT_FORMAT),
    ]
    for label, value, fmt in live:
        _append(ws, r, [label, value], [None, fmt])
        r += 1
    r += 1
    _append(ws, r, ["GPU type", "GPUs (peak)"])
    _style_header(ws, r, 2)
    for gpu in sorted({str(s["gpu"]) for s in data["supply"]}):
        r += 1
        _append(
            ws,
            r,
            [gpu, Formula(f'=SUMIFS(BuyVsRent!$H$2:$H${buy_last},BuyVsRent!$A$2:$A${buy_last},"{gpu}")')],
            [None, INT_FORMAT],
        )
    _finish(ws, freeze="A4")
    ws.column_dimensions["B"].width = MAX_COLUMN_WIDTH * 2


def _native_charts(wb: Any, costs: dict[str, Any], alt_last: int) -> None:
    from openpyxl.chart import BarChart, LineChart, Reference

    ws = wb["Costs"]
    bar = BarChart()
    bar.title, bar.y_axis.title = "Cost by category over the horizon", "USD"
    bar.add_data(
        Reference(ws, min_col=2, min_row=costs["cat_row"], max_row=costs["cat_last"]), titles_from_data=True
    )
    bar.set_categories(Reference(ws, min_col=1, min_row=costs["cat_row"] + 1, max_row=costs["cat_last"]))
    bar.width, bar.height = 16, 8
    ws.add_chart(bar, f"D{costs['cat_row']}")
    line = LineChart()
    line.title, line.y_axis.title, line.x_axis.title = "Cumulative cost", "USD", "Month"
    cum = ws[f"{costs['cum_col']}1"].column
    line.add_data(
        Reference(ws, min_col=cum, min_row=1, max_row=costs["last_month_row"]), titles_from_data=True
    )
    line.set_categories(Reference(ws, min_col=1, min_row=2, max_row=costs["last_month_row"]))
    line.width, line.height = 16, 8
    ws.add_chart(line, f"L{costs['cat_row']}")
    if alt_last >= 2:
        _frontier_chart(wb["Alternatives"], alt_last)


def _frontier_chart(ws: Any, last_row: int) -> None:
    """Scatter of total cost (y) vs worst deployed TPOT (x) of the alternatives, one series per kind."""
    from openpyxl.chart import Reference, ScatterChart, Series
    from openpyxl.chart.shapes import GraphicalProperties

    kind_col = 1
    tpot_col = ALT_HEADERS.index("Max TPOT (ms)") + 1
    cost_col = ALT_HEADERS.index("Total cost (USD)") + 1
    # Rows are grouped by kind (gpu, then site): one contiguous series per kind.
    runs: list[tuple[str, int, int]] = []
    for r in range(2, last_row + 1):
        kind = str(ws.cell(row=r, column=kind_col).value)
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1], r)
        else:
            runs.append((kind, r, r))
    chart = ScatterChart()
    chart.title = "Alternatives: total cost vs TPOT"
    chart.x_axis.title, chart.y_axis.title = "Max TPOT (ms)", "Total cost (USD)"
    for k, (kind, first, last) in enumerate(runs):
        series = Series(
            Reference(ws, min_col=cost_col, min_row=first, max_row=last),
            Reference(ws, min_col=tpot_col, min_row=first, max_row=last),
            title=f"best plan per {kind}",
        )
        color = FRONTIER_COLORS[k % len(FRONTIER_COLORS)]
        series.marker.symbol = "circle" if k % 2 == 0 else "square"
        series.marker.size = 8
        series.marker.graphicalProperties = GraphicalProperties(solidFill=color)
        series.marker.graphicalProperties.line.solidFill = color
        series.graphicalProperties.line.noFill = True
        series.smooth = False
        chart.series.append(series)
    # openpyxl hides both axes unless told otherwise (LibreOffice and Excel then draw no scale).
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.width, chart.height = 18, 10
    ws.add_chart(chart, f"A{last_row + 3}")


def plan_data(result: Any) -> dict[str, Any]:
    """``result.to_json()`` plus the scenario's ``period_months`` (to place periods on the calendar)."""
    data = dict(result.to_json())
    period_months = getattr(result.scenario, "period_months", None)
    if "period_months" not in data and isinstance(period_months, int):
        data["period_months"] = period_months
    return data


def build_workbook(result: Any) -> Any:
    """The openpyxl Workbook of ``result`` (a PlanResult or any object with the same ``to_json()``)."""
    from openpyxl import Workbook

    data = plan_data(result)
    wb = Workbook()
    # Files from openpyxl carry no cached values: ask the spreadsheet to compute everything on open.
    wb.calculation.fullCalcOnLoad = True
    sheets = {}
    for i, title in enumerate(SHEETS):
        sheets[title] = wb.active if i == 0 else wb.create_sheet()
        sheets[title].title = sanitize_sheet_title(title)
    tables = _Tables()
    workloads = getattr(result.scenario, "workloads", [])
    output_tokens = {str(w.name): int(w.output_tokens) for w in workloads}
    _inputs(sheets["Inputs"], tables, result.scenario)
    if data["status"] == "infeasible":
        _summary(sheets["Summary"], data, 2, 2, 2)
        for title in SHEETS[1:-1]:
            _set(sheets[title], 1, 1, "No feasible plan.")
        return wb
    lines = _lines(data)
    _assumptions(wb, sheets["Assumptions"], tables, data, lines)
    costs = _costs(wb, sheets["Costs"], tables, data, lines)
    buy_last = _buy_vs_rent(sheets["BuyVsRent"], tables, data, lines, costs)
    deploy_last = _deployments(sheets["Deployments"], tables, data, output_tokens, buy_last)
    ledger_last = _ledger(sheets["Ledger"], tables, data)
    alt_last = _alternatives(sheets["Alternatives"], tables, data)
    _constraints(sheets["Constraints"], tables, data)
    _summary(sheets["Summary"], data, deploy_last, ledger_last, buy_last)
    _native_charts(wb, costs, alt_last)
    return wb


def write_plan_workbook(result: Any, catalog: Any, path: Path) -> None:
    """Write the plan workbook to ``path`` atomically."""
    wb = build_workbook(result)
    atomic_write(path, wb.save)


def write_plan_outputs(result: Any, catalog: Any, *, workbook: Path | None, plots_dir: Path | None) -> None:
    """Write the requested workbook and plot files."""
    if workbook is not None:
        write_plan_workbook(result, catalog, workbook)
    if plots_dir is not None:
        data = plan_data(result)
        if data["status"] == "infeasible":
            return
        write_plan_plots(
            plots_dir,
            categories_usd=category_cost_usd(data),
            monthly_usd=monthly_cost_usd(data),
            alternatives=data["alternatives"],
        )
