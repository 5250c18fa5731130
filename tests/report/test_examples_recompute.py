"""Plan workbooks of every example (and of scenarios whose demand periods merge, that discount at a cost of
capital, bill hour blocks and earn a rent volume discount), recomputed by LibreOffice.

Every cost column is built from the plan's cost ledger: each rent and running month is a formula (units ×
price) that reproduces its ledger line, capex and resale are nodes bought × the node's price or resale
value; the monthly units are the plan's actual ones (each month takes its own period's units, merged
periods included). Recomputed, the workbook shows the ledger's total, opex, cost per million output
tokens, monthly cash and per-supply cost (rel=1e-9), and the Deployments sheet the replicas of every period.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.catalog import Catalog
from planner.plan import plan
from planner.readout import PlanResult
from planner.report import workbook as wbmod
from planner.report.cost_streams import cost_streams
from planner.report.workbook_costs import CASH, CUMULATIVE, SUPPLY_HEADERS, units_header
from planner.report.workbook_summary import BUSIEST_OPEX_LABEL, OPEX_LABEL, PER_MTOK_LABEL, TOTAL_LABEL
from planner.report.workbook_tables import ALT_DELTA_HEADER, ALT_HEADERS, DEPLOY_HEADERS
from planner.scenario import parse_scenario
from tests.report.conftest import EXAMPLE_NAMES, ROOT
from tests.report.workbook_io import (
    SOFFICE,
    find_row,
    load_workbook,
    needs_soffice,
    recompute,
    table_last_row,
)

REL = 1e-9
MERGED = "merged_periods"
MERGED_DEMAND_REQUESTS_PER_S = [8, 24, 8, 24, 16, 8]  # months 0, 2, 5 merge; so do 1 and 3
DISCOUNTED_BUY = "discounted_buy"
"""buy_vs_rent at a 2 %/year cost of capital: still buys, so present values and the resale's d(H) matter."""
HOURLY_TIERS = "hourly_tiers"
"""buy_vs_rent over 12 months with an hourly profile (fractional billed units), a rent volume tier (discount
lines) and an 8 %/year cost of capital."""
RESERVED_TAIL = "reserved_tail"
"""chat_70b_cloud on b200 at 60 req/s over 23 months with reserved_1y and a 6 %/year cost of capital: the
second year's reservation is paid one month after the horizon (cash lines in month 23)."""
NAMES = [*EXAMPLE_NAMES, MERGED, DISCOUNTED_BUY, HOURLY_TIERS, RESERVED_TAIL]


def _example(example: str, **changes: Any) -> Any:
    data = yaml.safe_load((ROOT / f"examples/{example}/scenario.yaml").read_text())
    data.update(changes)
    return data


def _extra_scenarios() -> dict[str, Any]:
    merged = _example("chat_70b_cloud", name=MERGED, horizon_months=len(MERGED_DEMAND_REQUESTS_PER_S))
    merged["workloads"][0]["requests_per_s"] = MERGED_DEMAND_REQUESTS_PER_S
    discounted = _example(
        "buy_vs_rent", name=DISCOUNTED_BUY, economics={"cost_of_capital_frac_per_year": 0.02}
    )
    tiers = {
        "cost_of_capital_frac_per_year": 0.08,
        "rent_volume_tiers": [{"min_gpus": 2, "discount_frac": 0.1}],
    }
    hourly = _example("buy_vs_rent", name=HOURLY_TIERS, horizon_months=12, economics=tiers)
    hourly["workloads"][0]["hourly_profile_frac"] = [0.3] * 8 + [1.0] * 8 + [0.3] * 8
    reserved = _example(
        "chat_70b_cloud",
        name=RESERVED_TAIL,
        horizon_months=23,
        rental_kinds=["on_demand", "reserved_1y"],
        economics={"cost_of_capital_frac_per_year": 0.06},
    )
    reserved["hardware"]["gpus"] = ["b200"]
    reserved["workloads"][0]["requests_per_s"] = 60
    return {MERGED: merged, DISCOUNTED_BUY: discounted, HOURLY_TIERS: hourly, RESERVED_TAIL: reserved}


@pytest.fixture(scope="module")
def plans(catalog: Catalog, example_plans: dict[str, PlanResult]) -> dict[str, PlanResult]:
    extra = {
        name: plan(catalog, parse_scenario(data), with_alternatives=False)
        for name, data in _extra_scenarios().items()
    }
    return {**example_plans, **extra}


