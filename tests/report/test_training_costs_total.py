"""The training workbook's Costs total sits where a reader looks for it: under the cost column, on a labeled
row after the last cash line (it was at D1, above the table's header, beside a label in C1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.common import clean_json
from planner.cli.main import app
from planner.report.training_workbook import COSTS_HEADERS, COSTS_TOTAL_LABEL
from tests.report.conftest import ROOT
from tests.report.workbook_io import find_row, load_workbook, needs_soffice, recompute


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], Path]:
    out = tmp_path_factory.mktemp("train") / "train.xlsx"
    res = CliRunner().invoke(
        app, ["train", str(ROOT / "examples/train_8b/training.yaml"), "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), out


def test_costs_total_is_labeled_under_the_cost_column(written: tuple[dict[str, object], Path]) -> None:
    data, path = written
    lines = data["cost_lines"]
    assert isinstance(lines, list)
    wb = load_workbook(path)
    ws = wb["Costs"]
    assert [c.value for c in ws[1]][: len(COSTS_HEADERS)] == COSTS_HEADERS  # the header comes first
    assert ws["D1"].value == "cost (USD, present value)" and ws["C1"].value == "GPUs paid"
    last = 1 + len(lines)
    live = [f"=C{r}*E{r}*F{r}*G{r}" for r in range(2, last + 1)]  # rent: GPUs × hours × price × PV factor
    assert [ws.cell(row=r, column=4).value for r in range(2, last + 1)] == live
    total = find_row(ws, COSTS_TOTAL_LABEL)
    assert total[0].row == last + 1 and total[0].font.bold
    assert total[3].value == f"=SUM(D2:D{last})" and total[3].number_format == '"$"#,##0'
    summary = find_row(wb["Summary"], "total_cost_usd")
    assert summary[1].value == f"=Costs!D{last + 1}"


@needs_soffice
def test_recomputed_total_is_the_plans(written: tuple[dict[str, object], Path], tmp_path: Path) -> None:
    data, path = written
    wb = load_workbook(recompute([path], tmp_path) / path.name, data_only=True)
    total = find_row(wb["Costs"], COSTS_TOTAL_LABEL)[3].value
    assert total == pytest.approx(data["total_cost_usd"], rel=1e-9)
    assert total == pytest.approx(5_377, abs=1)  # train_8b: 8 rented H100 at $1.90/GPU-h
    assert find_row(wb["Summary"], "total_cost_usd")[1].value == pytest.approx(total, rel=1e-12)


def test_failure_overhead_reads_as_the_terminal_does(written: tuple[dict[str, object], Path]) -> None:
    """0.32% of the step time on the terminal; the Summary sheet's 0.0% format printed 0.3%."""
    data, path = written
    checkpoint = data["checkpoint"]
    assert isinstance(checkpoint, dict)
    row = find_row(load_workbook(path)["Summary"], "failure_overhead_frac")
    # the same figure: the workbook keeps it whole, the JSON rounds it (planner.cli.common.clean_json)
    assert clean_json(row[1].value) == checkpoint["failure_overhead_frac"]
    assert round(row[1].value, 4) == 0.0032 and row[1].number_format == "0.00%"
