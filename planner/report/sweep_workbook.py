"""The sweep workbook: a Sweep sheet with one row per variant and, per varied key, a table and a chart.

Reads only the typed :class:`planner.readout.sweep.SweepResult`: every money cell is a row's figure, which
that variant's plan read from its cost ledger. The per-key tables select (min and max over the variants
that share the key's value) — they compute no new money figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.report.files import write_workbook
from planner.report.formatting import INT_FORMAT, NUMBER_FORMAT, PERCENT_FORMAT, USD_FORMAT, USD_WHOLE_FORMAT
from planner.report.xlsx import (
    Tables,
    finish_sheet,
    first_free_column,
    header_table,
    letter,
    set_cell,
    wrap_columns,
    write_note,
)

if TYPE_CHECKING:
    from planner.readout.sweep import SweepResult, SweepRow

SHEET = "Sweep"
KEY_SHEET = "By key"
GPUS_HEADER = "GPUs serving at once, by type (busiest period; whole rented instances may add idle GPUs)"
"""The row's gpus_by_type: the GPUs the deployments run on, not the GPUs paid (6 mi300x serve from one
8-GPU instance whose 8 GPUs the total cost pays; the header said "GPUs by type")."""
ROW_HEADERS = (
    "variant",
    "status",
    "optimality gap (%)",
    "total cost (USD, PV)",
    "capex (USD)",
    "opex (USD/month)",
    "cost per million output tokens (USD/Mtok)",
    GPUS_HEADER,
    "GPU / TP / quant per workload",
    "binding constraints",
    "error or infeasibility",
    "warnings",
    "solve (s)",
)
ROW_FORMATS = (
    INT_FORMAT,
    None,
    PERCENT_FORMAT,
    USD_WHOLE_FORMAT,
    USD_WHOLE_FORMAT,
    USD_WHOLE_FORMAT,
    USD_FORMAT,
)
KEY_VALUE_HEADER = "value"
"""First header of a per-key table (its title names the key)."""
KEY_HEADERS = ("variants", "with a plan", "lowest total cost (USD)", "highest total cost (USD)")
CHART_ROWS = 16
"""Sheet rows a per-key chart (7.5 cm high) covers."""
MIN_PATH_WIDTH, MAX_PATH_WIDTH = 10, 40
"""Characters of a varied key's column: its dotted path on one line (``economics.rent_price_scale``)."""
WRAPPED_WIDTHS = {
    "GPU / TP / quant per workload": 60,
    "binding constraints": 50,
    "error or infeasibility": 60,
    "warnings": 60,
}
"""Characters of the row columns whose long text wraps (each deployment of a variant is listed; an
infeasibility's cause is a sentence: unwrapped, buy_vs_rent's procurement=buy variant printed "chat: nothing
bought arrives before month 2 (purchase lead time 2 month" and lost the rest at the column's edge)."""


def _cell_value(value: Any) -> Any:
    """A varied value as a cell: numbers stay numbers, lists read ``a+b``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        from planner.readout.sweep import format_value

        return format_value(value)
    return value


def _row(r: SweepRow, paths: list[str]) -> list[Any]:
    from planner.readout.sweep import format_gpus

    return [
        r.index,
        *(_cell_value(r.values[p]) for p in paths),
        r.status,
        r.gap,
        r.total_cost_usd,
        r.capex_usd,
        r.opex_usd_per_month,
        r.cost_usd_per_million_output_tokens,
        format_gpus(r.gpus_by_type),
        "; ".join(f"{c.workload}: {c.label}" for c in r.choices),
        ", ".join(r.binding_constraints[:6]) + (" ..." if len(r.binding_constraints) > 6 else ""),
        r.error or "",
        "; ".join(r.warnings),
        round(r.solve_seconds, 3),
    ]


SERVED_HEADERS = ("served (req/s)", "served (x stated demand)")
"""Columns added after the others when the sweep's plans are max_throughput ones (their answer)."""


def _served(r: SweepRow) -> list[Any]:
    return [r.served_requests_per_s, r.served_scale]


@dataclass(frozen=True)
class KeySummary:
    """One value of a varied key: how many variants have it, how many found a plan, their cost range."""

    value: Any
    variants: int
    feasible: int
    lowest_usd: float | None
    highest_usd: float | None


def key_summary(result: SweepResult, path: str) -> list[KeySummary]:
    """Per distinct value of ``path`` (first-seen order): variants, plans found, lowest/highest total cost."""
    from planner.readout.sweep import format_value

    groups: dict[str, list[SweepRow]] = {}
    firsts: dict[str, Any] = {}
    for r in result.rows:
        label = format_value(r.values[path])
        groups.setdefault(label, []).append(r)
        firsts.setdefault(label, r.values[path])
    out = []
    for label, rows in groups.items():
        costs = [r.total_cost_usd for r in rows if r.total_cost_usd is not None]
        out.append(
            KeySummary(
                firsts[label],
                len(rows),
                len(costs),
                min(costs) if costs else None,
                max(costs) if costs else None,
            )
        )
    return out


MARKERS = (("circle", 8), ("square", 5))
"""Marker (symbol, size) of the By key charts' lowest and highest total cost series."""


