"""A training budget a fraction of a dollar below the cheapest run: the cause read "the cheapest run that
meets the deadline costs $5,377; the budget is $5,377" (both rounded to whole dollars), which tells the
user nothing. Equal whole dollars now show cents, the cost rounded up (planner/training/plan.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from planner.training.plan import over_budget_usd
from tests.training.test_cli import EXAMPLE, app


@pytest.mark.parametrize(
    ("cost", "budget", "words"),
    [
        (5377.100682703377, 5377.10, ("5,377.11", "5,377.10")),  # the example's cost, its cents as the budget
        (5377.100682703377, 3000.0, ("5,377", "3,000")),  # apart in whole dollars: as before
        (12538.183, 12537.999, ("12,538.19", "12,537.99")),  # both round to $12,538
        (100.0000051, 100.0, ("100.01", "100.00")),  # over by more than the search's 1e-6 tolerance
    ],
)
def test_over_budget_words_differ(cost: float, budget: float, words: tuple[str, str]) -> None:
    assert over_budget_usd(cost, budget) == words


def test_the_example_a_cent_short_says_by_how_much(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data.update(objective="earliest_finish", budget_usd=5377.10, hardware={"gpus": ["h100_sxm"], "max_gpus": 512})
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    res = CliRunner().invoke(app, ["train", str(path)])
    assert res.exit_code == 3
    assert "h100_sxm: the cheapest run that meets the deadline costs $5,377.11; the budget is $5,377.10" in res.stderr
