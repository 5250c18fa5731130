"""`planner compare` on a max_throughput scenario: each option is the most its budget serves, so the
recommendation is the option that serves the most, not the cheapest one. It recommended the cheapest:
buy_vs_rent with `objective: max_throughput` and `budget: {total_usd: 900000}` → "buy_only is cheapest:
$888,929", a plan serving 0.888× the stated demand from month 3, over hybrid serving 1.13× from month 0 for
$897,474 — and searched cost flip points that compare min-cost plans (3 minutes) (planner/compare_recommend.py,
planner/compare.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from planner.catalog.loader import Catalog
from planner.compare import MAX_THROUGHPUT_NO_FLIP, compare
from planner.compare_recommend import recommend
from planner.scenario import parse_scenario
from tests.plan.helpers import starter


def _option(cost: float, scale: float, tokens: float, capex: float = 0.0, since: float = 0.0) -> Any:
    ledger = SimpleNamespace(output_tokens=tokens)
    return SimpleNamespace(
        feasible=True, total_cost_usd=cost, served_scale=scale, served_from_month=since, ledger=ledger,
        capex_usd=capex,
    )  # fmt: skip


def test_the_option_serving_the_most_wins_over_a_cheaper_one() -> None:
    """buy_vs_rent at $900,000 (figures of its three max_throughput plans)."""
    options = {
        "buy_only": _option(888928.77, 0.888021, 831185881919.99, capex=975000, since=3),
        "rent_only": _option(892555.20, 1.060344, 1043449791736.02),
        "hybrid": _option(897473.99, 1.128228, 1110252139497.01, capex=681000),
    }
    best, reason = recommend(options)
    assert best == "hybrid"
    assert reason == (
        "hybrid serves the most within the budget: 1.13× the stated demand (1,110,252 M output tokens, $897,474); "
        "rent_only 1.06× (1,043,450 M output tokens, $892,555); "
        "buy_only 0.888× from month 3 (831,186 M output tokens, $888,929)"
    )


def test_a_min_cost_comparison_still_takes_the_cheapest() -> None:
    options = {
        "rent_only": SimpleNamespace(feasible=True, total_cost_usd=846720.0, served_scale=None, capex_usd=0.0),
        "hybrid": SimpleNamespace(feasible=True, total_cost_usd=820966.44, served_scale=None, capex_usd=325000.0),
    }
    assert recommend(options) == (  # type: ignore[arg-type]
        "hybrid",
        "hybrid is cheapest: $820,966 over the horizon, $25,754 (3.0%) less than rent_only",
    )


@pytest.fixture(scope="module")
def at_400k(catalog: Catalog) -> Any:
    data = starter(
        {"sites": ["us_east", "dc1"]}, name="mt", horizon_months=24, period_months=6, procurement=["rent", "buy"],
        hardware={"gpus": ["h100_sxm"], "tp": [1], "pp": [1]}, objective="max_throughput",
        budget={"total_usd": 400000},
    )  # fmt: skip
    return compare(catalog, parse_scenario(data, path="s.yaml"))


def test_the_cheaper_buy_only_plan_serves_less_and_is_not_recommended(at_400k: Any) -> None:
    """$400,000 over 24 months: renting serves 32.6× the 5 req/s for $355,622; buying only spends $276,765 and
    serves 26.1× from month 6 (nothing before its nodes arrive)."""
    options = at_400k.options
    assert options["buy_only"].total_cost_usd < options["rent_only"].total_cost_usd
    assert options["buy_only"].served_scale == pytest.approx(26.118, rel=1e-3)
    assert options["buy_only"].served_from_month == 6
    assert options["rent_only"].served_scale == pytest.approx(32.647, rel=1e-3)
    assert at_400k.recommendation == "rent_only"
    assert at_400k.recommendation_reason.startswith(
        "rent_only serves the most within the budget: 32.6× the stated demand (2,538,642 M output tokens, "
        "$355,622) — rent_only costs the same as hybrid and is simpler (it buys nothing); buy_only 26.1× from "
        "month 6 ("
    )


def test_no_cost_flip_points_for_a_max_throughput_comparison(at_400k: Any) -> None:
    sentences = [f["sentence"] for f in at_400k.flip_points]
    assert sentences[0] == MAX_THROUGHPUT_NO_FLIP
    assert not any("wins if" in s and "catalog price" in s for s in sentences)


def test_workbook_sentence_says_what_each_option_serves(at_400k: Any) -> None:
    """The Summary sheet read "rent_only is the cheapest option: $355,622 …; buy_only costs the same" for a
    buy_only plan $78,857 cheaper that served less (a negative difference printed as "the same")."""
    from planner.report.compare_workbook import comparison_text

    assert comparison_text(at_400k).startswith(
        "rent_only serves the most within the budget: 32.6× the stated demand for $355,622 over 24 months; "
        "buy_only serves 26.1× for $276,765; hybrid serves 32.6× for $355,622. The sheets from "
    )


def test_min_cost_sentence_names_a_cheaper_option_less_not_the_same() -> None:
    from planner.readout.comparison import Comparison
    from planner.report.compare_workbook import comparison_text

    scenario = SimpleNamespace(horizon_months=36)
    rent = SimpleNamespace(feasible=True, total_cost_usd=846720.0, served_scale=None, scenario=scenario)
    hybrid = SimpleNamespace(feasible=True, total_cost_usd=820966.44, served_scale=None, scenario=scenario)
    picked = Comparison({"rent_only": rent, "hybrid": hybrid}, "rent_only", None, [], "")  # type: ignore[dict-item]
    assert comparison_text(picked).startswith(
        "rent_only is the cheapest option: $846,720 over 36 months; hybrid costs $25,754 less. "
    )


def test_json_and_terminal_give_each_options_served_scale(at_400k: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The terminal's recommendation named each option's served share, the JSON had none: a script could not
    read what each option serves. Each option now carries served_scale and served_from_month (the plan
    JSON's), and the terminal's table a "served ×" column read from them."""
    from planner.cli.compare_cmd import print_comparison

    data = at_400k.to_json()
    by_name = {o["name"]: o for o in data["options"]}
    assert by_name["buy_only"]["served_scale"] == at_400k.options["buy_only"].served_scale
    assert by_name["buy_only"]["served_from_month"] == 6
    assert by_name["rent_only"]["served_scale"] == pytest.approx(32.647, rel=1e-3)
    assert by_name["rent_only"]["served_from_month"] in (0, 0.0, None)
    print_comparison(data)
    table = capsys.readouterr().out
    assert "served ×" in table and "26.1 from month 6" in table and "32.6" in table


def test_min_cost_options_have_no_served_scale(catalog: Catalog) -> None:
    data = starter({"sites": ["us_east"]}, name="mc", horizon_months=12, procurement=["rent"])
    options = compare(catalog, parse_scenario(data, path="s.yaml"), flip_points=False).to_json()["options"]
    assert [o["served_scale"] for o in options] == [None] * len(options)
