"""The plan table's replica, GPU and capacity cells of a large fleet: "314040" replicas, "899990.35" req/s, and
the GPUs cell wrote 1,234,567 GPUs as "1.23457e+06" (':g'); whole counts get thousands separators now, as the
$/month column has."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from planner.cli.main import app
from planner.cli.sharing_view import gpus_cell

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_gpus_cell() -> None:
    assert [gpus_cell({"gpus": g}) for g in (1_234_567, 314040.0, 8, 0.5, 0.25)] == [
        "1,234,567", "314,040", "8", "0.5", "0.25",
    ]  # fmt: skip


def test_a_900k_request_fleet_reads_with_separators(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text(encoding="utf-8"))
    data["workloads"][0]["requests_per_s"] = 900_000
    path = tmp_path / "huge.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    res = runner.invoke(app, ["plan", str(path), "--no-alternatives"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in res.stdout.splitlines() if line.startswith("│ chat")]
    biggest = max(rows, key=lambda r: int(r[7].replace(",", "")))
    repl, gpus, cap = biggest[7], biggest[8], biggest[13]
    assert re.fullmatch(r"\d{1,3}(,\d{3})+", repl) and re.fullmatch(r"\d{1,3}(,\d{3})+", gpus), biggest
    assert re.fullmatch(r"\d{1,3}(,\d{3})+\.\d\d", cap), biggest