def test_extra_scenarios_exercise_what_they_claim(plans: dict[str, PlanResult]) -> None:
    buy, hourly = plans[DISCOUNTED_BUY].ledger, plans[HOURLY_TIERS].ledger
    assert buy is not None and hourly is not None
    assert (
        buy.capex_usd > 0 and buy.residual_value_usd > 0 and buy.total_usd < sum(buy.cash_flow_usd_per_month)
    )
    assert any(line.kind == "discount" for line in hourly.lines)
    assert any(not float(u).is_integer() for s in plans[HOURLY_TIERS].supply for u in s.units_per_month)
    tail = plans[RESERVED_TAIL].ledger
    assert tail is not None and tail.cash_months == 24 and any(line.month == 23 for line in tail.lines)


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


def _calendar_units(result: PlanResult, per_period: list[float]) -> list[float]:
    """Units in each month from the schedule's months of each period (independent of the workbook code)."""
    out = [-1.0] * result.scenario.horizon_months
    for entry in result.schedule:
        for m in entry.months:
            out[m] = per_period[entry.period]
    return out


def test_the_examples_are_all_here() -> None:
    assert {"assistant_8b_edge", "buy_vs_rent", "chat_70b_cloud", "long_context_rag", "mixed_fleet"} <= set(
        EXAMPLE_NAMES
    ) and len(EXAMPLE_NAMES) == 11


@pytest.mark.parametrize("name", NAMES)
def test_schedule_names_its_months(plans: dict[str, PlanResult], name: str) -> None:
    result = plans[name]
    months = [m for e in result.schedule for m in e.months]
    assert months == list(range(result.scenario.horizon_months))
    periods = result.scenario.periods
    assert all(len(s.units_per_period) == periods for s in result.supply)
    assert all(len(d.replicas_per_period) == periods for d in result.deployments)


@pytest.mark.parametrize("name", NAMES)
def test_every_cost_column_is_a_formula_that_reproduces_the_ledger(
    plans: dict[str, PlanResult], written: dict[str, Path], name: str
) -> None:
    result = plans[name]
    model = cost_streams(result)
    assert model.all_live and all(s.reproduced() for s in model.streams if s.live)
    assert sorted((s.supply_id, s.kind) for s in model.streams) == sorted(
        {(line.supply_id, line.kind) for line in result.ledger.lines}  # type: ignore[union-attr]
    )
    costs = load_workbook(written[name])["Costs"]
    header = [c.value for c in costs[1]]
    horizon = result.scenario.horizon_months
    for row in model.recurring:
        col = header.index(units_header(row)) + 1
        cells = [costs.cell(row=m + 2, column=col).value for m in range(model.months)]
        # openpyxl stores 15 significant digits: hours-weighted fractions come back within 1e-15.
        assert cells == pytest.approx(row.units_by_month, rel=1e-14)
        if row.line.procurement != "buy":
            assert cells[:horizon] == pytest.approx(_calendar_units(result, row.line.units_per_period), rel=1e-14)


def test_merged_periods_are_on_the_calendar(plans: dict[str, PlanResult]) -> None:
    result = plans[MERGED]
    assert [e.representative_period for e in result.schedule] == [0, 1, 0, 1, 4, 0]
    for line in result.supply:
        assert line.units_per_month == _calendar_units(result, line.units_per_period)
    # An even spread of the three distinct periods would have put period 1's units in months 2-3 only.
    assert any(s.units_per_month[1] != s.units_per_month[2] for s in result.supply)


@pytest.mark.parametrize("name", NAMES)
def test_deployment_rows_give_the_replicas_of_every_period(
    plans: dict[str, PlanResult], written: dict[str, Path], name: str
) -> None:
    result = plans[name]
    dep = load_workbook(written[name])["Deployments"]
    col = {h: DEPLOY_HEADERS.index(h) for h in DEPLOY_HEADERS}
    got: dict[tuple[Any, ...], list[int]] = {}
    last = table_last_row(dep, "tbl_Deployments")  # below it: the costs' total and a note
    for row in dep.iter_rows(min_row=2, max_row=last, values_only=True):
        key = tuple(row[col[h]] for h in ("Workload", "Model", "GPU", "Site", "Quantization", "TP", "PP"))
        reps = got.setdefault(key, [0] * result.scenario.periods)
        first, _, last = str(row[col["Periods"]]).partition("-")
        for t in range(int(first), int(last or first) + 1):
            reps[t] += int(row[col["Replicas"]])
    want: dict[tuple[Any, ...], list[int]] = {}
    for d in result.deployments:
        key = (d.workload, d.model, d.gpu, d.site, d.quantization, d.tp, d.pp)
        want[key] = [
            a + b
            for a, b in zip(
                want.get(key, [0] * len(d.replicas_per_period)), d.replicas_per_period, strict=True
            )
        ]
        assert {
            r[col["Placement"]]
            for r in dep.iter_rows(min_row=2, values_only=True)
            if r[col["Site"]] == d.site
        } == {d.placement}
    assert got == want


