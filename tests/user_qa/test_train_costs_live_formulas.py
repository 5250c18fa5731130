"""The training workbook's rent and owned running lines are live formulas a finance user can follow:
cost = GPUs paid × hours × price × present-value factor (they were typed figures: $5,377 with only a note
saying $1.90/GPU-h). The JSON carries the same inputs; lines that are not of that form (capex, resale,
discount) stay figures with their notes, and the SUM still equals the plan's total."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from openpyxl import load_workbook
from typer.testing import CliRunner

from planner.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
BASE: dict[str, Any] = {
    "kind": "training",
    "name": "qa",
    "model": "qwen3_8b",
    "training_tokens": 1e11,
    "seq_len_tokens": 4096,
    "global_batch_tokens": 4194304,
}


def _train(tmp_path: Path, scenario: Path) -> tuple[dict[str, Any], Any]:
    out = tmp_path / "t.xlsx"
    res = runner.invoke(app, ["train", str(scenario), "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{") :]), load_workbook(out)["Costs"]


def _evaluate(ws: Any, row: int) -> float:
    assert ws[f"D{row}"].value == f"=C{row}*E{row}*F{row}*G{row}"
    return float(ws[f"C{row}"].value * ws[f"E{row}"].value * ws[f"F{row}"].value * ws[f"G{row}"].value)


def test_rent_line_is_gpus_times_hours_times_price(tmp_path: Path) -> None:
    data, ws = _train(tmp_path, ROOT / "examples/train_8b/training.yaml")
    (line,) = data["cost_lines"]
    assert (line["gpus"], line["usd_per_gpu_hour"], line["present_value_factor"]) == (8, 1.90, 1.0)
    assert line["hours"] == pytest.approx(data["run_days"] * 24)  # 14.74 days = 353.76 h
    assert line["hours"] * 8 == pytest.approx(data["gpu_hours"])  # 2,830 GPU-hours
    assert _evaluate(ws, 2) == pytest.approx(5377.10, abs=0.01) == pytest.approx(data["total_cost_usd"])
    assert ws["E1"].value == "hours paid (h per GPU)" and ws["F1"].value == "price (USD per GPU-hour)"


def test_discount_stays_a_figure_and_the_sum_holds(tmp_path: Path) -> None:
    scenario = {**BASE, "deadline_days": 3, "procurement": ["rent"], "hardware": {"gpus": ["h100_sxm"], "max_gpus": 64},
                "economics": {"rent_volume_tiers": [{"min_gpus": 16, "discount_frac": 0.1}]}}  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    data, ws = _train(tmp_path, path)
    rent, discount = data["cost_lines"]
    assert discount["kind"] == "discount" and discount["hours"] is None
    rent_usd = _evaluate(ws, 2)
    # 10 % off the 48 GPUs beyond 16, at the same hours and price
    assert discount["usd"] == pytest.approx(-0.1 * 48 * rent["hours"] * 1.90)
    assert ws["D3"].value == pytest.approx(discount["usd"]) and ws["E3"].value is None
    assert ws["D4"].value == "=SUM(D2:D3)"
    assert rent_usd + discount["usd"] == pytest.approx(data["total_cost_usd"])


def test_owned_running_line_is_live(tmp_path: Path) -> None:
    scenario = {**BASE, "deadline_days": 90, "procurement": ["owned"], "hardware": {"gpus": ["h100_sxm"]},
                "inventory": [{"gpu": "h100_sxm", "count": 16, "site": "dc1"}]}  # fmt: skip
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    data, ws = _train(tmp_path, path)
    (line,) = data["cost_lines"]
    assert line["kind"] == "running" and line["gpus"] == 4
    # $187.59 per GPU-month of 720 h → $0.2605 per GPU-hour
    assert line["usd_per_gpu_hour"] == pytest.approx(187.59 / 720, abs=1e-5)
    assert _evaluate(ws, 2) == pytest.approx(data["total_cost_usd"]) == pytest.approx(736.63, abs=0.01)


def test_summary_days_and_gpu_hours_are_their_formulas(tmp_path: Path) -> None:
    out = tmp_path / "t.xlsx"
    res = runner.invoke(
        app, ["train", str(ROOT / "examples/train_8b/training.yaml"), "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout[res.stdout.index("{") :])
    ws = load_workbook(out)["Summary"]
    row = {c.value: c.row for c in ws["A"] if c.value}
    b = {
        key: ws[f"B{row[key]}"].value for key in ("gpus", "start_delay_days", "run_days", "days", "gpu_hours")
    }
    assert b["days"] == f"=B{row['start_delay_days']}+B{row['run_days']}"
    assert b["gpu_hours"] == f"=B{row['gpus']}*B{row['run_days']}*24"
    assert b["start_delay_days"] + b["run_days"] == pytest.approx(data["days"])  # 14.74 days
    assert (
        b["gpus"] * b["run_days"] * 24 == pytest.approx(data["gpu_hours"]) == pytest.approx(2830.05, abs=0.01)
    )
