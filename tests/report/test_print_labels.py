"""Printed pages a reader can follow: a sheet wider than a page repeats its label columns on every page
(buy_vs_rent printed the Alternatives' "Lost because" and the Assumptions' Value / Unit / Source on pages
without the option or the name they belong to), and text never touches the number before it ("0.50 1" for a
0.50 GPU share next to 1 instance GPU, "$9,316.62buy node", "4optimal")."""

from __future__ import annotations

import dataclasses

from planner.readout.sweep import SweepResult, SweepRow
from planner.report.sweep_workbook import KEY_VALUE_HEADER, ROW_HEADERS, build_sweep_workbook
from planner.report.workbook import build_workbook
from planner.report.workbook_costs import SUPPLY_HEADERS
from planner.report.workbook_tables import DEPLOY_HEADERS
from planner.report.xlsx import TEXT_INDENT
from tests.report import synthetic_plan as syn


def test_wide_sheets_repeat_their_label_columns_on_every_printed_page() -> None:
    wb = build_workbook(syn.plan_result())
    alternatives, assumptions = wb["Alternatives"], wb["Assumptions"]
    assert alternatives.page_setup.fitToWidth == 2 and alternatives.freeze_panes == "C2"
    assert alternatives.print_title_cols == "$A:$B"  # Kind, Option
    assert assumptions.page_setup.fitToWidth == 2 and assumptions.freeze_panes == "B4"
    assert assumptions.print_title_cols == "$A:$A"  # Name
    assert assumptions.print_title_rows == "$1:$3"  # title and header


def test_text_cells_are_indented_numbers_are_not() -> None:
    shared = dataclasses.replace(syn.DEPLOYMENTS[0], gpu_share_frac=0.5, instance_gpus=[1])
    wb = build_workbook(syn.plan_result(deployments=[shared, *syn.DEPLOYMENTS[1:]]))
    dep = wb["Deployments"]
    share = dep.cell(row=2, column=DEPLOY_HEADERS.index("GPU share per replica") + 1)
    instance = dep.cell(row=2, column=DEPLOY_HEADERS.index("Instance GPUs") + 1)
    assert (share.value, instance.value) == (0.5, "1")
    assert not share.alignment.indent
    assert (instance.alignment.horizontal, instance.alignment.indent) == ("left", TEXT_INDENT)
    # wrapped and centred columns keep their alignment
    why = dep.cell(row=2, column=DEPLOY_HEADERS.index("Optimizations: why (card 3)") + 1)
    assert why.alignment.wrap_text and why.alignment.indent == TEXT_INDENT
    assert dep.cell(row=2, column=DEPLOY_HEADERS.index("TP") + 1).alignment.horizontal == "center"
    supply = wb["Supply"]
    source = supply.cell(row=2, column=SUPPLY_HEADERS.index("Source") + 1)
    assert source.alignment.wrap_text and source.alignment.indent == TEXT_INDENT


def _sweep() -> SweepResult:
    row = {
        "index": 0,
        "key": "economics.rent_price_scale=0.7",
        "values": {"economics.rent_price_scale": 0.7},
        "status": "optimal",
        "gap": None,
        "total_cost_usd": 97_615.0,
        "capex_usd": 0.0,
        "opex_usd_per_month": 2_712.0,
        "cost_usd_per_million_output_tokens": 0.87,
        "gpus_by_type": {"h100_sxm": 2},
        "choices": [],
        "binding_constraints": ["demand_coverage:chat/0"],
        "error": None,
        "solve_seconds": 0.02,
    }
    return SweepResult("s", ["economics.rent_price_scale"], "grid", "local", [SweepRow.from_json(row)], 0.1)


