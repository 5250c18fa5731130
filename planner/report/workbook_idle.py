"""The plan workbook's paid-but-idle GPUs (on the Supply sheet, and in the HTML report): per GPU type, site
and period, the GPUs paid for against the GPUs the deployments use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.readout.gpu_use import MIN_GPUS, site_months
from planner.report.cost_streams import as_count
from planner.report.formatting import INT_FORMAT, NUMBER_FORMAT, number_runs_text
from planner.report.xlsx import TEXT_INDENT, Tables, first_free_column, header_table, set_cell

if TYPE_CHECKING:
    from planner.readout import PlanResult

IDLE_HEADERS = ["GPU", "Site", "Period", "Months", "Paid GPUs", "Used GPUs", "Idle GPUs"]
IDLE_TITLE = "Paid but idle GPUs (whole nodes rented or bought; periods and months from 0)"


def idle_gpus(result: PlanResult) -> list[list[Any]]:
    """Per GPU type, site and period: GPUs paid for (supply units × GPUs per unit, whole rented or bought
    nodes, busiest hour block) vs GPUs the deployments use (replicas × TP × PP); rows where some are idle.
    A bought node counts from the month the ledger starts paying its running cost (SupplyLine.units_per_month):
    delivered in a period's last month, it is paid and idle there before it serves from the next period. Paid
    is the period's busiest month; the Months column names the months with idle GPUs. The counts are the
    readout's per month (planner.readout.gpu_use.site_months), as the Summary's explanation reads them."""
    table = site_months(result)
    months_of: dict[int, list[int]] = {}
    for m, t in enumerate(table.period_of):  # the readout's month → period map, inverted
        months_of.setdefault(t, []).append(m)
    rows = []
    for key in sorted(table.paid):
        for t, months in sorted(months_of.items()):
            paid = [table.paid[key][m] for m in months]
            in_use = table.running[key][months[0]]  # replicas are per period: the same in each of its months
            idle_months = [m for m, gpus in zip(months, paid, strict=True) if gpus - in_use >= MIN_GPUS]
            if idle_months:
                most = max(paid)
                rows.append([*key, t, _runs_text(idle_months), _gpus(most), _gpus(in_use), _gpus(most - in_use)])
    return rows


def _runs_text(months: list[int]) -> str:
    """Months (from 0) as runs, "12-14" or "3" (a period number alone does not say when the GPUs sit idle)."""
    return number_runs_text(months).replace("–", "-")


def _gpus(value: float) -> float | int:
    """A GPU count: an int when whole, else rounded to 1/100 (shares are 1/2, 1/4 …)."""
    return as_count(round(value, 2))


IDLE_NONE = "none: every GPU paid for runs a replica"


def write_idle(ws: Any, tables: Tables, result: PlanResult, row: int) -> int:
    """The paid-but-idle GPUs table (see :func:`idle_gpus`) from ``row``; returns the last row written."""
    from openpyxl.styles import Alignment

    rows = idle_gpus(result)
    # the title right of the columns every printed page repeats: from column A it printed again, cut at
    # their edge, on the sheet's later pages ("Paid but idle GPUs (whole n")
    column = first_free_column(ws)
    set_cell(ws, row, column, IDLE_TITLE)
    if not rows:  # under the title, for the same reason (it printed again on page 2: "none: every GPU paid for r")
        set_cell(ws, row + 1, column, IDLE_NONE)
        return row + 1
    formats: list[str | None] = [None, None, INT_FORMAT, None, NUMBER_FORMAT, NUMBER_FORMAT, NUMBER_FORMAT]
    last = header_table(ws, tables, row + 1, IDLE_HEADERS, rows, formats, "IdleGPUs")
    for r, values in enumerate(rows, start=row + 2):  # whole GPU counts read "8", shares "1.50"
        for col, value in enumerate(values[4:], start=5):
            if isinstance(value, int):
                ws.cell(row=r, column=col).number_format = INT_FORMAT
        for col, value in enumerate(values, start=1):  # written after finish_sheet indented the sheet's text:
            if isinstance(value, str):  # the period ran into its months ("0 2" printed "02", "4 12-14")
                ws.cell(row=r, column=col).alignment = Alignment(horizontal="left", indent=TEXT_INDENT)
    return last
