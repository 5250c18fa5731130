"""`planner budget` answers what a budget serves beyond 10× the stated demand (planner/optimize/served_scale.py):
the first stage admits s ≤ S, starting at S = 10, and is solved again with S × 10 while it serves all of S. Before,
$50,000/month on 5 req/s of Qwen3-8B answered "10.000 × the stated demand = 50.00 req/s" with 9.8 % of the
budget spent and "binding limit: no budget line"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.optimize.served_scale import SCALE_LIMIT, reached_limit
from planner.plan import plan
from planner.scenario import parse_scenario
from tests.plan.helpers import starter

SCENARIO = starter(
    {"quantizations": ["bf16", "fp8"]}, hardware={"gpus": ["h100_sxm", "l40s"], "tp": [1, 2], "pp": [1]},
    procurement=["rent"],
)


def _budget(tmp_path: Path, *options: str) -> dict[str, object]:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    res = CliRunner().invoke(app, ["budget", str(path), *options, "--json"])
    assert res.exit_code == 0, res.stderr
    data: dict[str, object] = json.loads(res.stdout)
    return data


def test_a_budget_that_serves_far_more_than_ten_times_the_demand_is_spent(tmp_path: Path) -> None:
    small = _budget(tmp_path, "--opex-usd-per-month", "5000")
    large = _budget(tmp_path, "--opex-usd-per-month", "50000")
    assert isinstance(small["served_scale"], float) and isinstance(large["served_scale"], float)
    assert 10.0 < small["served_scale"] < 11.0  # 2 H100 + 1 L40S: $4,882 of $5,000
    assert large["served_scale"] > 100.0  # was capped at 10
    used = large["budget_used"]
    assert isinstance(used, dict)
    assert used["opex_usd_per_month"] > 0.98 * 50000  # the budget, not the search, stops it
    assert used["binding_limit"].startswith("opex_usd_per_month")


def test_a_budget_that_bounds_no_supply_stops_at_the_search_limit(tmp_path: Path) -> None:
    """A capex budget with rent only bounds nothing: the answer is the search's limit, and says so."""
    data = _budget(tmp_path, "--capex-usd", "1000")
    assert data["served_scale"] == pytest.approx(SCALE_LIMIT, rel=1e-6)
    used = data["budget_used"]
    assert isinstance(used, dict)
    assert "the search stops at 10,000× the stated demand, so the budget serves at least that" in used["binding_limit"]


def test_the_second_stage_and_alternatives_serve_the_grown_scale(catalog: Catalog) -> None:
    """The plan's alternatives search their own scale the same way: the H100-only plan serves more than 10×."""
    data = {**SCENARIO, "objective": "max_throughput", "budget": {"opex_usd_per_month": 50000}}
    result = plan(catalog, parse_scenario(data)).to_json()
    assert result["served_scale"] > 100.0 and not reached_limit(result["served_scale"], SCALE_LIMIT)
    by_gpu = {a["gpu"]: a for a in result["alternatives"] if a["kind"] == "gpu"}
    assert set(by_gpu) == {"h100_sxm", "l40s"}
    assert all(a["served_scale"] > 10.0 for a in by_gpu.values())
    best = max(a["served_scale"] for a in by_gpu.values())
    assert best <= result["served_scale"] * (1 + 1e-6)


def test_the_served_line_groups_thousands(tmp_path: Path) -> None:
    """The terminal's served line for a scale at the search limit: '10,000.000 × … = 50,000.00 req/s' (it printed
    '= 49999.99 req/s', found by QA)."""
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(SCENARIO))
    res = CliRunner().invoke(app, ["budget", str(path), "--capex-usd", "1000"])
    assert res.exit_code == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if x.startswith("served:"))
    scale, total = line.split("× the stated demand = ")
    assert scale.strip() in ("served: 10,000.000", "served: 9,999.999"), line
    assert total.split(" req/s")[0].replace(",", "").replace(".", "").isdigit() and "," in total, line
    assert total.startswith("50,000 req/s"), line  # not 49,999.99 under a scale of 10,000.000 (helper-79)


def test_the_scenarios_own_budget_lines_still_hold(tmp_path: Path) -> None:
    """`planner budget --capex-usd 100` on a scenario stating an opex limit kept only the capex (rent only: it
    served 10,000× for $34M a month); the stated line still binds, and is named where the scenario states it."""
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({**SCENARIO, "budget": {"opex_usd_per_month": 5000}}))
    res = CliRunner().invoke(app, ["budget", str(path), "--capex-usd", "100", "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert 10.0 < data["served_scale"] < 11.0  # as --opex-usd-per-month 5000 alone: $4,882 of $5,000
    used = data["budget_used"]
    assert used["limits"] == {"capex_usd": 100.0, "opex_usd_per_month": 5000.0, "total_usd": None}
    assert used["binding_limit"].startswith("opex_usd_per_month")
    from planner.scenario import Budget

    merged = Budget.from_options(Budget(opex_usd_per_month=5000), capex_usd=100)
    assert (merged.line("capex_usd"), merged.line("opex_usd_per_month")) == ("--capex-usd", "budget.opex_usd_per_month")
