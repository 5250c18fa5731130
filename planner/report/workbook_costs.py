"""The plan workbook's money sheets, built from the plan's cost ledger: Assumptions (named unit prices),
Costs (one column per ledger stream, month by month, with the discount factor, cash and present value)
and Supply (one row per supply line, its totals read from Costs).

After a recompute, Costs' Cash column equals CostLedger.cash_flow_usd_per_month, its Present value total
(``Total_cost_usd``) equals PlanResult.total_cost_usd, and the kind totals (``Capex_usd``, ``Rent_usd``,
``Running_usd``, ``Discount_usd``, ``Resale_usd``) equal the ledger's sums per kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner.report.cost_streams import KIND_ORDER, RECURRING_KINDS, CostStreams, Stream, SupplyRow
from planner.report.formatting import INT_FORMAT, NUMBER_FORMAT, PERCENT_FORMAT, USD_FORMAT
from planner.report.xlsx import (
    WIDE_TEXT_CHARS,
    Formula,
    Tables,
    column_of,
    define_name,
    define_named_formula,
    finish_sheet,
    header_table,
    letter,
    set_cell,
    wrap_columns,
    write_note,
)

if TYPE_CHECKING:
    from planner.readout import PlanResult

HORIZON_NAME = "Horizon_months"
RATE_NAME = "Cost_of_capital_frac_per_year"
TOKENS_NAME = "Output_tokens_served"
TOTAL_NAME = "Total_cost_usd"
KIND_NAMES = {kind: f"{kind.capitalize()}_usd" for kind in KIND_ORDER}
"""Defined names of the nominal total of each ledger kind (Capex_usd, Rent_usd, ..., Resale_usd)."""
END_FACTOR = f"(1+{RATE_NAME})^(-{HORIZON_NAME}/12)"
"""Discount factor of the horizon's end, d(H): the resale is discounted from there."""
CASH, PRESENT_VALUE, CUMULATIVE = "Cash (USD)", "Present value (USD)", "Cumulative cash (USD)"
OPEX = "Opex: rent + running + discount (USD)"
"""Costs column: the month's recurring kinds (rent, running, discount), nominal."""
BUSIEST_OPEX_NAME = "Busiest_opex_usd_per_month"
"""Defined name: the largest month of the Opex column, what a monthly opex budget limits (every month)."""
SUPPLY_HEADERS = [
    "GPU",
    "Site",
    "Kind",
    "Procurement",
    "Rental kind",
    "Unit GPUs",
    "Units (peak)",
    "GPUs (peak)",
    "Units bought",
    "Rent or running cost (USD/unit/month)",
    "Capex (USD/node)",
    "Resale (USD/node)",
    "Order month",
    "Delivery month",
    "Capex (USD)",
    "Recurring (USD)",
    "Resale credit (USD)",
    "Cost over horizon (USD, present value)",
    "Average cost (USD/month, present value)",
    "Source",
]
ASSUMPTION_HEADERS = ["Name", "Item", "Value", "Unit", "Source"]


@dataclass(frozen=True)
class CostsLayout:
    """Where the Costs sheet put things (for the Supply, Summary and chart formulas)."""

    stream_col: dict[int, str]
    """Column letter per stream position in CostStreams.streams."""
    last_month_row: int
    total_row: int
    pv_row: int
    cash_col: str
    pv_col: str
    cum_col: str
    procurement_row: int
    procurement_last: int
    units_col: dict[str, str] = field(default_factory=dict)
    """Column letter of each supply line's Units column (by supply id; lines without one are absent)."""


