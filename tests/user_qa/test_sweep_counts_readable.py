"""GPU and replica counts as a reader writes them, in one function (planner.units.count_text).
`planner sweep examples/chat_70b_cloud/scenario.yaml --vary hardware.gpus=l4 --vary
workloads.chat.requests_per_s=1000000` showed "GPUs serving 9.87084e+06×l4" (`:g` turns 9,870,840 into
exponent notation and drops its last digits) in the table and the workbook's Sweep sheet, and "chat: 1233855×
l4 TP8xPP1 int4 at us_east"; `planner plan` of that variant printed 9,870,840 GPUs in its deployments table but
"9870840" in its "what to rent" table and "1233855×36" replicas per period."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
import yaml
from typer.testing import CliRunner

from planner.cli.main import app
from planner.readout.sweep import Choice, format_gpus
from planner.units import count_text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat_70b_cloud" / "scenario.yaml"


@pytest.mark.parametrize(
    ("count", "text"),
    [(9_870_840.0, "9,870,840"), (1.0, "1"), (346_640.0, "346,640"), (0.5, "0.5"), (2.25, "2.25"), (1.5, "1.5")],
)
def test_count_text(count: float, text: str) -> None:
    assert count_text(count) == text


def test_gpus_and_choice_labels() -> None:
    assert format_gpus({"b200": 1.0, "h100_sxm": 2.0, "l40s": 0.5}) == "1×b200 2×h100_sxm 0.5×l40s"
    choice = Choice("chat", "llama_3_1_70b", "l4", 8, 1, "int4", 1_233_855, site="us_east")
    assert choice.label == "1,233,855× l4 TP8xPP1 int4 at us_east"


def test_a_million_gpu_sweep_row_reads_in_full(tmp_path: Path) -> None:
    book = tmp_path / "sweep.xlsx"
    args = ["sweep", str(EXAMPLE), "--vary", "hardware.gpus=l4", "--vary", "workloads.chat.requests_per_s=1000000",
            "--workers", "1", "-o", str(book)]  # fmt: skip
    res = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert "9,870,840×l4" in res.stdout and "e+06" not in res.stdout
    assert "chat: 1,233,855× l4 TP8xPP1 int4 at us_east" in res.stdout
    sheet = openpyxl.load_workbook(book)["Sweep"]
    cells = [str(c) for row in sheet.iter_rows(values_only=True) for c in row if c is not None]
    assert "9,870,840×l4" in cells
    assert "chat: 1,233,855× l4 TP8xPP1 int4 at us_east" in cells


def test_a_million_gpu_plan_prints_one_count_everywhere(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["workloads"][0]["requests_per_s"] = 1_000_000
    data["hardware"]["gpus"] = ["l4"]
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    res = CliRunner().invoke(app, ["plan", str(path), "--no-alternatives"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    rows = [" ".join(line.strip("│ ").split()) for line in res.stdout.splitlines() if "│" in line]
    deployment = next(r for r in rows if r.startswith("chat │"))
    assert "│ 1,233,855 │ 9,870,840 │" in deployment and deployment.endswith("│ 1,233,855×36")
    rented = next(r for r in rows if r.startswith("l4 │ us_east │ rent_on_demand"))
    assert rented.startswith("l4 │ us_east │ rent_on_demand │ 9,870,840 │ all │")
