"""The `planner train` / `predict-train` tables print figures from 10,000 up in full: ',.4g' printed
"tokens_per_s 7.877e+04", "checkpoint.interval_s 1.092e+04" and "gpu_hours 2.932e+05" (planner/cli/train.py)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli.train import num
from tests.training.test_cli import EXAMPLE, app


@pytest.mark.parametrize(
    ("value", "shown"),
    [(53.2466, "53.25"), (0.0, "0"), (2829.9, "2,830"), (78771.29, "78,771"), (293217.04, "293,217"), (4.107, "4.107")],
)
def test_num(value: float, shown: str) -> None:
    assert num(value) == shown


def _rows(stdout: str) -> dict[str, str]:
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in stdout.splitlines() if line.count("│") >= 3]
    return {c[0]: c[1] for c in cells if len(c) >= 2}


def test_train_table_has_no_scientific_notation() -> None:
    res = CliRunner().invoke(app, ["train", str(EXAMPLE)], terminal_width=200)
    assert res.exit_code == 0, res.output
    rows = _rows(res.stdout)
    assert rows["tokens_per_s"] == "78,771" and rows["gpu_hours"] == "2,830" and rows["steps"] == "23,842"
    assert rows["checkpoint.interval_s"] == "10,920" and rows["iteration_time_s"] == "53.25"
    assert "e+" not in res.stdout


def test_predict_train_table_has_no_scientific_notation() -> None:
    args = ["predict-train", "--model", "qwen3_8b", "--gpu", "h100_sxm", "--gpus", "8", "--zero-stage", "3"]
    res = CliRunner().invoke(app, [*args, "--global-batch", "1024"], terminal_width=200)
    assert res.exit_code == 0, res.output
    rows = _rows(res.stdout)
    assert rows["tokens_per_s"] == "78,771" and rows["n_params"] == "8,190,735,360"
    assert "e+" not in res.stdout
