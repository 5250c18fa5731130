"""The Supply sheet's "none: every GPU paid for runs a replica" sits under its title, right of the columns every
printed page repeats: in column A it printed again, clipped, on the sheet's second page ("none: every GPU paid
for r", chat_70b_cloud, LibreOffice → PDF)."""

from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.cli.main import app
from planner.report.workbook_idle import IDLE_NONE, IDLE_TITLE

ROOT = Path(__file__).resolve().parents[2]


def test_none_line_is_under_the_title_past_the_repeated_columns(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    res = CliRunner().invoke(
        app, ["plan", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    ws = load_workbook(out)["Supply"]
    cells = {c.value: c for row in ws.iter_rows() for c in row if c.value in (IDLE_TITLE, IDLE_NONE)}
    title, none = cells[IDLE_TITLE], cells[IDLE_NONE]
    assert ws.print_title_cols == "$A:$B"
    assert none.row == title.row + 1 and none.column == title.column == 3  # C: right of the repeated A:B
