"""The printed sweep workbook: the key tables (and their charts) are on their own sheet, By key. On the Sweep
sheet, whose rows' header repeats on every printed page (print titles), a key table cut by the page's end went
on, on page 2, under the rows' header — "status" and "optimality gap (%)" over its variant counts — with its
own header left on page 1; with a page break before it, the rows' header still printed above it (a 16-variant
sweep of chat_70b_cloud, LibreOffice → PDF)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from planner.readout.sweep import SweepResult, SweepRow
from planner.report.sweep_workbook import KEY_HEADERS, build_sweep_workbook
from tests.report.workbook_io import needs_soffice, soffice

PATH = "workloads.chat.requests_per_s"
RATES = [2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64]


def _sweep() -> SweepResult:
    rows = [
        SweepRow.from_json(
            {
                "index": k,
                "key": f"{PATH}={rate}",
                "values": {PATH: rate},
                "status": "optimal",
                "gap": None,
                "total_cost_usd": 16_600.0 * rate,
                "capex_usd": 0.0,
                "opex_usd_per_month": 461.0 * rate,
                "cost_usd_per_million_output_tokens": 0.9,
                "gpus_by_type": {"h100_sxm": rate // 2},
                "choices": [],
                "binding_constraints": ["demand_coverage:chat/0", "gpu_supply:h100_sxm/us_east/0"],
                "error": None,
                "solve_seconds": 0.02,
            }
        )
        for k, rate in enumerate(RATES)
    ]
    return SweepResult("support-chat-70b", [PATH], "grid", "local processes (1)", rows, 1.0)


def test_the_key_tables_are_on_their_own_sheet() -> None:
    wb = build_sweep_workbook(_sweep())
    assert wb.sheetnames == ["Sweep", "By key"]
    assert not any(r[0].value == f"Total cost by {PATH}" for r in wb["Sweep"].iter_rows())
    assert wb["Sweep"].print_title_rows == "$1:$3"  # the rows' header repeats on every page of the rows
    assert next(r for r in wb["By key"].iter_rows() if r[0].value == f"Total cost by {PATH}")[0].row == 3


@needs_soffice
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) not installed")
def test_the_key_table_prints_with_its_header(tmp_path: Path) -> None:
    book = tmp_path / "sweep.xlsx"
    build_sweep_workbook(_sweep()).save(book)
    soffice(["--convert-to", "pdf", "--outdir", str(tmp_path), str(book)], tmp_path)
    pdf = tmp_path / "sweep.pdf"
    pages = []
    for page in range(1, 10):
        done = subprocess.run(
            ["pdftotext", "-layout", "-f", str(page), "-l", str(page), str(pdf), "-"],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            break
        pages.append(done.stdout)
    with_key = [k for k, text in enumerate(pages) if f"Total cost by {PATH}" in text]
    # the key's title, its header and its last value (64 req/s: $1,062,400) on one page, after the rows'
    assert with_key and with_key[0] > 0
    key_page = " ".join(pages[with_key[0]].split())
    assert "with a plan" in key_page and KEY_HEADERS[0] in key_page
    assert "$1,062,400 $1,062,400" in key_page
    assert "optimality gap" not in key_page  # the rows' header no longer prints above it
    assert not any("with a plan" in text for text in pages[: with_key[0]])


def test_title_and_note_start_past_the_repeated_column() -> None:
    """Column A (variant) prints on every page: the title and the note written from A1 printed again on page 2,
    clipped to its width ("Sweep c", "Each row i"). They start in column B now."""
    ws = build_sweep_workbook(_sweep())["Sweep"]
    assert ws.print_title_cols == "$A:$A"
    assert ws["A1"].value is None and str(ws["B1"].value).startswith("Sweep of support-chat-70b")
    texts = [c for c in ws["A"] if isinstance(c.value, str) and c.value.startswith("Each row")]
    assert not texts and any(isinstance(c.value, str) and c.value.startswith("Each row") for c in ws["B"])