def write_assumptions(wb: Any, ws: Any, tables: Tables, result: PlanResult, model: CostStreams) -> None:
    """Every input of the Costs formulas as a named cell: horizon, cost of capital, output tokens, prices."""
    ledger = result.ledger
    horizon = model.horizon_months
    rate = float(result.scenario.economics.cost_of_capital_frac_per_year)
    rows: list[list[Any]] = [
        [HORIZON_NAME, "Planning horizon", horizon, "months", "scenario"],
        [
            RATE_NAME,
            "Cost of capital: month m is discounted by (1 + rate)^(-m/12), the resale by (1 + rate)^(-horizon/12)",
            rate,
            "fraction/year",
            "scenario economics",
        ],
        [
            TOKENS_NAME,
            "Output tokens served over the horizon (per period: served req/s x output tokens x seconds)",
            ledger.output_tokens if ledger is not None else 0.0,
            "tokens",
            "plan",
        ],
    ]
    formats = [INT_FORMAT, PERCENT_FORMAT, INT_FORMAT]
    for row in model.supplies:
        s = row.line
        what = "rent" if s.procurement == "rent" else "running cost (power, colocation, ops)"
        rows.append(
            [
                row.price_name,
                f"{row.label} ({s.unit_gpus} GPU/unit): {what}",
                s.usd_per_unit_month,
                "USD/unit/month",
                s.source,
            ]
        )
        formats.append(USD_FORMAT)
    for row in model.supplies:
        if not row.bought_units:
            continue
        s = row.line
        rows.append(
            [
                row.capex_name,
                f"{row.label}: purchase price, paid in month {s.purchase_month}",
                row.capex_usd_per_unit,
                "USD/node",
                s.source,
            ]
        )
        rows.append(
            [
                row.resale_name,
                f"{row.label}: resale at the horizon (book value x resale fraction), credited in month {horizon - 1}",
                row.resale_usd_per_unit,
                "USD/node",
                "plan",
            ]
        )
        formats += [USD_FORMAT, USD_FORMAT]
    first = 3
    last = header_table(ws, tables, first, ASSUMPTION_HEADERS, rows, [None] * 5, "Assumptions")
    for row_i, fmt in zip(range(first + 1, last + 1), formats, strict=True):
        ws.cell(row=row_i, column=3).number_format = fmt
        define_name(wb, str(ws.cell(row=row_i, column=1).value), ws.title, f"C{row_i}")
    wrap_columns(ws, ["B", "E"], first + 1, last)
    # Name stays in view, and prints on every page: Value, Unit and Source printed on a page without it
    finish_sheet(ws, freeze=f"B{first + 1}", widths={"B": WIDE_TEXT_CHARS, "E": WIDE_TEXT_CHARS})
    set_cell(ws, 1, 1, "Assumptions: every input of the cost formulas. Edit a Value and every total updates.")


def units_header(row: SupplyRow) -> str:
    """The Costs sheet's units column of a supply line, with what one unit is: "Units 3: h200_sxm @ dc1 buy
    (8-GPU nodes)", "Units 1: mi300x @ us_east rent_on_demand (GPUs)" (a bare "Units" read as GPUs, and a
    rented 8-GPU node is 1)."""
    s = row.line
    if s.unit_gpus == 1:
        what = "GPUs"
    else:
        what = f"{s.unit_gpus:g}-GPU {'instances' if s.procurement == 'rent' else 'nodes'}"
    return f"Units {row.label} ({what})"


def _supply_ref(row: SupplyRow, header: str) -> str:
    return f"Supply!${column_of(SUPPLY_HEADERS, header)}${row.index + 1}"


def _stream_cell(stream: Stream, m: int, r: int, units_col: dict[str, str]) -> Any:
    """Month ``m``'s cell of ``stream`` (sheet row ``r``): a formula over the prices, or the ledger's value."""
    row = stream.supply
    if not stream.live or row is None:
        return stream.usd_by_month[m]
    if stream.kind in ("rent", "running"):
        return Formula(f"={units_col[row.line.id]}{r}*{row.price_name}")
    if not stream.usd_by_month[m]:
        return 0
    sign, name = ("", row.capex_name) if stream.kind == "capex" else ("-", row.resale_name)
    return Formula(f"={sign}{_supply_ref(row, 'Units bought')}*{name}")


