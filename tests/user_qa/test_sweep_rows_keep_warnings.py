"""A sweep row carries its plan's warnings, as `planner plan` prints them: the variant of
examples/chat_70b_cloud at 1,000,000 req/s on L4s holds 9,870,840 GPUs, and `plan` warns that no known site
holds that many, while its sweep row said nothing (helper-79's finding)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
from typer.testing import CliRunner

from planner.cli.main import app
from planner.readout.sweep import SweepRow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_70b_cloud" / "scenario.yaml"
HUGE = "the plan holds 9,870,840 GPUs, more than the 100,000 of the largest AI cluster publicly known at one site"


def test_a_sweep_row_warns_as_its_plan_does(tmp_path: Path) -> None:
    book, rows = tmp_path / "sweep.xlsx", tmp_path / "rows.json"
    args = ["sweep", str(EXAMPLE), "--vary", "hardware.gpus=l4", "--vary", "workloads.chat.requests_per_s=8,1000000",
            "--workers", "1", "-o", str(book), "--json-out", str(rows)]  # fmt: skip
    res = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())
    assert f"warning: variant 1: {HUGE}" in said
    assert "variant 0:" not in said
    data = json.loads(rows.read_text(encoding="utf-8"))
    by_index = {r["index"]: r for r in data["rows"]}
    assert by_index[0]["warnings"] == []
    (warning,) = by_index[1]["warnings"]
    assert warning.startswith(HUGE)
    sheet = openpyxl.load_workbook(book)["Sweep"]
    table = [row for row in sheet.iter_rows(values_only=True) if row[0] is not None]
    header = next(row for row in table if "warnings" in row)
    column = header.index("warnings")
    assert [row[column] for row in table if row[0] == 1] == [warning]


def test_a_resume_row_written_before_warnings_reads_as_none() -> None:
    row = SweepRow(index=0, key="k", values={"a": 1}, status="optimal")
    old = row.to_json()
    del old["warnings"]
    assert SweepRow.from_json(old).warnings == []
