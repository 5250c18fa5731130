"""planner compare: the recommendation and its reason, impossible buying, exit 3, exact price flip points."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from planner.catalog import Catalog
from planner.cli.main import app
from planner.compare import CostLines, _line_flip, _recommend, _solve, _what_if, priced_usd, recommend
from planner.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _cloud_only(tmp_path: Path, **slo: int) -> Path:
    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text())
    data["procurement"] = ["rent", "buy"]
    data["workloads"][0]["slo"].update(slo)
    path = tmp_path / "cloud.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_cloud_only_recommends_rent_only_and_says_why(tmp_path: Path) -> None:
    target = tmp_path / "compare.json"
    res = runner.invoke(app, ["compare", str(_cloud_only(tmp_path)), "--json-out", str(target)])
    assert res.exit_code == 0, res.output
    data = json.loads(target.read_text())
    assert data["recommendation"] == "rent_only"
    assert "buying is not possible" in data["recommendation_reason"]
    assert "datacenter" in data["recommendation_reason"]
    assert any("no flip point" in f["sentence"] for f in data["flip_points"])
    assert "recommendation: rent_only — buying is not possible" in res.stdout
    assert "crossover month: —" in res.stdout and "None" not in res.stdout


def test_an_inventory_only_plan_says_there_is_nothing_to_rent_or_buy(tmp_path: Path) -> None:
    """examples/pd_card8 owns 4 A100 + 4 H20 and may neither rent nor buy: every option is the same inventory
    plan, and the recommendation's reason says so instead of only 'buying is not possible'."""
    target = tmp_path / "compare.json"
    res = runner.invoke(app, ["compare", str(ROOT / "examples/pd_card8/scenario.yaml"), "--json-out", str(target)])
    assert res.exit_code == 0, res.output
    data = json.loads(target.read_text())
    assert data["recommendation"] == "owned_only"  # not rent_only: nothing is rented, and it may not rent
    assert data["recommendation_reason"] == (
        "nothing to rent or buy: the owned GPUs serve 1.24× the stated demand for $857 over 1 month (every option"
        " plans them alone)"
    )
    assert "◀" not in res.stdout and "recommendation: owned_only — nothing to rent or buy" in res.stdout
    assert all(o["capex_usd"] == 0 and o["status"] == "optimal" for o in data["options"])
    assert len({o["total_cost_usd"] for o in data["options"]}) == 1  # running costs of the same inventory


def test_an_inventory_only_workbook_marks_no_option_as_the_terminal(tmp_path: Path) -> None:
    """owned_only names no option: the Options sheet's Recommended column marks none (it marked rent_only, the
    option whose plan the sheets show, where the terminal marks no row), and the Summary says owned_only."""
    from openpyxl import load_workbook

    target = tmp_path / "compare.xlsx"
    res = runner.invoke(
        app, ["compare", str(ROOT / "examples/pd_card8/scenario.yaml"), "--no-flip-points", "-o", str(target)]
    )
    assert res.exit_code == 0, res.output
    wb = load_workbook(target)
    options = wb["Options"]
    header = [c.value for c in options[1]]
    marks = {
        row[0]: row[header.index("Recommended")] for row in options.iter_rows(min_row=2, max_row=4, values_only=True)
    }
    assert set(marks) == {"buy_only", "rent_only", "hybrid"} and not any(marks.values())
    summary = {row[0]: row[1] for row in wb["Summary"].iter_rows(min_row=4, max_col=2, values_only=True)}
    assert summary["Recommended option"] == "owned_only"


def test_no_feasible_option_exits_3_with_the_causes(tmp_path: Path) -> None:
    res = runner.invoke(app, ["compare", str(_cloud_only(tmp_path, tpot_ms=1)), "--json"])
    assert res.exit_code == 3  # and --json prints the infeasible answer, as plan's does
    assert [o["status"] for o in json.loads(res.stdout)["options"]] == ["infeasible"] * 3
    assert "no option" in res.stderr and "rent_only" in res.stderr


def _option(cost: float | None, capex: float = 0.0) -> Any:
    return SimpleNamespace(feasible=cost is not None, total_cost_usd=cost or 0.0, capex_usd=capex)


def test_recommendation_ties_go_to_the_simpler_option() -> None:
    same = {"buy_only": _option(None), "rent_only": _option(100.0), "hybrid": _option(100.0, capex=0.0)}
    assert recommend(same)[0] == "rent_only"
    buys_nothing = {
        "buy_only": _option(None),
        "rent_only": _option(100.0),
        "hybrid": _option(99.0, capex=0.0),
    }
    assert recommend(buys_nothing)[0] == "rent_only"
    cheaper = {"buy_only": _option(120.0, 50.0), "rent_only": _option(100.0), "hybrid": _option(90.0, 40.0)}
    best, reason = recommend(cheaper)
    assert best == "hybrid" and "$10 (10.0%) less than rent_only" in reason
    assert (
        recommend({"buy_only": _option(None), "rent_only": _option(None), "hybrid": _option(None)})[0] is None
    )


@pytest.fixture(scope="module")
def buy_vs_rent(catalog: Catalog) -> Any:
    return load_scenario(ROOT / "examples/buy_vs_rent/scenario.yaml", catalog)


def test_a_plan_priced_at_any_multiplier_lies_on_its_cost_line(catalog: Catalog, buy_vs_rent: Any) -> None:
    """priced_usd reproduces the solver's cost, and cost(m) = a + k·m holds at a third multiplier."""
    from planner.candidates import build_candidates
    from planner.problem.context import build_context

    hybrid = buy_vs_rent.model_copy(update={"procurement": ["rent", "buy"]})
    sol, ctx = _solve(catalog, hybrid, "highs")
    assert priced_usd(ctx, sol.values) == pytest.approx(sol.cost_usd, rel=1e-9)
    for parameter in ("rent_price_scale", "purchase_price_scale"):
        a, k = CostLines(catalog, hybrid, parameter).line(sol.values)
        third = build_context(catalog, _what_if(hybrid, parameter, 1.7), build_candidates(catalog, hybrid))
        assert priced_usd(third, sol.values) == pytest.approx(a + 1.7 * k, rel=1e-9)


def test_rent_flip_point_is_where_the_decision_changes(catalog: Catalog, buy_vs_rent: Any) -> None:
    flip = _line_flip(catalog, buy_vs_rent, "highs", "rent_price_scale", 1.0)
    assert flip is not None and 0.25 < flip < 1.0
    assert _recommend(catalog, _what_if(buy_vs_rent, "rent_price_scale", flip * 0.98), "highs") == "rent_only"
    assert _recommend(catalog, _what_if(buy_vs_rent, "rent_price_scale", flip * 1.02), "highs") == "buy"