def write_costs(wb: Any, ws: Any, tables: Tables, model: CostStreams) -> CostsLayout:
    """Month rows: discount factor, units, one column per ledger stream, cash, present value, cumulative."""
    months = model.months  # the horizon, and the months a reservation's term is paid past it
    units_rows = model.recurring
    streams = model.streams
    units_col = {row.line.id: letter(3 + k) for k, row in enumerate(units_rows)}
    first_stream = 3 + len(units_rows)
    stream_col = {k: letter(first_stream + k) for k in range(len(streams))}
    cash_col, pv_col, cum_col, opex_col = (letter(first_stream + len(streams) + k) for k in range(4))
    recurring = [k for k, s in enumerate(streams) if s.kind in RECURRING_KINDS]
    headers = (
        ["Month", "Discount factor"]
        + [units_header(row) for row in units_rows]
        + [s.header for s in streams]
        + [CASH, PRESENT_VALUE, CUMULATIVE, OPEX]
    )
    resale = [k for k, s in enumerate(streams) if s.kind == "resale"]
    rows: list[list[Any]] = []
    for m in range(months):
        r = m + 2
        cells = [_stream_cell(s, m, r, units_col) for s in streams]
        cash = Formula(f"=SUM({stream_col[0]}{r}:{stream_col[len(streams) - 1]}{r})") if streams else 0
        pv = f"={cash_col}{r}*B{r}"
        credits = [f"{stream_col[k]}{r}" for k in resale if streams[k].usd_by_month[m]]
        if credits:
            pv += f"+({'+'.join(credits)})*({END_FACTOR}-B{r})"
        cum = f"={cash_col}{r}" if m == 0 else f"={cum_col}{r - 1}+{cash_col}{r}"
        rows.append(
            [
                m,
                Formula(f"=(1+{RATE_NAME})^(-A{r}/12)"),
                *(row.units_by_month[m] for row in units_rows),
                *cells,
                cash,
                Formula(pv),
                Formula(cum),
                _sum([f"{stream_col[k]}{r}" for k in recurring]),
            ]
        )
    unit_formats = [
        INT_FORMAT if all(float(u).is_integer() for u in row.units_by_month) else NUMBER_FORMAT
        for row in units_rows
    ]
    formats = [INT_FORMAT, "0.0000", *unit_formats] + [USD_FORMAT] * (len(streams) + 4)
    last = header_table(ws, tables, 1, headers, rows, formats, "Costs")
    total_row, pv_row = last + 1, last + 2
    set_cell(ws, total_row, 1, "Total (USD)")
    set_cell(ws, pv_row, 1, "Present value (USD)")
    for k, s in enumerate(streams):
        col = stream_col[k]
        span = f"{col}2:{col}{last}"
        set_cell(ws, total_row, first_stream + k, Formula(f"=SUM({span})"), USD_FORMAT)
        pv = f"=SUM({span})*{END_FACTOR}" if s.kind == "resale" else f"=SUMPRODUCT({span},$B$2:$B${last})"
        set_cell(ws, pv_row, first_stream + k, Formula(pv), USD_FORMAT)
    for col in (cash_col, pv_col):
        set_cell(ws, total_row, ws[f"{col}1"].column, Formula(f"=SUM({col}2:{col}{last})"), USD_FORMAT)
    define_name(wb, TOTAL_NAME, ws.title, f"{pv_col}{total_row}")
    define_named_formula(wb, BUSIEST_OPEX_NAME, f"MAX('{ws.title}'!${opex_col}$2:${opex_col}${last})")
    layout_rows = _kind_and_procurement_tables(wb, ws, tables, model, stream_col, total_row, pv_row)
    finish_sheet(ws, freeze="C2")
    return CostsLayout(
        stream_col, last, total_row, pv_row, cash_col, pv_col, cum_col, *layout_rows, units_col=units_col
    )


def _sum(cells: list[str]) -> Formula | int:
    return Formula("=" + "+".join(cells)) if cells else 0