@needs_soffice
@pytest.mark.parametrize("name", NAMES)
def test_recomputed_workbook_shows_the_ledger(
    plans: dict[str, PlanResult], recomputed: dict[str, Any], name: str
) -> None:
    result = plans[name]
    ledger = result.ledger
    assert ledger is not None
    wb = recomputed[name]
    summary = wb["Summary"]
    assert find_row(summary, TOTAL_LABEL)[1].value == pytest.approx(result.total_cost_usd, rel=REL)
    assert find_row(summary, OPEX_LABEL)[1].value == pytest.approx(ledger.opex_usd_per_month, rel=REL)
    busiest = max(ledger.opex_usd_by_month.values(), default=0.0)
    assert find_row(summary, BUSIEST_OPEX_LABEL)[1].value == pytest.approx(busiest, rel=REL, abs=1e-6)
    assert find_row(summary, PER_MTOK_LABEL)[1].value == pytest.approx(
        ledger.cost_usd_per_million_output_tokens, rel=REL
    )
    costs = wb["Costs"]
    header = [c.value for c in costs[1]]
    months = ledger.cash_months  # the horizon, and the months a reservation is paid after it
    cash = [costs.cell(row=m + 2, column=header.index(CASH) + 1).value for m in range(months)]
    assert cash == pytest.approx(ledger.cash_flow_usd_per_month, rel=REL, abs=1e-6)
    last_cum = costs.cell(row=months + 1, column=header.index(CUMULATIVE) + 1).value
    assert last_cum == pytest.approx(sum(ledger.cash_flow_usd_per_month), rel=REL)
    pv = SUPPLY_HEADERS.index("Cost over horizon (USD, present value)")
    for r, line in enumerate(result.supply, start=2):
        supply_row = [c.value for c in wb["Supply"][r]]
        assert supply_row[pv] == pytest.approx(ledger.supply_cost_usd(line.id), rel=REL)
        assert supply_row[pv + 1] == pytest.approx(line.cost_usd_per_month, rel=REL)


@needs_soffice
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_recomputed_alternatives_carry_tpot(
    plans: dict[str, PlanResult], recomputed: dict[str, Any], name: str
) -> None:
    data = plans[name].to_json()
    alt = recomputed[name]["Alternatives"]
    tpot = ALT_HEADERS.index("Max TPOT at capacity (ms)") + 1
    delta = ALT_HEADERS.index(ALT_DELTA_HEADER) + 1
    assert data["alternatives"]
    for r, a in enumerate(data["alternatives"], start=2):
        if a["max_tpot_ms"] is None:
            assert a["status"] == "infeasible" and alt.cell(row=r, column=tpot).value is None
            continue
        assert alt.cell(row=r, column=tpot).value == pytest.approx(a["max_tpot_ms"], rel=1e-12)
        if a["cost_delta_usd"] is not None:
            assert alt.cell(row=r, column=delta).value == pytest.approx(
                a["cost_delta_usd"], rel=1e-4, abs=1e-4 * data["total_cost_usd"]
            )


@pytest.mark.parametrize("name", NAMES)
def test_recomputed_summary_gpus_are_the_busiest_month(
    plans: dict[str, PlanResult], recomputed: dict[str, Any], name: str
) -> None:
    """Per GPU type and procurement, the most GPUs paid for in one month: Σ over the type's supply lines of
    units × GPUs per unit, month by month (buy_vs_rent: 16 rented h100_sxm, not 20 = the 4-GPU line's peak +
    the 8-GPU node line's peak, which never run in the same month)."""
    result = plans[name]
    model = cost_streams(result)
    groups: dict[str, list[Any]] = {}
    for row in model.supplies:
        groups.setdefault(f"{row.line.gpu} ({row.line.procurement})", []).append(row)
    expected = {
        label: max(sum(r.units_by_month[m] * r.line.unit_gpus for r in rows) for m in range(model.months))
        for label, rows in groups.items()
    }
    summary = recomputed[name]["Summary"]
    header = find_row(summary, "GPU type (procurement)")[0].row
    shown = {}
    for r in range(header + 1, header + 1 + len(expected)):
        shown[summary.cell(row=r, column=1).value] = summary.cell(row=r, column=2).value
    assert shown == pytest.approx(expected, rel=1e-12)
    if name == "buy_vs_rent":
        assert shown["h100_sxm (rent)"] == 16
