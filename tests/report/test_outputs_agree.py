"""Every output of an example shows the same money: the plan JSON, compare's option with the same supply, the
plan workbook and the compare workbook (both recomputed by LibreOffice) agree on the total, the opex per
month, the cost per million output tokens and the month-by-month cash (rel=1e-6).

Users saw $0.71 vs $1.10 per Mtok, opex with capex inside and the resale spread over the months in one
workbook and booked in the last month in the other: with one cost ledger read by every output, none can
drift from the others.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.readout import PlanResult
from planner.readout.comparison import Comparison
from planner.report.compare_workbook import OPTION_HEADERS, write_compare_outputs
from planner.report.workbook import write_plan_outputs
from planner.report.workbook_costs import CASH
from planner.report.workbook_summary import OPEX_LABEL, PER_MTOK_LABEL, TOTAL_LABEL
from tests.report.conftest import EXAMPLE_NAMES as ALL_EXAMPLES
from tests.report.workbook_io import SOFFICE, find_row, load_workbook, recompute

REL = 1e-6
OPTION_OF = {("buy", "rent"): "hybrid", ("rent",): "rent_only", ("buy",): "buy_only"}
# compare's options are rent/buy mixes; an owned-only scenario (pd_card8: plan on the inventory) has none
EXAMPLE_NAMES = [n for n in ALL_EXAMPLES if n != "pd_card8"]
FIGURES = ("total_cost_usd", "opex_usd_per_month", "cost_usd_per_million_output_tokens")


def option_name(result: PlanResult) -> str:
    """compare's option with the same supply as the scenario's procurement."""
    return OPTION_OF[tuple(sorted(result.scenario.procurement))]


@pytest.fixture(scope="module")
def recomputed(
    example_plans: dict[str, PlanResult],
    example_comparisons: dict[str, Comparison],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Any]]:
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) not installed")
    folder = tmp_path_factory.mktemp("agree")
    paths: list[Path] = []
    for name in EXAMPLE_NAMES:
        paths.append(folder / f"{name}_plan.xlsx")
        write_plan_outputs(example_plans[name], None, workbook=paths[-1], plots_dir=None)
        paths.append(folder / f"{name}_compare.xlsx")
        write_compare_outputs(example_comparisons[name], workbook=paths[-1], plots_dir=None)
    out = recompute(paths, folder)
    yield {p.stem: load_workbook(out / p.name, data_only=True) for p in paths}


def _plan_workbook(wb: Any, summary: str, horizon: int) -> dict[str, Any]:
    sheet = wb[summary]
    costs = wb["Costs"]
    col = [c.value for c in costs[1]].index(CASH) + 1
    return {
        "total_cost_usd": find_row(sheet, TOTAL_LABEL)[1].value,
        "opex_usd_per_month": find_row(sheet, OPEX_LABEL)[1].value,
        "cost_usd_per_million_output_tokens": find_row(sheet, PER_MTOK_LABEL)[1].value,
        "cash_flow_usd_per_month": [costs.cell(row=m + 2, column=col).value for m in range(horizon)],
    }


def _compare_workbook(wb: Any, option: str, horizon: int) -> dict[str, Any]:
    row = find_row(wb["Options"], option)
    cells = {h: row[k].value for k, h in enumerate(OPTION_HEADERS)}
    cash = wb["CashFlow"]
    col = [c.value for c in cash[1]].index(f"{option} cash out (USD)") + 1
    return {
        "total_cost_usd": cells["Total cost (USD, present value)"],
        "opex_usd_per_month": cells["Opex (USD/month)"],
        "cost_usd_per_million_output_tokens": cells["Cost per million output tokens (USD/Mtok)"],
        "cash_flow_usd_per_month": [cash.cell(row=m + 2, column=col).value for m in range(horizon)],
    }


def _assert_same(got: dict[str, Any], want: dict[str, Any], where: str) -> None:
    for key in (*FIGURES, "cash_flow_usd_per_month"):
        assert got[key] == pytest.approx(want[key], rel=REL, abs=1e-6), f"{where}: {key}"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_plan_json_and_compare_option_agree(
    example_plans: dict[str, PlanResult], example_comparisons: dict[str, Comparison], name: str
) -> None:
    plan_json = example_plans[name].to_json()
    option = option_name(example_plans[name])
    compared = {o["name"]: o for o in example_comparisons[name].to_json()["options"]}[option]
    _assert_same(compared, plan_json, f"compare --json option {option}")
    ledger = example_plans[name].ledger
    assert ledger is not None
    # The resale credit, if any, is in the horizon's last month, nowhere else.
    resale_months = {line.month for line in ledger.lines if line.kind == "resale"}
    assert resale_months <= {ledger.horizon_months - 1}


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_workbooks_agree_with_the_json(
    example_plans: dict[str, PlanResult],
    example_comparisons: dict[str, Comparison],
    recomputed: dict[str, Any],
    name: str,
) -> None:
    result = example_plans[name]
    plan_json = result.to_json()
    horizon = result.scenario.horizon_months
    option = option_name(result)
    _assert_same(_plan_workbook(recomputed[f"{name}_plan"], "Summary", horizon), plan_json, "plan -o")
    compare_wb = recomputed[f"{name}_compare"]
    _assert_same(_compare_workbook(compare_wb, option, horizon), plan_json, f"compare -o option {option}")
    if example_comparisons[name].recommendation == option:
        _assert_same(_plan_workbook(compare_wb, "Plan", horizon), plan_json, "compare -o plan sheets")