def _kind_and_procurement_tables(
    wb: Any,
    ws: Any,
    tables: Tables,
    model: CostStreams,
    stream_col: dict[int, str],
    total_row: int,
    pv_row: int,
) -> tuple[int, int]:
    """Totals by ledger kind (nominal and present value; named for the Summary) and present value by
    procurement (charted). Returns the procurement table's header and last rows."""
    streams = model.streams
    kind_row = pv_row + 2
    rows: list[list[Any]] = []
    for kind in KIND_ORDER:
        ks = [k for k, s in enumerate(streams) if s.kind == kind]
        rows.append(
            [
                kind,
                _sum([f"{stream_col[k]}{total_row}" for k in ks]),
                _sum([f"{stream_col[k]}{pv_row}" for k in ks]),
            ]
        )
    last = header_table(
        ws,
        tables,
        kind_row,
        ["Kind", "Nominal (USD)", "Present value (USD)"],
        rows,
        [None, USD_FORMAT, USD_FORMAT],
        "CostByKind",
    )
    for i, kind in enumerate(KIND_ORDER, start=1):
        define_name(wb, KIND_NAMES[kind], ws.title, f"B{kind_row + i}")
    set_cell(ws, last + 1, 1, "Total")
    for col in ("B", "C"):
        set_cell(
            ws, last + 1, ws[f"{col}1"].column, Formula(f"=SUM({col}{kind_row + 1}:{col}{last})"), USD_FORMAT
        )
    proc_row = last + 3
    procurements = list(dict.fromkeys(s.procurement for s in streams))
    proc_rows = [
        [p, _sum([f"{stream_col[k]}{pv_row}" for k, s in enumerate(streams) if s.procurement == p])]
        for p in procurements
    ]
    proc_last = header_table(
        ws,
        tables,
        proc_row,
        ["Procurement", "Cost over horizon (USD, present value)"],
        proc_rows,
        [None, USD_FORMAT],
        "CostByProcurement",
    )
    return proc_row, proc_last


def write_supply(ws: Any, tables: Tables, model: CostStreams, layout: CostsLayout) -> int:
    """One row per supply line: units, unit prices (named), and its totals read from the Costs sheet."""
    position = {id(s): k for k, s in enumerate(model.streams)}
    rows: list[list[Any]] = []
    for row in model.supplies:
        r, s = row.index + 1, row.line
        own = model.of_supply(row)

        def cells(kinds: tuple[str, ...], at: int, own: list[Stream] = own) -> list[str]:
            return [f"Costs!{layout.stream_col[position[id(x)]]}{at}" for x in own if x.kind in kinds]

        capex = cells(("capex",), layout.total_row)
        resale = cells(("resale",), layout.total_row)
        rows.append(
            [
                s.gpu,
                s.site,
                s.kind,
                s.procurement,
                s.rental_kind or "",
                s.unit_gpus,
                s.units,
                Formula(f"=F{r}*G{r}"),
                row.bought_units,
                Formula(f"={row.price_name}"),
                Formula(f"={row.capex_name}") if row.bought_units else 0,
                Formula(f"={row.resale_name}") if row.bought_units else 0,
                s.purchase_month if s.purchase_month is not None else "",
                row.line.delivery_month if row.bought_units else "",
                _sum(capex),
                _sum(cells(RECURRING_KINDS, layout.total_row)),
                Formula("=-(" + "+".join(resale) + ")") if resale else 0,
                _sum(cells(KIND_ORDER, layout.pv_row)),
                Formula(
                    f"={column_of(SUPPLY_HEADERS, 'Cost over horizon (USD, present value)')}{r}/{HORIZON_NAME}"
                ),
                s.source,
            ]
        )
    formats = (
        [None] * 5
        + [INT_FORMAT] * 4
        + [USD_FORMAT] * 3
        + [INT_FORMAT, INT_FORMAT]
        + [USD_FORMAT] * 5
        + [None]
    )
    last = header_table(ws, tables, 1, SUPPLY_HEADERS, rows, formats, "Supply")
    source = column_of(SUPPLY_HEADERS, "Source")
    wrap_columns(ws, [source], 2, last)
    finish_sheet(ws, freeze="C2", widths={source: WIDE_TEXT_CHARS})
    # Written after the widths are set so the note spills over instead of widening column A.
    write_note(
        ws,
        last + 2,
        "Capex is paid in the order month; bought nodes run (power, colocation, ops) from delivery and are resold "
        "at book value x resale fraction in the horizon's last month. Only the procurement options of the scenario "
        "were priced: `planner compare -o` prices buy-only, rent-only and hybrid side by side.",
        past_repeated=True,  # from column A it printed again, cut, on the sheet's later pages
    )
    return max(last, 2)
