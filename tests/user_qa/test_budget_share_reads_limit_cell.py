"""`planner budget -o` Summary: each 'budget used (%)' divides by the budget cell on the row above, so a
finance user who edits the limit sees the share follow (it divided by the typed number: '=(Total_cost_usd)/
500000.0' beside a B21 of 500,000 that the formula never read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.cli.main import app
from tests.report.workbook_io import needs_soffice, recompute

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], Path]:
    out = tmp_path_factory.mktemp("budget") / "budget.xlsx"
    scenario = ROOT / "examples/chat_70b_cloud/scenario.yaml"
    res = CliRunner().invoke(
        app, ["budget", str(scenario), "--total-usd", "500000", "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{") :]), out


def _row(ws: object, label: str) -> int:
    return next(c.row for c in ws["A"] if c.value == label)  # type: ignore[attr-defined]


def test_share_formula_reads_the_limit_cell(written: tuple[dict[str, object], Path]) -> None:
    _data, path = written
    ws = load_workbook(path)["Summary"]
    limit_row = _row(ws, "Total budget (USD, present value)")
    assert ws[f"B{limit_row}"].value == 500_000
    assert _row(ws, "Total budget used (%)") == limit_row + 1
    assert ws[f"B{limit_row + 1}"].value == f"=(Total_cost_usd)/B{limit_row}"


@needs_soffice
def test_share_recomputes_to_the_json(written: tuple[dict[str, object], Path], tmp_path: Path) -> None:
    data, path = written
    ws = load_workbook(recompute([path], tmp_path) / path.name, data_only=True)["Summary"]
    used = data["budget_used"]
    assert isinstance(used, dict)
    share = ws[f"B{_row(ws, 'Total budget used (%)')}"].value
    assert share == pytest.approx(used["used_frac"]["total_usd"], rel=1e-9)
    assert share == pytest.approx(494_035 / 500_000, abs=1e-5)  # $494,035 of $500,000 (98.8 %)
