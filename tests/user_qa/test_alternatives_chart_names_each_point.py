"""The plan workbook's Alternatives chart names every point: chat_70b_cloud's six GPU alternatives were one
series "best plan per gpu" (six unlabelled dots: which is b200, which mi300x?), unlike the --plots PNG, which
labels each. Now one series per feasible alternative, titled "b200 (gpu)", reading its own row."""

from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]


def test_each_alternative_is_a_named_series(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    res = CliRunner().invoke(
        app, ["plan", str(ROOT / "examples/chat_70b_cloud/scenario.yaml"), "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    ws = load_workbook(out)["Alternatives"]
    rows = [r for r in ws.iter_rows(min_row=2) if r[0].value in ("gpu", "site") and r[3].value is not None]
    (chart,) = ws._charts
    titles = [s.tx.v for s in chart.series]
    assert titles == [f"{r[1].value} ({r[0].value})" for r in rows]
    assert "b200 (gpu)" in titles and "mi300x (gpu)" in titles and "us_east (site)" in titles
    for series, row in zip(chart.series, rows, strict=True):
        n = row[0].row
        assert series.yVal.numRef.f == f"'Alternatives'!$D${n}"  # Total cost (USD) of its row
        assert series.marker.symbol == ("circle" if row[0].value == "gpu" else "square")
