"""`planner sweep` as a user runs it (the command on its own typer app): JSON rows, exit 2 on bad input with
nothing written, identical JSON on a second run, and the Sweep workbook's cells equal the rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.report.sweep_workbook import ROW_HEADERS, key_summary
from planner.sweep import SweepResult, SweepRow
from planner.sweep.result import TIMING_FIELDS
from tests.sweep.helpers import CHAT, sweep_app


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(sweep_app(), ["sweep", str(CHAT), *args])


VARY = ["--vary", "economics.rent_price_scale=0.5,1,2", "--vary", "workloads.chat.slo.tpot_ms=30,50"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    folder = tmp_path_factory.mktemp("sweep")
    book = folder / "sweep.xlsx"
    res = _invoke(*VARY, "--workers", "2", "--json", "-o", str(book))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), book


def _untimed(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in TIMING_FIELDS} for row in data["rows"]]


def test_json_lists_one_row_per_variant(run: tuple[dict[str, Any], Path]) -> None:
    data, _ = run
    assert data["vary"] == ["economics.rent_price_scale", "workloads.chat.slo.tpot_ms"]
    assert data["variants"] == 6 and data["failed"] == 0 and data["mode"] == "grid"
    assert [r["values"] for r in data["rows"]][:2] == [
        {"economics.rent_price_scale": 0.5, "workloads.chat.slo.tpot_ms": 30},
        {"economics.rent_price_scale": 0.5, "workloads.chat.slo.tpot_ms": 50},
    ]
    for row in data["rows"]:
        assert row["status"] == "optimal" and row["capex_usd"] == 0
        assert row["gpus_by_type"] and row["choices"][0]["workload"] == "chat"
        assert row["cost_usd_per_million_output_tokens"] > 0


def test_same_sweep_twice_gives_the_same_json(run: tuple[dict[str, Any], Path]) -> None:
    data, _ = run
    again = _invoke(*VARY, "--workers", "1", "--json")
    assert again.exit_code == 0
    assert _untimed(json.loads(again.stdout)) == _untimed(data)
    assert "last:" not in again.stderr  # no progress bar when stderr is not a terminal (a log or a pipe)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vary", "economics.rent_price_scal=1"], "did you mean rent_price_scale"),
        (["--vary", "hardware.gpus=h100sxm"], "did you mean h100_sxm"),
        (["--vary", "economics.rent_price_scale=1", "-o", "x.pdf"], "must end in .xlsx"),
        (
            ["--vary", "economics.rent_price_scale=1", "--workers", "2", "--dask", "tcp://127.0.0.1:1"],
            "not both",
        ),
    ],
)
def test_bad_input_is_exit_2_one_line_nothing_written(tmp_path: Path, args: list[str], message: str) -> None:
    target = tmp_path / "rows.json"
    res = _invoke(*args, "--json-out", str(target))
    assert res.exit_code == 2
    assert message in res.output and "Traceback" not in res.output
    assert not target.exists()


def test_the_sweep_sheet_holds_the_rows_and_by_key_a_chart_per_key(run: tuple[dict[str, Any], Path]) -> None:
    data, book = run
    ws = load_workbook(book)["Sweep"]
    headers = [c.value for c in ws[3]]
    assert headers[:3] == ["variant", "economics.rent_price_scale", "workloads.chat.slo.tpot_ms"]
    assert headers[3:] == list(ROW_HEADERS[1:])
    total_col = headers.index("total cost (USD, PV)")
    for i, row in enumerate(data["rows"]):
        cells = [c.value for c in ws[4 + i]]
        assert cells[0] == row["index"] and cells[1] == row["values"]["economics.rent_price_scale"]
        # xlsx keeps 15 significant digits
        assert cells[total_col] == pytest.approx(row["total_cost_usd"], rel=1e-14)
        assert cells[headers.index("capex (USD)")] == row["capex_usd"]
        assert cells[headers.index("opex (USD/month)")] == pytest.approx(row["opex_usd_per_month"], rel=1e-14)
    by_key = load_workbook(book)["By key"]  # the key tables and charts: their own sheet (see the report tests)
    assert not ws._charts and len(by_key._charts) == 2
    # each chart sits below its key's table in the first columns (beside it, it crossed the printed page's edge)
    anchors = [chart.anchor._from for chart in by_key._charts]
    assert [a.col for a in anchors] == [0, 0] and anchors[0].row < anchors[1].row
    # the deployments of a variant and its binding constraints wrap within their columns
    choice_col = headers.index("GPU / TP / quant per workload") + 1
    assert ws.cell(row=4, column=choice_col).alignment.wrap_text
    assert "× " in ws.cell(row=4, column=choice_col).value and " at us_" in ws.cell(row=4, column=choice_col).value
    result = SweepResult(
        data["scenario"],
        data["vary"],
        data["mode"],
        data["engine"],
        [SweepRow.from_json(r) for r in data["rows"]],
        0.0,
    )
    by_price = key_summary(result, "economics.rent_price_scale")
    assert [s.value for s in by_price] == [0.5, 1, 2]
    for s in by_price:
        costs = [
            r["total_cost_usd"] for r in data["rows"] if r["values"]["economics.rent_price_scale"] == s.value
        ]
        assert (s.variants, s.lowest_usd, s.highest_usd) == (2, min(costs), max(costs))


def test_table_prints_no_capex_as_0_like_compare() -> None:
    """The table printed a rent-only row's capex as "0.00" beside "97,615" total (compare prints "0")."""
    from planner.cli.sweep import _money

    assert [_money(v) for v in (0.0, 0.8717, 97614.72, None)] == ["0", "0.87", "97,615", ""]
    res = _invoke("--vary", "economics.rent_price_scale=0.7", "--workers", "1")
    assert res.exit_code == 0, res.output
    (line,) = [ln for ln in res.stdout.splitlines() if "h100_sxm" in ln and "0.7" in ln]
    cells = [c.strip() for c in line.split("│")[1:-1]]
    assert cells[1:6] == ["optimal", "172,005", "0", "4,778", "0.77"]
