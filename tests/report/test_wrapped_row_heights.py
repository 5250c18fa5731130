"""Rows with wrapped text are as tall as their words wrap, not as their length ÷ the column's width.

`planner sweep examples/buy_vs_rent/scenario.yaml --vary economics.rent_price_scale=0.7,1,1.3 --vary
workloads.chat.requests_per_s=4,8 -o sweep.xlsx`: the binding constraints of variant 3, 130 characters in the
50-character column, print on 4 lines (each constraint is one long word), but the row was 3 lines (45 pt)
high, so "gpu_supply:h100_sxm/us_east/0, 10–11" was cut off under the next row (LibreOffice → PDF).
"""

from __future__ import annotations

from typing import Any

from planner.readout.sweep import SweepResult, SweepRow
from planner.report.sweep_workbook import build_sweep_workbook
from planner.report.xlsx import POINTS_PER_LINE, wrapped_lines

BINDING = [
    "demand_coverage:chat/0–11",
    "gpu_supply:bought/h100_sxm/dc1/1–11",
    "gpu_supply:h100_sxm/dc1/6–11",
    "gpu_supply:h100_sxm/us_east/0, 10–11",
]


def _sweep_cell(path: str, row: SweepRow, header: str) -> tuple[Any, Any]:
    """The Sweep sheet of a one-variant sweep varying ``path``, and the cell of its column ``header``."""
    ws = build_sweep_workbook(
        SweepResult("buy-vs-rent-70b", [path], "grid", "local processes (1)", [row], 1.0)
    )["Sweep"]
    headers = [c.value for c in ws[3]]
    return ws, ws.cell(row=4, column=headers.index(header) + 1)


def test_wrapped_lines_wraps_whole_words() -> None:
    text = ", ".join(BINDING)
    assert len(text) == 130
    assert wrapped_lines(text, 45) == 4  # length ÷ line said 3
    assert wrapped_lines("short text", 45) == 1
    assert wrapped_lines("abc def", 7) == 1 and wrapped_lines("abc defg", 7) == 2
    assert wrapped_lines("x" * 100, 45) == 3  # a word longer than a line wraps inside itself
    assert wrapped_lines("first\nsecond", 45) == 2


def test_a_sweep_row_is_as_tall_as_its_binding_constraints_wrap() -> None:
    path = "economics.rent_price_scale"
    row = SweepRow.from_json(
        {
            "index": 0,
            "key": f"{path}=1",
            "values": {path: 1},
            "status": "optimal",
            "gap": None,
            "total_cost_usd": 381_881.64,
            "capex_usd": 325_000.0,
            "opex_usd_per_month": 2_708.52,
            "cost_usd_per_million_output_tokens": 0.97,
            "gpus_by_type": {"h100_sxm": 10},
            "choices": [],
            "binding_constraints": BINDING,
            "error": None,
            "solve_seconds": 0.5,
        }
    )
    ws, cell = _sweep_cell(path, row, "binding constraints")
    assert cell.value == ", ".join(BINDING)
    assert cell.alignment.wrap_text
    assert ws.row_dimensions[4].height == 4 * POINTS_PER_LINE


def test_an_infeasible_variant_prints_its_whole_cause() -> None:
    """`planner sweep examples/buy_vs_rent/scenario.yaml --vary procurement=buy,rent -o sweep.xlsx`: the buy
    variant's cause, 114 characters in the 60-character "error or infeasibility" column, was not wrapped and
    printed as "chat: nothing bought arrives before month 2 (purchase lead time 2 month"."""
    path = "procurement"
    cause = (
        "chat: nothing bought arrives before month 2 (purchase lead time 2 months), so its demand before month 2 "
        "cannot be served"
    )
    row = SweepRow.from_json(
        {
            "index": 0,
            "key": f"{path}=buy",
            "values": {path: ["buy"]},
            "status": "infeasible",
            "gap": None,
            "total_cost_usd": None,
            "capex_usd": None,
            "opex_usd_per_month": None,
            "cost_usd_per_million_output_tokens": None,
            "gpus_by_type": {},
            "choices": [],
            "binding_constraints": [],
            "error": cause,
            "solve_seconds": 0.04,
        }
    )
    ws, cell = _sweep_cell(path, row, "error or infeasibility")
    assert cell.value == cause
    assert cell.alignment.wrap_text
    width = ws.column_dimensions[cell.column_letter].width
    assert width == 60
    assert (
        ws.row_dimensions[4].height
        == wrapped_lines(cause, int(width) - 5) * POINTS_PER_LINE
        == 3 * POINTS_PER_LINE
    )
