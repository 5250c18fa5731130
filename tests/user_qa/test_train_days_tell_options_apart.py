"""`planner train` printed days with one decimal everywhere. With `objective: earliest_finish` and a $20,000
budget it chose 512 H200 for $12,930 over 512 H100 for $5,545 and printed both as "0.2 days" (title and the
"best option per GPU type" table): the figure the choice was made on read as a tie. They are 0.232 and 0.238
days; days now carry the decimals that tell the options apart (planner.units.days_decimals)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from planner.cli.main import app
from planner.units import days_decimals

runner = CliRunner()
SCENARIO = {
    "kind": "training",
    "name": "fastest within budget",
    "model": "qwen3_8b",
    "training_tokens": 1.0e11,
    "seq_len_tokens": 4096,
    "global_batch_tokens": 4194304,
    "deadline_days": 30,
    "procurement": ["rent"],
    "hardware": {"gpus": ["h100_sxm", "h200_sxm"], "max_gpus": 512},
    "objective": "earliest_finish",
    "budget_usd": 20000,
}


def test_earliest_finish_options_print_the_days_they_were_chosen_by(tmp_path: Path) -> None:
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(SCENARIO), encoding="utf-8")
    res = runner.invoke(app, ["train", str(path)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert "512 × h200_sxm (rent, us_east) — 0.23 days, $12,930" in " ".join(res.stdout.split())  # the title
    rows = [" ".join(line.strip("│ ").split()) for line in res.stdout.splitlines() if "1×1×512" in line]
    assert rows == [
        "h200_sxm │ 512 │ 1×1×512 │ 0.23 │ 12,930 │ 50.0%",
        "h100_sxm │ 512 │ 1×1×512 │ 0.24 │ 5,545 │ 48.8%",
    ]


@pytest.mark.parametrize(
    ("days", "decimals"),
    [
        ([14.74, 14.38], 1),  # a day or more: one decimal while they differ
        ([0.2318, 0.2375], 2),  # below a day: two significant digits
        ([0.0644, 0.1], 3),
        ([0.1211, 0.1], 2),  # a run that misses a 0.1-day deadline: "0.12", not "0.1"
        ([14.74, 14.7399], 4),  # more until they print apart
        ([5.0, 5.0], 1),  # equal values need no more
        ([], 1),
    ],
)
def test_days_decimals(days: list[float], decimals: int) -> None:
    assert days_decimals(days) == decimals


def test_days_decimals_apart_from_a_deadline() -> None:
    assert days_decimals([0.1211], apart_from=[0.1]) == 2  # 0.12 against 0.10
    assert days_decimals([0.2375], apart_from=[0.1]) == 2  # already apart
    assert days_decimals([0.0327], apart_from=[1e-300]) == 3  # a tiny deadline adds no digits: 0.033
    assert days_decimals([14.74], apart_from=[14.7]) == 2