def test_sweep_headers_carry_units_and_the_key_table_reads_value() -> None:
    wb = build_sweep_workbook(_sweep())
    headers = [c.value for c in wb["Sweep"][3]]
    assert "optimality gap (%)" in headers and "cost per million output tokens (USD/Mtok)" in headers
    assert headers[2:] == list(ROW_HEADERS[1:])
    ws = wb["By key"]
    key_header = next(row for row in ws.iter_rows() if row[0].value == KEY_VALUE_HEADER)
    assert [c.value for c in key_header[:5]] == [
        "value",
        "variants",
        "with a plan",
        "lowest total cost (USD)",
        "highest total cost (USD)",
    ]
    assert ws.cell(row=key_header[0].row - 1, column=1).value == "Total cost by economics.rent_price_scale"
    assert ws.cell(row=key_header[0].row + 1, column=1).value == 0.7


def test_costs_charts_sit_below_the_tables_on_a_page_of_their_own() -> None:
    """Beside the kind table (column E) a page break between columns cut the charts in two on a sheet with
    many supply columns (chat_p99_redundant printed "Cost over the hori" on one page)."""
    ws = build_workbook(syn.plan_result())["Costs"]
    procurement = next(r for r in ws.iter_rows() if r[0].value == "Procurement")[0].row
    last = procurement + 2  # header, then rent and buy
    assert [ws.cell(row=r, column=1).value for r in (last - 1, last)] == ["rent", "buy"]
    # column A, two rows below the table, then 17 rows further down
    assert [c.anchor for c in ws._charts] == [f"A{last + 3}", f"A{last + 3 + 17}"]
    assert [b.id for b in ws.row_breaks.brk] == [last + 1]


def test_the_frontier_chart_prints_on_a_page_of_its_own() -> None:
    """On the same page rows as the table, the Alternatives chart printed again on the page of the table's last
    columns, clipped at the edge of the repeated Kind and Option columns ("Alte": buy_vs_rent, LibreOffice →
    PDF); below a row break it prints whole, once."""
    ws = build_workbook(syn.plan_result())["Alternatives"]
    last = max(r[0].row for r in ws.iter_rows() if r[0].value in ("gpu", "site"))
    assert ws.print_title_cols == "$A:$B"
    assert [c.anchor for c in ws._charts] == [f"A{last + 3}"]
    assert [b.id for b in ws.row_breaks.brk] == [last + 1]


def test_the_idle_table_indents_its_text() -> None:
    """The paid-but-idle table is written after the Supply sheet's text was indented: its right-aligned period
    ran into its left-aligned months ("0 2" printed "02", "10 30-32" as "1030-32")."""
    from planner.report.workbook_idle import IDLE_HEADERS

    ws = build_workbook(syn.plan_result())["Supply"]
    header = next(r for r in ws.iter_rows() if [c.value for c in r[: len(IDLE_HEADERS)]] == IDLE_HEADERS)[0].row
    rows = [[ws.cell(row=r, column=c) for c in range(1, 8)] for r in range(header + 1, header + 5)]
    assert [[c.value for c in row[:4]] for row in rows] == [
        ["h100_sxm", "us_west", 1, "2-3"], ["h200_sxm", "dc1", 0, "1"], ["h200_sxm", "dc1", 1, "2-3"],
        ["h200_sxm", "dc1", 2, "4-5"],
    ]
    for row in rows:
        gpu, site, _period, months = row[:4]
        assert [(c.alignment.horizontal, c.alignment.indent) for c in (gpu, site, months)] == [("left", TEXT_INDENT)] * 3


def test_constraint_keys_read_as_the_terminal_and_html_write_them() -> None:
    """The Constraints sheet wrote a key as a list cell ("mi300x, us_east, 0") under lowercase JSON field names,
    where the terminal and the HTML write "mi300x/us_east/0" under Family / Key."""
    from planner.report.formatting import binding_rows

    result = syn.plan_result()
    ws = build_workbook(result)["Constraints"]
    rows = [[c.value for c in r] for r in ws.iter_rows()]
    assert rows[0] == ["Family", "Key", "Slack", "Periods"]  # Periods: planner.report.binding_periods
    assert [r[:3] for r in rows[1:]] == [
        [b["family"], "/".join(b["key"]), b["slack"]] for b in result.binding_constraints
    ]
    assert rows[1][:2] == ["gpu_supply", "mi300x/us_east/0"] == list(binding_rows(result.binding_constraints)[0])
