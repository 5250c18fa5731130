"""The training workbook's Options sheet marks the option the plan chose (each row is the best run of a GPU
type; without the mark a reader matched GPU, site and cost against the Summary by hand)."""

from __future__ import annotations

from typing import Any

from openpyxl import Workbook

from planner.report.training_workbook import CHOSEN_HEADER, OPTION_COLUMNS, _options
from planner.report.xlsx import Tables


def _option(gpu: str, site: str, usd: float) -> dict[str, Any]:
    return {
        "gpu": gpu, "gpus": 8, "tp": 1, "pp": 1, "dp": 8, "zero_stage": 3, "recompute": "selective",
        "iteration_time_s": 53.2, "days": 14.7, "total_cost_usd": usd, "mfu": 0.49, "memory_per_gpu_gib": 38.7,
        "procurement": "rent", "site": site,
    }  # fmt: skip


def test_options_sheet_marks_the_chosen_run() -> None:
    h100, h200 = _option("h100_sxm", "eu_west", 5_377.10), _option("h200_sxm", "us_east", 12_538.18)
    data = {**h100, "alternatives": [h100, h200]}
    ws = Workbook().active
    _options(ws, Tables(), data)
    header = [c.value for c in ws[1]]
    assert header[-1] == CHOSEN_HEADER and len(header) == len(OPTION_COLUMNS) + 1
    assert [(ws.cell(row=r, column=1).value, ws.cell(row=r, column=len(header)).value) for r in (2, 3)] == [
        ("h100_sxm", "yes"),
        ("h200_sxm", ""),
    ]
    # the same GPU at another site is another run
    data = {**h100, "site": "us_east", "alternatives": [h100]}
    ws = Workbook().active
    _options(ws, Tables(), data)
    assert ws.cell(row=2, column=len(header)).value == ""


def test_options_gpu_column_prints_on_every_page() -> None:
    h100 = _option("h100_sxm", "eu_west", 5_377.10)
    ws = Workbook().active
    _options(ws, Tables(), {**h100, "alternatives": [h100]})
    assert ws.freeze_panes == "B2"
    assert ws.page_setup.fitToWidth == 2 and ws.print_title_cols == "$A:$A"
