"""Plan workbooks of every example (and of a scenario whose demand periods merge), recomputed by LibreOffice.

The recomputed totals must match the planner's within 0.01 % (rel=1e-4), and the monthly Costs sheet must
carry the plan's actual per-month quantities: each month takes the units of its representative period
(from the schedule's ``months`` and ``representative_period``), not an even spread of the merged periods.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.catalog import Catalog
from planner.plan import PlanResult, plan
from planner.report import workbook as wbmod
from planner.scenario import load_scenario, parse_scenario
from tests.report.workbook_io import SOFFICE, find_row, load_workbook, needs_soffice, recompute

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*/scenario.yaml"))
REL = 1e-4  # 0.01 %
MERGED = "merged_periods"
MERGED_DEMAND_REQUESTS_PER_S = [8, 24, 8, 24, 16, 8]  # months 0, 2, 5 merge; so do 1 and 3


def _merged_scenario(catalog: Catalog) -> Any:
    data = yaml.safe_load((ROOT / "examples/chat_70b_cloud/scenario.yaml").read_text())
    data["name"] = MERGED
    data["horizon_months"] = len(MERGED_DEMAND_REQUESTS_PER_S)
    data["workloads"][0]["requests_per_s"] = MERGED_DEMAND_REQUESTS_PER_S
    return parse_scenario(data)


@pytest.fixture(scope="module")
def plans(catalog: Catalog) -> dict[str, PlanResult]:
    out = {p.parent.name: plan(catalog, load_scenario(p, catalog)) for p in EXAMPLES}
    out[MERGED] = plan(catalog, _merged_scenario(catalog), with_alternatives=False)
    return out


@pytest.fixture(scope="module")
def written(plans: dict[str, PlanResult], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("examples")
    paths = {}
    for name, result in plans.items():
        paths[name] = folder / f"{name}.xlsx"
        wbmod.write_plan_outputs(result, None, workbook=paths[name], plots_dir=None)
    return paths


@pytest.fixture(scope="module")
def recomputed(
    written: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) not installed")
    folder = tmp_path_factory.mktemp("lo_examples")
    out = recompute(list(written.values()), folder)
    yield {name: load_workbook(out / f"{name}.xlsx", data_only=True) for name in written}


def _calendar_units(data: dict[str, Any], line: dict[str, Any]) -> list[int]:
    """Units of a supply line in each month, straight from the schedule (independent of the workbook code)."""
    reps = sorted({e["representative_period"] for e in data["schedule"]})
    units = line["units_per_period"]
    out = [0] * data["horizon_months"]
    for entry in data["schedule"]:
        for m in entry["months"]:
            out[m] = units[reps.index(entry["representative_period"])] if len(units) == len(reps) else -1
    return out


NAMES = [p.parent.name for p in EXAMPLES] + [MERGED]


def test_five_examples() -> None:
    assert len(EXAMPLES) == 5


@pytest.mark.parametrize("name", NAMES)
def test_schedule_names_its_months(plans: dict[str, PlanResult], name: str) -> None:
    data = plans[name].to_json()
    months = [m for e in data["schedule"] for m in e["months"]]
    assert months == list(range(data["horizon_months"]))
    reps = {e["representative_period"] for e in data["schedule"]}
    assert all(len(s["units_per_period"]) == len(reps) for s in data["supply"])


@pytest.mark.parametrize("name", NAMES)
def test_costs_sheet_uses_the_schedule(
    plans: dict[str, PlanResult], written: dict[str, Path], name: str
) -> None:
    data = plans[name].to_json()
    horizon = data["horizon_months"]
    costs = load_workbook(written[name])["Costs"]
    header = [c.value for c in costs[1]]
    for i, line in enumerate(wbmod._lines(wbmod.plan_data(plans[name]))):
        col = header.index(f"Units {line.label}") + 1
        cells = [costs.cell(row=m + 2, column=col).value for m in range(horizon)]
        assert cells == _calendar_units(data, line.row)
        if line.row["kind"].startswith("rent_"):
            # Rentals are paid per month in use: the calendar units reproduce the planner's line cost.
            assert line.adjust_usd == 0.0, i


def test_merged_periods_are_on_the_calendar(plans: dict[str, PlanResult]) -> None:
    data = plans[MERGED].to_json()
    reps = [e["representative_period"] for e in data["schedule"]]
    assert reps == [0, 1, 0, 1, 4, 0]  # the scenario does merge non-adjacent months
    lines = wbmod._lines(wbmod.plan_data(plans[MERGED]))
    for line in lines:
        per_period = line.row["units_per_period"]
        assert line.monthly_units == [per_period[[0, 1, 4].index(r)] for r in reps]
    # An even spread of the three entries would have put period 1's units in months 2-3 only.
    assert any(ln.monthly_units[1] != ln.monthly_units[2] for ln in lines)


@needs_soffice
@pytest.mark.parametrize("name", NAMES)
def test_recomputed_totals_match_the_planner(
    plans: dict[str, PlanResult], recomputed: dict[str, Any], name: str
) -> None:
    data = plans[name].to_json()
    wb = recomputed[name]
    total = data["total_cost_usd"]
    assert find_row(wb["Summary"], "Total cost (USD)")[1].value == pytest.approx(total, rel=REL)
    assert find_row(wb["Summary"], "Opex (USD/month)")[1].value == pytest.approx(
        data["cost_usd_per_month"], rel=REL
    )
    costs = wb["Costs"]
    header = [c.value for c in costs[1]]
    total_col = header.index("Total (USD)")
    cum_col = header.index("Cumulative (USD)")
    assert find_row(costs, "Total")[total_col].value == pytest.approx(total, rel=REL)
    assert costs.cell(row=data["horizon_months"] + 1, column=cum_col + 1).value == pytest.approx(
        total, rel=REL
    )
    expected = wbmod.monthly_cost_usd(wbmod.plan_data(plans[name]))
    got = [costs.cell(row=m + 2, column=total_col + 1).value for m in range(data["horizon_months"])]
    assert got == pytest.approx(expected, rel=REL, abs=1e-6)
    for i, d in enumerate(data["deployments"], start=2):
        assert wb["Deployments"].cell(row=i, column=18).value == pytest.approx(
            d["cost_usd_per_month"], rel=REL
        )
    for i, s in enumerate(data["supply"], start=2):
        assert wb["BuyVsRent"].cell(row=i, column=15).value == pytest.approx(s["cost_usd_per_month"], rel=REL)


@needs_soffice
@pytest.mark.parametrize("name", [p.parent.name for p in EXAMPLES])
def test_recomputed_alternatives_carry_tpot(
    plans: dict[str, PlanResult], recomputed: dict[str, Any], name: str
) -> None:
    data = plans[name].to_json()
    alt = recomputed[name]["Alternatives"]
    tpot = wbmod.ALT_HEADERS.index("Max TPOT (ms)") + 1
    delta = wbmod.ALT_HEADERS.index("Cost delta (USD)") + 1
    assert data["alternatives"]
    for r, a in enumerate(data["alternatives"], start=2):
        if a["max_tpot_ms"] is None:
            assert a["status"] == "infeasible" and alt.cell(row=r, column=tpot).value is None
            continue
        assert alt.cell(row=r, column=tpot).value == pytest.approx(a["max_tpot_ms"], rel=1e-12)
        if a["cost_delta_usd"] is not None:
            assert alt.cell(row=r, column=delta).value == pytest.approx(
                a["cost_delta_usd"], rel=REL, abs=REL * data["total_cost_usd"]
            )