def _key_chart(ws: Any, path: str, header_row: int, last_row: int, anchor: str) -> None:
    from openpyxl.chart import LineChart, Reference

    chart = LineChart()
    chart.title = f"Total cost by {path}"
    chart.y_axis.title, chart.x_axis.title = "USD (present value)", path
    chart.add_data(
        Reference(ws, min_col=4, max_col=5, min_row=header_row, max_row=last_row), titles_from_data=True
    )
    chart.set_categories(Reference(ws, min_col=1, min_row=header_row + 1, max_row=last_row))
    # markers: a value with a plan between values without one (or a key with one value) is a single point,
    # which a line alone never draws; the highest's smaller square shows inside the lowest's circle when equal
    for series, (symbol, size) in zip(chart.series, MARKERS, strict=False):
        series.smooth = False
        series.marker.symbol, series.marker.size = symbol, size
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.width, chart.height = 16, 7.5
    ws.add_chart(chart, anchor)


def build_sweep_workbook(result: SweepResult) -> Any:
    """The openpyxl Workbook of a sweep: the rows (Sweep) and, per varied key, a table and chart of the total
    cost by its value (By key)."""
    from openpyxl import Workbook
    from openpyxl.styles import Font
    from openpyxl.worksheet.pagebreak import Break

    wb = Workbook()
    ws = wb.active
    ws.title = SHEET
    tables = Tables()
    paths = list(result.paths)
    served = any(r.served_scale is not None for r in result.rows)
    headers = [ROW_HEADERS[0], *paths, *ROW_HEADERS[1:], *(SERVED_HEADERS if served else ())]
    formats = [ROW_FORMATS[0], *([None] * len(paths)), *ROW_FORMATS[1:], *([None] * (len(ROW_HEADERS) - len(ROW_FORMATS)))]
    formats += [NUMBER_FORMAT, NUMBER_FORMAT] if served else []
    body = [_row(r, paths) + (_served(r) if served else []) for r in result.rows]
    last = header_table(ws, tables, 3, headers, body, formats, "sweep_rows")
    wrapped = {letter(headers.index(h) + 1): width for h, width in WRAPPED_WIDTHS.items()}
    wrap_columns(ws, list(wrapped), 4, last)  # the choices and binding constraints wrap within their columns
    by_key = wb.create_sheet(KEY_SHEET)
    by_key["A1"] = f"Total cost by the value of each varied key: {result.scenario}"
    by_key["A1"].font = Font(bold=True, size=14)
    # a sheet of their own: on the Sweep sheet, under the rows' header that every printed page repeats, a key
    # table printed "status" and "optimality gap" over its variant counts
    row = 1
    for k, path in enumerate(paths):
        summary = key_summary(result, path)
        start = row + 2
        if k:  # each key's table and chart on a printed page of their own (the chart printed apart from it)
            by_key.row_breaks.append(Break(id=start - 1))
        set_cell(by_key, start, 1, f"Total cost by {path}").font = Font(bold=True)
        body = [[_cell_value(s.value), s.variants, s.feasible, s.lowest_usd, s.highest_usd] for s in summary]
        fmts = [None, INT_FORMAT, INT_FORMAT, USD_WHOLE_FORMAT, USD_WHOLE_FORMAT]
        # the path is the title above: as the header it wrapped to four lines in the narrow first column
        key_headers = [KEY_VALUE_HEADER, *KEY_HEADERS]
        end = header_table(by_key, tables, start + 1, key_headers, body, fmts, f"sweep_key_{k + 1}")
        # below its table, within the first columns: a chart beside it crossed the printed page's edge
        _key_chart(by_key, path, start + 1, end, f"A{end + 2}")
        row = end + 2 + CHART_ROWS
    labels = [str(_cell_value(r.values[p])) for r in result.rows for p in paths]
    finish_sheet(by_key, freeze="A2", widths={"A": max(12, min(40, max(map(len, labels), default=0) + 2))})
    widths = {"A": max(10, min(40, max(map(len, labels), default=0) + 2))}
    widths.update(wrapped)
    for k, path in enumerate(paths):  # a dotted path has no space to wrap at: it broke mid-word in print
        widths[letter(k + 2)] = max(MIN_PATH_WIDTH, min(MAX_PATH_WIDTH, len(path) + 2))
    finish_sheet(ws, freeze="B4", widths=widths)
    # title and note right of the variant column, which every printed page repeats: from column A they printed
    # again on page 2, clipped to its width ("Sweep c", "Each row i")
    title = f"Sweep of {result.scenario}: {len(result.rows)} variants ({result.mode}) on {result.engine}"
    set_cell(ws, 1, first_free_column(ws), title).font = Font(bold=True, size=14)
    write_note(
        ws,
        last + 2,
        "Each row is one plan of the variant (no alternatives); its money figures are that plan's cost ledger's. "
        f"Sheet {KEY_SHEET}: per key, the lowest and highest total cost over the variants with that value.",
        past_repeated=True,
    )
    return wb


def write_sweep_workbook(result: SweepResult, path: Path) -> None:
    """Write the sweep workbook to ``path`` atomically."""
    write_workbook(path, build_sweep_workbook(result))
